// The bench sweep end to end on the host rig (docs/bench.md): over io_uring
// (toroid-rig --job bench --json, toroid-linkbench --json, the plot) and
// over DPDK memif on 2 and 8 nodes, every collective through the library.
#include <cstdlib>
#include <string>

#include "firmware/jobs/bench_job.h"
#include "tests/host/bench_test_util.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::benchtest;

// End to end over io_uring (no DPDK needed): the rig's table and JSON file.
TEST_GROUP(HostRigUringBench){};

TEST(HostRigUringBench, RigWritesTheSweepAsJson) {
  const char* rig_bin = std::getenv("TOROID_RIG");
  CHECK_TEXT(rig_bin, "TOROID_RIG is not set (meson sets it)");
  char dir[] = "/tmp/toroid-bench-test.XXXXXX";
  CHECK(mkdtemp(dir) != nullptr);
  const std::string json = std::string(dir) + "/out.json";
  std::string out;
  const int rc = run_shell(std::string(rig_bin) + " --dims 2x1x1 --job bench --driver uring --quiet --run-dir " + dir +
                               " --colls allreduce,alltoall,barrier --algos torus-ring --algos alltoall=pairwise,auto"
                               " --sizes 16,4096 --reps 3 --json " + json,
                           &out);
  LONGS_EQUAL_TEXT(0, rc, out.c_str());
  CHECK_TEXT(has(out, "bench on host 2x1x1 (2 nodes, uring"), out.c_str());
  // torus-ring is also the selector's pick for two nodes: marked with '*'.
  CHECK_TEXT(has(out, "allreduce      torus-ring*         int64 sum                   16 B     3"), out.c_str());
  const std::string j = slurp(json);
  CHECK_TEXT(has(j, "{\"coll\": \"allreduce\", \"algo\": \"torus-ring\", \"nodes\": 2, \"bytes\": 4096, \"reps\": 3, "
                    "\"lat_us\": {\"min\": "),
             j.c_str());
  CHECK_TEXT(has(j, "\"coll\": \"alltoall\", \"algo\": \"pairwise\""), j.c_str());
  // The selector's barrier on two nodes (one collective packet each way).
  CHECK_TEXT(has(j, "\"coll\": \"barrier\", \"algo\": \"torus-ring\""), j.c_str());
  // The old form ran exactly torus-ring; alltoall ran pairwise and the
  // selector's pick (bruck for small blocks), each size once.
  uint32_t allreduce = 0, alltoall_sel = 0;
  for (const auto& r : json_records(j)) {
    CHECK_TEXT(field(r, "lat_us") != "null", r.c_str());
    if (field(r, "coll") == "allreduce") {
      ++allreduce;
      STRCMP_EQUAL("torus-ring", field(r, "algo").c_str());
    }
    if (field(r, "coll") == "alltoall" && field(r, "selected") == "true") {
      ++alltoall_sel;
      CHECK_TEXT(find_algo(CollKind::kAlltoall, field(r, "algo")) != nullptr, r.c_str());
    }
  }
  LONGS_EQUAL(2, allreduce);
  LONGS_EQUAL(2, alltoall_sel);
  out.clear();
  CHECK_EQUAL(2, run_shell(std::string(rig_bin) + " --dims 2x1x1 --job bench --algos bcast=ring", &out));
  CHECK_TEXT(has(out, "unknown bcast algorithm 'ring' (known: " + algo_names(CollKind::kBcast)), out.c_str());
  std::string ignored;
  (void)run_shell("rm -rf " + std::string(dir), &ignored);
}

TEST(HostRigUringBench, LinkBenchMeasuresPingPongAndStream) {
  const char* bin = std::getenv("TOROID_LINKBENCH");
  CHECK_TEXT(bin, "TOROID_LINKBENCH is not set (meson sets it)");
  char dir[] = "/tmp/toroid-linkbench-test.XXXXXX";
  CHECK(mkdtemp(dir) != nullptr);
  const std::string json = std::string(dir) + "/link.json";
  std::string out;
  const int rc = run_shell(std::string(bin) + " --driver uring --sizes 64,9000 --pingpongs 200 --stream-sizes 64,9000 "
                                        "--stream-time 20ms --stream-runs 2 --json " + json,
                     &out);
  LONGS_EQUAL_TEXT(0, rc, out.c_str());
  const std::string j = slurp(json);
  CHECK_TEXT(has(j, "{\"coll\": \"link-pingpong\", \"algo\": \"uring\", \"nodes\": 2, \"bytes\": 9000, \"reps\": 200"),
             j.c_str());
  CHECK_TEXT(has(j, "{\"coll\": \"link-stream\", \"algo\": \"uring\", \"nodes\": 2, \"bytes\": 9000, \"reps\": 2"),
             j.c_str());
  CHECK_TEXT(!has(j, "\"lat_us\": null"), j.c_str());
  std::string ignored;
  (void)run_shell("rm -rf " + std::string(dir), &ignored);
}

// The plot of a sweep and a link run (bench/plot.py, Debian's matplotlib,
// which `./toroid test` installs): a PNG of the expected size.
TEST(HostRigUringBench, PlotDrawsTheSweepAgainstTheLink) {
  const char* rig_bin = std::getenv("TOROID_RIG");
  const char* link_bin = std::getenv("TOROID_LINKBENCH");
  const char* plot = std::getenv("TOROID_BENCH_PLOT");
  CHECK_TEXT(rig_bin && link_bin && plot, "TOROID_RIG, TOROID_LINKBENCH or TOROID_BENCH_PLOT is not set (meson sets them)");
  std::string out;
  // Debian's interpreter, where python3-matplotlib lives (plot.py's #! line).
  CHECK_EQUAL_TEXT(0, run_shell("/usr/bin/python3 -c 'import matplotlib'", &out),
                   ("python3-matplotlib is not installed (./toroid test installs it): " + out).c_str());
  char dir[] = "/tmp/toroid-plot-test.XXXXXX";
  CHECK(mkdtemp(dir) != nullptr);
  const std::string d = dir;
  out.clear();
  LONGS_EQUAL_TEXT(0,
                   run_shell(std::string(link_bin) + " --driver uring --sizes 64 --pingpongs 200 --stream-sizes 1500 "
                                                     "--stream-time 20ms --stream-runs 2 --json " + d + "/link.json",
                             &out),
                   out.c_str());
  out.clear();
  LONGS_EQUAL_TEXT(0,
                   run_shell(std::string(rig_bin) + " --dims 2x1x1 --job bench --driver uring --quiet --run-dir " + d +
                                 " --colls allreduce,reduce_scatter,barrier --sizes 64,4k,64k --reps 2 --json " + d +
                                 "/sweep.json",
                             &out),
                   out.c_str());
  out.clear();
  const std::string png = d + "/bench.png";
  LONGS_EQUAL_TEXT(0, run_shell(std::string(plot) + " --out " + png + " " + d + "/link.json " + d +
                                    "/sweep.json",
                                &out),
                   out.c_str());
  CHECK_TEXT(has(out, "bench: plot of 3 collectives"), out.c_str());
  const std::string img = slurp(png);
  CHECK_TEXT(img.size() > 20000, std::to_string(img.size()).c_str());
  CHECK(img.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  // Two panels per sized collective and the barrier's row: 13 x (3.6 x 3 + 0.6) in at 110 dpi.
  const auto be32 = [&](size_t at) {
    return (static_cast<uint32_t>(static_cast<uint8_t>(img[at])) << 24) |
           (static_cast<uint32_t>(static_cast<uint8_t>(img[at + 1])) << 16) |
           (static_cast<uint32_t>(static_cast<uint8_t>(img[at + 2])) << 8) | static_cast<uint8_t>(img[at + 3]);
  };
  LONGS_EQUAL(1430, be32(16));
  LONGS_EQUAL(1254, be32(20));
  out.clear();
  CHECK(run_shell(std::string(plot) + " --out " + d + "/x.png " + d + "/link.json", &out) != 0);
  CHECK_TEXT(has(out, "no timed collective records"), out.c_str());
  std::string ignored;
  (void)run_shell("rm -rf " + d, &ignored);
}

// Over DPDK memif: every collective through the library, on 2 and 8 nodes.
TEST_GROUP(HostRigMemifBench){};

namespace {

void check_every_collective(const char* dims, uint32_t nodes) {
  const char* rig_bin = std::getenv("TOROID_RIG");
  CHECK_TEXT(rig_bin, "TOROID_RIG is not set (meson sets it)");
  char dir[] = "/tmp/toroid-bench-memif.XXXXXX";
  CHECK(mkdtemp(dir) != nullptr);
  const std::string json = std::string(dir) + "/out.json";
  std::string out;
  const int rc = run_shell(std::string(rig_bin) + " --dims " + dims + " --job bench --driver memif --quiet --run-dir " +
                               dir + " --sizes 64,4096 --reps 3 --timeout 200s --json " + json,
                           &out, 280);
  LONGS_EQUAL_TEXT(0, rc, out.c_str());
  const auto recs = json_records(slurp(json));
  for (const std::string& c : bench_colls()) {
    uint32_t timed = 0, selected = 0;
    for (const auto& r : recs) {
      if (field(r, "coll") != c) continue;
      CHECK_TEXT(field(r, "lat_us") != "null", r.c_str());  // 64 B is 8 blocks of int64 on 8 nodes
      STRCMP_EQUAL_TEXT(std::to_string(nodes).c_str(), field(r, "nodes").c_str(), r.c_str());
      CHECK_TEXT(find_algo(*bench_coll_kind(c), field(r, "algo")) != nullptr, r.c_str());
      CHECK_TEXT(field(r, "dtype") == (c == "barrier" ? "null" : "int64"), r.c_str());
      CHECK_TEXT(c == "barrier" || field(r, "busbw_gbps") != "null", r.c_str());
      ++timed;
      selected += field(r, "selected") == "true";
    }
    const uint32_t sizes = c == "barrier" ? 1 : 2;
    CHECK_TEXT(timed >= sizes, (c + ": " + out).c_str());
    LONGS_EQUAL_TEXT(sizes, selected, c.c_str());  // the selector's pick, once per size
  }
  std::string ignored;
  (void)run_shell("rm -rf " + std::string(dir), &ignored);
}

}  // namespace

TEST(HostRigMemifBench, EveryCollectiveOn2Nodes) { check_every_collective("2x1x1", 2); }

TEST(HostRigMemifBench, EveryCollectiveOn8Nodes) { check_every_collective("2x2x2", 8); }
