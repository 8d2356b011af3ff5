// Seed 004 B.3: floating-point SUM on the integer combine network, in two
// passes, exact before one final rounding (so reproducible and correctly
// rounded). The seed aligns every value to the global maximum exponent in
// one word and loses the bits below it; here pass 1 finds, per block of 64
// values, both the largest and the smallest exponent, and pass 2 carries
// every value as a fixed-point integer over its block's window, wide enough
// to lose nothing and no wider: a block whose values lie within a few
// binades costs about as much as the doubles themselves. The method, its
// layout and its cost are documented in tree_arith.h section 3 and
// float_sum_layout.h; this file is the portable implementation, which the
// vector kernels (float_sum_avx512.cc) match byte for byte.
#include <algorithm>
#include <atomic>
#include <bit>
#include <type_traits>

#include "collectives/arith/float_sum_layout.h"

namespace toroid::arith {

using namespace detail;

namespace {

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

// Round sign * mag * 2^e0 to F once (a multiword mag, not zero): to nearest,
// ties to even, gradual underflow, overflow to infinity.
template <typename F>
F round_big(bool negative, const uint64_t* mag, uint32_t n, int64_t e0) {
  using Fmt = FloatFormat<F>;
  constexpr int kP = Fmt::kPrecision;
  uint32_t hw = n - 1;
  while (mag[hw] == 0) --hw;  // mag != 0, so this stops
  const int64_t top = e0 + int64_t{64} * hw + 63 - std::countl_zero(mag[hw]);  // weight of the leading bit
  if (top > Fmt::kBias) return pack_rounded<F>(negative, 0, Fmt::kExpMax);
  int64_t lsb = std::max<int64_t>(top - (kP - 1), min_lsb<F>());
  const int64_t r = lsb - e0;  // bits of mag below the result's last place
  uint64_t m;
  if (r <= 0) {
    m = get_bits(mag, n, 0, kP) << -r;  // exact: fewer than kP bits, shifted up
  } else {
    m = get_bits(mag, n, r, kP);
    const bool half = get_bits(mag, n, r - 1, 1) != 0;
    if (half && (any_below(mag, n, r - 1) || (m & 1) != 0)) ++m;
  }
  return finish_rounded<F>(negative, m, lsb);
}

// What a value contributes to pass 2.
struct Contribution {
  uint64_t m = 0;         // significand with the hidden bit (0: nothing in the window)
  uint32_t t = 0;         // its lowest bit's place in the window: b - bmin
  bool neg = false;
  uint32_t counters = 0;  // bit i: counter i (enum Counter) counts this value
};

template <typename F>
Contribution contribution(F x, uint32_t bmin) {
  using Fmt = FloatFormat<F>;
  using U = typename Fmt::U;
  constexpr int kP = Fmt::kPrecision;
  const U u = bits_of(x);
  const auto e = static_cast<uint32_t>((u >> (kP - 1)) & Fmt::kExpMax);
  const U frac = u & ((U{1} << (kP - 1)) - 1);
  Contribution c;
  c.neg = (u & kSignBit<F>) != 0;
  if (e == Fmt::kExpMax) {
    c.counters = frac != 0 ? 1u << kCountNan : c.neg ? 1u << kCountNegInf : 1u << kCountPosInf;
  } else if ((u & ~kSignBit<F>) != 0) {
    c.m = static_cast<uint64_t>(frac) | (e != 0 ? uint64_t{1} << (kP - 1) : 0);
    c.t = std::max<uint32_t>(e, 1) - bmin;
  } else if (c.neg) {
    c.counters = 1u << kCountNegZero;
  }
  return c;
}

// Bits [base, base + c) of m * 2^t, c <= 127.
u128 window_piece(uint64_t m, uint32_t t, uint32_t base, uint32_t c) {
  const int64_t s = static_cast<int64_t>(t) - base;
  const u128 mask = (u128{1} << c) - 1;
  if (m == 0 || s >= static_cast<int64_t>(c) || s <= -64) return 0;
  return (s >= 0 ? u128{m} << s : u128{m >> -s}) & mask;
}

template <typename F>
void encode_group(const Block& b, const Layout& l, const F* x, uint32_t cnt, Cursor& cur, uint8_t* out,
                  size_t total) {
  Contribution v[kGroup];
  for (uint32_t j = 0; j < kGroup; ++j) v[j] = contribution<F>(j < cnt ? x[j] : F(0), b.bmin);
  u128 u[kGroup];
  for (uint32_t i = 0; i < l.subs(); ++i) {
    const uint32_t fb = l.field_bits(i);
    const size_t pos = cur.place(fb, out);
    if (i < l.chunks) {
      const uint32_t c = l.bits(i);
      for (uint32_t j = 0; j < kGroup; ++j) {
        const u128 piece = window_piece(v[j].m, v[j].t, i * l.chunk_bits, c);
        u[j] = (u128{1} << c) + (v[j].neg ? -piece : piece);
      }
    } else {
      const uint32_t first = (i - l.chunks) * l.per_count;
      for (uint32_t j = 0; j < kGroup; ++j) {
        u[j] = 0;
        for (uint32_t k = 0; k < l.counters_in(i - l.chunks); ++k)
          u[j] |= u128{(v[j].counters >> (first + k)) & 1u} << (k * (l.h + 1));
      }
    }
    store_fields(out + pos, fb / 8, u, total - pos);
  }
}

template <typename F>
F zero_sum(const Layout& l, uint64_t neg_zeros, uint64_t nodes) {
  return l.counters != 0 && neg_zeros == nodes ? -F(0) : F(0);
}

template <typename F>
void decode_group(const Block& b, const Layout& l, uint64_t nodes, const uint8_t* in, Cursor& cur, size_t total,
                  F* sum, uint32_t cnt) {
  using Fmt = FloatFormat<F>;
  u128 s[kMaxChunks][kGroup];  // chunk sums, two's complement
  // Zeroed only where the block has counters (the rest never reads them):
  // a 256-byte fill per group was a fifth of a two-chunk decode.
  uint64_t counts[4][kGroup];
  if (l.counters != 0) std::memset(counts, 0, sizeof counts);
  const auto neg_zeros = [&](uint32_t j) { return l.counters != 0 ? counts[kCountNegZero][j] : 0; };
  for (uint32_t i = 0; i < l.subs(); ++i) {
    const uint32_t fb = l.field_bits(i);
    const size_t pos = cur.place(fb);
    u128 u[kGroup];
    load_fields(in + pos, fb / 8, u, total - pos);
    if (i < l.chunks) {
      const u128 bias = static_cast<u128>(nodes) << l.bits(i);
      for (uint32_t j = 0; j < kGroup; ++j) s[i][j] = u[j] - bias;
    } else {
      const uint32_t first = (i - l.chunks) * l.per_count;
      const u128 mask = (u128{1} << (l.h + 1)) - 1;
      for (uint32_t j = 0; j < kGroup; ++j)
        for (uint32_t k = 0; k < l.counters_in(i - l.chunks); ++k)
          counts[first + k][j] = static_cast<uint64_t>((u[j] >> (k * (l.h + 1))) & mask);
    }
  }
  const int64_t e0 = static_cast<int64_t>(b.bmin) - Fmt::kBias - (Fmt::kPrecision - 1);  // weight of window bit 0
  for (uint32_t j = 0; j < cnt; ++j) {
    if (l.counters == 4) {
      const bool pinf = counts[kCountPosInf][j] != 0, ninf = counts[kCountNegInf][j] != 0;
      if (counts[kCountNan][j] != 0 || (pinf && ninf)) {
        sum[j] = quiet_nan<F>();
        continue;
      }
      if (pinf || ninf) {
        sum[j] = pinf ? std::numeric_limits<F>::infinity() : -std::numeric_limits<F>::infinity();
        continue;
      }
    }
    if (l.chunks == 0) {
      sum[j] = zero_sum<F>(l, neg_zeros(j), nodes);
    } else if (l.chunks == 1) {
      const bool neg = (s[0][j] >> 127) != 0;
      const u128 a = neg ? -s[0][j] : s[0][j];
      sum[j] = a == 0 ? zero_sum<F>(l, neg_zeros(j), nodes) : round_u128<F>(neg, a, e0);
    } else if (l.chunks == 2) {
      // S0 + S1 * 2^C as a signed 256-bit (hi, lo): |S| < 2^(V + h) <=
      // 2^(2C + h) < 2^255. The general loop below does the same over
      // words, about twice as slowly.
      using i128 = __int128;
      const auto s0 = static_cast<i128>(s[0][j]);
      const auto s1 = static_cast<i128>(s[1][j]);
      const uint32_t c = l.chunk_bits;  // 96 .. 127
      const u128 lo1 = static_cast<u128>(s1) << c;
      const i128 hi1 = s1 >> (128 - c);
      u128 lo = static_cast<u128>(s0) + lo1;
      u128 hi = static_cast<u128>((s0 < 0 ? i128{-1} : i128{0}) + hi1) + (lo < lo1 ? 1 : 0);
      const bool neg = (hi >> 127) != 0;
      if (neg) {
        lo = ~lo + 1;
        hi = ~hi + (lo == 0 ? 1 : 0);
      }
      if (hi == 0) {
        sum[j] = lo == 0 ? zero_sum<F>(l, neg_zeros(j), nodes) : round_u128<F>(neg, lo, e0);
      } else {
        const uint64_t w[4] = {static_cast<uint64_t>(lo), static_cast<uint64_t>(lo >> 64), static_cast<uint64_t>(hi),
                               static_cast<uint64_t>(hi >> 64)};
        sum[j] = round_big<F>(neg, w, 4, e0);
      }
    } else {
      // Sum of S_k * 2^(k*C) in two's complement, each S_k sign-extended.
      const uint32_t big = std::min(kBigWords, (l.window + l.h + 63) / 64 + 3);
      uint64_t t[kBigWords];
      std::fill(t, t + big, uint64_t{0});  // the words used only
      for (uint32_t k = 0; k < l.chunks; ++k) {
        const uint64_t w[2] = {static_cast<uint64_t>(s[k][j]), static_cast<uint64_t>(s[k][j] >> 64)};
        const uint64_t fill = (w[1] >> 63) != 0 ? ~uint64_t{0} : 0;
        const auto ext = [&](int64_t i) { return i < 0 ? 0 : i < 2 ? w[i] : fill; };
        const int64_t q = int64_t{k} * l.chunk_bits / 64;
        const uint32_t r = k * l.chunk_bits % 64;
        uint64_t carry = 0;
        for (uint32_t i = 0; i < big; ++i) {
          const uint64_t a = r == 0 ? ext(i - q) : (ext(i - q) << r) | (ext(i - q - 1) >> (64 - r));
          const u128 acc = static_cast<u128>(t[i]) + a + carry;
          t[i] = static_cast<uint64_t>(acc);
          carry = static_cast<uint64_t>(acc >> 64);
        }
      }
      const bool neg = (t[big - 1] >> 63) != 0;
      if (neg) {  // two's complement negation
        uint64_t carry = 1;
        for (uint32_t i = 0; i < big; ++i) {
          t[i] = ~t[i] + carry;
          carry = carry != 0 && t[i] == 0;
        }
      }
      bool zero = true;
      for (uint32_t i = 0; i < big && zero; ++i) zero = t[i] == 0;
      sum[j] = zero ? zero_sum<F>(l, neg_zeros(j), nodes) : round_big<F>(neg, t, big, e0);
    }
  }
}

const FloatSumKernels* best_kernels() {
  const FloatSumKernels* k = float_sum_kernels_vbmi();
  return k ? k : float_sum_kernels_bw();
}

std::atomic<const FloatSumKernels*> g_kernels{best_kernels()};

// The vector kernels take a block when the CPU runs them and its layout is
// theirs: doubles, one chunk, no counters or the -0 counter alone in byte
// fields (up to 128 nodes).
template <typename F>
bool vector_block(const Layout& l) {
  return std::is_same_v<F, double> && l.chunks == 1 &&
         (l.counters == 0 || (l.counters == 1 && l.field_bits(1) == 8)) && float_sum_kernels();
}

// And blocks of two chunks without counters.
template <typename F>
bool vector_block2(const Layout& l) {
  return std::is_same_v<F, double> && l.chunks == 2 && l.counters == 0 && l.chunk_bits > 64 && float_sum_kernels();
}

// A block the vector kernels take: the sum of `parts` contributions'
// encodings (one: the encoding), from value `at` of each.
void encode_vector_block(const Block& b, const Layout& l, const double* const* xs, uint32_t parts, uint32_t at,
                         uint32_t len, Cursor& cur, uint8_t* out) {
  const FloatSumKernels* k = float_sum_kernels();
  if (l.chunks == 1) {
    k->encode(xs, parts, at, len, b.bmin, l.window, l.field_bits(0), l.counters != 0, cur, out);
  } else {
    k->encode2(xs, parts, at, len, b.bmin, l.window, l.chunk_bits, l.field_bits(0), l.field_bits(1), cur, out);
  }
}

uint32_t blocks_of(uint32_t n) { return (n + kFloatSumBlock - 1) / kFloatSumBlock; }
uint32_t block_len(uint32_t n, uint32_t blk) { return std::min(kFloatSumBlock, n - blk * kFloatSumBlock); }
uint32_t groups_of(uint32_t len) { return (len + kGroup - 1) / kGroup; }

}  // namespace

double detail::round_words(bool negative, const uint64_t* mag, uint32_t n, int64_t e0) {
  return round_big<double>(negative, mag, n, e0);
}

TreePass float_sum_pass1(uint32_t n) {
  return TreePass{AluOp::kMax, AluType::kUnsigned, kPass1WordBytes, blocks_of(n) * kFloatSumPass1Words};
}

TreePass float_sum_pass2(const FloatSumPlan& plan) {
  return TreePass{AluOp::kAdd, AluType::kUnsigned, plan.width, plan.operands};
}

template <typename F>
void float_sum_pass1_encode(const F* x, uint32_t n, uint8_t* out) {
  float_sum_pass1_encode_parts<F>(&x, 1, n, out);
}

template <typename F>
void float_sum_pass1_encode_parts(const F* const* xs, uint32_t parts, uint32_t n, uint8_t* out) {
  using Fmt = FloatFormat<F>;
  using U = typename Fmt::U;
  constexpr int kP = Fmt::kPrecision;
  const FloatSumKernels* kern = std::is_same_v<F, double> ? float_sum_kernels() : nullptr;
  for (uint32_t blk = 0; blk < blocks_of(n); ++blk) {
    const uint32_t at = blk * kFloatSumBlock;
    uint32_t w[kFloatSumPass1Words] = {};
    const uint32_t len = block_len(n, blk);
    if constexpr (std::is_same_v<F, double>) {
      if (kern) kern->pass1(xs, parts, at, len, w);
    }
    for (uint32_t j = 0; j < parts && !kern; ++j) {
      const F* xb = xs[j] + at;
      for (uint32_t k = 0; k < len; ++k) {  // branch-free, so it vectorises
        const U u = bits_of(xb[k]);
        const auto e = static_cast<uint32_t>((u >> (kP - 1)) & Fmt::kExpMax);
        const bool special = e == Fmt::kExpMax;
        const bool finite_nz = !special && (u & ~kSignBit<F>) != 0;
        const uint32_t b = std::max<uint32_t>(e, 1);
        w[kBMax] = std::max(w[kBMax], finite_nz ? b : 0u);
        w[kBMinComplement] = std::max(w[kBMinComplement], finite_nz ? Fmt::kExpMax - b : 0u);
        w[kFlags] =
            std::max(w[kFlags], special ? uint32_t{kFlagSpecial} : u == kSignBit<F> ? uint32_t{kFlagNegZero} : 0u);
      }
    }
    for (uint32_t i = 0; i < kFloatSumPass1Words; ++i) {
      store<uint32_t>(out + (static_cast<size_t>(blk) * kFloatSumPass1Words + i) * kPass1WordBytes, w[i]);
    }
  }
}

template <typename F>
Result<FloatSumPlan> float_sum_plan(const uint8_t* pass1, uint32_t n, uint64_t nodes) {
  if (nodes == 0 || nodes > kFloatSumMaxNodes) {
    return error(Code::kOutOfRange, "float sum: %llu nodes: the exact sum covers 1 to 2^32",
                 static_cast<unsigned long long>(nodes));
  }
  FloatSumPlan plan;
  plan.nodes = nodes;
  plan.headroom = headroom_bits(nodes);
  // The operand width, so that uniform data fills every operand: whole
  // multiples of the most frequent group's sub-blocks together (a group of
  // two chunks, 128 + 24 bytes, fills a 152-byte operand where 240 bytes
  // held it alone), if the largest sub-block fits; otherwise whole
  // multiples of the most frequent sub-block size.
  uint64_t by_size[kMaxFieldBits / 8 + 1] = {};
  uint64_t by_group[kAluMaxWidth / 8 + 1] = {};  // groups by their bytes / 8, up to an operand
  uint32_t largest = 0;                          // sub-block bytes
  for (uint32_t blk = 0; blk < blocks_of(n); ++blk) {
    const Block b = parse_block<F>(pass1, blk);
    if (!b.valid) return error(Code::kInvalid, "float sum: pass-1 result of block %u is inconsistent", blk);
    const Layout l = layout_of<F>(b, plan.headroom);
    uint32_t group = 0;
    for (uint32_t i = 0; i < l.subs(); ++i) {
      by_size[l.field_bits(i) / 8] += groups_of(block_len(n, blk));
      group += l.field_bits(i);  // 8 fields of field_bits bits: field_bits bytes
      largest = std::max(largest, l.field_bits(i));
    }
    if (group != 0 && group <= kAluMaxWidth) by_group[group / 8] += groups_of(block_len(n, blk));
  }
  const auto mode = static_cast<uint32_t>(std::max_element(by_size, by_size + kMaxFieldBits / 8 + 1) - by_size);
  if (by_size[mode] == 0) return plan;  // every result is settled by pass 1
  const auto gmode = static_cast<uint32_t>(std::max_element(by_group, by_group + kAluMaxWidth / 8 + 1) - by_group);
  const uint32_t gwidth = by_group[gmode] != 0 ? 8 * gmode * (kAluMaxWidth / (8 * gmode)) : 0;
  plan.width = gwidth >= largest ? gwidth : 8 * mode * (kAluMaxWidth / (8 * mode));
  Cursor cur(plan.width);
  for (uint32_t blk = 0; blk < blocks_of(n); ++blk) {
    const Layout l = layout_of<F>(parse_block<F>(pass1, blk), plan.headroom);
    for (uint32_t g = 0; g < groups_of(block_len(n, blk)); ++g)
      for (uint32_t i = 0; i < l.subs(); ++i) cur.place(l.field_bits(i));
  }
  if (cur.operands() > UINT32_MAX) return error(Code::kOutOfRange, "float sum: %u values need too many operands", n);
  plan.operands = static_cast<uint32_t>(cur.operands());
  return plan;
}

template <typename F>
void float_sum_pass2_encode(const FloatSumPlan& plan, const uint8_t* pass1, const F* x, uint32_t n, uint8_t* out) {
  if (plan.operands == 0) return;
  const size_t total = float_sum_pass2(plan).bytes();
  Cursor cur(plan.width);
  for (uint32_t blk = 0; blk < blocks_of(n); ++blk) {
    const Block b = parse_block<F>(pass1, blk);
    const Layout l = layout_of<F>(b, plan.headroom);
    if (l.subs() == 0) continue;
    const uint32_t len = block_len(n, blk);
    const F* xb = x + static_cast<size_t>(blk) * kFloatSumBlock;
    if constexpr (std::is_same_v<F, double>) {
      if (vector_block<F>(l) || vector_block2<F>(l)) {
        encode_vector_block(b, l, &xb, 1, 0, len, cur, out);
        continue;
      }
    }
    for (uint32_t g = 0; g < groups_of(len); ++g) {
      encode_group<F>(b, l, xb + g * kGroup, std::min(kGroup, len - g * kGroup), cur, out, total);
    }
  }
  cur.finish(out);
}

template <typename F>
bool float_sum_pass2_encode_sum(const FloatSumPlan& plan, const uint8_t* pass1, const F* const* xs, uint32_t parts,
                                uint32_t n, uint8_t* out) {
  if constexpr (!std::is_same_v<F, double>) {
    return false;
  } else {
    if (plan.operands == 0) return true;
    for (uint32_t blk = 0; blk < blocks_of(n); ++blk) {
      const Layout l = layout_of<F>(parse_block<F>(pass1, blk), plan.headroom);
      if (l.subs() != 0 && !vector_block<F>(l) && !vector_block2<F>(l)) return false;
    }
    Cursor cur(plan.width);
    for (uint32_t blk = 0; blk < blocks_of(n); ++blk) {
      const Block b = parse_block<F>(pass1, blk);
      const Layout l = layout_of<F>(b, plan.headroom);
      if (l.subs() != 0)
        encode_vector_block(b, l, xs, parts, blk * kFloatSumBlock, block_len(n, blk), cur, out);
    }
    cur.finish(out);
    return true;
  }
}

template <typename F>
void float_sum_decode(const FloatSumPlan& plan, const uint8_t* pass1, const uint8_t* pass2, uint32_t n, F* sum) {
  const size_t total = float_sum_pass2(plan).bytes();
  Cursor cur(plan.width);
  for (uint32_t blk = 0; blk < blocks_of(n); ++blk) {
    const Block b = parse_block<F>(pass1, blk);
    const Layout l = layout_of<F>(b, plan.headroom);
    const uint32_t len = block_len(n, blk);
    F* sb = sum + static_cast<size_t>(blk) * kFloatSumBlock;
    if (l.subs() == 0) {  // only +0 inputs (a -0 or a special would have flagged the block)
      std::fill(sb, sb + len, F(0));
      continue;
    }
    if constexpr (std::is_same_v<F, double>) {
      const int64_t e0 = static_cast<int64_t>(b.bmin) - FloatFormat<F>::kBias - (FloatFormat<F>::kPrecision - 1);
      if (vector_block<F>(l)) {
        float_sum_kernels()->decode(pass2, len, l.field_bits(0), l.window, plan.nodes, l.h, l.counters != 0, e0, cur,
                                    sb);
        continue;
      }
      if (vector_block2<F>(l)) {
        float_sum_kernels()->decode2(pass2, len, l.window, l.chunk_bits, l.field_bits(0), l.field_bits(1), plan.nodes,
                                     e0, cur, sb);
        continue;
      }
    }
    for (uint32_t g = 0; g < groups_of(len); ++g) {
      decode_group<F>(b, l, plan.nodes, pass2, cur, total, sb + g * kGroup, std::min(kGroup, len - g * kGroup));
    }
  }
}

namespace detail {
void float_sum_use_vector(bool on) { g_kernels.store(on ? best_kernels() : nullptr, std::memory_order_relaxed); }
void float_sum_use_kernels(const FloatSumKernels* k) { g_kernels.store(k, std::memory_order_relaxed); }
const FloatSumKernels* float_sum_kernels() { return g_kernels.load(std::memory_order_relaxed); }
}  // namespace detail

template void float_sum_pass1_encode<double>(const double*, uint32_t, uint8_t*);
template void float_sum_pass1_encode<float>(const float*, uint32_t, uint8_t*);
template void float_sum_pass1_encode_parts<double>(const double* const*, uint32_t, uint32_t, uint8_t*);
template void float_sum_pass1_encode_parts<float>(const float* const*, uint32_t, uint32_t, uint8_t*);
template Result<FloatSumPlan> float_sum_plan<double>(const uint8_t*, uint32_t, uint64_t);
template Result<FloatSumPlan> float_sum_plan<float>(const uint8_t*, uint32_t, uint64_t);
template void float_sum_pass2_encode<double>(const FloatSumPlan&, const uint8_t*, const double*, uint32_t, uint8_t*);
template void float_sum_pass2_encode<float>(const FloatSumPlan&, const uint8_t*, const float*, uint32_t, uint8_t*);
template bool float_sum_pass2_encode_sum<double>(const FloatSumPlan&, const uint8_t*, const double* const*, uint32_t,
                                                 uint32_t, uint8_t*);
template bool float_sum_pass2_encode_sum<float>(const FloatSumPlan&, const uint8_t*, const float* const*, uint32_t,
                                                uint32_t, uint8_t*);
template void float_sum_decode<double>(const FloatSumPlan&, const uint8_t*, const uint8_t*, uint32_t, double*);
template void float_sum_decode<float>(const FloatSumPlan&, const uint8_t*, const uint8_t*, uint32_t, float*);

}  // namespace toroid::arith
