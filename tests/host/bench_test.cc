// The bench sweep (docs/bench.md), without processes: the job's arguments,
// its check of every repetition, the rig's aggregation and JSON, and the job
// on sim partitions (every collective through the library, skip rows with
// the library's reasons, datatype and repro variants). End to end on the
// host rig: bench_rig_test.cc.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "firmware/jobs/bench_job.h"
#include "firmware/rig/bench_report.h"
#include "firmware/rig/events.h"
#include "firmware/sim_rig.h"
#include "tests/host/bench_test_util.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::rig;
using namespace toroid::benchtest;

namespace {

BenchRecord rec(const char* node, const char* coll, uint64_t bytes, std::vector<uint64_t> ns) {
  BenchRecord r;
  r.node = node;
  r.coll = coll;
  r.algo = std::string(1, 'a');  // not a literal: GCC 12 warns (-Wrestrict) on the inlined copy
  r.bytes = bytes;
  r.reps = static_cast<uint32_t>(ns.size());
  r.rep_ns = std::move(ns);
  return r;
}

// Runs the sim rig's bench job with `args`; the nodes' records (info lines counted).
std::vector<BenchRecord> sim_bench(const char* dims, std::map<std::string, std::string> args, uint32_t* infos) {
  std::vector<std::string> lines;
  set_bench_sink([&](const std::string& l) { lines.push_back(l); });
  set_log_sink([](LogLevel, const std::string&) {});
  SimOptions o;
  o.dims = parse_dims(dims).value();
  o.job = "bench";
  o.log_boot = false;
  o.progress = false;
  o.job_args = std::move(args);
  SimRig rig(o);
  CHECK(rig.build().is_ok());
  const SimSummary s = rig.run();
  set_bench_sink(nullptr);
  set_log_sink(nullptr);
  CHECK_EQUAL_TEXT(s.nodes, s.passed, s.first_error.c_str());
  std::vector<BenchRecord> recs;
  *infos = 0;
  for (const auto& l : lines) {
    NodeEvent ev;
    CHECK_TEXT(parse_node_event(l, &ev), l.c_str());
    BenchRecord r;
    BenchInfo info;
    bool is_info = false;
    std::string err;
    CHECK_TEXT(parse_bench_event(ev, &r, &info, &is_info, &err), (err + ": " + l).c_str());
    if (is_info) ++*infos;
    else recs.push_back(r);
  }
  return recs;
}

const BenchRow* find_row(const std::vector<BenchRow>& rows, const std::string& coll, const std::string& algo,
                         const std::string& repro, uint64_t bytes) {
  for (const auto& r : rows)
    if (r.coll == coll && r.algo == algo && r.repro == repro && r.bytes == bytes) return &r;
  return nullptr;
}

}  // namespace

TEST_GROUP(HostBench){};

TEST(HostBench, ArgumentsHaveDefaultsAndErrorsNameTheArgument) {
  auto d = parse_bench_args({});
  CHECK(d.is_ok());
  LONGS_EQUAL(7, d->colls.size());
  STRCMP_EQUAL("reduce_scatter", d->colls[5].c_str());
  CHECK(d->algos.at("allreduce") == (std::vector<std::string>{"torus-ring", "torus-tree", "auto"}));
  CHECK(d->algos.at("bcast") == (std::vector<std::string>{"auto"}));
  CHECK(d->algos.at("barrier") == (std::vector<std::string>{"auto"}));
  CHECK(d->dtypes == (std::vector<DType>{DType::kInt64}));
  CHECK(d->ops == (std::vector<ROp>{ROp::kSum}));
  CHECK(d->repros == (std::vector<Repro>{Repro::kNone}));
  const auto sizes = bench_default_sizes();
  UNSIGNED_LONGLONGS_EQUAL(8, sizes.front());
  UNSIGNED_LONGLONGS_EQUAL(4u << 20, sizes.back());
  UNSIGNED_LONGLONGS_EQUAL(2u << 20, sizes[sizes.size() - 2]);
  // OSU-style defaults: many repetitions of small operations, few of large.
  LONGS_EQUAL(1000, bench_reps_for(*d, 8));
  LONGS_EQUAL(500, bench_reps_for(*d, 4096));
  LONGS_EQUAL(100, bench_reps_for(*d, 65536));
  LONGS_EQUAL(40, bench_reps_for(*d, 1u << 20));
  LONGS_EQUAL(20, bench_reps_for(*d, 4u << 20));
  LONGS_EQUAL(100, bench_warmup_for(*d, 8));
  LONGS_EQUAL(2, bench_warmup_for(*d, 4u << 20));

  auto s = parse_bench_args({{"colls", "barrier,allreduce,reduce-scatter"}, {"sizes", "8,64k,4M"}, {"reps", "3"}});
  CHECK(s.is_ok());
  LONGS_EQUAL(3, s->colls.size());
  STRCMP_EQUAL("reduce_scatter", s->colls[2].c_str());  // either spelling, one name
  UNSIGNED_LONGLONGS_EQUAL(65536, s->sizes[1]);
  UNSIGNED_LONGLONGS_EQUAL(4u << 20, s->sizes[2]);
  LONGS_EQUAL(3, bench_reps_for(*s, 4u << 20));  // never more than asked for

  auto bad = parse_bench_args({{"colls", "allreduce,gather"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "'gather'"));
  CHECK(has(bad.status().message(), "reduce_scatter"));  // the known ones
  bad = parse_bench_args({{"sizes", "8,x"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "'x'"));
  bad = parse_bench_args({{"reps", "0"}});
  CHECK(!bad.is_ok());
  bad = parse_bench_args({{"size", "8"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "'size'"));
}

TEST(HostBench, AlgosAreNamedPerCollectiveAndCheckedAgainstTheLibrary) {
  auto s = parse_bench_args({{"algos", "allreduce=ring,tree;bcast=binomial,auto"}});
  CHECK_TEXT(s.is_ok(), s.status().message().c_str());
  CHECK(s->algos.at("allreduce") == (std::vector<std::string>{"ring", "tree"}));
  CHECK(s->algos.at("bcast") == (std::vector<std::string>{"binomial", "auto"}));
  CHECK(s->algos.at("reduce") == (std::vector<std::string>{"auto"}));  // untouched: the default
  // The older form: no KIND=, exactly these allreduce algorithms.
  s = parse_bench_args({{"algos", "torus-ring,torus-tree"}});
  CHECK(s.is_ok());
  CHECK(s->algos.at("allreduce") == (std::vector<std::string>{"torus-ring", "torus-tree"}));
  // Repeated --algos arrive joined by ';': the first group of a kind replaces
  // its default, later ones add.
  s = parse_bench_args({{"algos", "allreduce=ring;reduce_scatter=ring;allreduce=tree"}});
  CHECK(s.is_ok());
  CHECK(s->algos.at("allreduce") == (std::vector<std::string>{"ring", "tree"}));
  CHECK(s->algos.at("reduce_scatter") == (std::vector<std::string>{"ring"}));
  // all: every algorithm of the kind, in the registry's order.
  s = parse_bench_args({{"algos", "alltoall=all"}});
  CHECK(s.is_ok());
  size_t n = 0;
  for (const auto& a : algorithms()) n += a.kind == CollKind::kAlltoall;
  LONGS_EQUAL(n, s->algos.at("alltoall").size());
  CHECK(n >= 4);

  auto bad = parse_bench_args({{"algos", "bcast=ring"}});
  CHECK(!bad.is_ok());
  CHECK_TEXT(has(bad.status().message(), "unknown bcast algorithm 'ring'"), bad.status().message().c_str());
  CHECK_TEXT(has(bad.status().message(), algo_names(CollKind::kBcast)), bad.status().message().c_str());
  bad = parse_bench_args({{"algos", "scan=ring"}});
  CHECK(!bad.is_ok());
  CHECK_TEXT(has(bad.status().message(), "unknown collective 'scan'"), bad.status().message().c_str());
  bad = parse_bench_args({{"algos", "torus-ring,nosuch"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "unknown allreduce algorithm 'nosuch'"));
  bad = parse_bench_args({{"colls", "allreduce"}, {"algos", "bcast=binomial"}});
  CHECK(!bad.is_ok());
  CHECK_TEXT(has(bad.status().message(), "--colls leaves bcast out"), bad.status().message().c_str());
}

TEST(HostBench, DatatypeOpAndReproAreLists) {
  auto s = parse_bench_args({{"dtype", "double,int32,double"}, {"op", "sum,max"}, {"repro", "none,exact"}});
  CHECK_TEXT(s.is_ok(), s.status().message().c_str());
  CHECK(s->dtypes == (std::vector<DType>{DType::kDouble, DType::kInt32}));
  CHECK(s->ops == (std::vector<ROp>{ROp::kSum, ROp::kMax}));
  CHECK(s->repros == (std::vector<Repro>{Repro::kNone, Repro::kExact}));
  auto bad = parse_bench_args({{"dtype", "int64,quad"}});
  CHECK(!bad.is_ok());
  CHECK_TEXT(has(bad.status().message(), "--dtype") && has(bad.status().message(), "quad"),
             bad.status().message().c_str());
  bad = parse_bench_args({{"repro", "always"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "--repro"));
  bad = parse_bench_args({{"op", "avg"}});
  CHECK(!bad.is_ok());
  CHECK(has(bad.status().message(), "--op"));
}

// The check reads the output, not the buffers' bookkeeping: an untouched
// (poisoned) output fails naming the element, the right values pass, one
// wrong element fails.
TEST(HostBench, TheCheckCatchesAWrongOrUntouchedResult) {
  BenchCheck c;
  // One node: an allreduce's result is the node's own input.
  c.prepare(CollKind::kAllreduce, DType::kInt64, ROp::kSum, Repro::kNone, 1000, 0, 1, 7);
  LONGS_EQUAL(16, c.checked());
  CollArgs a = c.args();
  c.poison();
  Status st = c.check();
  CHECK(!st);
  CHECK_TEXT(has(st.message(), "element 0 is"), st.message().c_str());
  std::memcpy(a.recv, a.send, 1000 * 8);
  CHECK_TEXT(c.check().is_ok(), c.check().message().c_str());
  static_cast<int64_t*>(a.recv)[999] += 1;
  st = c.check();
  CHECK(!st);
  CHECK_TEXT(has(st.message(), "element 999 is"), st.message().c_str());

  // Small outputs are checked whole; block outputs name the block's rank.
  c.prepare(CollKind::kAlltoall, DType::kInt32, ROp::kSum, Repro::kNone, 10, 0, 1, 7);
  LONGS_EQUAL(10, c.checked());
  c.prepare(CollKind::kAllgather, DType::kInt32, ROp::kSum, Repro::kNone, 100, 2, 4, 7);
  LONGS_EQUAL(12, c.checked());  // first, middle and last of 4 blocks
  c.poison();
  st = c.check();
  CHECK(!st);
  CHECK_TEXT(has(st.message(), "element 0 (block of rank 0)"), st.message().c_str());
}

// The repetition after the timed ones is checked whole: an element outside
// the sample, wrong or left untouched, fails it and passes the sampled check.
TEST(HostBench, TheWholeCheckCatchesWhatTheSampleMisses) {
  BenchCheck c;
  c.prepare(CollKind::kAllreduce, DType::kInt64, ROp::kSum, Repro::kNone, 1000, 0, 1, 7);
  LONGS_EQUAL(1000, c.whole_elements());
  CollArgs a = c.args();
  auto* out = static_cast<int64_t*>(a.recv);
  std::memcpy(a.recv, a.send, 1000 * 8);
  CHECK_TEXT(c.check_whole().is_ok(), c.check_whole().message().c_str());
  // Element 1 is in no sample of 1000 elements (16 spread, from 0 and 66 on).
  out[1] += 1;
  CHECK(c.check().is_ok());
  Status st = c.check_whole();
  CHECK(!st);
  CHECK_TEXT(has(st.message(), "element 1 is"), st.message().c_str());
  // Poisoned whole, an output that leaves element 1 untouched fails.
  c.poison_whole();
  std::memcpy(out + 2, static_cast<const int64_t*>(a.send) + 2, 998 * 8);
  out[0] = static_cast<const int64_t*>(a.send)[0];
  CHECK(c.check().is_ok());
  st = c.check_whole();
  CHECK(!st);
  CHECK_TEXT(has(st.message(), "element 1 is"), st.message().c_str());
  // Block outputs: every element of every block (4 ranks' blocks of 100).
  c.prepare(CollKind::kAllgather, DType::kInt32, ROp::kSum, Repro::kNone, 100, 2, 4, 7);
  LONGS_EQUAL(400, c.whole_elements());
  c.poison_whole();
  st = c.check_whole();
  CHECK(!st);
  CHECK_TEXT(has(st.message(), "element 0 (block of rank 0)"), st.message().c_str());
  // Floats are poisoned with a NaN; the right values pass.
  c.prepare(CollKind::kAllreduce, DType::kDouble, ROp::kSum, Repro::kNone, 500, 0, 1, 7);
  a = c.args();
  c.poison_whole();
  st = c.check_whole();
  CHECK(!st);
  CHECK_TEXT(has(st.message(), "element 0 is"), st.message().c_str());
  std::memcpy(a.recv, a.send, 500 * 8);
  CHECK_TEXT(c.check_whole().is_ok(), c.check_whole().message().c_str());
  // No output on this node (a reduce's non-root): nothing to check.
  c.prepare(CollKind::kReduce, DType::kInt64, ROp::kSum, Repro::kNone, 1000, 1, 2, 7);
  LONGS_EQUAL(0, c.whole_elements());
  CHECK(c.check_whole().is_ok());
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
  DOUBLES_EQUAL(1.0, bench_bus_factor("reduce", 8), 1e-12);
  DOUBLES_EQUAL(0.875, bench_bus_factor("allgather", 8), 1e-12);
  DOUBLES_EQUAL(0.875, bench_bus_factor("alltoall", 8), 1e-12);
  DOUBLES_EQUAL(0.875, bench_bus_factor("reduce_scatter", 8), 1e-12);
  DOUBLES_EQUAL(0.0, bench_bus_factor("barrier", 8), 1e-12);
  DOUBLES_EQUAL(2.5, median_of({4, 1, 2, 3}), 1e-12);
  DOUBLES_EQUAL(2.0, median_of({3, 1, 2}), 1e-12);

  // Variants of one (collective, algorithm, size) are rows of their own.
  rs.push_back(rec("0,0,0", "allreduce", 4000, {8000}));
  rs.push_back(rec("1,0,0", "allreduce", 4000, {9000}));
  rs[2].dtype = rs[3].dtype = "double";
  rs[2].repro = rs[3].repro = "exact";
  rows = aggregate_bench(rs, 2);
  LONGS_EQUAL(2, rows.size());
  DOUBLES_EQUAL(9.0, rows[1].median_us, 1e-9);
  STRCMP_EQUAL("double exact", bench_variant(rows[1]).c_str());
}

TEST(HostBench, RowsWithoutEveryNodeOrThatCouldNotRunGetNoFigure) {
  BenchRecord skip;
  skip.node = "0,0,0";
  skip.coll = "alltoall";
  skip.algo = "pairwise";
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
  for (int i : {0, 1}) {
    rs[i].dtype = "double";
    rs[i].op = "sum";
    rs[i].repro = "exact";
  }
  rs[2].algo = rs[3].algo = "barrier-network";
  rs[2].selected = rs[3].selected = true;
  auto rows = aggregate_bench(rs, 2);
  const std::string json = bench_json(rows, {{"driver", json_str("memif")}});
  CHECK(has(json, "{\"coll\": \"allreduce\", \"algo\": \"a\", \"nodes\": 2, \"bytes\": 8, \"reps\": 2, "
                  "\"lat_us\": {\"min\": 1.500, \"median\": 2.000, \"max\": 2.500, \"mean\": 2.000}"));
  CHECK(has(json, "\"algbw_gbps\": 0.004000, \"busbw_gbps\": 0.004000"));  // 8 B in 2 us, x 2(n-1)/n = 1
  CHECK(has(json, "\"dtype\": \"double\", \"op\": \"sum\", \"repro\": \"exact\", \"selected\": false"));
  CHECK(has(json, "\"coll\": \"barrier\", \"algo\": \"barrier-network\", \"nodes\": 2, \"bytes\": 0, \"reps\": 2, "
                  "\"lat_us\": {\"min\": 1.000, \"median\": 1.500, \"max\": 2.000, \"mean\": 1.500}, \"algbw_gbps\": null, "
                  "\"busbw_gbps\": null, \"dtype\": null, \"op\": null, \"repro\": null, \"selected\": true"));
  CHECK(has(json, "\"driver\": \"memif\""));
  CHECK(json.front() == '[');
  // The table marks the selector's choice and names the variant.
  const auto table = bench_table(rows);
  CHECK_TEXT(has(table[1], "allreduce      a                   double sum exact"), table[1].c_str());
  CHECK_TEXT(has(table[2], "barrier-network*"), table[2].c_str());
  // The link bench's rows (not aggregated from the sweep) keep their keys only.
  BenchRow link;
  link.coll = "link-stream";
  link.algo = "memif";
  CHECK(!has(bench_json({link}), "dtype"));
}

TEST(HostBench, EventLinesParse) {
  NodeEvent ev;
  CHECK(parse_node_event("bench node=1,0,0 coll=allreduce algo=ring dtype=double op=sum repro=exact sel=1 bytes=8 "
                         "reps=3 warmup=2 rep_ns=10,20,30",
                         &ev));
  BenchRecord r;
  BenchInfo info;
  bool is_info = true;
  std::string err;
  CHECK_TEXT(parse_bench_event(ev, &r, &info, &is_info, &err), err.c_str());
  CHECK(!is_info);
  STRCMP_EQUAL("1,0,0", r.node.c_str());
  STRCMP_EQUAL("double", r.dtype.c_str());
  STRCMP_EQUAL("exact", r.repro.c_str());
  CHECK(r.selected);
  LONGS_EQUAL(3, r.rep_ns.size());
  UNSIGNED_LONGLONGS_EQUAL(30, r.rep_ns[2]);
  CHECK(parse_node_event("bench node=1,0,0 coll=allreduce algo=torus-ring bytes=8 reps=4 rep_ns=10,20,30", &ev));
  CHECK(!parse_bench_event(ev, &r, &info, &is_info, &err));
  CHECK(parse_node_event("bench node=1,0,0 coll=reduce algo=tree dtype=double op=sum repro=exact bytes=64 "
                         "skip=\"reduce: exact float sum is implemented for allreduce only\"",
                         &ev));
  CHECK(parse_bench_event(ev, &r, &info, &is_info, &err));
  CHECK(!r.selected);
  STRCMP_EQUAL("reduce: exact float sum is implemented for allreduce only", r.skip.c_str());
  CHECK(parse_node_event("bench node=1,0,0 coll=info frame=1518 max_body=1472 ports=2 ms=1.0 retransmits=3", &ev));
  CHECK(parse_bench_event(ev, &r, &info, &is_info, &err));
  CHECK(is_info);
  LONGS_EQUAL(1518, info.frame);
  LONGS_EQUAL(1, info.counters.size());
}

// The job on a sim partition, defaults but the sizes: every collective runs
// through the library, and every row names an algorithm of the library.
TEST(HostBench, EveryCollectiveRunsThroughTheLibraryOnASimPartition) {
  uint32_t infos = 0;
  const auto recs = sim_bench("2x2x1", {{"sizes", "8,4096,6"}, {"reps", "3"}}, &infos);
  LONGS_EQUAL(4, infos);
  const auto rows = aggregate_bench(recs, 4);
  std::vector<std::string> timed_colls;
  for (const auto& r : rows) {
    const std::string what = r.coll + " " + r.algo + " " + std::to_string(r.bytes) + ": " + r.note;
    auto kind = bench_coll_kind(r.coll);
    CHECK_TEXT(kind.is_ok(), what.c_str());
    // Never a made-up label: an algorithm of the library, or `auto` where the
    // size left the selector nothing to pick.
    CHECK_TEXT(find_algo(*kind, r.algo) != nullptr || (!r.timed && r.algo == "auto"), what.c_str());
    if (r.coll == "barrier") {
      CHECK_TEXT(r.dtype.empty() && r.selected && r.algo == "barrier-network", what.c_str());
    } else {
      STRCMP_EQUAL_TEXT("int64", r.dtype.c_str(), what.c_str());
      CHECK_EQUAL_TEXT(coll_reduces(*kind), !r.op.empty(), what.c_str());
    }
    // 6 B: not int64 elements; 8 B: not 4 blocks of them (allgather, alltoall, reduce_scatter).
    const bool blocks = r.coll == "allgather" || r.coll == "alltoall" || r.coll == "reduce_scatter";
    const bool runs = r.coll == "barrier" || (r.bytes != 6 && !(blocks && r.bytes == 8));
    CHECK_EQUAL_TEXT(runs, r.timed, what.c_str());
    if (runs) {
      LONGS_EQUAL_TEXT(3, r.reps, what.c_str());
      CHECK_TEXT(r.median_us > 0, what.c_str());
      CHECK_EQUAL_TEXT(r.coll != "barrier", r.has_bw, what.c_str());
      if (std::find(timed_colls.begin(), timed_colls.end(), r.coll) == timed_colls.end())
        timed_colls.push_back(r.coll);
    } else {
      CHECK_TEXT(has(r.note, "not available: ") && has(r.note, "int64 elements"), what.c_str());
    }
  }
  CHECK(timed_colls == bench_colls());
  // allreduce: torus-ring and torus-tree at every size, and the selector's
  // pick, marked, once per size.
  for (uint64_t b : {8, 4096}) {
    CHECK(find_row(rows, "allreduce", "torus-ring", "none", b));
    CHECK(find_row(rows, "allreduce", "torus-tree", "none", b));
    uint32_t selected = 0;
    for (const auto& r : rows) selected += r.coll == "allreduce" && r.bytes == b && r.selected;
    LONGS_EQUAL(1, selected);
  }
}

// Datatype and repro variants, and algorithms that cannot run: skip rows with
// the library's reasons, decided before anything is sent (an inapplicable
// algorithm) or when the library turns the operation down (exact reduce).
TEST(HostBench, VariantsAndSkipRowsWithTheLibrarysReasons) {
  uint32_t infos = 0;
  const auto recs = sim_bench("2x2x1",
                              {{"colls", "allreduce,reduce,bcast"},
                               {"algos", "allreduce=ring,cube300,torus-ring,auto"},
                               {"dtype", "double"},
                               {"repro", "none,fixed-order,exact"},
                               {"sizes", "64,4096"},
                               {"reps", "2"}},
                              &infos);
  const auto rows = aggregate_bench(recs, 4);
  for (uint64_t b : {64, 4096}) {
    const BenchRow* r = find_row(rows, "allreduce", "ring", "none", b);
    CHECK(r && r->timed);
    r = find_row(rows, "allreduce", "ring", "exact", b);
    CHECK(r && r->timed && r->dtype == "double");
    r = find_row(rows, "allreduce", "cube300", "none", b);
    CHECK(r && !r->timed);
    CHECK_TEXT(has(r->note, "needs a 2x2x2 communicator (this one is 2x2x1)"), r->note.c_str());
    r = find_row(rows, "allreduce", "torus-ring", "fixed-order", b);
    CHECK(r && !r->timed);
    CHECK_TEXT(has(r->note, "different order"), r->note.c_str());
    r = find_row(rows, "allreduce", "torus-ring", "exact", b);  // exact mode runs any algorithm twice
    CHECK(r && r->timed);
    // reduce: the selector's pick; an exact float sum is allreduce's only.
    uint32_t reduce_exact = 0, reduce_timed = 0, bcast = 0;
    for (const auto& x : rows) {
      if (x.bytes != b) continue;
      if (x.coll == "reduce" && x.repro == "exact") {
        ++reduce_exact;
        CHECK(!x.timed);
        CHECK_TEXT(has(x.note, "exact float sum is implemented for allreduce only"), x.note.c_str());
      }
      if (x.coll == "reduce" && x.repro != "exact" && x.timed && x.selected) ++reduce_timed;
      if (x.coll == "bcast") {
        ++bcast;  // data-moving: one row per size, no op and no repro
        CHECK(x.timed && x.op.empty() && x.repro.empty() && x.dtype == "double");
      }
    }
    LONGS_EQUAL(1, reduce_exact);
    LONGS_EQUAL(2, reduce_timed);  // none and fixed-order
    LONGS_EQUAL(1, bcast);
  }
}
