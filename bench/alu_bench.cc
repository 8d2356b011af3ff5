// Throughput of the combine network's ALU (netstack/tree/alu.h): what a
// tree router spends folding one child's packet payload into its partial
// result. Every op at the widths that matter (4, 8, 16-byte words and the
// 256-byte long-precision operand) over a 64 KiB vector, next to memcpy of
// the same 64 KiB in the same run as the yardstick: alu_combine reads two
// streams and writes one, memcpy reads one and writes one.
//   BM_Alu/<op>/<u|s>/w<bytes>   bytes/s of acc combined (64 KiB per iteration)
//   BM_AluMemcpy/65536           bytes/s copied
// ADD and the bitwise ops do not depend on the type, so only MAX/MIN run
// both. MAX/MIN accumulators converge to the element-wise extreme after the
// first iteration; the kernels select without branches, so that does not
// flatter them.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "netstack/tree/alu.h"

namespace toroid::bench {
namespace {

constexpr size_t kVectorBytes = 64 * 1024;

void BM_Alu(benchmark::State& state, AluOp op, AluType type, uint32_t width) {
  std::vector<uint8_t> acc = random_bytes(kVectorBytes, 11);
  const std::vector<uint8_t> in = random_bytes(kVectorBytes, 12);
  const auto n = static_cast<uint32_t>(kVectorBytes / width);
  for (auto _ : state) {
    benchmark::DoNotOptimize(acc.data());
    alu_combine(op, type, width, acc.data(), in.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kVectorBytes));
}

void BM_AluMemcpy(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const std::vector<uint8_t> src = random_bytes(n, 13);
  std::vector<uint8_t> dst(n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(dst.data());
    std::memcpy(dst.data(), src.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
BENCHMARK(BM_AluMemcpy)->Arg(kVectorBytes);

struct Variant {
  AluOp op;
  AluType type;
};

[[maybe_unused]] const bool kRegistered = [] {
  const Variant variants[] = {
      {AluOp::kAdd, AluType::kUnsigned}, {AluOp::kMax, AluType::kUnsigned}, {AluOp::kMax, AluType::kSigned},
      {AluOp::kMin, AluType::kUnsigned}, {AluOp::kMin, AluType::kSigned},   {AluOp::kAnd, AluType::kUnsigned},
      {AluOp::kOr, AluType::kUnsigned},  {AluOp::kXor, AluType::kUnsigned},
  };
  for (uint32_t width : {4u, 8u, 16u, 256u}) {
    for (const Variant& v : variants) {
      const std::string name = std::string("BM_Alu/") + alu_op_name(v.op) +
                               (v.type == AluType::kSigned ? "/s/w" : "/u/w") + std::to_string(width);
      benchmark::RegisterBenchmark(name.c_str(), BM_Alu, v.op, v.type, width);
    }
  }
  return true;
}();

}  // namespace
}  // namespace toroid::bench
