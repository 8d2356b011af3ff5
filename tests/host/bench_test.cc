// The bench sweep (docs/bench.md): the job's arguments, the rig's
// aggregation and JSON (pure), the job on a sim partition (every node's lines
// parse and aggregate into a figure for every row), and end to end over
// io_uring: toroid-rig --job bench --json and toroid-linkbench --json.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "firmware/jobs/bench_job.h"
#include "firmware/rig/bench_report.h"
#include "firmware/rig/events.h"
#include "firmware/sim_rig.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::rig;

namespace {

BenchRecord rec(const char* node, const char* coll, uint64_t bytes, std::vector<uint64_t> ns) {
  BenchRecord r;
  r.node = node;
  r.coll = coll;
  r.algo = "a";
  r.bytes = bytes;
  r.reps = static_cast<uint32_t>(ns.size());
  r.rep_ns = std::move(ns);
  return r;
}

bool has(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs a command line under `timeout`, stdout and stderr together.
int run_shell(const std::string& cmd, std::string* out) {
  FILE* p = popen(("timeout 240 " + cmd + " 2>&1").c_str(), "r");
  CHECK(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

}  // namespace

TEST_GROUP(HostBench){};

TEST(HostBench, ArgumentsHaveDefaultsAndErrorsNameTheArgument) {
  auto d = parse_bench_args({});
  CHECK(d.is_ok());
  LONGS_EQUAL(5, d->colls.size());
  LONGS_EQUAL(2, d->algos.size());
  const auto sizes = bench_default_sizes();
  UNSIGNED_LONGLONGS_EQUAL(8, sizes.front());
  UNSIGNED_LONGLONGS_EQUAL(4u << 20, sizes.back());
  UNSIGNED_LONGLONGS_EQUAL(2u << 20, sizes[sizes.size() - 2]);
  LONGS_EQUAL(20, bench_reps_for(*d, 8));
  LONGS_EQUAL(5, bench_reps_for(*d, 4u << 20));
  LONGS_EQUAL(2, bench_warmup_for(*d, 8));
  LONGS_EQUAL(1, bench_warmup_for(*d, 4u << 20));

  auto s = parse_bench_args({{"colls", "barrier,allreduce"}, {"sizes", "8,64k,4M"}, {"reps", "3"}});
  CHECK(s.is_ok());
  LONGS_EQUAL(2, s->colls.size());
  UNSIGNED_LONGLONGS_EQUAL(65536, s->sizes[1]);
  UNSIGNED_LONGLONGS_EQUAL(4u << 20, s->sizes[2]);
  LONGS_EQUAL(3, bench_reps_for(*s, 4u << 20));  // never more than asked for

  auto bad = parse_bench_args({{"colls", "allreduce,reduce"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "'reduce'"));
  bad = parse_bench_args({{"sizes", "8,x"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "'x'"));
  bad = parse_bench_args({{"reps", "0"}});
  CHECK(!bad.is_ok());
  bad = parse_bench_args({{"size", "8"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "'size'"));
}

TEST(HostBench, ARepetitionTakesItsSlowestNodeAndBusBandwidthIsNcclS) {
  // Two nodes, three reps: per rep the max is 3, 5, 4 us; median 4 us.
  std::vector<BenchRecord> rs = {rec("0,0,0", "allreduce", 4000, {3000, 1000, 4000}),
                                 rec("1,0,0", "allreduce", 4000, {2000, 5000, 1000})};
  auto rows = aggregate_bench(rs, 2);
  LONGS_EQUAL(1, rows.size());
  CHECK(rows[0].timed);
  DOUBLES_EQUAL(3.0, rows[0].min_us, 1e-9);
  DOUBLES_EQUAL(4.0, rows[0].median_us, 1e-9);
  DOUBLES_EQUAL(5.0, rows[0].max_us, 1e-9);
  // 4000 B in 4 us = 1 GB/s; allreduce on 2 nodes: x 2(n-1)/n = 1.
  DOUBLES_EQUAL(1.0, rows[0].algbw_gbps, 1e-9);
  DOUBLES_EQUAL(1.0, rows[0].busbw_gbps, 1e-9);

  DOUBLES_EQUAL(1.75, bench_bus_factor("allreduce", 8), 1e-12);
  DOUBLES_EQUAL(1.0, bench_bus_factor("bcast", 8), 1e-12);
  DOUBLES_EQUAL(0.875, bench_bus_factor("allgather", 8), 1e-12);
  DOUBLES_EQUAL(0.875, bench_bus_factor("alltoall", 8), 1e-12);
  DOUBLES_EQUAL(0.0, bench_bus_factor("barrier", 8), 1e-12);
  DOUBLES_EQUAL(2.5, median_of({4, 1, 2, 3}), 1e-12);
  DOUBLES_EQUAL(2.0, median_of({3, 1, 2}), 1e-12);
}

TEST(HostBench, RowsWithoutEveryNodeOrThatCouldNotRunGetNoFigure) {
  BenchRecord skip;
  skip.node = "0,0,0";
  skip.coll = "alltoall";
  skip.algo = "p2p-direct";
  skip.bytes = 9;
  skip.skip = "9 B is not 2 equal blocks";
  std::vector<BenchRecord> rs = {rec("0,0,0", "bcast", 64, {1000}), skip};
  auto rows = aggregate_bench(rs, 2);
  LONGS_EQUAL(2, rows.size());
  CHECK(!rows[0].timed);
  CHECK(has(rows[0].note, "1 of 2 nodes"));
  CHECK(!rows[1].timed);
  CHECK(has(rows[1].note, "not available: 9 B is not 2 equal blocks"));
  const std::string json = bench_json(rows);
  CHECK(has(json, "\"lat_us\": null"));
  CHECK(has(json, "\"busbw_gbps\": null"));
  for (const auto& l : bench_table(rows)) CHECK(!has(l, "0.000"));  // no placeholder figures
}

TEST(HostBench, JsonRecordsCarryTheContractKeys) {
  std::vector<BenchRecord> rs = {rec("0,0,0", "allreduce", 8, {1500, 2500}), rec("1,0,0", "allreduce", 8, {1000, 2000}),
                                 rec("0,0,0", "barrier", 0, {1000, 2000}), rec("1,0,0", "barrier", 0, {1000, 2000})};
  rs[2].algo = rs[3].algo = "torus-ring";
  auto rows = aggregate_bench(rs, 2);
  const std::string json = bench_json(rows, {{"driver", json_str("memif")}});
  CHECK(has(json, "{\"coll\": \"allreduce\", \"algo\": \"a\", \"nodes\": 2, \"bytes\": 8, \"reps\": 2, "
                  "\"lat_us\": {\"min\": 1.500, \"median\": 2.000, \"max\": 2.500}"));
  CHECK(has(json, "\"algbw_gbps\": 0.004000, \"busbw_gbps\": 0.004000"));  // 8 B in 2 us, x 2(n-1)/n = 1
  CHECK(has(json, "\"coll\": \"barrier\", \"algo\": \"torus-ring\", \"nodes\": 2, \"bytes\": 0, \"reps\": 2, "
                  "\"lat_us\": {\"min\": 1.000, \"median\": 1.500, \"max\": 2.000}, \"algbw_gbps\": null, "
                  "\"busbw_gbps\": null"));
  CHECK(has(json, "\"coll\": \"barrier\""));
  CHECK(has(json, "\"driver\": \"memif\""));
  CHECK(json.front() == '[');
}

TEST(HostBench, EventLinesParse) {
  NodeEvent ev;
  CHECK(parse_node_event("bench node=1,0,0 coll=allreduce algo=torus-ring bytes=8 reps=3 warmup=2 rep_ns=10,20,30",
                         &ev));
  BenchRecord r;
  BenchInfo info;
  bool is_info = true;
  std::string err;
  CHECK_TEXT(parse_bench_event(ev, &r, &info, &is_info, &err), err.c_str());
  CHECK(!is_info);
  STRCMP_EQUAL("1,0,0", r.node.c_str());
  LONGS_EQUAL(3, r.rep_ns.size());
  UNSIGNED_LONGLONGS_EQUAL(30, r.rep_ns[2]);
  CHECK(parse_node_event("bench node=1,0,0 coll=allreduce algo=torus-ring bytes=8 reps=4 rep_ns=10,20,30", &ev));
  CHECK(!parse_bench_event(ev, &r, &info, &is_info, &err));
  CHECK(parse_node_event("bench node=1,0,0 coll=info frame=1518 max_body=1472 ports=2 ms=1.0 retransmits=3", &ev));
  CHECK(parse_bench_event(ev, &r, &info, &is_info, &err));
  CHECK(is_info);
  LONGS_EQUAL(1518, info.frame);
  LONGS_EQUAL(1, info.counters.size());
}

// The job itself, on a sim partition: every node prints a line per row, and
// they aggregate into a figure for every row that can run on 4 nodes.
TEST(HostBench, TheJobRunsEveryPatternOnASimPartition) {
  std::vector<std::string> lines;
  set_bench_sink([&](const std::string& l) { lines.push_back(l); });
  set_log_sink([](LogLevel, const std::string&) {});
  SimOptions o;
  o.dims = parse_dims("2x2x1").value();
  o.job = "bench";
  o.log_boot = false;
  o.progress = false;
  o.job_args = {{"sizes", "8,4096,6"}, {"reps", "3"}};
  SimRig rig(o);
  CHECK(rig.build().is_ok());
  const SimSummary s = rig.run();
  set_bench_sink(nullptr);
  set_log_sink(nullptr);
  CHECK_EQUAL_TEXT(s.nodes, s.passed, s.first_error.c_str());
  std::vector<BenchRecord> recs;
  uint32_t infos = 0;
  for (const auto& l : lines) {
    NodeEvent ev;
    CHECK_TEXT(parse_node_event(l, &ev), l.c_str());
    BenchRecord r;
    BenchInfo info;
    bool is_info = false;
    std::string err;
    CHECK_TEXT(parse_bench_event(ev, &r, &info, &is_info, &err), (err + ": " + l).c_str());
    if (is_info) ++infos;
    else recs.push_back(r);
  }
  LONGS_EQUAL(4, infos);
  const auto rows = aggregate_bench(recs, 4);
  // allreduce x2 algorithms, bcast, allgather, alltoall: 3 sizes each; barrier.
  LONGS_EQUAL(5 * 3 + 1, rows.size());
  for (const auto& r : rows) {
    const std::string what = r.coll + " " + r.algo + " " + std::to_string(r.bytes) + ": " + r.note;
    // 6 B: not int64s, and not 4 equal blocks.
    const bool runs = r.bytes != 6 || r.coll == "bcast";
    CHECK_EQUAL_TEXT(runs, r.timed, what.c_str());
    if (runs) {
      LONGS_EQUAL_TEXT(3, r.reps, what.c_str());
      CHECK_TEXT(r.median_us > 0, what.c_str());
      CHECK_EQUAL_TEXT(r.coll != "barrier", r.has_bw, what.c_str());
    } else {
      CHECK_TEXT(has(r.note, "not available"), what.c_str());
    }
  }
}

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
                         " --colls allreduce,alltoall,barrier --algos torus-ring --sizes 8,4096 --reps 3 --json " +
                         json,
                     &out);
  LONGS_EQUAL_TEXT(0, rc, out.c_str());
  CHECK_TEXT(has(out, "bench on host 2x1x1 (2 nodes, uring"), out.c_str());
  CHECK_TEXT(has(out, "allreduce  torus-ring        8 B     3"), out.c_str());
  const std::string j = slurp(json);
  CHECK_TEXT(has(j, "{\"coll\": \"allreduce\", \"algo\": \"torus-ring\", \"nodes\": 2, \"bytes\": 4096, \"reps\": 3, "
                    "\"lat_us\": {\"min\": "),
             j.c_str());
  CHECK_TEXT(has(j, "\"coll\": \"alltoall\", \"algo\": \"p2p-direct\""), j.c_str());
  CHECK_TEXT(has(j, "\"coll\": \"barrier\""), j.c_str());
  CHECK_TEXT(!has(j, "\"lat_us\": null"), j.c_str());
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
