// The folding multipliers of CRC32C (crc32c_fold.cc explains the method),
// shared by the 512-bit and the 128-bit folds; all worked out at compile time.
#pragma once
#include <cstdint>

namespace toroid::crc32c_impl::fold_k {

// Polynomials below are in normal bit order (bit d: coefficient of x^d),
// reduced mod P = Castagnoli (x^32 implicit).
constexpr uint64_t kPoly = 0x1EDC6F41u;

// a * b mod P.
constexpr uint32_t mul_mod(uint32_t a, uint32_t b) {
  uint64_t r = 0;
  for (int d = 31; d >= 0; --d) {
    r <<= 1;
    if (r >> 32) r = (r & 0xffffffffu) ^ kPoly;
    if (b >> d & 1) r ^= a;
  }
  return static_cast<uint32_t>(r);
}

// x^n mod P, by squaring: cheap enough for tables of large n.
constexpr uint32_t xpow_mod(unsigned n) {
  uint32_t r = 1, sq = 2;  // sq = x^(2^i)
  for (; n; n >>= 1) {
    if (n & 1) r = mul_mod(r, sq);
    sq = mul_mod(sq, sq);
  }
  return r;
}
static_assert(xpow_mod(32) == kPoly && xpow_mod(31) == 1u << 31);

// A remainder as the carry-less multiplier uses it: reflected in a qword.
constexpr uint64_t reflected(uint32_t r) {
  uint64_t k = 0;
  for (int d = 0; d < 32; ++d)
    if (r >> d & 1) k |= uint64_t{1} << (63 - d);
  return k;
}

// The reflected qword whose polynomial is x^(n-1) mod P (see above): a
// multiplier that moves a qword n bits further along the message.
constexpr uint64_t shift_by(unsigned n) { return reflected(xpow_mod(n - 1)); }

// The multipliers that move a 128-bit lane `bytes` on: its first qword in
// memory (the higher powers of x) by 8*bytes + 64 bits, its second by
// 8*bytes. Worked out by the compiler.
struct LaneK {
  long long first, second;
};
constexpr LaneK lane_k(unsigned bytes) {
  return {static_cast<long long>(shift_by(8 * bytes + 64)), static_cast<long long>(shift_by(8 * bytes))};
}
constexpr LaneK kBy256 = lane_k(256), kBy128 = lane_k(128), kBy64 = lane_k(64);
constexpr LaneK kBy48 = lane_k(48), kBy32 = lane_k(32), kBy16 = lane_k(16);
constexpr LaneK kBy112 = lane_k(112), kBy96 = lane_k(96), kBy80 = lane_k(80);

}  // namespace toroid::crc32c_impl::fold_k
