// Internal to collectives/arith: the pass-2 layout of the blockwise exact
// float SUM (tree_arith.h section 3), shared by the portable code in
// float_sum.cc and the vector kernels in float_sum_avx512.cc. Everything
// here is a pure function of the pass-1 result and the node count, so every
// node derives the same layout.
//
// Pass 1 gives, per block of kFloatSumBlock values, the largest and smallest
// exponent b = max(biased exponent, 1) of the block's finite nonzero inputs
// over all nodes, and a flag (some -0, some Inf/NaN). In pass 2 every value
// of a block is a fixed-point integer X = +-m * 2^(b - bmin) in a window of
// V = bmax - bmin + p bits, cut into chunks of at most C = 127 - h value bits
// (h = ceil(log2 N)); chunk k of a value travels as the biased field
// u = 2^c + X_k (c its value bits, |X_k| < 2^c), so 0 < u < 2^(c+1) and the
// sum of N fields stays below 2^(c+1+h) <= 2^F, F = c + 1 + h rounded up to
// whole bytes: no carry ever leaves a field, whatever order the ALU adds in.
// Flagged blocks add count fields: per value one (h+1)-bit counter each of
// -0 inputs, and for Inf/NaN blocks of NaN, +Inf and -Inf inputs.
//
// A group is 8 consecutive values of a block (the vector end padded with
// zeros); its chunk k is a sub-block of 8 fields of F bits, F bytes in all,
// field j at byte j*F/8. Sub-blocks follow each other (group by group; in a
// group chunk 0..K-1, then the count fields) in ALU operands of `width`
// bytes; a sub-block that does not fit the rest of an operand starts the
// next one, the rest staying zero. A field never straddles two operands, so
// the ALU's long-precision ADD, which carries within an operand only, adds
// every field exactly.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "collectives/arith/arith_util.h"
#include "collectives/arith/tree_arith.h"

namespace toroid::arith::detail {

using u128 = unsigned __int128;

constexpr uint32_t kGroup = 8;               // values per sub-block
constexpr uint32_t kMaxFieldBits = 128;      // one field fits a u128
constexpr uint32_t kPass1WordBytes = 4;

enum Pass1Word : uint32_t { kBMax, kBMinComplement, kFlags };
static_assert(kFlags + 1 == kFloatSumPass1Words);
enum BlockFlag : uint32_t { kFlagNone = 0, kFlagNegZero = 1, kFlagSpecial = 2 };
enum Counter : uint32_t { kCountNegZero, kCountNan, kCountPosInf, kCountNegInf };

// h: bits of headroom for N summands, ceil(log2 N) (0 for one node).
inline uint32_t headroom_bits(uint64_t nodes) {
  return nodes <= 1 ? 0 : static_cast<uint32_t>(64 - std::countl_zero(nodes - 1));
}

inline uint32_t round_up8(uint32_t bits) { return (bits + 7) / 8 * 8; }

// A value's window reaches from the smallest exponent's lowest bit to the
// largest's highest: at most kExpMax - 2 + p bits; chunks of at least
// 127 - 32 bits cut it in at most kMaxChunks; the reassembled sum of the
// chunks, with headroom and sign, fits kBigWords words.
constexpr uint32_t kMaxChunks = 24;
constexpr uint32_t kBigWords = 40;
static_assert(kMaxChunks * (kMaxFieldBits - 1 - 32) >= FloatFormat<double>::kExpMax - 2 + 53);
static_assert(kBigWords * 64 >= FloatFormat<double>::kExpMax - 2 + 53 + 33 + 3 * 64);

// One block's pass-1 result.
struct Block {
  bool valid = true;
  uint32_t bmax = 0, bmin = 0;  // 0: no finite nonzero input
  uint32_t flag = kFlagNone;
};

template <typename F>
Block parse_block(const uint8_t* p1, uint32_t block) {
  using Fmt = FloatFormat<F>;
  const uint8_t* w = p1 + static_cast<size_t>(block) * kFloatSumPass1Words * kPass1WordBytes;
  const auto bmax = load<uint32_t>(w + kBMax * kPass1WordBytes);
  const auto bminc = load<uint32_t>(w + kBMinComplement * kPass1WordBytes);
  Block b;
  b.flag = load<uint32_t>(w + kFlags * kPass1WordBytes);
  b.valid = b.flag <= kFlagSpecial && bmax < Fmt::kExpMax && bminc < Fmt::kExpMax && (bmax == 0) == (bminc == 0);
  if (bmax != 0) {
    b.bmax = bmax;
    b.bmin = Fmt::kExpMax - bminc;
    if (b.bmin > b.bmax) b.valid = false;
  }
  return b;
}

// The fields of one group of a block: chunks 0..K-1 (lowest first), then
// count fields.
struct Layout {
  uint32_t h = 0;
  uint32_t window = 0;      // V value bits (0: no finite nonzero input)
  uint32_t chunks = 0;      // K
  uint32_t chunk_bits = 0;  // C: value bits of every chunk below the top one
  uint32_t counters = 0;    // 0, 1 (-0) or 4 (-0, NaN, +Inf, -Inf)
  uint32_t per_count = 0;   // counters per count field
  uint32_t count_fields = 0;

  uint32_t subs() const { return chunks + count_fields; }
  uint32_t bits(uint32_t k) const { return k + 1 < chunks ? chunk_bits : window - (chunks - 1) * chunk_bits; }
  uint32_t counters_in(uint32_t f) const { return std::min(per_count, counters - f * per_count); }
  // Bits per field of sub-block i (= bytes of the sub-block).
  uint32_t field_bits(uint32_t i) const {
    return i < chunks ? round_up8(bits(i) + 1 + h) : round_up8(counters_in(i - chunks) * (h + 1));
  }
};

template <typename F>
Layout layout_of(const Block& b, uint32_t h) {
  Layout l;
  l.h = h;
  if (b.bmax != 0) {
    l.window = b.bmax - b.bmin + FloatFormat<F>::kPrecision;
    l.chunk_bits = kMaxFieldBits - 1 - h;
    l.chunks = (l.window + l.chunk_bits - 1) / l.chunk_bits;
  }
  l.counters = b.flag == kFlagSpecial ? 4 : b.flag == kFlagNegZero ? 1 : 0;
  if (l.counters != 0) {
    l.per_count = std::min(l.counters, kMaxFieldBits / (h + 1));
    l.count_fields = (l.counters + l.per_count - 1) / l.per_count;
  }
  return l;
}

// Places sub-blocks in operands of `width` bytes (see the top).
class Cursor {
 public:
  explicit Cursor(uint32_t width) : width_(width) {}
  // Byte offset of a sub-block of `size` bytes. With `zero_to`, the unused
  // rest of an operand left behind is zeroed there.
  size_t place(uint32_t size, uint8_t* zero_to = nullptr) {
    if (at_ + size > width_) {
      if (zero_to != nullptr) std::memset(zero_to + operand_ * width_ + at_, 0, width_ - at_);
      ++operand_;
      at_ = 0;
    }
    const size_t pos = operand_ * width_ + at_;
    at_ += size;
    return pos;
  }
  void finish(uint8_t* zero_to) const {
    if (at_ != 0) std::memset(zero_to + operand_ * width_ + at_, 0, width_ - at_);
  }
  uint64_t operands() const { return operand_ + (at_ != 0 ? 1 : 0); }

 private:
  uint64_t width_;
  uint64_t operand_ = 0;
  uint32_t at_ = 0;
};

// Fields of `bytes` bytes (1..16) at p + j * bytes, j < 8, when the buffer
// holds `room` bytes from p on. While 16 bytes fit, a field is one 16-byte
// access (a store spills into the next field, which is written after it).
inline void store_fields(uint8_t* p, uint32_t bytes, const u128* u, size_t room) {
  for (uint32_t j = 0; j < kGroup; ++j, p += bytes, room -= bytes) {
    if (room >= 16) std::memcpy(p, &u[j], 16);
    else std::memcpy(p, &u[j], bytes);
  }
}

inline void load_fields(const uint8_t* p, uint32_t bytes, u128* u, size_t room) {
  const u128 mask = bytes >= 16 ? ~u128{0} : (u128{1} << (8 * bytes)) - 1;
  for (uint32_t j = 0; j < kGroup; ++j, p += bytes, room -= bytes) {
    u128 v = 0;
    if (room >= 16) std::memcpy(&v, p, 16);
    else std::memcpy(&v, p, bytes);
    u[j] = v & mask;
  }
}

// ---- the vector kernels (float_sum_avx512.cc), for doubles in blocks of one
// chunk without counters or with the -0 counter alone in byte fields
// (neg_zeros), or of two chunks without counters.
struct FloatSumKernels {
  const char* name;  // "avx512-vbmi" or "avx512bw"
  // The pass-1 words of one block of len (1..64) doubles, xs[j][at..at+len)
  // for j < parts: the MAX of each part's words.
  void (*pass1)(const double* const* xs, uint32_t parts, uint32_t at, uint32_t len, uint32_t* w);
  // One block of len (1..64) values, xs[j][at..at+len) for j < parts, into
  // sub-blocks placed by cur: each field the sum of the parts' fields, as
  // the ALU's ADD of their separate encodings would give (one part: the
  // encoding itself).
  void (*encode)(const double* const* xs, uint32_t parts, uint32_t at, uint32_t len, uint32_t bmin, uint32_t window,
                 uint32_t field_bits, bool neg_zeros, Cursor& cur, uint8_t* out);
  // The same for a block of two chunks without counters.
  void (*encode2)(const double* const* xs, uint32_t parts, uint32_t at, uint32_t len, uint32_t bmin, uint32_t window,
                  uint32_t chunk_bits, uint32_t field_bits0, uint32_t field_bits1, Cursor& cur, uint8_t* out);
  // One block's summed sub-blocks into len results; e0 is the weight of
  // window bit 0, h the counters' headroom bits.
  void (*decode)(const uint8_t* in, uint32_t len, uint32_t field_bits, uint32_t window, uint64_t nodes, uint32_t h,
                 bool neg_zeros, int64_t e0, Cursor& cur, double* sum);
  // One block of two chunks' summed sub-blocks into len results.
  void (*decode2)(const uint8_t* in, uint32_t len, uint32_t window, uint32_t chunk_bits, uint32_t field_bits0,
                  uint32_t field_bits1, uint64_t nodes, int64_t e0, Cursor& cur, double* sum);
};
// Each build of the kernels, or nullptr where this CPU does not run it:
// AVX-512 F, BW, CD, VBMI and VBMI2, and AVX-512 F, BW and CD alone.
const FloatSumKernels* float_sum_kernels_vbmi();
const FloatSumKernels* float_sum_kernels_bw();
// The kernels in use (the first of the two the CPU runs), nullptr: the
// portable code does everything.
const FloatSumKernels* float_sum_kernels();
// Tests: false keeps every block on the portable code, true restores the
// choice above (default true); use_kernels runs a given build.
void float_sum_use_vector(bool on);
void float_sum_use_kernels(const FloatSumKernels* k);
// Round sign * mag * 2^e0 (n words, not zero) to a double, as the portable
// decode does (float_sum.cc): the vector kernels' slow lanes.
double round_words(bool negative, const uint64_t* mag, uint32_t n, int64_t e0);

// ---- rounding, shared by the portable code and the vector kernels' slow lanes

// Weight of the least subnormal: 2^(2 - bias - p).
template <typename F>
constexpr int64_t min_lsb() {
  return 2 - FloatFormat<F>::kBias - FloatFormat<F>::kPrecision;
}

// sign | biased exponent e | fraction bits.
template <typename F>
F pack_rounded(bool negative, uint64_t frac, uint32_t e) {
  using U = typename FloatFormat<F>::U;
  const U sign = negative ? kSignBit<F> : U{0};
  return from_bits<F>(sign | static_cast<U>(U{e} << (FloatFormat<F>::kPrecision - 1)) | static_cast<U>(frac));
}

// The float whose significand, already rounded, is m (at most 2^p) with its
// last place at weight 2^lsb (lsb >= min_lsb; lsb = min_lsb for subnormals).
template <typename F>
F finish_rounded(bool negative, uint64_t m, int64_t lsb) {
  using Fmt = FloatFormat<F>;
  constexpr int kP = Fmt::kPrecision;
  if (m == uint64_t{1} << kP) {  // rounded up into the next binade
    m >>= 1;
    ++lsb;
  }
  if (m < uint64_t{1} << (kP - 1)) return pack_rounded<F>(negative, m, 0);  // subnormal (or zero)
  const int64_t e = lsb - min_lsb<F>() + 1;
  if (e >= Fmt::kExpMax) return pack_rounded<F>(negative, 0, Fmt::kExpMax);
  return pack_rounded<F>(negative, m & ((uint64_t{1} << (kP - 1)) - 1), static_cast<uint32_t>(e));
}

// Round sign * a * 2^e0 to F once (a != 0, e0 >= min_lsb): to nearest,
// ties to even, gradual underflow, overflow to infinity.
template <typename F>
F round_u128(bool negative, u128 a, int64_t e0) {
  using Fmt = FloatFormat<F>;
  constexpr int kP = Fmt::kPrecision;
  const auto hi = static_cast<uint64_t>(a >> 64);
  const int k = hi != 0 ? 128 - std::countl_zero(hi) : 64 - std::countl_zero(static_cast<uint64_t>(a));
  const int64_t top = e0 + k - 1;  // weight of the leading bit
  if (top > Fmt::kBias) return pack_rounded<F>(negative, 0, Fmt::kExpMax);
  const int64_t lsb = std::max<int64_t>(top - (kP - 1), min_lsb<F>());
  const int64_t r = lsb - e0;  // bits below the result's last place, < k since e0 >= min_lsb
  if (r <= 0) return finish_rounded<F>(negative, static_cast<uint64_t>(a) << -r, lsb);
  uint64_t m = static_cast<uint64_t>(a >> r);
  const bool half = ((a >> (r - 1)) & 1) != 0;
  const bool sticky = (a & ((u128{1} << (r - 1)) - 1)) != 0;
  if (half && (sticky || (m & 1) != 0)) ++m;
  return finish_rounded<F>(negative, m, lsb);
}

}  // namespace toroid::arith::detail
