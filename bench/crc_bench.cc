// CRC32C throughput (every frame is checksummed on send and on receive) at
// the frame sizes that matter: minimum, small, Ethernet MTU, page, jumbo.
// memcpy of the same sizes runs alongside as the yardstick: a CRC that
// reaches a good fraction of memcpy is not the bottleneck of a frame.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "bench/bench_util.h"
#include "netstack/crc32c.h"

namespace toroid::bench {
namespace {

void frame_sizes(benchmark::internal::Benchmark* b) {
  for (int n : {64, 256, 1500, 4096, 9000}) b->Arg(n);
}

void BM_Crc32c(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const std::vector<uint8_t> buf = random_bytes(n, 1);
  uint32_t crc = 0;
  for (auto _ : state) {
    // Chain the result so iterations cannot overlap or be hoisted.
    crc = crc32c(buf.data(), n, crc);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
BENCHMARK(BM_Crc32c)->Apply(frame_sizes);

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
