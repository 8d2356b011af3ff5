// Seed 004 B.3: floating-point SUM on the integer combine network, in two
// passes, exact before one final rounding (so reproducible and correctly
// rounded). The seed aligns every value to the global maximum exponent in
// one word and loses the bits below it; here the window reaches down to the
// global minimum exponent as well (pass 1 finds both), so nothing is lost,
// and a window wider than one 2048-bit operand is cut into chunks that the
// network adds separately and every node reassembles exactly. The method and
// its limits are documented in tree_arith.h, section 3.
#include <algorithm>
#include <bit>

#include "collectives/arith/arith_util.h"
#include "collectives/arith/tree_arith.h"

namespace toroid::arith {
namespace {

using detail::FloatFormat;
using detail::load;
using detail::store;

constexpr uint32_t kWordBytes = 4;  // pass-1 operand width
// The reassembly integer: (K-1)*C + 8W bits at most (K <= 2, W = 256), plus
// room for the sign extension.
constexpr uint32_t kBigWords = 66;
static_assert(kBigWords * 64 >= (8 * kAluMaxWidth - 1 - kFloatSumHeadroomBits) + 8 * kAluMaxWidth + 64);

enum Pass1Word : uint32_t { kBMax, kBMinComplement, kNan, kPosInf, kNegInf, kNotNegZero };
static_assert(kNotNegZero + 1 == kFloatSumPass1Words);
// The narrowest window (24 bits, one float) needs an 8-byte operand at least,
// so pass-2 operands are whole 64-bit words.
static_assert(24 + 1 + kFloatSumHeadroomBits > 32);

// One value's pass-1 result, parsed.
struct Pass1 {
  bool valid = true;
  bool nan = false, pos_inf = false, neg_inf = false, not_neg_zero = false;
  uint32_t bmax = 0, bmin = 0;  // 0: no finite nonzero input
  bool special() const { return nan || pos_inf || neg_inf; }
  bool needs_chunks() const { return !special() && bmax != 0; }
};

template <typename F>
Pass1 parse_pass1(const uint8_t* p1, uint32_t k) {
  using Fmt = FloatFormat<F>;
  uint32_t w[kFloatSumPass1Words];
  for (uint32_t i = 0; i < kFloatSumPass1Words; ++i) {
    w[i] = load<uint32_t>(p1 + (static_cast<size_t>(k) * kFloatSumPass1Words + i) * kWordBytes);
  }
  Pass1 r;
  r.valid = w[kNan] <= 1 && w[kPosInf] <= 1 && w[kNegInf] <= 1 && w[kNotNegZero] <= 1 && w[kBMax] < Fmt::kExpMax &&
            w[kBMinComplement] < Fmt::kExpMax && (w[kBMax] == 0) == (w[kBMinComplement] == 0);
  r.nan = w[kNan] != 0;
  r.pos_inf = w[kPosInf] != 0;
  r.neg_inf = w[kNegInf] != 0;
  r.not_neg_zero = w[kNotNegZero] != 0;
  if (w[kBMax] != 0) {
    r.bmax = w[kBMax];
    r.bmin = Fmt::kExpMax - w[kBMinComplement];
    if (r.bmin > r.bmax) r.valid = false;
  }
  return r;
}

// Value bits of a window, and bits per chunk of a W-byte operand.
template <typename F>
uint32_t window_bits(const Pass1& s) {
  return s.bmax - s.bmin + FloatFormat<F>::kPrecision;
}
uint32_t chunk_bits(uint32_t width) { return 8 * width - 1 - kFloatSumHeadroomBits; }
uint32_t chunks(uint32_t window, uint32_t width) { return (window + chunk_bits(width) - 1) / chunk_bits(width); }

// Smallest ALU width of at least `bits` bits.
uint32_t alu_width_for(uint32_t bits) {
  const uint32_t bytes = (bits + 7) / 8;
  if (bytes <= 4) return 4;
  if (bytes <= 8) return 8;
  if (bytes <= 16) return 16;
  return (bytes + 7) / 8 * 8;
}

// Two's complement negation of a little-endian multiword integer.
void negate(uint64_t* w, uint32_t n) {
  uint64_t carry = 1;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t v = ~w[i] + carry;
    carry = (carry != 0 && v == 0) ? 1 : 0;
    w[i] = v;
  }
}

// Bits [pos, pos + count) of a multiword integer, pos >= 0, 1 <= count <= 64;
// bits past the end read as zero.
uint64_t get_bits(const uint64_t* w, uint32_t n, int64_t pos, uint32_t count) {
  const auto q = static_cast<uint64_t>(pos / 64);
  const auto r = static_cast<uint32_t>(pos % 64);
  const auto at = [&](uint64_t i) { return i < n ? w[i] : 0; };
  uint64_t v = at(q) >> r;
  if (r != 0) v |= at(q + 1) << (64 - r);
  return count == 64 ? v : v & ((uint64_t{1} << count) - 1);
}

// Any bit set below `pos`?
bool any_below(const uint64_t* w, uint32_t n, int64_t pos) {
  if (pos <= 0) return false;
  const auto full = static_cast<uint32_t>(std::min<int64_t>(pos / 64, n));
  for (uint32_t i = 0; i < full; ++i) {
    if (w[i] != 0) return true;
  }
  if (full < n && pos % 64 != 0) return (w[full] & ((uint64_t{1} << (pos % 64)) - 1)) != 0;
  return false;
}

// Round sign * mag * 2^e0 to F once: to nearest, ties to even, gradual
// underflow, overflow to infinity. mag is not zero.
template <typename F>
F round_to(bool negative, const uint64_t* mag, uint32_t n, int64_t e0) {
  using Fmt = FloatFormat<F>;
  using U = typename Fmt::U;
  constexpr int kP = Fmt::kPrecision;
  constexpr int64_t kMinLsb = 2 - Fmt::kBias - kP;  // weight of the least subnormal
  const U sign = negative ? detail::kSignBit<F> : U{0};
  const U inf = sign | U{Fmt::kExpMax} << (kP - 1);

  uint32_t hw = n - 1;
  while (mag[hw] == 0) --hw;  // mag != 0, so this stops
  const int64_t h = int64_t{64} * hw + 63 - std::countl_zero(mag[hw]);  // its leading bit
  const int64_t top = e0 + h;               // weight of the leading bit
  if (top > Fmt::kBias) return detail::from_bits<F>(inf);
  int64_t lsb = std::max<int64_t>(top - (kP - 1), kMinLsb);
  const int64_t r = lsb - e0;  // bits of mag below the result's last place
  uint64_t m;
  if (r <= 0) {
    m = get_bits(mag, n, 0, kP) << -r;  // exact: fewer than kP bits, shifted up
  } else {
    m = get_bits(mag, n, r, kP);
    const bool half = get_bits(mag, n, r - 1, 1) != 0;
    const bool sticky = any_below(mag, n, r - 1);
    if (half && (sticky || (m & 1) != 0)) ++m;
    if (m == uint64_t{1} << kP) {  // rounded up to the next binade
      m >>= 1;
      ++lsb;
    }
  }
  if (m < uint64_t{1} << (kP - 1)) return detail::from_bits<F>(sign | static_cast<U>(m));  // subnormal
  const int64_t e = lsb - kMinLsb + 1;                                                     // biased exponent
  if (e >= Fmt::kExpMax) return detail::from_bits<F>(inf);
  return detail::from_bits<F>(sign | static_cast<U>(e) << (kP - 1) | (static_cast<U>(m) & ((U{1} << (kP - 1)) - 1)));
}

}  // namespace

TreePass float_sum_pass1(uint32_t n) {
  return TreePass{AluOp::kMax, AluType::kUnsigned, kWordBytes, n * kFloatSumPass1Words};
}

TreePass float_sum_pass2(const FloatSumPlan& plan) {
  return TreePass{AluOp::kAdd, AluType::kSigned, plan.width, plan.operands};
}

template <typename F>
void float_sum_pass1_encode(const F* x, uint32_t n, uint8_t* out) {
  using Fmt = FloatFormat<F>;
  using U = typename Fmt::U;
  for (uint32_t k = 0; k < n; ++k) {
    const U u = detail::bits_of(x[k]);
    const bool neg = (u & detail::kSignBit<F>) != 0;
    const auto e = static_cast<uint32_t>((u >> (Fmt::kPrecision - 1)) & Fmt::kExpMax);
    const bool nonzero = (u & ~detail::kSignBit<F>) != 0;
    uint32_t w[kFloatSumPass1Words] = {};
    if (e == Fmt::kExpMax) {
      const bool nan = detail::is_nan_bits<F>(u);
      w[kNan] = nan;
      w[kPosInf] = !nan && !neg;
      w[kNegInf] = !nan && neg;
    } else if (nonzero) {
      const uint32_t b = std::max<uint32_t>(e, 1);
      w[kBMax] = b;
      w[kBMinComplement] = Fmt::kExpMax - b;
    }
    w[kNotNegZero] = u != detail::kSignBit<F>;
    for (uint32_t i = 0; i < kFloatSumPass1Words; ++i) {
      store<uint32_t>(out + (static_cast<size_t>(k) * kFloatSumPass1Words + i) * kWordBytes, w[i]);
    }
  }
}

template <typename F>
Result<FloatSumPlan> float_sum_plan(const uint8_t* pass1, uint32_t n, uint64_t nodes) {
  if (nodes > kFloatSumMaxNodes) {
    return error(Code::kOutOfRange, "float sum: %llu nodes exceed 2^%u (the headroom of the fixed-point window)",
                 static_cast<unsigned long long>(nodes), kFloatSumHeadroomBits);
  }
  uint32_t widest = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const Pass1 s = parse_pass1<F>(pass1, k);
    if (!s.valid) return error(Code::kInvalid, "float sum: pass-1 result of value %u is inconsistent", k);
    if (s.needs_chunks()) widest = std::max(widest, window_bits<F>(s));
  }
  FloatSumPlan plan;
  if (widest == 0) return plan;  // every result is settled by pass 1
  const uint32_t need = widest + 1 + kFloatSumHeadroomBits;
  plan.width = need <= 8 * kAluMaxWidth ? alu_width_for(need) : kAluMaxWidth;
  uint64_t operands = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const Pass1 s = parse_pass1<F>(pass1, k);
    if (s.needs_chunks()) operands += chunks(window_bits<F>(s), plan.width);
  }
  if (operands > UINT32_MAX) return error(Code::kOutOfRange, "float sum: %u values need too many operands", n);
  plan.operands = static_cast<uint32_t>(operands);
  return plan;
}

template <typename F>
void float_sum_pass2_encode(const FloatSumPlan& plan, const uint8_t* pass1, const F* x, uint32_t n, uint8_t* out) {
  using Fmt = FloatFormat<F>;
  using U = typename Fmt::U;
  constexpr int kP = Fmt::kPrecision;
  const uint32_t nw = plan.width / 8;  // plan widths are multiples of 8 bytes
  const auto c = static_cast<int64_t>(chunk_bits(plan.width));
  uint8_t* op = out;
  for (uint32_t k = 0; k < n; ++k) {
    const Pass1 s = parse_pass1<F>(pass1, k);
    if (!s.needs_chunks()) continue;
    const uint32_t kc = chunks(window_bits<F>(s), plan.width);
    const U u = detail::bits_of(x[k]);
    const auto e = static_cast<uint32_t>((u >> (kP - 1)) & Fmt::kExpMax);
    // x = +-m * 2^(b - ...): m's lowest bit sits at `offset` in the window.
    const uint64_t m = (u & ((U{1} << (kP - 1)) - 1)) | (e != 0 ? uint64_t{1} << (kP - 1) : 0);
    const int64_t offset = static_cast<int64_t>(std::max<uint32_t>(e, 1)) - s.bmin;
    const bool neg = (u & detail::kSignBit<F>) != 0;
    for (uint32_t j = 0; j < kc; ++j, op += plan.width) {
      uint64_t w[kAluMaxWidth / 8] = {};
      int64_t sh = offset - j * c;  // m's lowest bit relative to this chunk
      if (m != 0 && sh < c && sh + kP > 0) {
        uint64_t v = m;
        if (sh < 0) {
          v >>= -sh;
          sh = 0;
        }
        if (c - sh < 64) v &= (uint64_t{1} << (c - sh)) - 1;  // the rest is the next chunk's
        w[sh / 64] |= v << (sh % 64);
        if (sh % 64 != 0 && sh / 64 + 1 < static_cast<int64_t>(nw)) w[sh / 64 + 1] |= v >> (64 - sh % 64);
        if (neg) negate(w, nw);
      }
      std::memcpy(op, w, plan.width);
    }
  }
}

template <typename F>
void float_sum_decode(const FloatSumPlan& plan, const uint8_t* pass1, const uint8_t* pass2, uint32_t n, F* sum) {
  using Fmt = FloatFormat<F>;
  constexpr int kP = Fmt::kPrecision;
  const uint32_t nw = plan.width / 8;
  const uint32_t c = plan.width != 0 ? chunk_bits(plan.width) : 0;
  const uint8_t* op = pass2;
  for (uint32_t k = 0; k < n; ++k) {
    const Pass1 s = parse_pass1<F>(pass1, k);
    if (s.nan || (s.pos_inf && s.neg_inf)) {
      sum[k] = detail::quiet_nan<F>();
      continue;
    }
    if (s.special()) {
      sum[k] = s.pos_inf ? std::numeric_limits<F>::infinity() : -std::numeric_limits<F>::infinity();
      continue;
    }
    const F zero = s.not_neg_zero ? F(0) : -F(0);
    if (!s.needs_chunks()) {
      sum[k] = zero;
      continue;
    }
    // Reassemble sum_j S_j * 2^(j*C) in two's complement, every chunk sum
    // sign-extended to the top.
    const uint32_t kc = chunks(window_bits<F>(s), plan.width);
    const uint32_t big = std::min(kBigWords, ((kc - 1) * c + 8 * plan.width) / 64 + 2);
    uint64_t t[kBigWords] = {};
    for (uint32_t j = 0; j < kc; ++j, op += plan.width) {
      uint64_t w[kAluMaxWidth / 8];
      std::memcpy(w, op, plan.width);
      const uint64_t fill = (w[nw - 1] >> 63) != 0 ? ~uint64_t{0} : 0;
      const auto ext = [&](int64_t i) { return i < 0 ? 0 : i < static_cast<int64_t>(nw) ? w[i] : fill; };
      const int64_t q = j * c / 64;
      const uint32_t r = j * c % 64;
      uint64_t carry = 0;
      for (uint32_t i = 0; i < big; ++i) {
        const uint64_t a = r == 0 ? ext(i - q) : (ext(i - q) << r) | (ext(i - q - 1) >> (64 - r));
        const unsigned __int128 acc = static_cast<unsigned __int128>(t[i]) + a + carry;
        t[i] = static_cast<uint64_t>(acc);
        carry = static_cast<uint64_t>(acc >> 64);
      }
    }
    const bool negative = (t[big - 1] >> 63) != 0;
    if (negative) negate(t, big);
    bool zero_sum = true;
    for (uint32_t i = 0; i < big && zero_sum; ++i) zero_sum = t[i] == 0;
    if (zero_sum) {
      sum[k] = zero;
      continue;
    }
    const int64_t e0 = static_cast<int64_t>(s.bmin) - Fmt::kBias - (kP - 1);  // weight of window bit 0
    sum[k] = round_to<F>(negative, t, big, e0);
  }
}

template void float_sum_pass1_encode<double>(const double*, uint32_t, uint8_t*);
template void float_sum_pass1_encode<float>(const float*, uint32_t, uint8_t*);
template Result<FloatSumPlan> float_sum_plan<double>(const uint8_t*, uint32_t, uint64_t);
template Result<FloatSumPlan> float_sum_plan<float>(const uint8_t*, uint32_t, uint64_t);
template void float_sum_pass2_encode<double>(const FloatSumPlan&, const uint8_t*, const double*, uint32_t, uint8_t*);
template void float_sum_pass2_encode<float>(const FloatSumPlan&, const uint8_t*, const float*, uint32_t, uint8_t*);
template void float_sum_decode<double>(const FloatSumPlan&, const uint8_t*, const uint8_t*, uint32_t, double*);
template void float_sum_decode<float>(const FloatSumPlan&, const uint8_t*, const uint8_t*, uint32_t, float*);

}  // namespace toroid::arith
