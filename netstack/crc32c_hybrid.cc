// CRC32C on two execution units at once, for CPUs with PCLMULQDQ but not
// VPCLMULQDQ (Skylake-SP, Cascade Lake). crc32c_fold128.cc alone is bound
// by the carry-less multiplier (one a cycle, two per 16 bytes), and a
// single crc32q chain by that instruction's latency; but the two run on
// different ports, so this file splits a message in four and runs both:
//
//   [ F: folded, 128 bytes a step | B1 | B2 | B3 | tail < 24 bytes ]
//
// One loop moves F's eight 16-byte accumulators 128 bytes on and, in the
// same iteration, takes kChainQwords qwords of each of B1, B2, B3 through
// three independent crc32q chains (each from register 0). At the end the
// pieces are moved to the end of B3 and xored: F's folded lane by 3S bytes
// (S = |B1| = |B2| = |B3|), B1's register by 2S - 16 and B2's by S - 16 as
// the first qword of a 16-byte lane (a register r after a piece equals
// register 0 over the next piece with r xored into its first four bytes),
// each with one or two carry-less multiplies by x^n mod P. Two crc32q reduce
// that lane from register 0, B3's register is xored in (the CRC register is
// linear in the message), and the tail continues on the single chain.
//
// The multipliers depend on S, so they come from a table indexed by S / 8,
// built by the compiler; messages longer than one chunk go chunk by chunk.
#include <array>
#include <cstring>

#include "netstack/crc32c.h"
#include "netstack/crc32c_lane128.h"

namespace toroid::crc32c_impl {
namespace {

// Per loop iteration: 128 folded bytes (16 multiplies on the multiplier's
// port) beside 3 * kChainQwords crc32q (on the CRC port). On Cascade Lake
// 6 was best (9000 B: 4 -> 36.2 GB/s, 5 -> 37.8, 6 -> 39.4, 7 -> 37.7,
// 8 -> 36.5).
constexpr size_t kChainQwords = 6;
constexpr size_t kUnit = 128 + 24 * kChainQwords;  // bytes per iteration
constexpr size_t kHybridMin = 2 * kUnit;           // below: fold128
constexpr size_t kChunk = 16384;                   // longer: chunk by chunk
constexpr size_t kMaxChunk = kChunk + kHybridMin;  // the longest one call takes

// How a chunk of len bytes splits: `units` steps of the loop (F is
// 128 * units bytes) and q qwords in each of B1, B2, B3.
struct Split {
  size_t units, q;
};
constexpr Split split(size_t len) {
  const size_t units = len / kUnit;
  return {units, (len - 128 * units) / 24};
}

constexpr size_t max_q() {
  size_t m = 0;
  for (size_t len = kHybridMin; len <= kMaxChunk; ++len) {
    const size_t q = split(len).q;
    if (q > m) m = q;
  }
  return m;
}
constexpr size_t kMaxQ = max_q();

// The multipliers for one S = 8q: F's lane moved 3S bytes (both qwords),
// B1's register 2S - 16 bytes and B2's S - 16 (first qword only).
struct Movers {
  long long f_first, f_second, b1, b2;
};
constexpr Movers movers_direct(size_t q) {
  const auto s = static_cast<unsigned>(8 * q);
  const fold_k::LaneK f = fold_k::lane_k(3 * s);
  return {f.first, f.second, fold_k::lane_k(2 * s - 16).first, fold_k::lane_k(s - 16).first};
}
// The same, entry after entry: as powers of x (fold_k::shift_by(n) is
// x^(n-1)) entry q holds x^(192q+63), x^(192q-1), x^(128q-65) and
// x^(64q-65), so each is the previous one times x^192, x^192, x^128 or x^64:
// one multiplication per value instead of a power each, which keeps the
// table within what compilers evaluate in one constant (clang stops at
// about a million steps).
constexpr std::array<Movers, kMaxQ + 1> make_movers() {
  using fold_k::mul_mod;
  using fold_k::reflected;
  using fold_k::xpow_mod;
  std::array<Movers, kMaxQ + 1> t{};
  const uint32_t by192 = xpow_mod(192), by128 = xpow_mod(128), by64 = xpow_mod(64);
  uint32_t ff = xpow_mod(192 * 2 + 63), fs = xpow_mod(192 * 2 - 1), b1 = xpow_mod(128 * 2 - 65),
           b2 = xpow_mod(64 * 2 - 65);
  for (size_t q = 2; q <= kMaxQ; ++q) {
    t[q] = {static_cast<long long>(reflected(ff)), static_cast<long long>(reflected(fs)),
            static_cast<long long>(reflected(b1)), static_cast<long long>(reflected(b2))};
    ff = mul_mod(ff, by192);
    fs = mul_mod(fs, by192);
    b1 = mul_mod(b1, by128);
    b2 = mul_mod(b2, by64);
  }
  return t;
}
constexpr std::array<Movers, kMaxQ + 1> kMovers = make_movers();
constexpr bool same(const Movers& a, const Movers& b) {
  return a.f_first == b.f_first && a.f_second == b.f_second && a.b1 == b.b1 && a.b2 == b.b2;
}
static_assert(same(kMovers[2], movers_direct(2)) && same(kMovers[3], movers_direct(3)) &&
              same(kMovers[kMaxQ], movers_direct(kMaxQ)));

using lane128::fold_onto;
using lane128::lane;
using lane128::load;

TOROID_LANE128_TARGET inline uint64_t load64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// One chunk, kHybridMin <= len <= kMaxChunk.
TOROID_LANE128_TARGET uint32_t hybrid_chunk(const uint8_t* p, size_t len, uint32_t crc) {
  const Split sp = split(len);
  const uint8_t* b1 = p + 128 * sp.units;
  const uint8_t* b2 = b1 + 8 * sp.q;
  const uint8_t* b3 = b2 + 8 * sp.q;
  const uint8_t* tail = b3 + 8 * sp.q;
  const size_t rest = len - 128 * sp.units - 24 * sp.q;

  __m128i x[8];
  lane128::start8(x, p, crc);
  const uint8_t* f = p + 128;
  uint64_t c1 = 0, c2 = 0, c3 = 0;
  const __m128i by128 = lane(fold_k::kBy128);
  for (size_t u = 1; u < sp.units; ++u) {
    for (int i = 0; i < 8; ++i) x[i] = fold_onto(x[i], by128, load(f + 16 * i));
    f += 128;
    for (size_t j = 0; j < kChainQwords; ++j) {
      c1 = _mm_crc32_u64(c1, load64(b1 + 8 * j));
      c2 = _mm_crc32_u64(c2, load64(b2 + 8 * j));
      c3 = _mm_crc32_u64(c3, load64(b3 + 8 * j));
    }
    b1 += 8 * kChainQwords;
    b2 += 8 * kChainQwords;
    b3 += 8 * kChainQwords;
  }
  // The chains' share beyond the loop (q >= kChainQwords * units).
  for (size_t j = kChainQwords * (sp.units - 1); j < sp.q; ++j) {
    c1 = _mm_crc32_u64(c1, load64(b1));
    c2 = _mm_crc32_u64(c2, load64(b2));
    c3 = _mm_crc32_u64(c3, load64(b3));
    b1 += 8;
    b2 += 8;
    b3 += 8;
  }
  const __m128i y = lane128::merge8(x);  // F's last lane
  // Everything but B3 moved to B3's last 16 bytes.
  const Movers& m = kMovers[sp.q];
  const __m128i kf = _mm_set_epi64x(m.f_second, m.f_first);
  const __m128i kb = _mm_set_epi64x(m.b2, m.b1);
  __m128i z = fold_onto(y, kf, _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(c1)), kb, 0x00));
  z = _mm_xor_si128(z, _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(c2)), kb, 0x10));
  const uint32_t c = lane128::reduce(z) ^ static_cast<uint32_t>(c3);
  return single_chain(tail, rest, ~c);
}

// Kept out of line so that short inputs pass straight on to fold128.
__attribute__((noinline)) TOROID_LANE128_TARGET uint32_t hybrid_long(const uint8_t* p, size_t len, uint32_t crc) {
  while (len > kMaxChunk) {
    crc = hybrid_chunk(p, kChunk, crc);
    p += kChunk;
    len -= kChunk;
  }
  return hybrid_chunk(p, len, crc);
}

}  // namespace

bool hybrid_supported() { return fold128_supported(); }

TOROID_LANE128_TARGET uint32_t hybrid(const void* data, size_t len, uint32_t crc) {
  if (len < kHybridMin) return fold128(data, len, crc);
  return hybrid_long(static_cast<const uint8_t*>(data), len, crc);
}

}  // namespace toroid::crc32c_impl
