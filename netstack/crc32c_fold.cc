// CRC32C by carry-less multiplication (AVX-512 VPCLMULQDQ), for the bulk of
// a frame. One crc32q chain is bound by the instruction's latency (8 bytes
// per ~3 cycles); folding has no such chain: four 512-bit accumulators each
// carry 64 bytes of the message, and every step moves each one 256 bytes on
// with two carry-less multiplies and a three-way xor, all four independent.
//
// Why it works: the CRC register after a message M (start 0, no final xor)
// is M(x) * x^32 mod P, so any shorter polynomial congruent to M mod P gives
// the same CRC. A 128-bit lane followed by D more bytes is worth
// lane * x^(8D); with F its first qword in memory and S its second, that is
// F * x^(8D+64) + S * x^(8D), and replacing both powers by their 32-bit
// remainders mod P leaves two 96-bit products that are xored onto the data
// D bytes on. At the end the four lanes fold onto the
// last one, and the remaining 128 bits go through two crc32q from state 0,
// which is exactly "multiply by x^32 and reduce".
//
// Bit order: CRC32C is reflected, so in a little-endian qword bit i is the
// coefficient of x^(63-i), and a carry-less product of two such qwords
// comes out as (a * b * x) in the same reflected 128-bit order; the
// constants below are the remainders of x^(n-1) for that reason.
#include <immintrin.h>

#include "netstack/crc32c.h"
#include "netstack/crc32c_fold_k.h"

namespace toroid::crc32c_impl {
namespace {

using fold_k::LaneK;
using fold_k::kBy16;
using fold_k::kBy32;
using fold_k::kBy48;
using fold_k::kBy64;
using fold_k::kBy128;
using fold_k::kBy256;

// Below this a single chain is as fast (one fold step plus the final
// reduction cost about as much as 8-16 crc32q).
constexpr size_t kFoldMin = 128;

#define TOROID_FOLD_TARGET __attribute__((target("avx512f,vpclmulqdq,sse4.2")))

TOROID_FOLD_TARGET inline __m512i every_lane(LaneK k) {
  return _mm512_set_epi64(k.second, k.first, k.second, k.first, k.second, k.first, k.second, k.first);
}

// x moved on by the distance k encodes (imm 0x00: first qwords multiplied,
// 0x11: second qwords), xored onto d.
TOROID_FOLD_TARGET inline __m512i fold_onto(__m512i x, __m512i k, __m512i d) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), d,
                                   0x96);  // a ^ b ^ c
}

}  // namespace

TOROID_FOLD_TARGET uint32_t fold(const void* data, size_t len, uint32_t crc) {
  if (len < kFoldMin) return single_chain(data, len, crc);
  const auto* p = static_cast<const uint8_t*>(data);
  // A register that starts at c equals one that starts at 0 over a message
  // whose first four bytes are xored with c.
  const __m512i init = _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(~crc)));
  const __m512i by64 = every_lane(kBy64);
  __m512i x;
  if (len >= 256) {
    const __m512i by256 = every_lane(kBy256);
    __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p), init);
    __m512i x1 = _mm512_loadu_si512(p + 64);
    __m512i x2 = _mm512_loadu_si512(p + 128);
    __m512i x3 = _mm512_loadu_si512(p + 192);
    p += 256;
    len -= 256;
    while (len >= 256) {
      x0 = fold_onto(x0, by256, _mm512_loadu_si512(p));
      x1 = fold_onto(x1, by256, _mm512_loadu_si512(p + 64));
      x2 = fold_onto(x2, by256, _mm512_loadu_si512(p + 128));
      x3 = fold_onto(x3, by256, _mm512_loadu_si512(p + 192));
      p += 256;
      len -= 256;
    }
    const __m512i by128 = every_lane(kBy128);
    x2 = fold_onto(x0, by128, x2);
    x3 = fold_onto(x1, by128, x3);
    x = fold_onto(x2, by64, x3);
  } else {
    x = _mm512_xor_si512(_mm512_loadu_si512(p), init);
    p += 64;
    len -= 64;
  }
  while (len >= 64) {
    x = fold_onto(x, by64, _mm512_loadu_si512(p));
    p += 64;
    len -= 64;
  }
  // Lanes 0..2 onto lane 3 (48, 32 and 16 bytes on); lane 3 stays as it is.
  const __m512i onto3 =
      _mm512_set_epi64(0, 0, kBy16.second, kBy16.first, kBy32.second, kBy32.first, kBy48.second, kBy48.first);
  const __m512i y = fold_onto(x, onto3, _mm512_maskz_mov_epi64(0xC0, x));
  // Now all four lanes sit at lane 3's place: their xor is the remainder.
  alignas(64) uint64_t q[8];
  _mm512_store_si512(q, y);
  uint64_t c = _mm_crc32_u64(0, q[0] ^ q[2] ^ q[4] ^ q[6]);
  c = _mm_crc32_u64(c, q[1] ^ q[3] ^ q[5] ^ q[7]);
  // The tail (< 64 bytes) continues from that register.
  return single_chain(p, len, ~static_cast<uint32_t>(c));
}

}  // namespace toroid::crc32c_impl
