// The collective jobs' input patterns and the closed forms of their
// reductions (see coll_pattern.h for the table). Each pattern and its closed
// form sit side by side: a change to one without the other fails
// coll_pattern_test, which compares every closed form with the rank-order
// reduction.
#include "firmware/jobs/coll_pattern.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "base/rng.h"

namespace toroid::colldata {

namespace {

constexpr uint64_t kPhi = 0x9e3779b97f4a7c15ull;

using Keys = PatternKeys;
Keys keys(uint64_t seed, uint64_t index) {
  const uint64_t k = mix64(seed * kPhi + index);
  return {mix64(k ^ 1), mix64(k ^ 2), mix64(k ^ 3)};
}

// x 2^e, exactly ldexp's result where that is normal (the patterns' range:
// |e| < 200) without its call: a power of two built from its bits.
double times_pow2(double x, int e) {
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double p;
  std::memcpy(&p, &bits, 8);
  return x * p;
}

template <typename T>
void put(uint8_t* out, T v) {
  std::memcpy(out, &v, sizeof v);
}
// The low dtype_size(t) bytes of v: integer arithmetic mod 2^64 truncated to
// the type is the type's own wrapping arithmetic.
// The low dtype_size(t) bytes of v (this runs per generated element: a
// constant size per case, so each is a plain store, not a memcpy call).
void put_int(DType t, uint64_t v, uint8_t* out) {
  switch (dtype_size(t)) {
    case 1: std::memcpy(out, &v, 1); break;
    case 2: std::memcpy(out, &v, 2); break;
    case 4: std::memcpy(out, &v, 4); break;
    case 8: std::memcpy(out, &v, 8); break;
    default: break;
  }
}

bool is_signed_int(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}

uint64_t pow64(uint64_t b, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return r;
}

long double powl_exact(long double b, uint64_t e) {  // repeated squaring: log2(e) roundings
  long double r = 1;
  for (; e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return r;
}

// ---- the patterns -----------------------------------------------------------

// BXOR: g(r) = XOR of one random word per set bit of r (linear over GF(2)).
uint64_t xor_word(uint64_t b, uint64_t r) {
  uint64_t g = 0;
  for (; r; r &= r - 1) g ^= mix64(b ^ (static_cast<uint64_t>(__builtin_ctzll(r)) + 1) * kPhi);
  return g;
}
// XOR of 0, 1, .., n.
uint64_t xor_upto(uint64_t n) {
  switch (n & 3) {
    case 0: return n;
    case 1: return 1;
    case 2: return n + 1;
    default: return 0;
  }
}
// BAND: sparse masks (a quarter of the bits set), BOR: dense ones.
uint64_t and_mask(uint64_t c, uint64_t j) { return mix64(c ^ (j + 1) * kPhi) & mix64(c ^ (j + 101) * kPhi); }
uint64_t or_mask(uint64_t c, uint64_t j) { return mix64(c ^ (j + 1) * kPhi) | mix64(c ^ (j + 101) * kPhi); }

// MIN/MAX/loc: q(r) in 0..8, every value once per 9 consecutive ranks.
uint32_t small_q(const Keys& k, uint64_t r) {
  static const uint8_t kCoprime[6] = {1, 2, 4, 5, 7, 8};
  return static_cast<uint32_t>((r % 9 * kCoprime[k.a % 6] + k.b % 9) % 9);
}
void put_small(DType t, uint32_t q, uint8_t* out) {
  if (t == DType::kDouble) put<double>(out, (static_cast<double>(q) - 4) * 0.5);
  else if (t == DType::kFloat) put<float>(out, (static_cast<float>(q) - 4) * 0.5f);
  else put_int(t, is_signed_int(t) ? static_cast<uint64_t>(static_cast<int64_t>(q) - 4) : q, out);
}

// LAND/LOR/LXOR: mostly true, a zero every 7 ranks.
uint64_t logical_value(const Keys& k, uint64_t r) { return (r + k.a % 7) % 7 == 0 ? 0 : 1 + (r + k.b % 3) % 3; }

// Float SUM: x_r = +-(A + B r) 2^(E + 6 j), j = r mod 7, the sign fixed per j
// (ranks 0 and 1 always differ).
struct FloatSum {
  int64_t a, b;
  int e;
  uint64_t c;
  int sign(uint64_t j) const { return j == 0 ? 1 : j == 1 ? -1 : ((c >> (8 + j)) & 1) ? -1 : 1; }
};
FloatSum float_sum(DType t, const Keys& k) {
  const int e0 = static_cast<int>(k.c % 49) - 24;
  if (t == DType::kDouble)
    return {static_cast<int64_t>(k.a >> 14) - (int64_t{1} << 49), static_cast<int64_t>(k.b >> 38) - (int64_t{1} << 25),
            e0 - 50, k.c};
  return {static_cast<int64_t>(k.a >> 42) - (int64_t{1} << 21), static_cast<int64_t>(k.b % 15) - 7, e0 - 21, k.c};
}
constexpr uint64_t kFloatSumMaxNodes = uint64_t{1} << 20;  // |A + B r| < 2^24 for float below this

// Float PROD: x_r = (r even ? c : 2 - c) 2^((r + s) mod 3 - 1); c (2 - c) < 1
// keeps the product of 2^24 of them in range.
double prod_base(DType t, const Keys& k) {
  return t == DType::kDouble ? 1.0 + static_cast<double>(k.a >> 22) * 0x1p-52
                             : 1.0 + static_cast<double>(k.a >> 51) * 0x1p-23;
}

// An integer times 2^e, rounded once to p bits (to nearest, ties to even).
// The patterns keep it normal and finite.
double round_scaled(__int128 v, int e, int p) {
  if (v == 0) return 0.0;
  const bool neg = v < 0;
  unsigned __int128 m = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  const auto hi = static_cast<uint64_t>(m >> 64), lo = static_cast<uint64_t>(m);
  const int top = hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll(lo);
  const int drop = top + 1 - p;
  if (drop > 0) {
    const unsigned __int128 rem = m & ((static_cast<unsigned __int128>(1) << drop) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (drop - 1);
    m >>= drop;
    if (rem > half || (rem == half && (m & 1))) ++m;  // may carry to 2^p: still exact
    e += drop;
  }
  const double r = std::ldexp(static_cast<double>(static_cast<uint64_t>(m)), e);
  return neg ? -r : r;
}

}  // namespace

PatternKeys pattern_keys(uint64_t seed, uint64_t index) { return keys(seed, index); }

void pattern_element(DType t, ROp op, uint64_t seed, uint64_t rank, uint64_t index, uint8_t* out) {
  pattern_element_keyed(t, op, keys(seed, index), rank, out);
}

namespace {

// Integer SUM rows, the bulk of the self-test's data: one loop per type
// with the element's formula inline (a + b r + c r^2 mod 2^w), where the
// general path dispatches on the operation and type per element. KeyAt
// gives element i's keys.
template <typename T, typename KeyAt>
void int_sum_row(KeyAt key_at, uint64_t r, uint64_t count, uint8_t* out) {
  const uint64_t r2 = r * r;
  for (uint64_t i = 0; i < count; ++i) {
    const Keys k = key_at(i);
    const auto v = static_cast<T>(k.a + k.b * r + k.c * r2);
    std::memcpy(out + i * sizeof(T), &v, sizeof(T));
  }
}

template <typename KeyAt>
bool int_sum_row_any(DType t, ROp op, KeyAt key_at, uint64_t r, uint64_t count, uint8_t* out) {
  if (op != ROp::kSum || dtype_is_float(t)) return false;
  switch (dtype_size(t)) {
    case 1: int_sum_row<uint8_t>(key_at, r, count, out); return true;
    case 2: int_sum_row<uint16_t>(key_at, r, count, out); return true;
    case 4: int_sum_row<uint32_t>(key_at, r, count, out); return true;
    case 8: int_sum_row<uint64_t>(key_at, r, count, out); return true;
    default: return false;
  }
}

}  // namespace

void pattern_row(DType t, ROp op, uint64_t seed, uint64_t rank, uint64_t first, uint64_t count, uint8_t* out) {
  if (int_sum_row_any(t, op, [&](uint64_t i) { return keys(seed, first + i); }, rank, count, out)) return;
  const size_t e = elem_size(t, op);
  for (uint64_t i = 0; i < count; ++i) pattern_element_keyed(t, op, keys(seed, first + i), rank, out + i * e);
}

void pattern_row_keyed(DType t, ROp op, const PatternKeys* k, uint64_t rank, uint64_t count, uint8_t* out) {
  if (int_sum_row_any(t, op, [&](uint64_t i) { return k[i]; }, rank, count, out)) return;
  const size_t e = elem_size(t, op);
  for (uint64_t i = 0; i < count; ++i) pattern_element_keyed(t, op, k[i], rank, out + i * e);
}

void pattern_element_keyed(DType t, ROp op, const PatternKeys& k, uint64_t rank, uint8_t* out) {
  const uint64_t r = rank;
  const bool fl = dtype_is_float(t);
  switch (op) {
    case ROp::kSum:
      if (!fl) {
        put_int(t, k.a + k.b * r + k.c * r * r, out);
      } else {
        const FloatSum s = float_sum(t, k);
        const double v = s.sign(r % 7) * times_pow2(static_cast<double>(s.a + s.b * static_cast<int64_t>(r)),
                                                    s.e + 6 * static_cast<int>(r % 7));
        if (t == DType::kFloat) put<float>(out, static_cast<float>(v));
        else put<double>(out, v);
      }
      break;
    case ROp::kProd:
      if (!fl) {
        put_int(t, (k.a | 1) * pow64(k.b | 1, r), out);
      } else {
        const double c = prod_base(t, k);
        const double v = times_pow2(r % 2 == 0 ? c : 2.0 - c, static_cast<int>((r + k.b % 3) % 3) - 1);
        if (t == DType::kFloat) put<float>(out, static_cast<float>(v));
        else put<double>(out, v);
      }
      break;
    case ROp::kBand: put_int(t, k.a | and_mask(k.c, r % 64), out); break;
    case ROp::kBor: put_int(t, k.a & or_mask(k.c, r % 64), out); break;
    case ROp::kBxor: put_int(t, k.a ^ xor_word(k.b, r), out); break;
    case ROp::kLand:
    case ROp::kLor:
    case ROp::kLxor: put_int(t, logical_value(k, r), out); break;
    case ROp::kMin:
    case ROp::kMax:
    case ROp::kMinloc:
    case ROp::kMaxloc: put_small(t, small_q(k, r), out); break;
  }
  if (rop_is_loc(op)) put<int32_t>(out + dtype_size(t), static_cast<int32_t>(rank));
}

bool pattern_reduce(DType t, ROp op, uint64_t seed, uint64_t nodes, uint64_t index, uint8_t* out, double* bound) {
  *bound = 0;
  if (nodes == 0) return false;
  if (nodes == 1) {  // a reduction of one contribution is that contribution
    pattern_element(t, op, seed, 0, index, out);
    return true;
  }
  const Keys k = keys(seed, index);
  const uint64_t n = nodes;
  const unsigned __int128 n128 = n;
  const auto s1 = static_cast<uint64_t>(n128 * (n - 1) / 2);  // sum of ranks (mod 2^64)
  const bool fl = dtype_is_float(t);
  switch (op) {
    case ROp::kSum: {
      if (!fl) {
        const auto s2 = static_cast<uint64_t>((n128 - 1) * n128 * (2 * n128 - 1) / 6);
        put_int(t, k.a * n + k.b * s1 + k.c * s2, out);
        return true;
      }
      if (t == DType::kFloat && n > kFloatSumMaxNodes) return false;
      const FloatSum s = float_sum(t, k);
      __int128 total = 0;
      long double abs_sum = 0;
      for (uint64_t j = 0; j < 7; ++j) {  // ranks j, j + 7, j + 14, ...
        const uint64_t cnt = n / 7 + (j < n % 7 ? 1 : 0);
        const __int128 ranks = static_cast<__int128>(j) * cnt + static_cast<__int128>(7) * cnt * (cnt ? cnt - 1 : 0) / 2;
        const __int128 term = static_cast<__int128>(s.a) * cnt + static_cast<__int128>(s.b) * ranks;
        total += s.sign(j) * term * (static_cast<__int128>(1) << (6 * j));
        abs_sum += std::ldexp(static_cast<long double>(std::llabs(s.a)) * cnt + static_cast<long double>(std::llabs(s.b)) *
                                                                            static_cast<long double>(ranks),
                              s.e + 6 * static_cast<int>(j));
      }
      const double eps = t == DType::kFloat ? 0x1p-24 : 0x1p-53;
      *bound = static_cast<double>(n + 1) * eps * static_cast<double>(abs_sum) + std::numeric_limits<double>::denorm_min();
      if (t == DType::kFloat) put<float>(out, static_cast<float>(round_scaled(total, s.e, 24)));
      else put<double>(out, round_scaled(total, s.e, 53));
      return true;
    }
    case ROp::kProd: {
      if (!fl) {
        put_int(t, pow64(k.a | 1, n) * pow64(k.b | 1, s1), out);
        return true;
      }
      const long double c = prod_base(t, k);
      // Sum over ranks of (r + s) mod 3, minus one per rank: the power of two.
      int64_t twos = static_cast<int64_t>(n / 3 * 3);
      for (uint64_t i = 0; i < n % 3; ++i) twos += static_cast<int64_t>((i + k.b % 3) % 3);
      twos -= static_cast<int64_t>(n);
      const long double p = std::ldexp(powl_exact(c, (n + 1) / 2) * powl_exact(2.0L - c, n / 2), static_cast<int>(twos));
      const double eps = t == DType::kFloat ? 0x1p-24 : 0x1p-53;
      *bound = 2.0 * static_cast<double>(n + 1) * eps * std::fabs(static_cast<double>(p));
      if (t == DType::kFloat) put<float>(out, static_cast<float>(p));
      else put<double>(out, static_cast<double>(p));
      return true;
    }
    case ROp::kBand: {
      uint64_t m = ~uint64_t{0};
      for (uint64_t j = 0; j < n && j < 64; ++j) m &= and_mask(k.c, j);
      put_int(t, k.a | m, out);
      return true;
    }
    case ROp::kBor: {
      uint64_t m = 0;
      for (uint64_t j = 0; j < n && j < 64; ++j) m |= or_mask(k.c, j);
      put_int(t, k.a & m, out);
      return true;
    }
    case ROp::kBxor:
      put_int(t, ((n & 1) ? k.a : 0) ^ xor_word(k.b, xor_upto(n - 1)), out);
      return true;
    case ROp::kLand:
    case ROp::kLor:
    case ROp::kLxor: {
      const uint64_t first_zero = (7 - k.a % 7) % 7;
      const uint64_t zeros = first_zero < n ? (n - 1 - first_zero) / 7 + 1 : 0;
      const uint64_t v = op == ROp::kLand ? zeros == 0 : op == ROp::kLor ? n > zeros : (n - zeros) & 1;
      put_int(t, v, out);
      return true;
    }
    case ROp::kMin:
    case ROp::kMax:
    case ROp::kMinloc:
    case ROp::kMaxloc: {
      // The pattern repeats every 9 ranks: the first 9 hold every value and
      // its lowest rank.
      const bool want_max = op == ROp::kMax || op == ROp::kMaxloc;
      uint32_t best = small_q(k, 0);
      uint64_t at = 0;
      for (uint64_t r = 1; r < n && r < 9; ++r) {
        const uint32_t q = small_q(k, r);
        if (want_max ? q > best : q < best) best = q, at = r;
      }
      put_small(t, best, out);
      if (rop_is_loc(op)) put<int32_t>(out + dtype_size(t), static_cast<int32_t>(at));
      return true;
    }
  }
  return false;
}

}  // namespace toroid::colldata
