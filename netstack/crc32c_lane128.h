// The 128-bit folding steps shared by crc32c_fold128.cc and
// crc32c_hybrid.cc (crc32c_fold.cc explains the method): SSE4.2 + PCLMULQDQ.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "netstack/crc32c_fold_k.h"

#define TOROID_LANE128_TARGET __attribute__((target("sse4.2,pclmul")))

namespace toroid::crc32c_impl::lane128 {

TOROID_LANE128_TARGET inline __m128i lane(fold_k::LaneK k) { return _mm_set_epi64x(k.second, k.first); }

TOROID_LANE128_TARGET inline __m128i load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// x moved on by the distance k encodes, xored onto d.
TOROID_LANE128_TARGET inline __m128i fold_onto(__m128i x, __m128i k, __m128i d) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), d);
}

// Eight accumulators from the first 128 bytes of a message, continuing the
// CRC crc: a register that starts at c equals one that starts at 0 over a
// message whose first four bytes are xored with c.
TOROID_LANE128_TARGET inline void start8(__m128i (&x)[8], const uint8_t* p, uint32_t crc) {
  x[0] = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(~crc)));
  for (int i = 1; i < 8; ++i) x[i] = load(p + 16 * i);
}

// Eight accumulators over 128 consecutive bytes folded onto the last one
// (accumulator i is 16 * (7 - i) bytes before it).
TOROID_LANE128_TARGET inline __m128i merge8(const __m128i (&x)[8]) {
  const __m128i k[7] = {lane(fold_k::kBy112), lane(fold_k::kBy96), lane(fold_k::kBy80), lane(fold_k::kBy64),
                        lane(fold_k::kBy48),  lane(fold_k::kBy32), lane(fold_k::kBy16)};
  __m128i y = x[7];
  for (int i = 0; i < 7; ++i) y = fold_onto(x[i], k[i], y);
  return y;
}

// The CRC register (start 0) after a 16-byte lane: two crc32q.
TOROID_LANE128_TARGET inline uint32_t reduce(__m128i y) {
  const uint64_t c = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(y)));
  return static_cast<uint32_t>(_mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(y, 1))));
}

}  // namespace toroid::crc32c_impl::lane128
