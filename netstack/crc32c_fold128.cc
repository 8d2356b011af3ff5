// CRC32C by carry-less multiplication on 128-bit lanes (SSE4.2 + PCLMULQDQ),
// for CPUs without VPCLMULQDQ (Skylake-SP and Cascade Lake have AVX-512 but
// multiply only 128 bits at a time). The method is crc32c_fold.cc's, on
// eight independent 16-byte accumulators instead of sixteen in four ZMM
// registers: each step moves every accumulator 128 bytes on with two
// PCLMULQDQ and xors in the next 16 bytes of the message. Eight chains
// cover the multiply's latency (about 6 cycles); the multiplier's
// throughput (one a cycle, two per 16 bytes) bounds it at 8 bytes a cycle,
// three times the single chain's 8 bytes per crc32q latency of 3 cycles.
// crc32c() reaches it through crc32c_hybrid.cc, which hands it messages
// below 544 bytes and above that runs the same folding beside crc32q chains.
#include "netstack/crc32c.h"
#include "netstack/crc32c_lane128.h"

namespace toroid::crc32c_impl {
namespace {

using lane128::fold_onto;
using lane128::lane;
using lane128::load;

constexpr size_t kFold128Min = 256;  // below this the single chain is as fast

}  // namespace

bool fold128_supported() { return single_chain_supported() && __builtin_cpu_supports("pclmul"); }

TOROID_LANE128_TARGET uint32_t fold128(const void* data, size_t len, uint32_t crc) {
  if (len < kFold128Min) return single_chain(data, len, crc);
  const auto* p = static_cast<const uint8_t*>(data);
  __m128i x[8];
  lane128::start8(x, p, crc);
  p += 128;
  len -= 128;
  const __m128i by128 = lane(fold_k::kBy128);
  while (len >= 128) {
    for (int i = 0; i < 8; ++i) x[i] = fold_onto(x[i], by128, load(p + 16 * i));
    p += 128;
    len -= 128;
  }
  __m128i y = lane128::merge8(x);
  // Then 16 bytes at a time while they last.
  const __m128i by16 = lane(fold_k::kBy16);
  while (len >= 16) {
    y = fold_onto(y, by16, load(p));
    p += 16;
    len -= 16;
  }
  // The tail (< 16 bytes) continues from that register.
  return single_chain(p, len, ~lane128::reduce(y));
}

}  // namespace toroid::crc32c_impl
