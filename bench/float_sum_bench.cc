// The local work of an exact double sum (collectives/repro_exact.h) per
// stage, on the bench job's data (mixed signs, exponents in [-24, 24]: a
// 101-bit window per block, 13-byte fields on 2 nodes): what the two network
// passes cost on top of the inner allreduce, next to memcpy of the doubles.
//   BM_FloatSum/<stage>/<values>   bytes/s of doubles (8 B per value)
//   stages: pass1 (encode), plan, encode (pass 2), add (the ALU ADD one
//   peer's pass-2 operands take on 2 nodes), decode; encode_negzero and
//   decode_negzero: the same data with every 97th value -0 (so nearly every
//   block carries the -0 counter)
//   BM_FloatSumParts/<how>/<parts>   one slice's local sum at a rank of
//   allreduce exact-share (collectives/repro_exact_share.h): `parts`
//   contributions of 32768 / parts values each, 90 binades (two chunks on 8
//   nodes, as the bench job's 8-node data), pass 1 of all parts, the plan,
//   the pass-2 fields, the decoding; how = summed (the vector kernels add
//   the parts before packing) or each (encode every part, then the ALU's
//   ADD). Bytes/s of all parts' doubles.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bench/bench_util.h"
#include "collectives/arith/float_sum_layout.h"
#include "collectives/arith/tree_arith.h"
#include "netstack/tree/alu.h"

namespace toroid::bench {
namespace {

constexpr uint64_t kNodes = 2;

enum class Stage { kPass1, kPlan, kEncode, kAdd, kDecode };

std::vector<double> spread_doubles(size_t n, uint64_t seed, bool neg_zeros, int binades = 49) {
  SplitMix r(seed);
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = r.next();
    x[i] = (k & 1 ? -1.0 : 1.0) *
           std::ldexp(1.0 + static_cast<double>(k >> 11) * 0x1p-53, static_cast<int>(k % binades) - binades / 2);
    if (neg_zeros && i % 97 == 0) x[i] = -0.0;
  }
  return x;
}

// Which vector kernels ran (the label): "avx512-vbmi", "avx512bw" or "portable".
const char* kernels_label() {
  const arith::detail::FloatSumKernels* k = arith::detail::float_sum_kernels();
  return k ? k->name : "portable";
}

void BM_FloatSum(benchmark::State& state, Stage stage, bool neg_zeros, int binades = 49) {
  const auto n = static_cast<uint32_t>(state.range(0));
  const std::vector<double> x = spread_doubles(n, 21, neg_zeros, binades);
  std::vector<uint8_t> p1(arith::float_sum_pass1(n).bytes());
  arith::float_sum_pass1_encode<double>(x.data(), n, p1.data());
  const arith::FloatSumPlan plan = *arith::float_sum_plan<double>(p1.data(), n, kNodes);
  const arith::TreePass p2 = arith::float_sum_pass2(plan);
  std::vector<uint8_t> enc(p2.bytes()), peer(p2.bytes());
  arith::float_sum_pass2_encode<double>(plan, p1.data(), x.data(), n, enc.data());
  std::memcpy(peer.data(), enc.data(), enc.size());
  std::vector<double> sum(n);
  for (auto _ : state) {
    switch (stage) {
      case Stage::kPass1: arith::float_sum_pass1_encode<double>(x.data(), n, p1.data()); break;
      case Stage::kPlan: benchmark::DoNotOptimize(arith::float_sum_plan<double>(p1.data(), n, kNodes)); break;
      case Stage::kEncode: arith::float_sum_pass2_encode<double>(plan, p1.data(), x.data(), n, enc.data()); break;
      case Stage::kAdd: alu_combine(p2.op, p2.type, p2.width, enc.data(), peer.data(), p2.operands); break;
      case Stage::kDecode: arith::float_sum_decode<double>(plan, p1.data(), enc.data(), n, sum.data()); break;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * 8);
  state.counters["pass2_B_per_value"] = static_cast<double>(p2.bytes()) / n;
  state.SetLabel(kernels_label());
}

void BM_FloatSumParts(benchmark::State& state, bool summed) {
  const auto parts = static_cast<uint32_t>(state.range(0));
  const uint32_t n = 32768 / parts;
  std::vector<std::vector<double>> x;
  std::vector<const double*> xs;
  for (uint32_t j = 0; j < parts; ++j) x.push_back(spread_doubles(n, 31 + j, false, 90));
  for (const auto& v : x) xs.push_back(v.data());
  std::vector<uint8_t> p1(arith::float_sum_pass1(n).bytes());
  std::vector<uint8_t> enc, tmp;
  std::vector<double> sum(n);
  for (auto _ : state) {
    arith::float_sum_pass1_encode_parts<double>(xs.data(), parts, n, p1.data());
    const arith::FloatSumPlan plan = *arith::float_sum_plan<double>(p1.data(), n, parts);
    const arith::TreePass p2 = arith::float_sum_pass2(plan);
    enc.resize(p2.bytes());
    if (!summed || !arith::float_sum_pass2_encode_sum<double>(plan, p1.data(), xs.data(), parts, n, enc.data())) {
      tmp.resize(p2.bytes());
      arith::float_sum_pass2_encode<double>(plan, p1.data(), xs[0], n, enc.data());
      for (uint32_t j = 1; j < parts; ++j) {
        arith::float_sum_pass2_encode<double>(plan, p1.data(), xs[j], n, tmp.data());
        alu_combine(p2.op, p2.type, p2.width, enc.data(), tmp.data(), p2.operands);
      }
    }
    arith::float_sum_decode<double>(plan, p1.data(), enc.data(), n, sum.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * parts * 8);
  state.SetLabel(kernels_label());
}

BENCHMARK_CAPTURE(BM_FloatSumParts, summed, true)->Arg(3)->Arg(8);
BENCHMARK_CAPTURE(BM_FloatSumParts, each, false)->Arg(3)->Arg(8);

BENCHMARK_CAPTURE(BM_FloatSum, pass1, Stage::kPass1, false)->Arg(8192)->Arg(131072)->Arg(524288);
BENCHMARK_CAPTURE(BM_FloatSum, plan, Stage::kPlan, false)->Arg(8192)->Arg(131072)->Arg(524288);
BENCHMARK_CAPTURE(BM_FloatSum, encode, Stage::kEncode, false)->Arg(8192)->Arg(131072)->Arg(524288);
BENCHMARK_CAPTURE(BM_FloatSum, add, Stage::kAdd, false)->Arg(8192)->Arg(131072)->Arg(524288);
BENCHMARK_CAPTURE(BM_FloatSum, decode, Stage::kDecode, false)->Arg(8192)->Arg(131072)->Arg(524288);
BENCHMARK_CAPTURE(BM_FloatSum, encode_negzero, Stage::kEncode, true)->Arg(131072);
BENCHMARK_CAPTURE(BM_FloatSum, decode_negzero, Stage::kDecode, true)->Arg(131072);
BENCHMARK_CAPTURE(BM_FloatSum, encode_wide, Stage::kEncode, false, 90)->Arg(131072);
BENCHMARK_CAPTURE(BM_FloatSum, decode_wide, Stage::kDecode, false, 90)->Arg(131072);

}  // namespace
}  // namespace toroid::bench
