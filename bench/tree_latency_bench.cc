// Latency of the combine and barrier networks on the sim rig, in VIRTUAL
// time: a trained partition (job "train"), then every node starts the same
// operation at the same virtual instant and the figure is the time from that
// instant to the last node's completion. Three operations:
//   BM_TreeBarrier/<dims>          BarrierNet channel 0, AND mode
//   BM_TreeAllreduce8B/<dims>      CombineEngine::start on the world tree:
//                                  ADD, unsigned, one 8-byte operand
//   BM_TreeTorusAllreduce8B/<dims> Comm::start_allreduce_sum_i64(buf, 1,
//                                  kTorusTree): torus reduce to the middle,
//                                  then the tree broadcast (seed 004 C)
// The Time column is the virtual latency (manual time). Counters:
//   virtual_ns the mean latency in ns (the Time column, unrounded)
//   model_us   what the link model predicts (hops x per-hop cost, below)
//   depth      tree depth in hops (the torus radius)
//   wall_ms/op wall-clock milliseconds the simulation of one operation took
//              on this core: the cost of the sim, not of the network
//   spread_ns  largest minus smallest latency over the iterations (the sim
//              is deterministic; 0 means every iteration took the same time)
//   build_s    wall seconds to build and train the shape's rig (once)
// A node's completion time is exact: a probe poller on each node's own event
// loop records loop.now() in the step where the operation finishes there.
//
// The link model (base/tuning.h, drivers/sim/sim_fabric.cc): a frame of L
// bytes occupies its link direction for ceil(L / kSimLinkBytesPerNs) ns and
// arrives kSimLinkLatencyNs later; node processing takes no virtual time. So
// one hop of a frame costs ceil(L / 2) + 100 ns, and (docs/tree.md):
//   barrier, tree allreduce   2 x depth hops
//   torus-tree allreduce      sum_d max(n_d/2, n_d - 1 - n_d/2) torus hops,
//                             then 2 x depth tree hops (the holder of the
//                             total, the middle node, is at full depth)
// The rig is built and trained once per shape and kept for all three
// benchmarks and every repetition. Building is O(N^2) today (each node
// generates and verifies the whole world tree), so the large shape is set by
// TOROID_TREE_BENCH_DIMS: the default 32x32x16 builds in about a minute;
// 32x32x32 takes about 4 minutes of CPU and 1.4 GiB (docs/bench.md).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/log.h"
#include "collectives/coll_wire.h"
#include "collectives/comm.h"
#include "firmware/sim_rig.h"
#include "netstack/classroute.h"
#include "netstack/tree/barrier.h"
#include "netstack/tree/combine.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"

namespace toroid::bench {
namespace {

constexpr uint64_t kSliceNs = 2 * kUs;        // virtual time per fabric.run() call
constexpr uint64_t kBudgetNs = 5 * kMs;       // an operation that takes longer is stuck
constexpr uint64_t kSettleNs = 20 * kUs;      // after each op: acks and credits come home
constexpr uint32_t kFrameOverhead = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader) + sizeof(wire::TorusHeader);

// Log lines of the rigs: kept (the last error names a failure), never printed.
std::string& captured_log() {
  static std::string s;
  return s;
}
void quiet_logs() {
  set_log_sink([](LogLevel level, const std::string& line) {
    if (level <= LogLevel::kWarn) captured_log() = line;
  });
}

// Records when the operation under test completed on one node.
class Probe final : public Poller {
 public:
  Probe(EventLoop& loop, uint32_t* remaining) : loop_(loop), remaining_(remaining) { loop_.add_poller(this); }
  ~Probe() override { loop_.remove_poller(this); }
  void arm(std::function<bool(Status*)> test) {
    test_ = std::move(test);
    armed_ = true;
  }
  bool poll() override {
    if (!armed_) return false;
    Status st;
    if (!test_(&st)) return false;
    armed_ = false;
    done_ns = loop_.now();
    status = std::move(st);
    --*remaining_;
    return true;
  }
  uint64_t done_ns = 0;
  Status status;

 private:
  EventLoop& loop_;
  uint32_t* remaining_;
  std::function<bool(Status*)> test_;
  bool armed_ = false;
};

struct TreeRig {
  SimOptions opt;
  std::unique_ptr<SimRig> rig;
  std::vector<std::unique_ptr<Probe>> probes;
  uint32_t remaining = 0;
  uint32_t depth = 0;
  double build_s = 0;
  std::string error;  // set if the rig could not be built or trained
};

TreeRig* get_rig(const std::string& dims_s) {
  static std::map<std::string, std::unique_ptr<TreeRig>> rigs;
  auto it = rigs.find(dims_s);
  if (it != rigs.end()) return it->second.get();
  auto tr = std::make_unique<TreeRig>();
  const auto t0 = std::chrono::steady_clock::now();
  Result<Dims> dims = parse_dims(dims_s);
  if (!dims) {
    tr->error = dims.status().to_string();
  } else {
    tr->opt.dims = dims.value();
    tr->opt.job = "train";
    tr->opt.log_boot = false;
    tr->opt.progress = false;
    tr->rig = std::make_unique<SimRig>(tr->opt);
    if (Status st = tr->rig->build(); !st) {
      tr->error = "sim rig build: " + st.to_string();
    } else {
      const SimSummary s = tr->rig->run();
      if (s.passed != s.nodes) tr->error = "partition did not train: " + s.first_error;
    }
  }
  if (tr->error.empty()) {
    SimRig& rig = *tr->rig;
    for (uint32_t r = 0; r < rig.node_count(); ++r)
      tr->probes.push_back(std::make_unique<Probe>(rig.node(r).loop(), &tr->remaining));
    tr->depth = tree_depth(make_tree_route(tr->opt.dims, coord_of(0, tr->opt.dims)));
  }
  tr->build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  TreeRig* p = tr.get();
  rigs.emplace(dims_s, std::move(tr));
  return p;
}

// One hop of an L-byte frame in the link model.
double hop_ns(const LinkModel& m, uint32_t frame_bytes) {
  return std::ceil(static_cast<double>(frame_bytes) / m.bytes_per_ns) + static_cast<double>(m.latency_ns);
}

// Torus hops of the reduce-to-the-middle phase: the farthest node of each
// line from its middle n/2, dimension after dimension.
uint32_t torus_middle_hops(const Dims& d) {
  uint32_t h = 0;
  for (int i = 0; i < kDims; ++i) {
    const uint32_t n = d.n[i], m = n / 2;
    h += std::max(m, n - 1 - m);
  }
  return h;
}

enum class Kind { kBarrier, kTreeAllreduce, kTorusTree };

void BM_TreeLatency(benchmark::State& state, Kind kind, const std::string& dims_s) {
  quiet_logs();
  TreeRig* tr = get_rig(dims_s);
  if (!tr->error.empty()) {
    state.SkipWithError(tr->error.c_str());
    set_log_sink(nullptr);
    return;
  }
  SimRig& rig = *tr->rig;
  SimFabric& f = rig.fabric();
  const uint32_t n = rig.node_count();
  std::vector<int64_t> buf(n), out(n);
  const auto expect = static_cast<int64_t>(static_cast<uint64_t>(n) * (n + 1) / 2);

  uint64_t lat_min = UINT64_MAX, lat_max = 0, lat_sum = 0;
  double wall_total = 0;
  std::string failure;
  for (auto _ : state) {
    const auto w0 = std::chrono::steady_clock::now();
    const uint64_t t0 = f.now();
    tr->remaining = n;
    for (uint32_t r = 0; r < n; ++r) {
      Node& node = rig.node(r);
      Probe& probe = *tr->probes[r];
      Status st;
      switch (kind) {
        case Kind::kBarrier:
          st = node.barrier().enter(0, BarrierMode::kAnd);
          probe.arm([&node](Status* s) { return node.barrier().test(0, s); });
          break;
        case Kind::kTreeAllreduce:
          buf[r] = r + 1;
          st = node.combine().start(tuning::kTreeClassWorld, AluOp::kAdd, AluType::kUnsigned, 8, &buf[r], &out[r], 1);
          probe.arm([&node](Status* s) { return node.combine().test(tuning::kTreeClassWorld, s); });
          break;
        case Kind::kTorusTree:
          out[r] = r + 1;
          st = node.comm().start_allreduce_sum_i64(&out[r], 1, "torus-tree");
          probe.arm([&node](Status* s) { return node.comm().test(s); });
          break;
      }
      if (!st) {
        failure = "start on " + coord_of(r, tr->opt.dims).to_string() + ": " + st.to_string();
        break;
      }
      f.wake(r, t0);
    }
    // Google Benchmark requires SkipWithError before leaving the loop early.
    if (!failure.empty()) {
      state.SkipWithError(failure.c_str());
      break;
    }
    uint64_t t = t0;
    while (tr->remaining > 0 && t - t0 < kBudgetNs) {
      t += kSliceNs;
      f.run(t);
    }
    wall_total += std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    if (tr->remaining > 0) {
      failure = "operation did not finish in 5 ms of virtual time: " + captured_log();
      state.SkipWithError(failure.c_str());
      break;
    }
    uint64_t last = t0;
    for (uint32_t r = 0; r < n && failure.empty(); ++r) {
      const Probe& p = *tr->probes[r];
      last = std::max(last, p.done_ns);
      if (!p.status) failure = coord_of(r, tr->opt.dims).to_string() + ": " + p.status.to_string();
      else if (kind != Kind::kBarrier && out[r] != expect)
        failure = coord_of(r, tr->opt.dims).to_string() + ": wrong sum " + std::to_string(out[r]);
    }
    if (!failure.empty()) {
      state.SkipWithError(failure.c_str());
      break;
    }
    const uint64_t lat = last - t0;
    lat_min = std::min(lat_min, lat);
    lat_max = std::max(lat_max, lat);
    lat_sum += lat;
    state.SetIterationTime(static_cast<double>(lat) * 1e-9);
    f.run(f.now() + kSettleNs);
  }
  set_log_sink(nullptr);
  if (!failure.empty()) return;

  const LinkModel& m = f.model();
  const uint32_t depth = tr->depth;
  double model_ns = 0;
  switch (kind) {
    case Kind::kBarrier:
      model_ns = 2.0 * depth * hop_ns(m, kFrameOverhead + sizeof(wire::BarrierHeader));
      break;
    case Kind::kTreeAllreduce:
      model_ns = 2.0 * depth * hop_ns(m, kFrameOverhead + sizeof(wire::TreeHeader) + 8);
      break;
    case Kind::kTorusTree:
      model_ns = torus_middle_hops(tr->opt.dims) * hop_ns(m, kFrameOverhead + sizeof(wire::CollHeader) + 8) +
                 2.0 * depth * hop_ns(m, kFrameOverhead + sizeof(wire::TreeHeader) + 8);
      break;
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["nodes"] = n;
  state.counters["depth"] = depth;
  state.counters["virtual_ns"] = iters > 0 ? static_cast<double>(lat_sum) / iters : 0;
  state.counters["model_us"] = model_ns * 1e-3;
  state.counters["wall_ms/op"] = iters > 0 ? wall_total / iters * 1e3 : 0;
  state.counters["spread_ns"] = iters > 0 ? static_cast<double>(lat_max - lat_min) : 0;
  state.counters["build_s"] = tr->build_s;
}

[[maybe_unused]] const bool kRegistered = [] {
  const char* env = std::getenv("TOROID_TREE_BENCH_DIMS");
  const std::string big = env && *env ? env : "32x32x16";
  struct Shape {
    std::string dims;
    int iterations;
  };
  const Shape shapes[] = {{"8x8x8", 50}, {big, 3}};
  const struct {
    const char* name;
    Kind kind;
  } kinds[] = {
      {"BM_TreeBarrier/", Kind::kBarrier},
      {"BM_TreeAllreduce8B/", Kind::kTreeAllreduce},
      {"BM_TreeTorusAllreduce8B/", Kind::kTorusTree},
  };
  for (const Shape& s : shapes) {
    for (const auto& k : kinds) {
      const std::string name = k.name + s.dims;
      benchmark::RegisterBenchmark(name.c_str(), BM_TreeLatency, k.kind, s.dims)
          ->UseManualTime()
          ->Iterations(s.iterations)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  return true;
}();

}  // namespace
}  // namespace toroid::bench
