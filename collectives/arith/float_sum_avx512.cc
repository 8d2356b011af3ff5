// The blockwise exact double SUM's hot loops (tree_arith.h section 3,
// float_sum_layout.h) in AVX-512, eight values per instruction, picked at
// run time: this file is compiled twice, for CPUs with AVX-512 F, BW, CD,
// VBMI and VBMI2 (Ice Lake and later: one vpermt2b per byte permute, funnel
// shifts), and as float_sum_avx512bw.cc for AVX-512 F, BW and CD alone
// (Skylake-SP, Cascade Lake: each byte permute as two word permutes and two
// in-lane byte shuffles, each funnel shift as two shifts). They produce
// exactly the bytes and doubles of the portable code in float_sum.cc (the
// tests run both on the same inputs), for the common case only: doubles in
// a block of one chunk (fields of at most 128 bits) without counters, or
// with the one -0 counter in byte fields (up to 128 nodes; a -0 input, as a
// zero of a data set often is, flags its block), or two chunks without
// counters (bits [0, C) and [C, V) of the window, each a piece of its own;
// the decode adds S0 + S1 * 2^C over four words and rounds as for one).
// Everything else, and every lane whose result is subnormal or infinite,
// takes the portable path.
//
// Encode: each value's significand m is shifted to its place t = b - bmin in
// the window as a 128-bit (hi, lo) pair with variable shifts (a count of 64
// or more gives 0, which covers every t without a branch), negated for
// negative x, biased by 2^V. Fields are whole bytes, s of them: the 8 fields
// of a group go into their 8s-byte sub-block with two byte permutes out of
// the 128 bytes of (lo, hi), by a table per s.
// Decode: two byte permutes give back the (lo, hi) pairs; subtract N * 2^V;
// round: the magnitude is normalised to 64 bits with its leading bit at 63,
// the bits shifted out or'ed into bit 0 (round to odd, which keeps a later
// rounding to 53 bits correct), then rounded to nearest even in integers;
// adding the rounded significand to the exponent field carries a round-up
// into the next binade, and into infinity at the top, as IEEE 754 wants.
// All integer arithmetic: no floating-point rounding mode is involved.
#include "collectives/arith/float_sum_layout.h"

#ifndef TOROID_FSUM_VBMI
#define TOROID_FSUM_VBMI 1
#endif
#if TOROID_FSUM_VBMI
#define TOROID_FSUM_SET float_sum_kernels_vbmi
#else
#define TOROID_FSUM_SET float_sum_kernels_bw
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <array>

// GCC 12's _mm512_undefined_epi32 initialises a register from itself (on
// purpose: "any value"), which -W(maybe-)uninitialized reports at every intrinsic
// that uses it once inlined here (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if TOROID_FSUM_VBMI
#define TOROID_FSUM_TARGET __attribute__((target("avx512f,avx512bw,avx512cd,avx512vbmi,avx512vbmi2")))
#else
#define TOROID_FSUM_TARGET __attribute__((target("avx512f,avx512bw,avx512cd")))
#endif

namespace toroid::arith::detail {
namespace {

using Fmt = FloatFormat<double>;
constexpr uint32_t kMinField = 8;  // a second chunk's field may be a byte
constexpr uint32_t kSizes = (kMaxFieldBits - kMinField) / 8 + 1;  // field widths 8, 16, ..., 128

// Per field width F = 8s bits (s = 7..16 bytes), byte permutes between the
// 8 fields as (lo, hi) qword pairs (lo in bytes 0..63, hi in 64..127 of a
// vpermt2b source) and the packed sub-block of 8s bytes.
struct FieldTables {
  alignas(64) uint8_t pack[128];  // sub-block byte i <- (lo, hi) byte pack[i]
  alignas(64) uint8_t lo[64];     // lo byte 8j + b <- sub-block byte lo[..]
  alignas(64) uint8_t hi[64];     // hi byte 8j + b <- sub-block byte hi[..]
  uint64_t lo_keep = 0, hi_keep = 0;  // bytes of lo / hi that come from a field (the rest are 0)
};

constexpr FieldTables make_tables(uint32_t s) {
  FieldTables t{};
  for (uint32_t i = 0; i < 8 * s; ++i) {
    const uint32_t j = i / s, b = i % s;
    t.pack[i] = static_cast<uint8_t>(b < 8 ? 8 * j + b : 64 + 8 * j + (b - 8));
  }
  for (uint32_t j = 0; j < kGroup; ++j) {
    for (uint32_t b = 0; b < 8; ++b) {
      if (b < s) {
        t.lo[8 * j + b] = static_cast<uint8_t>(j * s + b);
        t.lo_keep |= uint64_t{1} << (8 * j + b);
      }
      if (8 + b < s) {
        t.hi[8 * j + b] = static_cast<uint8_t>(j * s + 8 + b);
        t.hi_keep |= uint64_t{1} << (8 * j + b);
      }
    }
  }
  return t;
}

constexpr std::array<FieldTables, kSizes> kTables = [] {
  std::array<FieldTables, kSizes> a{};
  for (uint32_t i = 0; i < kSizes; ++i) a[i] = make_tables(kMinField / 8 + i);
  return a;
}();

inline __mmask64 byte_mask(uint32_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

TOROID_FSUM_TARGET inline __m512i set1(uint64_t v) { return _mm512_set1_epi64(static_cast<long long>(v)); }

// Byte i of the result: byte idx[i] mod 128 of the 128 bytes (a, b).
TOROID_FSUM_TARGET inline __m512i permute_bytes(__m512i a, __m512i idx, __m512i b) {
#if TOROID_FSUM_VBMI
  return _mm512_permutex2var_epi8(a, idx, b);
#else
  // Word j of `even` holds byte idx[2j], word j of `odd` byte idx[2j+1]
  // (each at its index's parity); an in-lane shuffle then picks it.
  const __m512i even = _mm512_permutex2var_epi16(a, _mm512_srli_epi16(_mm512_and_si512(idx, _mm512_set1_epi16(0xfe)), 1), b);
  const __m512i odd = _mm512_permutex2var_epi16(a, _mm512_srli_epi16(idx, 9), b);
  const __m512i pick = _mm512_add_epi8(_mm512_and_si512(_mm512_set1_epi8(1), idx), _mm512_set_epi8(
      14, 14, 12, 12, 10, 10, 8, 8, 6, 6, 4, 4, 2, 2, 0, 0, 14, 14, 12, 12, 10, 10, 8, 8, 6, 6, 4, 4, 2, 2, 0, 0,
      14, 14, 12, 12, 10, 10, 8, 8, 6, 6, 4, 4, 2, 2, 0, 0, 14, 14, 12, 12, 10, 10, 8, 8, 6, 6, 4, 4, 2, 2, 0, 0));
  return _mm512_mask_blend_epi8(0xAAAAAAAAAAAAAAAAull, _mm512_shuffle_epi8(even, pick), _mm512_shuffle_epi8(odd, pick));
#endif
}

// The upper qword of (a:b) << (c mod 64), and the lower of (b:a) >> (c mod 64).
TOROID_FSUM_TARGET inline __m512i shift_left_in(__m512i a, __m512i b, __m512i c) {
#if TOROID_FSUM_VBMI
  return _mm512_shldv_epi64(a, b, c);
#else
  const __m512i n = _mm512_and_si512(c, set1(63));
  return _mm512_or_si512(_mm512_sllv_epi64(a, n), _mm512_srlv_epi64(b, _mm512_sub_epi64(set1(64), n)));
#endif
}

TOROID_FSUM_TARGET inline __m512i shift_right_in(__m512i a, __m512i b, __m512i c) {
#if TOROID_FSUM_VBMI
  return _mm512_shrdv_epi64(a, b, c);
#else
  const __m512i n = _mm512_and_si512(c, set1(63));
  return _mm512_or_si512(_mm512_srlv_epi64(a, n), _mm512_sllv_epi64(b, _mm512_sub_epi64(set1(64), n)));
#endif
}

}  // namespace

static TOROID_FSUM_TARGET void float_sum_pass1_block_avx512(const double* const* xs, uint32_t parts, uint32_t at,
                                                     uint32_t len, uint32_t* w) {
  const __m512i exp_mask = set1(Fmt::kExpMax), one = set1(1), sign = set1(uint64_t{1} << 63);
  __m512i bmax = _mm512_setzero_si512(), bminc = bmax, flag = bmax;
  for (uint32_t j = 0; j < parts; ++j) {
    for (uint32_t k = 0; k < len; k += kGroup) {
      const __mmask8 in = static_cast<__mmask8>(len - k >= kGroup ? 0xff : (1u << (len - k)) - 1);
      const __m512i u = _mm512_maskz_loadu_epi64(in, xs[j] + at + k);
      const __m512i e = _mm512_and_si512(_mm512_srli_epi64(u, 52), exp_mask);
      const __mmask8 special = _mm512_mask_cmpeq_epi64_mask(in, e, exp_mask);
      const __mmask8 finite_nz = _mm512_mask_test_epi64_mask(in & ~special, u, _mm512_andnot_si512(sign, u));
      const __mmask8 neg_zero = _mm512_mask_cmpeq_epi64_mask(in, u, sign);
      const __m512i b = _mm512_max_epu64(e, one);
      bmax = _mm512_mask_max_epu64(bmax, finite_nz, bmax, b);
      bminc = _mm512_mask_max_epu64(bminc, finite_nz, bminc, _mm512_sub_epi64(exp_mask, b));
      flag = _mm512_mask_max_epu64(flag, neg_zero, flag, set1(kFlagNegZero));
      flag = _mm512_mask_max_epu64(flag, special, flag, set1(kFlagSpecial));
    }
  }
  w[kBMax] = static_cast<uint32_t>(_mm512_reduce_max_epu64(bmax));
  w[kBMinComplement] = static_cast<uint32_t>(_mm512_reduce_max_epu64(bminc));
  w[kFlags] = static_cast<uint32_t>(_mm512_reduce_max_epu64(flag));
}

namespace {

// Loop invariants of one block's packing.
struct PackConsts {
  __m512i bmin, idx0, idx1;
  __mmask64 store0, store1;  // bytes of the sub-block's first and second 64
};

TOROID_FSUM_TARGET inline PackConsts pack_consts(uint32_t bmin, uint32_t field_bits) {
  const FieldTables& tb = kTables[(field_bits - kMinField) / 8];
  PackConsts c;
  c.bmin = set1(bmin);
  c.idx0 = _mm512_load_si512(tb.pack);
  c.idx1 = _mm512_load_si512(tb.pack + 64);
  c.store0 = byte_mask(field_bits);  // 8 fields of field_bits bits: field_bits bytes
  c.store1 = field_bits > 64 ? byte_mask(field_bits - 64) : 0;
  return c;
}

// 1 in the lanes of a group whose x is -0.
TOROID_FSUM_TARGET inline __m512i neg_zeros(const double* x, uint32_t cnt) {
  const __mmask8 in = static_cast<__mmask8>(cnt >= kGroup ? 0xff : (1u << cnt) - 1);
  const __m512i u = _mm512_maskz_loadu_epi64(in, x);
  const __mmask8 neg_zero = _mm512_mask_cmpeq_epi64_mask(in, u, set1(uint64_t{1} << 63));
  return _mm512_maskz_mov_epi64(neg_zero, set1(1));
}

// A group's values as m * 2^t (t = b - bmin, the lowest bit's place in the
// window) and their signs. Finite values only reach here (a block with
// counters has -0 at most, whose m is 0, like +0's).
struct Values {
  __m512i m, t;
  __mmask8 neg;
};

TOROID_FSUM_TARGET inline Values values(const PackConsts& c, const double* x, uint32_t cnt) {
  const __mmask8 in = static_cast<__mmask8>(cnt >= kGroup ? 0xff : (1u << cnt) - 1);
  const __m512i u = _mm512_maskz_loadu_epi64(in, x);
  const __m512i e = _mm512_and_si512(_mm512_srli_epi64(u, 52), set1(Fmt::kExpMax));
  Values v;
  v.m = _mm512_and_si512(u, set1((uint64_t{1} << 52) - 1));
  v.m = _mm512_mask_or_epi64(v.m, _mm512_test_epi64_mask(e, e), v.m, set1(uint64_t{1} << 52));
  v.t = _mm512_sub_epi64(_mm512_max_epu64(e, set1(1)), c.bmin);
  v.neg = _mm512_cmplt_epi64_mask(u, _mm512_setzero_si512());
  return v;
}

// m * 2^s as (hi, lo) for any s, negative included: a shift count out of
// 0..63 (as an unsigned lane, a negative one too) gives 0.
TOROID_FSUM_TARGET inline void shifted(__m512i m, __m512i s, __m512i* lo, __m512i* hi) {
  const __m512i s64 = set1(64), zero = _mm512_setzero_si512();
  *lo = _mm512_or_si512(_mm512_sllv_epi64(m, s), _mm512_srlv_epi64(m, _mm512_sub_epi64(zero, s)));
  *hi = _mm512_or_si512(_mm512_srlv_epi64(m, _mm512_sub_epi64(s64, s)), _mm512_sllv_epi64(m, _mm512_sub_epi64(s, s64)));
}

// One chunk's 8 fields, accumulated as 128-bit lanes (hi, lo): the sum of
// the `parts` contributions' fields 2^c + piece (negated for negative x).
// It starts at parts * 2^c; the pieces add modulo 2^128, and the total,
// below 2^field_bits by the layout's headroom, is what the ALU's ADD of the
// contributions' fields gives.
struct Acc {
  __m512i lo, hi;
};

TOROID_FSUM_TARGET inline Acc acc_start(uint32_t parts, uint32_t c) {
  const u128 bias = static_cast<u128>(parts) << c;
  return Acc{set1(static_cast<uint64_t>(bias)), set1(static_cast<uint64_t>(bias >> 64))};
}

TOROID_FSUM_TARGET inline void acc_add(Acc* a, __m512i lo, __m512i hi, __mmask8 neg) {
  const __m512i zero = _mm512_setzero_si512(), one = set1(1);
  // Negative x: -(hi, lo) = (-hi - (lo != 0), -lo).
  const __mmask8 borrow = neg & _mm512_test_epi64_mask(lo, lo);
  hi = _mm512_mask_sub_epi64(hi, neg, zero, hi);
  hi = _mm512_mask_sub_epi64(hi, borrow, hi, one);
  lo = _mm512_mask_sub_epi64(lo, neg, zero, lo);
  // The carry out of lo into hi.
  const __m512i lo2 = _mm512_add_epi64(a->lo, lo);
  a->hi = _mm512_add_epi64(a->hi, hi);
  a->hi = _mm512_mask_add_epi64(a->hi, _mm512_cmplt_epu64_mask(lo2, lo), a->hi, one);
  a->lo = lo2;
}

// Pack 8 fields into field_bits bytes at out: two byte permutes.
TOROID_FSUM_TARGET inline void store_acc(const PackConsts& c, const Acc& a, uint8_t* out) {
  _mm512_mask_storeu_epi8(out, c.store0, permute_bytes(a.lo, c.idx0, a.hi));
  _mm512_mask_storeu_epi8(out + 64, c.store1, permute_bytes(a.lo, c.idx1, a.hi));
}

}  // namespace

// Two chunks: bits [0, C) of each value's window, then bits [C, V).
static TOROID_FSUM_TARGET void float_sum_encode_block2_avx512(const double* const* xs, uint32_t parts, uint32_t at,
                                                       uint32_t len, uint32_t bmin, uint32_t window,
                                                       uint32_t chunk_bits, uint32_t field_bits0, uint32_t field_bits1,
                                                       Cursor& cur, uint8_t* out) {
  const PackConsts c0 = pack_consts(bmin, field_bits0);
  const PackConsts c1 = pack_consts(bmin, field_bits1);
  const __m512i keep0 = set1((uint64_t{1} << (chunk_bits - 64)) - 1);  // 64 < C < 128
  const __m512i cc = set1(chunk_bits);
  for (uint32_t g = 0; g < len; g += kGroup) {
    Acc a0 = acc_start(parts, chunk_bits), a1 = acc_start(parts, window - chunk_bits);
    for (uint32_t j = 0; j < parts; ++j) {
      const Values v = values(c0, xs[j] + at + g, len - g);
      __m512i lo, hi;
      shifted(v.m, v.t, &lo, &hi);
      acc_add(&a0, lo, _mm512_and_si512(hi, keep0), v.neg);
      shifted(v.m, _mm512_sub_epi64(v.t, cc), &lo, &hi);
      acc_add(&a1, lo, hi, v.neg);
    }
    store_acc(c0, a0, out + cur.place(field_bits0, out));
    store_acc(c1, a1, out + cur.place(field_bits1, out));
  }
}

static TOROID_FSUM_TARGET void float_sum_encode_block_avx512(const double* const* xs, uint32_t parts, uint32_t at,
                                                      uint32_t len, uint32_t bmin, uint32_t window,
                                                      uint32_t field_bits, bool neg_zero_counts, Cursor& cur,
                                                      uint8_t* out) {
  const PackConsts c = pack_consts(bmin, field_bits);
  for (uint32_t g = 0; g < len; g += kGroup) {
    Acc a = acc_start(parts, window);
    __m512i zeros = _mm512_setzero_si512();
    for (uint32_t j = 0; j < parts; ++j) {
      const Values v = values(c, xs[j] + at + g, len - g);
      __m512i lo, hi;
      shifted(v.m, v.t, &lo, &hi);
      acc_add(&a, lo, hi, v.neg);
      if (neg_zero_counts) zeros = _mm512_add_epi64(zeros, neg_zeros(xs[j] + at + g, len - g));
    }
    store_acc(c, a, out + cur.place(field_bits, out));
    if (neg_zero_counts) _mm512_mask_cvtepi64_storeu_epi8(out + cur.place(8, out), 0xff, zeros);
  }
}

namespace {

// Eight fields of field_bits bytes at in as (lo, hi), less N * 2^c: the
// chunk's signed sum in two's complement.
struct Unpack {
  __m512i lo_idx, hi_idx, bias_lo, bias_hi;
  __mmask64 lo_keep, hi_keep, load0, load1;
};

TOROID_FSUM_TARGET inline Unpack unpack_consts(uint32_t field_bits, uint32_t c, uint64_t nodes) {
  const FieldTables& tb = kTables[(field_bits - kMinField) / 8];
  Unpack u;
  u.lo_idx = _mm512_load_si512(tb.lo);
  u.hi_idx = _mm512_load_si512(tb.hi);
  u.lo_keep = tb.lo_keep;
  u.hi_keep = tb.hi_keep;
  u.load0 = byte_mask(field_bits);
  u.load1 = field_bits > 64 ? byte_mask(field_bits - 64) : 0;
  const u128 bias = static_cast<u128>(nodes) << c;
  u.bias_lo = set1(static_cast<uint64_t>(bias));
  u.bias_hi = set1(static_cast<uint64_t>(bias >> 64));
  return u;
}

TOROID_FSUM_TARGET inline void unpack_sum(const Unpack& u, const uint8_t* in, __m512i* lo, __m512i* hi) {
  const __m512i b0 = _mm512_maskz_loadu_epi8(u.load0, in);
  const __m512i b1 = _mm512_maskz_loadu_epi8(u.load1, in + 64);
  *lo = _mm512_maskz_mov_epi8(u.lo_keep, permute_bytes(b0, u.lo_idx, b1));
  *hi = _mm512_maskz_mov_epi8(u.hi_keep, permute_bytes(b0, u.hi_idx, b1));
  const __mmask8 borrow = _mm512_cmplt_epu64_mask(*lo, u.bias_lo);
  *lo = _mm512_sub_epi64(*lo, u.bias_lo);
  *hi = _mm512_sub_epi64(*hi, u.bias_hi);
  *hi = _mm512_mask_sub_epi64(*hi, borrow, *hi, set1(1));
}

// The doubles of normal results from m64 (the magnitude's leading 64 bits,
// leading bit at 63, everything below or'ed into bit 0: round to odd), k
// (its bit length) and the signs: rounded to 53 bits, nearest even, with
// the biased exponent e0 + k - 1 + bias (ebias = e0 - 1 + bias). Normal
// results only (1 .. 2046 before rounding); other lanes are 0, and the
// caller takes its `nonzero & ~normal` lanes the portable way.
TOROID_FSUM_TARGET inline __m512i round_normal(__m512i m64, __m512i k, __mmask8 neg, __m512i ebias, __mmask8* nonzero,
                                               __mmask8* normal) {
  const __m512i one = set1(1);
  __m512i m = _mm512_srli_epi64(m64, 11);
  const __mmask8 half_set = _mm512_test_epi64_mask(m64, set1(uint64_t{1} << 10));
  const __mmask8 sticky_or_odd = _mm512_test_epi64_mask(m64, set1(0x3ff)) | _mm512_test_epi64_mask(m, one);
  m = _mm512_mask_add_epi64(m, half_set & sticky_or_odd, m, one);
  const __m512i be = _mm512_add_epi64(k, ebias);
  *nonzero = _mm512_test_epi64_mask(k, k);
  *normal = *nonzero & _mm512_cmpge_epi64_mask(be, one) & _mm512_cmple_epi64_mask(be, set1(2046));
  __m512i bits = _mm512_add_epi64(_mm512_slli_epi64(_mm512_sub_epi64(be, one), 52), m);
  bits = _mm512_mask_or_epi64(bits, neg, bits, set1(uint64_t{1} << 63));
  return _mm512_maskz_mov_epi64(*normal, bits);
}

// Loop invariants of one block's unpacking and rounding.
struct UnpackConsts {
  Unpack u;
  __m512i ebias, nodes, count_mask;
  int64_t e0;
};

// neg_zeros: the group's summed -0 counters (8 byte fields), or nullptr.
TOROID_FSUM_TARGET inline void decode_group(const UnpackConsts& c, const uint8_t* in, const uint8_t* neg_zeros,
                                            double* sum, uint32_t cnt) {
  const __m512i one = set1(1), zero = _mm512_setzero_si512(), s64 = set1(64), s128 = set1(128);
  // Unpack (two byte permutes out of the sub-block's up to 128 bytes) and
  // S = U - N * 2^V, two's complement over (hi, lo).
  __m512i lo, hi;
  unpack_sum(c.u, in, &lo, &hi);
  // |S|
  const __mmask8 neg = _mm512_cmplt_epi64_mask(hi, zero);
  const __mmask8 nb = neg & _mm512_test_epi64_mask(lo, lo);
  hi = _mm512_mask_sub_epi64(hi, neg, zero, hi);
  hi = _mm512_mask_sub_epi64(hi, nb, hi, one);
  lo = _mm512_mask_sub_epi64(lo, neg, zero, lo);
  // k = bit length; m64 = |S| with its leading bit at 63, round to odd.
  const __mmask8 big = _mm512_test_epi64_mask(hi, hi);
  const __m512i k = _mm512_mask_sub_epi64(_mm512_sub_epi64(s64, _mm512_lzcnt_epi64(lo)), big, s128,
                                          _mm512_lzcnt_epi64(hi));
  const __mmask8 lost = _mm512_test_epi64_mask(_mm512_sllv_epi64(lo, _mm512_sub_epi64(s128, k)), set1(~uint64_t{0}));
  const __m512i m_big = _mm512_mask_or_epi64(shift_right_in(lo, hi, _mm512_sub_epi64(k, s64)), lost,
                                             shift_right_in(lo, hi, _mm512_sub_epi64(k, s64)), one);
  const __m512i m64 = _mm512_mask_blend_epi64(big, _mm512_sllv_epi64(lo, _mm512_sub_epi64(s64, k)), m_big);
  __mmask8 nonzero, normal;
  __m512i bits = round_normal(m64, k, neg, c.ebias, &nonzero, &normal);  // zero sums: +0 ...
  if (neg_zeros != nullptr) {
    // ... or -0 where every node's input was -0.
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(neg_zeros));
    const __m512i counts = _mm512_and_si512(_mm512_cvtepu8_epi64(bytes), c.count_mask);
    const __mmask8 all_neg_zero = static_cast<__mmask8>(~nonzero) & _mm512_cmpeq_epi64_mask(counts, c.nodes);
    bits = _mm512_mask_mov_epi64(bits, all_neg_zero, set1(uint64_t{1} << 63));
  }
  const __mmask8 out_mask = static_cast<__mmask8>(cnt >= kGroup ? 0xff : (1u << cnt) - 1);
  _mm512_mask_storeu_epi64(sum, out_mask, bits);
  const auto slow = static_cast<uint32_t>(nonzero & ~normal & out_mask);
  if (slow != 0) {
    alignas(64) uint64_t l[8], h[8];
    _mm512_store_si512(l, lo);
    _mm512_store_si512(h, hi);
    for (uint32_t j = 0; j < kGroup; ++j) {
      if ((slow >> j & 1) != 0) sum[j] = round_u128<double>((neg >> j & 1) != 0, u128{h[j]} << 64 | l[j], c.e0);
    }
  }
}

}  // namespace

static TOROID_FSUM_TARGET void float_sum_decode_block_avx512(const uint8_t* in, uint32_t len, uint32_t field_bits,
                                                      uint32_t window, uint64_t nodes, uint32_t h, bool neg_zeros,
                                                      int64_t e0, Cursor& cur, double* sum) {
  UnpackConsts c;
  c.u = unpack_consts(field_bits, window, nodes);
  c.ebias = set1(static_cast<uint64_t>(e0 - 1 + Fmt::kBias));
  c.nodes = set1(nodes);
  c.count_mask = set1((uint64_t{1} << (h + 1)) - 1);
  c.e0 = e0;
  for (uint32_t g = 0; g < len; g += kGroup) {
    const uint8_t* fields = in + cur.place(field_bits);
    decode_group(c, fields, neg_zeros ? in + cur.place(8) : nullptr, sum + g, len - g);
  }
}

namespace {

// a + b + carry-in, and the carry out, per lane.
TOROID_FSUM_TARGET inline __m512i add_carry(__m512i a, __m512i b, __mmask8 cin, __mmask8* cout) {
  const __m512i s = _mm512_add_epi64(a, b);
  const __mmask8 c = _mm512_cmplt_epu64_mask(s, a);
  const __m512i s2 = _mm512_mask_add_epi64(s, cin, s, set1(1));
  *cout = c | (cin & _mm512_cmpeq_epi64_mask(s2, _mm512_setzero_si512()));
  return s2;
}

// Two chunks: S = S0 + S1 * 2^C over four words (|S| < 2^255), rounded as
// the one-chunk decode does (to odd at 64 bits, then to nearest even).
TOROID_FSUM_TARGET inline void decode_group2(const Unpack& u0, const Unpack& u1, __m512i k_shift, __m512i ebias,
                                             int64_t e0, const uint8_t* in0, const uint8_t* in1, double* sum,
                                             uint32_t cnt) {
  const __m512i zero = _mm512_setzero_si512(), one = set1(1), s64 = set1(64);
  __m512i l0, h0, l1, h1;
  unpack_sum(u0, in0, &l0, &h0);
  unpack_sum(u1, in1, &l1, &h1);
  // S1 * 2^C, C = 64 + k (0 < k < 64): words 1..3; S0 sign-extended: 0..3.
  const __m512i a1 = _mm512_sllv_epi64(l1, k_shift);
  const __m512i a2 = shift_left_in(h1, l1, k_shift);
  const __m512i a3 = _mm512_srav_epi64(h1, _mm512_sub_epi64(s64, k_shift));
  const __m512i ext = _mm512_srai_epi64(h0, 63);
  __mmask8 c1, c2, c3;
  __m512i w0 = l0;
  __m512i w1 = add_carry(h0, a1, 0, &c1);
  __m512i w2 = add_carry(ext, a2, c1, &c2);
  __m512i w3 = add_carry(ext, a3, c2, &c3);
  // |S|: ~S + 1 over the four words where S < 0.
  const __mmask8 neg = _mm512_cmplt_epi64_mask(w3, zero);
  const __mmask8 z0 = _mm512_cmpeq_epi64_mask(w0, zero);
  const __mmask8 z1 = z0 & _mm512_cmpeq_epi64_mask(w1, zero);
  const __mmask8 z2 = z1 & _mm512_cmpeq_epi64_mask(w2, zero);
  const __m512i all = set1(~uint64_t{0});
  w0 = _mm512_mask_sub_epi64(w0, neg, zero, w0);
  w1 = _mm512_mask_add_epi64(w1, neg, _mm512_xor_si512(w1, all), _mm512_maskz_mov_epi64(z0, one));
  w2 = _mm512_mask_add_epi64(w2, neg, _mm512_xor_si512(w2, all), _mm512_maskz_mov_epi64(z1, one));
  w3 = _mm512_mask_add_epi64(w3, neg, _mm512_xor_si512(w3, all), _mm512_maskz_mov_epi64(z2, one));
  // The top word q (the last nonzero one), the word below it, and whether
  // anything lies below those two.
  const __mmask8 n1 = _mm512_test_epi64_mask(w1, w1), n2 = _mm512_test_epi64_mask(w2, w2),
                 n3 = _mm512_test_epi64_mask(w3, w3);
  __m512i top = _mm512_mask_mov_epi64(_mm512_mask_mov_epi64(_mm512_mask_mov_epi64(w0, n1, w1), n2, w2), n3, w3);
  __m512i below = _mm512_mask_mov_epi64(_mm512_mask_mov_epi64(_mm512_maskz_mov_epi64(n1, w0), n2, w1), n3, w2);
  const __mmask8 rest = (n3 & (_mm512_test_epi64_mask(w1, w1) | _mm512_test_epi64_mask(w0, w0))) |
                        (n2 & ~n3 & _mm512_test_epi64_mask(w0, w0));
  __m512i q = _mm512_mask_mov_epi64(_mm512_mask_mov_epi64(_mm512_maskz_mov_epi64(n1, one), n2, set1(2)), n3, set1(3));
  // k = bit length = 64 q + r, r = 64 - lzcnt(top) (0 only for S = 0).
  const __m512i r = _mm512_sub_epi64(s64, _mm512_lzcnt_epi64(top));
  const __m512i k = _mm512_add_epi64(_mm512_slli_epi64(q, 6), r);
  // m64: the 64 bits from the leading one down, the bits below it or'ed
  // into bit 0 (round to odd).
  const __m512i up = _mm512_sub_epi64(s64, r);  // 0..64
  __m512i m64 = shift_left_in(top, below, up);
  // (m64 took the top 64 - r bits of `below`; its low r bits are lost.)
  const __mmask8 lost = rest | _mm512_test_epi64_mask(_mm512_sllv_epi64(below, up), all);
  m64 = _mm512_mask_or_epi64(m64, lost, m64, one);
  __mmask8 nonzero, normal;
  const __m512i bits = round_normal(m64, k, neg, ebias, &nonzero, &normal);  // zero sums: +0 (no counters)
  const __mmask8 out_mask = static_cast<__mmask8>(cnt >= kGroup ? 0xff : (1u << cnt) - 1);
  _mm512_mask_storeu_epi64(sum, out_mask, bits);
  const auto slow = static_cast<uint32_t>(nonzero & ~normal & out_mask);
  if (slow != 0) {
    alignas(64) uint64_t w[4][8];
    _mm512_store_si512(w[0], w0);
    _mm512_store_si512(w[1], w1);
    _mm512_store_si512(w[2], w2);
    _mm512_store_si512(w[3], w3);
    for (uint32_t j = 0; j < kGroup; ++j) {
      if ((slow >> j & 1) == 0) continue;
      const uint64_t mag[4] = {w[0][j], w[1][j], w[2][j], w[3][j]};
      sum[j] = round_words((neg >> j & 1) != 0, mag, 4, e0);
    }
  }
}

}  // namespace

static TOROID_FSUM_TARGET void float_sum_decode_block2_avx512(const uint8_t* in, uint32_t len, uint32_t window,
                                                       uint32_t chunk_bits, uint32_t field_bits0, uint32_t field_bits1,
                                                       uint64_t nodes, int64_t e0, Cursor& cur, double* sum) {
  const Unpack u0 = unpack_consts(field_bits0, chunk_bits, nodes);
  const Unpack u1 = unpack_consts(field_bits1, window - chunk_bits, nodes);
  const __m512i k_shift = set1(chunk_bits - 64);
  const __m512i ebias = set1(static_cast<uint64_t>(e0 - 1 + Fmt::kBias));
  for (uint32_t g = 0; g < len; g += kGroup) {
    const uint8_t* in0 = in + cur.place(field_bits0);
    const uint8_t* in1 = in + cur.place(field_bits1);
    decode_group2(u0, u1, k_shift, ebias, e0, in0, in1, sum + g, len - g);
  }
}

const FloatSumKernels* TOROID_FSUM_SET() {
  static const bool ok = [] {
    __builtin_cpu_init();  // the first call may come from a static initialiser, before libgcc's
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512cd") &&
           (!TOROID_FSUM_VBMI || (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2")));
  }();
  static const FloatSumKernels k{TOROID_FSUM_VBMI ? "avx512-vbmi" : "avx512bw",
                                 float_sum_pass1_block_avx512,
                                 float_sum_encode_block_avx512,
                                 float_sum_encode_block2_avx512,
                                 float_sum_decode_block_avx512,
                                 float_sum_decode_block2_avx512};
  return ok ? &k : nullptr;
}

}  // namespace toroid::arith::detail

#else  // no x86-64 GCC: the portable code does everything

namespace toroid::arith::detail {
const FloatSumKernels* TOROID_FSUM_SET() { return nullptr; }
}  // namespace toroid::arith::detail

#endif
