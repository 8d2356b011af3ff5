// Cost of one routing decision (netstack/route.h) on a small and a large
// torus. Each benchmark walks a precomputed table of random (cur, dst)
// pairs, one decision per iteration, so the branch predictor sees the
// spread of a real traffic mix instead of memorising a single pair.
//   minimal_hints   at the source, once per packet
//   next_hop        at every hop (dimension order + dateline VC)
//   productive_dirs at every hop of an adaptive packet
#include <benchmark/benchmark.h>

#include <vector>

#include "bench/bench_util.h"
#include "netstack/route.h"

namespace toroid::bench {
namespace {

constexpr uint32_t kPairs = 4096;  // power of two; ~112 KB: L2-resident, too many to memorise
static_assert((kPairs & (kPairs - 1)) == 0);

struct Pair {
  Coord cur;
  Coord dst;
  uint8_t hints;  // minimal hints from cur to dst (as the source would have set them)
  uint8_t flags;  // random dateline-crossed bits
};

Dims dims_arg(const benchmark::State& state) {
  Dims d;
  d.n = {static_cast<uint32_t>(state.range(0)), static_cast<uint32_t>(state.range(1)),
         static_cast<uint32_t>(state.range(2))};
  return d;
}

std::vector<Pair> make_pairs(const Dims& d) {
  SplitMix r(0x70707);
  std::vector<Pair> v(kPairs);
  for (auto& p : v) {
    p.cur = random_coord(r, d);
    p.dst = random_coord(r, d);
    p.hints = minimal_hints(p.cur, p.dst, d);
    p.flags = static_cast<uint8_t>(r.next() & wire::kTorusCrossedAll);
  }
  return v;
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"x", "y", "z"});
  b->Args({8, 8, 8});
  b->Args({64, 32, 32});
}

void BM_RouteMinimalHints(benchmark::State& state) {
  const Dims d = dims_arg(state);
  const std::vector<Pair> pairs = make_pairs(d);
  uint32_t i = 0, sink = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i];
    i = (i + 1) & (kPairs - 1);
    sink += minimal_hints(p.cur, p.dst, d);
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_RouteMinimalHints)->Apply(shapes);

void BM_RouteNextHop(benchmark::State& state) {
  const Dims d = dims_arg(state);
  const std::vector<Pair> pairs = make_pairs(d);
  uint32_t i = 0, sink = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i];
    i = (i + 1) & (kPairs - 1);
    Hop hop{};
    bool bad = false;
    const bool fwd = next_hop(p.cur, p.dst, p.hints, p.flags, d, Dateline::kOn, &hop, &bad);
    sink += static_cast<uint32_t>(hop.dir) + hop.vc + fwd + bad;
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_RouteNextHop)->Apply(shapes);

void BM_RouteProductiveDirs(benchmark::State& state) {
  const Dims d = dims_arg(state);
  const std::vector<Pair> pairs = make_pairs(d);
  uint32_t i = 0, sink = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i];
    i = (i + 1) & (kPairs - 1);
    sink += productive_dirs(p.cur, p.dst, p.hints, d);
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_RouteProductiveDirs)->Apply(shapes);

}  // namespace
}  // namespace toroid::bench
