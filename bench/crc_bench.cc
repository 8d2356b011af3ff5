// CRC32C throughput (every frame is checksummed on send and on receive) at
// the frame sizes that matter: minimum, small, Ethernet MTU, page, jumbo.
// BM_Crc32c is what the link runs (crc32c(): the fastest implementation this
// CPU has, named in the label); beside it, in the same run, each
// implementation it chooses from, and ISA-L's crc32_iscsi where the build
// found libisal: the single chain is the yardstick of the "3x" in
// docs/bench.md. memcpy of the same sizes runs alongside too: a CRC that
// reaches a good fraction of memcpy is not the bottleneck of a frame.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "bench/bench_util.h"
#include "netstack/crc32c.h"

#ifdef TOROID_HAVE_ISAL
#include <isa-l/crc.h>
#endif

namespace toroid::bench {
namespace {

void frame_sizes(benchmark::internal::Benchmark* b) {
  for (int n : {64, 256, 1500, 4096, 9000}) b->Arg(n);
}

using CrcFn = uint32_t (*)(const void*, size_t, uint32_t);

void crc_throughput(benchmark::State& state, CrcFn fn) {
  const auto n = static_cast<size_t>(state.range(0));
  const std::vector<uint8_t> buf = random_bytes(n, 1);
  uint32_t crc = 0;
  for (auto _ : state) {
    // Chain the result so iterations cannot overlap or be hoisted.
    crc = fn(buf.data(), n, crc);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}

void BM_Crc32c(benchmark::State& state) {
  crc_throughput(state, crc32c);
  state.SetLabel(crc32c_impl::chosen());
}
BENCHMARK(BM_Crc32c)->Apply(frame_sizes);

// fn where the CPU runs it; a benchmark that says why where it does not.
void crc_throughput_if(benchmark::State& state, bool supported, const char* missing, CrcFn fn) {
  if (!supported) {
    state.SkipWithError(missing);
    return;
  }
  crc_throughput(state, fn);
}

void BM_Crc32cSingleChain(benchmark::State& state) {
  crc_throughput_if(state, crc32c_impl::single_chain_supported(), "no SSE4.2 on this CPU", crc32c_impl::single_chain);
}
BENCHMARK(BM_Crc32cSingleChain)->Apply(frame_sizes);

void BM_Crc32cFold128(benchmark::State& state) {
  crc_throughput_if(state, crc32c_impl::fold128_supported(), "no PCLMULQDQ on this CPU", crc32c_impl::fold128);
}
BENCHMARK(BM_Crc32cFold128)->Apply(frame_sizes);

void BM_Crc32cHybrid(benchmark::State& state) {
  crc_throughput_if(state, crc32c_impl::hybrid_supported(), "no PCLMULQDQ on this CPU", crc32c_impl::hybrid);
}
BENCHMARK(BM_Crc32cHybrid)->Apply(frame_sizes);

void BM_Crc32cPortable(benchmark::State& state) { crc_throughput(state, crc32c_impl::portable); }
BENCHMARK(BM_Crc32cPortable)->Apply(frame_sizes);

#ifdef TOROID_HAVE_ISAL
// ISA-L's register convention has neither the initial nor the final
// inversion: wrapped here so that it computes exactly crc32c().
uint32_t isal_crc32c(const void* data, size_t len, uint32_t crc) {
  return ~crc32_iscsi(static_cast<unsigned char*>(const_cast<void*>(data)), static_cast<int>(len), ~crc);
}

void BM_Crc32cIsal(benchmark::State& state) {
  const std::vector<uint8_t> check = random_bytes(9000, 3);
  if (isal_crc32c(check.data(), check.size(), 0) != crc32c(check.data(), check.size())) {
    state.SkipWithError("ISA-L crc32_iscsi disagrees with crc32c()");
    return;
  }
  crc_throughput(state, isal_crc32c);
}
BENCHMARK(BM_Crc32cIsal)->Apply(frame_sizes);
#endif

void BM_Memcpy(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const std::vector<uint8_t> src = random_bytes(n, 2);
  std::vector<uint8_t> dst(n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(dst.data());
    std::memcpy(dst.data(), src.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
BENCHMARK(BM_Memcpy)->Apply(frame_sizes);

}  // namespace
}  // namespace toroid::bench
