// CRC32C by carry-less multiplication on 128-bit lanes (SSE4.2 + PCLMULQDQ),
// for CPUs without VPCLMULQDQ (Skylake-SP and Cascade Lake have AVX-512 but
// multiply only 128 bits at a time). The method is crc32c_fold.cc's, on
// eight independent 16-byte accumulators instead of sixteen in four ZMM
// registers: each step moves every accumulator 128 bytes on with two
// PCLMULQDQ and xors in the next 16 bytes of the message. Eight chains
// cover the multiply's latency (about 6 cycles); the multiplier's
// throughput (one a cycle, two per 16 bytes) bounds it at 8 bytes a cycle,
// three times the single chain's 8 bytes per crc32q latency of 3 cycles.
#include <immintrin.h>

#include "netstack/crc32c.h"
#include "netstack/crc32c_fold_k.h"

namespace toroid::crc32c_impl {
namespace {

constexpr size_t kFold128Min = 256;  // below this the single chain is as fast

#define TOROID_FOLD128_TARGET __attribute__((target("sse4.2,pclmul")))

TOROID_FOLD128_TARGET inline __m128i lane(fold_k::LaneK k) { return _mm_set_epi64x(k.second, k.first); }

// x moved on by the distance k encodes, xored onto d.
TOROID_FOLD128_TARGET inline __m128i fold_onto(__m128i x, __m128i k, __m128i d) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), d);
}

TOROID_FOLD128_TARGET inline __m128i load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

}  // namespace

bool fold128_supported() { return single_chain_supported() && __builtin_cpu_supports("pclmul"); }

TOROID_FOLD128_TARGET uint32_t fold128(const void* data, size_t len, uint32_t crc) {
  if (len < kFold128Min) return single_chain(data, len, crc);
  const auto* p = static_cast<const uint8_t*>(data);
  // A register that starts at c equals one that starts at 0 over a message
  // whose first four bytes are xored with c.
  __m128i x[8];
  x[0] = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(~crc)));
  for (int i = 1; i < 8; ++i) x[i] = load(p + 16 * i);
  p += 128;
  len -= 128;
  const __m128i by128 = lane(fold_k::kBy128);
  while (len >= 128) {
    for (int i = 0; i < 8; ++i) x[i] = fold_onto(x[i], by128, load(p + 16 * i));
    p += 128;
    len -= 128;
  }
  // Eight accumulators onto the last: accumulator i is 16 * (7 - i) bytes
  // before it.
  const __m128i k[7] = {lane(fold_k::kBy112), lane(fold_k::kBy96), lane(fold_k::kBy80), lane(fold_k::kBy64),
                        lane(fold_k::kBy48),  lane(fold_k::kBy32), lane(fold_k::kBy16)};
  __m128i y = x[7];
  for (int i = 0; i < 7; ++i) y = fold_onto(x[i], k[i], y);
  // Then 16 bytes at a time while they last.
  const __m128i by16 = lane(fold_k::kBy16);
  while (len >= 16) {
    y = fold_onto(y, by16, load(p));
    p += 16;
    len -= 16;
  }
  uint64_t c = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(y)));
  c = _mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(y, 1)));
  // The tail (< 16 bytes) continues from that register.
  return single_chain(p, len, ~static_cast<uint32_t>(c));
}

}  // namespace toroid::crc32c_impl
