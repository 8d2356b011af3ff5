// Seed 004's arithmetic on the combine network (collectives/arith/), checked
// without a network: N nodes' inputs are encoded, folded with the ALU in
// several orders and tree shapes (chain, reverse, shuffled, balanced binary,
// random trees with random roots), and decoded. Every shape must give the
// same bytes, and the decoded results must equal an independent reference:
// plain C++ for the integer methods, MPFR (exact at 4400 bits, then one
// rounding by mpfr_get_d / mpfr_get_flt) for the float SUM.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/rng.h"
#include "collectives/arith/float_sum_layout.h"  // the vector kernels' switch
#include "collectives/arith/tree_arith.h"
#include "netstack/tree/alu.h"

#if TOROID_HAVE_MPFR
#include <mpfr.h>
#endif

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::arith;

namespace {

using Bufs = std::vector<std::vector<uint8_t>>;

// --- the simulated combine network ------------------------------------------------------

enum class Shape { kChain, kReverse, kShuffled, kBinary, kRandomTree };
constexpr Shape kShapes[] = {Shape::kChain, Shape::kReverse, Shape::kShuffled, Shape::kBinary, Shape::kRandomTree};

void combine(const TreePass& p, std::vector<uint8_t>& acc, const std::vector<uint8_t>& in) {
  alu_combine(p.op, p.type, p.width, acc.data(), in.data(), p.operands);
}

std::vector<uint32_t> permutation(size_t n, Rng& rng) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i);
  for (size_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
  return v;
}

// What the root holds after every router combined its own operands with its
// children's partial results, for one tree shape.
std::vector<uint8_t> fold(const TreePass& p, const Bufs& nodes, Shape shape, uint64_t seed) {
  Rng rng(seed);
  const size_t n = nodes.size();
  switch (shape) {
    case Shape::kChain: {
      auto acc = nodes[0];
      for (size_t i = 1; i < n; ++i) combine(p, acc, nodes[i]);
      return acc;
    }
    case Shape::kReverse: {
      auto acc = nodes[n - 1];
      for (size_t i = n - 1; i-- > 0;) combine(p, acc, nodes[i]);
      return acc;
    }
    case Shape::kShuffled: {
      const auto perm = permutation(n, rng);
      auto acc = nodes[perm[0]];
      for (size_t i = 1; i < n; ++i) combine(p, acc, nodes[perm[i]]);
      return acc;
    }
    case Shape::kBinary: {
      Bufs level = nodes;
      while (level.size() > 1) {
        Bufs next;
        for (size_t i = 0; i < level.size(); i += 2) {
          next.push_back(level[i]);
          if (i + 1 < level.size()) combine(p, next.back(), level[i + 1]);
        }
        level.swap(next);
      }
      return level[0];
    }
    case Shape::kRandomTree: {
      // A random root; every other node attaches below a random earlier one.
      // Folding in reverse attachment order completes each subtree before
      // its root joins its own parent.
      const auto order = permutation(n, rng);
      std::vector<uint32_t> parent(n, 0);
      for (size_t k = 1; k < n; ++k) parent[order[k]] = order[rng.below(k)];
      Bufs partial = nodes;
      for (size_t k = n; k-- > 1;) combine(p, partial[parent[order[k]]], partial[order[k]]);
      return partial[order[0]];
    }
  }
  return {};
}

// The combined operands every node receives; checks that every shape (two
// random trees among them) gives the same bytes.
std::vector<uint8_t> network(const TreePass& p, const Bufs& nodes) {
  CHECK_TRUE(alu_check(p.op, p.type, p.width).is_ok() || p.operands == 0);
  CHECK_TRUE(!nodes.empty());
  for (const auto& b : nodes) LONGS_EQUAL(p.bytes(), b.size());
  if (p.operands == 0) return {};
  const auto first = fold(p, nodes, Shape::kChain, 1);
  uint64_t seed = 2;
  for (Shape s : kShapes) {
    CHECK_TEXT(fold(p, nodes, s, seed++) == first, "a tree shape changed the combined result");
  }
  CHECK_TEXT(fold(p, nodes, Shape::kRandomTree, 99) == first, "a second random tree changed the result");
  return first;
}

template <typename F>
std::string hex(F x) {
  char b[80];
  std::snprintf(b, sizeof b, "%a (0x%llx)", static_cast<double>(x),
                static_cast<unsigned long long>(std::bit_cast<std::conditional_t<sizeof(F) == 8, uint64_t, uint32_t>>(x)));
  return b;
}

template <typename F>
void check_bits(F want, F got, const std::string& ctx) {
  using U = std::conditional_t<sizeof(F) == 8, uint64_t, uint32_t>;
  if (std::bit_cast<U>(want) != std::bit_cast<U>(got)) {
    FAIL((ctx + ": want " + hex(want) + ", got " + hex(got)).c_str());
  }
}

// --- float SUM through the network ---------------------------------------------------------

// x[node][k]: node's k-th value. Returns the decoded sums (every node would
// decode the same bytes, so one decode stands for all).
template <typename F>
std::vector<F> network_float_sum(const std::vector<std::vector<F>>& x, FloatSumPlan* plan_out = nullptr) {
  const auto nodes = static_cast<uint32_t>(x.size());
  const auto n = static_cast<uint32_t>(x[0].size());
  const TreePass p1 = float_sum_pass1(n);
  Bufs b1(nodes, std::vector<uint8_t>(p1.bytes()));
  for (uint32_t i = 0; i < nodes; ++i) float_sum_pass1_encode<F>(x[i].data(), n, b1[i].data());
  const auto r1 = network(p1, b1);

  auto plan = float_sum_plan<F>(r1.data(), n, nodes);
  CHECK_TEXT(plan.is_ok(), plan.status().to_string().c_str());
  const TreePass p2 = float_sum_pass2(*plan);
  Bufs b2(nodes, std::vector<uint8_t>(p2.bytes()));
  for (uint32_t i = 0; i < nodes; ++i) float_sum_pass2_encode<F>(*plan, r1.data(), x[i].data(), n, b2[i].data());
  const auto r2 = network(p2, b2);

  std::vector<F> sum(n);
  float_sum_decode<F>(*plan, r1.data(), r2.data(), n, sum.data());
  if (plan_out != nullptr) *plan_out = *plan;
  return sum;
}

// One value per node.
template <typename F>
F network_float_sum1(const std::vector<F>& xs, FloatSumPlan* plan = nullptr) {
  std::vector<std::vector<F>> x;
  for (F v : xs) x.push_back({v});
  return network_float_sum<F>(x, plan)[0];
}

// The definition of the specials (tree_arith.h section 3), then the exact sum
// rounded once by MPFR.
template <typename F>
F reference_sum(const std::vector<F>& xs) {
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  for (F v : xs) {
    if (std::isnan(v)) nan = true;
    if (std::isinf(v)) (v > 0 ? pinf : ninf) = true;
    if (!(v == 0 && std::signbit(v))) all_neg_zero = false;
  }
  if (nan || (pinf && ninf)) return std::numeric_limits<F>::quiet_NaN();
  if (pinf) return std::numeric_limits<F>::infinity();
  if (ninf) return -std::numeric_limits<F>::infinity();
#if TOROID_HAVE_MPFR
  mpfr_t acc;
  mpfr_init2(acc, 4400);  // > 2098 window bits + log2(N): every partial sum is exact
  mpfr_set_zero(acc, 1);
  for (F v : xs) {
    const int inexact = mpfr_add_d(acc, acc, static_cast<double>(v), MPFR_RNDN);
    LONGS_EQUAL(0, inexact);
  }
  F r;
  if (mpfr_zero_p(acc)) {
    r = all_neg_zero ? -F(0) : F(0);
  } else if constexpr (sizeof(F) == 8) {
    r = mpfr_get_d(acc, MPFR_RNDN);
  } else {
    r = mpfr_get_flt(acc, MPFR_RNDN);
  }
  mpfr_clear(acc);
  return r;
#else
  return std::numeric_limits<F>::signaling_NaN();  // never used: the MPFR tests are skipped
#endif
}

template <typename F>
void check_sum(const std::vector<F>& xs, const std::string& ctx) {
  const F got = network_float_sum1<F>(xs);
  check_bits(reference_sum<F>(xs), got, ctx);
}

// Vectors: x[node][k] against the reference of column k.
template <typename F>
void check_sums(const std::vector<std::vector<F>>& x, const std::string& ctx) {
  const auto got = network_float_sum<F>(x);
  for (size_t k = 0; k < got.size(); ++k) {
    std::vector<F> col;
    for (const auto& node : x) col.push_back(node[k]);
    check_bits(reference_sum<F>(col), got[k], ctx + " value " + std::to_string(k));
  }
}

// Random finite values of F: sign, exponent and significand all uniform
// (the exponent over the whole range, subnormals included).
template <typename F>
F random_any(Rng& rng) {
  if constexpr (sizeof(F) == 8) {
    const uint64_t e = rng.below(2047);
    return std::bit_cast<double>((rng.next() & 0x800fffffffffffffull) | e << 52);
  } else {
    const uint32_t e = static_cast<uint32_t>(rng.below(255));
    return std::bit_cast<float>((static_cast<uint32_t>(rng.next()) & 0x807fffffu) | e << 23);
  }
}

template <typename F>
F random_subnormal(Rng& rng) {
  if constexpr (sizeof(F) == 8) return std::bit_cast<double>(rng.next() & 0x800fffffffffffffull);
  else return std::bit_cast<float>(static_cast<uint32_t>(rng.next()) & 0x807fffffu);
}

template <typename F>
F random_near_one(Rng& rng) {  // both signs, magnitudes 2^-8 .. 2^8: cancellation, small window
  return static_cast<F>((rng.uniform() * 2 - 1) * std::ldexp(1.0, static_cast<int>(rng.below(17)) - 8));
}

const double kDMin = std::numeric_limits<double>::denorm_min();  // 2^-1074
const double kDMax = std::numeric_limits<double>::max();
const float kFMin = std::numeric_limits<float>::denorm_min();  // 2^-149
const float kFMax = std::numeric_limits<float>::max();

}  // namespace

// ===========================================================================================
TEST_GROUP(ArithIntSum){};

TEST(ArithIntSum, BiasLimitsForWidthAndNodes) {
  // P = w - 1 - ceil(log2 N), |x| <= 2^P - 1.
  CHECK_EQUAL((uint64_t{1} << 28) - 1, bias_sum_max_abs(4, 8).value());
  CHECK_EQUAL((uint64_t{1} << 27) - 1, bias_sum_max_abs(4, 9).value());
  CHECK_EQUAL((uint64_t{1} << 31) - 1, bias_sum_max_abs(4, 1).value());
  CHECK_EQUAL((uint64_t{1} << 60) - 1, bias_sum_max_abs(8, 8).value());
  CHECK_EQUAL(uint64_t{0}, bias_sum_max_abs(4, uint64_t{1} << 31).value());  // P = 0: only zeros
  CHECK_EQUAL(uint64_t{1} << 63, bias_sum_max_abs(16, 1u << 20).value());    // every int64
  CHECK_EQUAL((uint64_t{1} << 63) - 1, bias_sum_max_abs(8, 1).value());          // P = 63
  // The inverse: the largest N for a bound.
  CHECK_EQUAL(uint64_t{8}, bias_sum_max_nodes(4, (uint64_t{1} << 28) - 1));
  CHECK_EQUAL(uint64_t{4}, bias_sum_max_nodes(4, uint64_t{1} << 28));
  CHECK_EQUAL(uint64_t{1} << 31, bias_sum_max_nodes(4, 0));
  CHECK_EQUAL(uint64_t{1}, bias_sum_max_nodes(4, (uint64_t{1} << 31) - 1));
  CHECK_EQUAL(uint64_t{0}, bias_sum_max_nodes(4, uint64_t{1} << 31));
  CHECK_EQUAL(uint64_t{1} << 63, bias_sum_max_nodes(16, uint64_t{1} << 63));  // P = 64
  CHECK_EQUAL(UINT64_MAX, bias_sum_max_nodes(16, 1));
  CHECK_EQUAL(uint64_t{0}, bias_sum_max_nodes(12, 1));
  // The two agree: at the largest N the bound is still accepted, one more node is not.
  for (uint32_t width : {4u, 8u}) {
    for (uint64_t m : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{5000000000}}) {
      const uint64_t n = bias_sum_max_nodes(width, m);
      if (n == 0) continue;
      CHECK(bias_sum_max_abs(width, n).value() >= m);
      auto more = bias_sum_max_abs(width, n + 1);
      CHECK(!more.is_ok() || more.value() < m);
    }
  }
}

TEST(ArithIntSum, BiasErrorsNameTheLimit) {
  auto plan = plan_bias_sum(4, 8);
  CHECK_TRUE(plan.is_ok());
  LONGS_EQUAL(28, plan->p);
  const int64_t x[] = {7, 5000000000, 1};
  std::vector<uint8_t> out(bias_sum_pass(*plan, 3).bytes());
  const Status s = bias_sum_encode(*plan, x, 3, out.data());
  CHECK(s.code() == Code::kOutOfRange);
  STRCMP_EQUAL(
      "signed sum by bias: |x[1]| = 5000000000 exceeds 2^28 - 1, the limit for 8 nodes on 32-bit words",
      s.message().c_str());
  // The boundary itself.
  const int64_t ok[] = {(1 << 28) - 1, -((1 << 28) - 1)};
  CHECK_TRUE(bias_sum_encode(*plan, ok, 2, out.data()).is_ok());
  const int64_t over[] = {-(1 << 28)};
  CHECK(bias_sum_encode(*plan, over, 1, out.data()).code() == Code::kOutOfRange);

  CHECK(plan_bias_sum(12, 8).status().code() == Code::kInvalid);
  CHECK(plan_bias_sum(4, 0).status().code() == Code::kInvalid);
  CHECK_TRUE(plan_bias_sum(4, uint64_t{1} << 31).is_ok());
  const auto too_many = plan_bias_sum(4, (uint64_t{1} << 31) + 1);
  CHECK(too_many.status().code() == Code::kOutOfRange);
  CHECK(too_many.status().message().find("2147483649 nodes") != std::string::npos);
  // INT64_MIN needs P = 64: a 16-byte plan takes it, an 8-byte one never.
  const int64_t lo[] = {INT64_MIN};
  out.resize(16);
  CHECK_TRUE(bias_sum_encode(plan_bias_sum(16, 1000).value(), lo, 1, out.data()).is_ok());
  CHECK_FALSE(bias_sum_encode(plan_bias_sum(8, 1).value(), lo, 1, out.data()).is_ok());
}

TEST(ArithIntSum, BiasSumsAreExactUpToTheLimit) {
  Rng rng(0x5u);
  for (uint32_t width : {4u, 8u, 16u}) {
    for (uint32_t nodes : {1u, 2u, 7u, 8u, 100u, 1000u}) {
      const auto plan = plan_bias_sum(width, nodes).value();
      const uint64_t m = bias_sum_max_abs(width, nodes).value();
      constexpr uint32_t kN = 6;
      std::vector<std::vector<int64_t>> x(nodes, std::vector<int64_t>(kN));
      for (uint32_t i = 0; i < nodes; ++i) {
        const auto lim = static_cast<int64_t>(std::min<uint64_t>(m, INT64_MAX));
        x[i][0] = lim;   // every node at +max
        x[i][1] = -lim;  // every node at -max
        x[i][2] = i % 2 ? lim : -lim;
        // Uniform in [-lim + 1, lim], computed modulo 2^64 (lim may be INT64_MAX).
        const uint64_t span = 2 * static_cast<uint64_t>(lim);
        x[i][3] = lim == 0 ? 0 : static_cast<int64_t>(rng.below(span) - static_cast<uint64_t>(lim) + 1);
        x[i][4] = 0;
        x[i][5] = m >= (uint64_t{1} << 63) ? INT64_MIN : -lim;  // INT64_MIN where the plan allows it
      }
      const TreePass p = bias_sum_pass(plan, kN);
      CHECK(p.op == AluOp::kAdd && p.type == AluType::kUnsigned && p.width == width);
      Bufs b(nodes, std::vector<uint8_t>(p.bytes()));
      for (uint32_t i = 0; i < nodes; ++i) CHECK_TRUE(bias_sum_encode(plan, x[i].data(), kN, b[i].data()).is_ok());
      const auto r = network(p, b);
      std::vector<__int128> sum(kN);
      bias_sum_decode(plan, r.data(), kN, sum.data());
      for (uint32_t k = 0; k < kN; ++k) {
        __int128 want = 0;
        for (uint32_t i = 0; i < nodes; ++i) want += x[i][k];
        CHECK_TEXT(sum[k] == want, ("width " + std::to_string(width) + " nodes " + std::to_string(nodes) +
                                    " value " + std::to_string(k)).c_str());
      }
    }
  }
}

TEST(ArithIntSum, SignExtensionSumsBeyondTheValueWidth) {
  CHECK_EQUAL((uint64_t{1} << 32) - 1, sext_sum_max_nodes(32));
  CHECK_EQUAL(UINT64_MAX, sext_sum_max_nodes(64));
  CHECK_TRUE(sext_sum_check(32, (uint64_t{1} << 32) - 1).is_ok());
  CHECK(sext_sum_check(32, uint64_t{1} << 32).code() == Code::kOutOfRange);
  CHECK(sext_sum_check(16, 4).code() == Code::kInvalid);
  CHECK(sext_sum_check(64, 0).code() == Code::kInvalid);

  Rng rng(0x6u);
  constexpr uint32_t kNodes = 1000, kN = 4;
  std::vector<std::vector<int32_t>> x32(kNodes, std::vector<int32_t>(kN));
  std::vector<std::vector<int64_t>> x64(kNodes, std::vector<int64_t>(kN));
  for (uint32_t i = 0; i < kNodes; ++i) {
    x32[i] = {INT32_MIN, INT32_MAX, static_cast<int32_t>(rng.next()), i % 3 ? INT32_MIN : INT32_MAX};
    x64[i] = {INT64_MIN, INT64_MAX, static_cast<int64_t>(rng.next()), i % 3 ? INT64_MIN : INT64_MAX};
  }
  Bufs b32(kNodes, std::vector<uint8_t>(sext_sum_pass(32, kN).bytes()));
  Bufs b64(kNodes, std::vector<uint8_t>(sext_sum_pass(64, kN).bytes()));
  for (uint32_t i = 0; i < kNodes; ++i) {
    sext_sum_encode(x32[i].data(), kN, b32[i].data());
    sext_sum_encode(x64[i].data(), kN, b64[i].data());
  }
  LONGS_EQUAL(8, sext_sum_pass(32, kN).width);
  LONGS_EQUAL(16, sext_sum_pass(64, kN).width);
  const auto r32 = network(sext_sum_pass(32, kN), b32);
  const auto r64 = network(sext_sum_pass(64, kN), b64);
  std::vector<int64_t> s32(kN);
  std::vector<__int128> s64(kN);
  sext_sum_decode(r32.data(), kN, s32.data());
  sext_sum_decode(r64.data(), kN, s64.data());
  for (uint32_t k = 0; k < kN; ++k) {
    int64_t w32 = 0;
    __int128 w64 = 0;
    for (uint32_t i = 0; i < kNodes; ++i) {
      w32 += x32[i][k];
      w64 += x64[i][k];
    }
    CHECK_EQUAL(w32, s32[k]);
    CHECK(w64 == s64[k]);
  }
  CHECK_EQUAL(int64_t{INT32_MIN} * kNodes, s32[0]);
}

// ===========================================================================================
TEST_GROUP(ArithIntExtreme){};

template <typename T>
void check_signed_extremes(const std::vector<std::vector<T>>& x) {
  const auto nodes = static_cast<uint32_t>(x.size());
  const auto n = static_cast<uint32_t>(x[0].size());
  for (Extreme e : {Extreme::kMax, Extreme::kMin}) {
    const TreePass p = signed_extreme_pass<T>(n);
    CHECK(p.op == AluOp::kMax && p.type == AluType::kUnsigned && p.width == sizeof(T));
    Bufs b(nodes, std::vector<uint8_t>(p.bytes()));
    for (uint32_t i = 0; i < nodes; ++i) signed_extreme_encode<T>(e, x[i].data(), n, b[i].data());
    const auto r = network(p, b);
    std::vector<T> got(n);
    signed_extreme_decode<T>(e, r.data(), n, got.data());
    for (uint32_t k = 0; k < n; ++k) {
      T want = x[0][k];
      for (uint32_t i = 1; i < nodes; ++i) want = e == Extreme::kMax ? std::max(want, x[i][k]) : std::min(want, x[i][k]);
      CHECK_EQUAL(want, got[k]);
    }
  }
}

TEST(ArithIntExtreme, MaxAndMinWithTheExtremesPresent) {
  Rng rng(0x7u);
  for (uint32_t nodes : {1u, 2u, 5u, 64u}) {
    std::vector<std::vector<int32_t>> a(nodes);
    std::vector<std::vector<int64_t>> b(nodes);
    for (uint32_t i = 0; i < nodes; ++i) {
      const auto r = static_cast<int32_t>(rng.next());
      a[i] = {i == 0 ? INT32_MIN : r, i == nodes - 1 ? INT32_MAX : r, -1 - static_cast<int32_t>(rng.below(100)),
              static_cast<int32_t>(rng.below(3)) - 1, INT32_MIN, r};
      const auto q = static_cast<int64_t>(rng.next());
      b[i] = {i == 0 ? INT64_MIN : q, i == nodes - 1 ? INT64_MAX : q, -1 - static_cast<int64_t>(rng.below(100)),
              static_cast<int64_t>(rng.below(3)) - 1, INT64_MIN, q};
    }
    check_signed_extremes(a);
    check_signed_extremes(b);
  }
}

TEST(ArithIntExtreme, MinWithIntMinIsIntMin) {
  // Two's complement negation would turn INT_MIN into itself and lose it;
  // the one's complement keeps the order.
  const std::vector<std::vector<int32_t>> x = {{5}, {INT32_MIN}, {-7}, {INT32_MAX}};
  std::vector<uint8_t> out(4);
  Bufs b;
  for (const auto& v : x) {
    signed_extreme_encode<int32_t>(Extreme::kMin, v.data(), 1, out.data());
    b.push_back(out);
  }
  const auto r = network(signed_extreme_pass<int32_t>(1), b);
  int32_t got = 0;
  signed_extreme_decode<int32_t>(Extreme::kMin, r.data(), 1, &got);
  CHECK_EQUAL(INT32_MIN, got);
}

// ===========================================================================================
TEST_GROUP(ArithFloatSum){};

#if TOROID_HAVE_MPFR

TEST(ArithFloatSum, MassiveCancellation) {
  check_sum<double>({1e308, -1e308, 1}, "1e308 - 1e308 + 1");
  check_bits(1.0, network_float_sum1<double>({1e308, 1, -1e308}), "1e308 + 1 - 1e308 is exactly 1");
  check_sum<double>({kDMax, kDMax, -kDMax}, "no overflow in between");
  check_bits(kDMax, network_float_sum1<double>({kDMax, kDMax, -kDMax}), "DBL_MAX");
  check_sum<double>({1e16, 1, -1e16, 1, 1e-16}, "lost by naive summation");
  check_sum<double>({0.1, 0.2, -0.3}, "0.1 + 0.2 - 0.3");
  std::vector<double> many;
  for (int i = 0; i < 500; ++i) many.push_back(i % 2 ? 1e300 : -1e300);
  many.push_back(3e-300);
  check_sum<double>(many, "alternating 1e300");
}

TEST(ArithFloatSum, ExponentSpreadOverTheWholeRange) {
  const double big = std::ldexp(1.0, 1023);
  check_bits(big, network_float_sum1<double>({big, kDMin}), "2^1023 + 2^-1074");
  check_bits(kDMin, network_float_sum1<double>({big, kDMin, -big}), "2^1023 - 2^1023 + 2^-1074");
  check_bits(kDMin, network_float_sum1<double>({kDMax, kDMin, -kDMax}), "DBL_MAX, 2^-1074, -DBL_MAX");
  FloatSumPlan plan;
  network_float_sum1<double>({big, kDMin}, &plan);
  // 2098 window bits on 2 nodes: 16 chunks of 126 bits in 16-byte fields and
  // one of 82 in 11 bytes; the 128-byte sub-blocks fill 8 operands of 256
  // bytes, the 88-byte one starts a ninth.
  LONGS_EQUAL(256, plan.width);
  LONGS_EQUAL(9, plan.operands);
  // Every binade once, both signs, then with the big ones cancelled.
  std::vector<double> all;
  for (int e = -1074; e <= 1023; ++e) all.push_back((e % 3 ? 1 : -1) * std::ldexp(1.0, e));
  check_sum<double>(all, "every power of two");
  std::vector<double> cancel = all;
  for (int e = 0; e <= 1023; ++e) cancel.push_back((e % 3 ? -1 : 1) * std::ldexp(1.0, e));
  check_sum<double>(cancel, "every power of two, the top half cancelled");
}

TEST(ArithFloatSum, SubnormalsOnly) {
  Rng rng(0x10u);
  std::vector<double> x;
  for (int i = 0; i < 1000; ++i) x.push_back(random_subnormal<double>(rng));
  check_sum<double>(x, "random subnormals");
  check_bits(1000 * kDMin, network_float_sum1<double>(std::vector<double>(1000, kDMin)), "1000 x 2^-1074");
  check_sum<double>({kDMin, -kDMin, kDMin}, "tiny");
  // Subnormals summing past the smallest normal.
  const double sub_max = std::nextafter(std::numeric_limits<double>::min(), 0.0);
  check_bits(std::numeric_limits<double>::min(), network_float_sum1<double>({sub_max, kDMin}), "into the normals");
  FloatSumPlan plan;
  network_float_sum1<double>(x, &plan);
  // One binade on 1000 nodes: 53 value bits, a sign and 10 of headroom make
  // an 8-byte field; one value per node is one group of 8 fields, 64 bytes,
  // four to an operand.
  LONGS_EQUAL(10, plan.headroom);
  LONGS_EQUAL(256, plan.width);
  LONGS_EQUAL(1, plan.operands);
}

TEST(ArithFloatSum, SignedZeros) {
  check_bits(-0.0, network_float_sum1<double>({-0.0}), "one -0");
  check_bits(-0.0, network_float_sum1<double>(std::vector<double>(100, -0.0)), "all -0");
  check_bits(0.0, network_float_sum1<double>({-0.0, 0.0, -0.0}), "mixed zeros");
  check_bits(0.0, network_float_sum1<double>({0.0}), "one +0");
  check_bits(0.0, network_float_sum1<double>({1.5, -1.5}), "exact cancellation");
  check_bits(0.0, network_float_sum1<double>({-0.0, -2.5, 2.5, -0.0}), "cancellation among -0");
  check_bits(-0.0f, network_float_sum1<float>({-0.0f, -0.0f}), "float all -0");
  check_bits(0.0f, network_float_sum1<float>({-0.0f, 0.0f}), "float mixed zeros");
  FloatSumPlan plan;
  network_float_sum1<double>({0.0, 0.0, 0.0}, &plan);
  LONGS_EQUAL(0, plan.operands);  // +0 only: settled by pass 1
  // A -0 anywhere in a block adds a -0 counter per value: 2 bits on 2 nodes,
  // one byte per field.
  network_float_sum1<double>({-0.0, 0.0}, &plan);
  LONGS_EQUAL(256, plan.width);  // 8-byte sub-blocks, 32 to an operand
  LONGS_EQUAL(1, plan.operands);
}

TEST(ArithFloatSum, RoundsOnceToNearestEven) {
  const double u = std::ldexp(1.0, -53);  // half an ulp of 1
  check_bits(1.0, network_float_sum1<double>({1, u}), "tie to even, down");
  check_bits(1 + 4 * u, network_float_sum1<double>({1 + 2 * u, u}), "tie to even, up");
  check_bits(1 + 2 * u, network_float_sum1<double>({1, u, kDMin}), "a sticky bit 2^1127 below breaks the tie");
  check_bits(1.0, network_float_sum1<double>({1, u, -kDMin}), "and below it");
  check_bits(1 - u, network_float_sum1<double>({1, -u}), "exact just below a binade");
  check_bits(1.0, network_float_sum1<double>({1, -u / 2}), "a tie across the binade, to even");
  check_sum<double>({1, -u / 2}, "mpfr agrees on the tie across the binade");
  check_sum<double>({1, u, u}, "two halves");
  // Overflow: past DBL_MAX + half an ulp is infinity; exactly there, ties to even (up).
  const double half_ulp_max = std::ldexp(1.0, 970);
  check_bits(std::numeric_limits<double>::infinity(), network_float_sum1<double>({kDMax, kDMax}), "overflow");
  check_bits(-std::numeric_limits<double>::infinity(), network_float_sum1<double>({-kDMax, -kDMax}), "-overflow");
  check_bits(std::numeric_limits<double>::infinity(), network_float_sum1<double>({kDMax, half_ulp_max}), "tie at max");
  check_bits(kDMax, network_float_sum1<double>({kDMax, half_ulp_max, -kDMin}), "just below the tie");
  check_sum<double>({kDMax, half_ulp_max}, "mpfr agrees at the overflow tie");
  check_sum<double>({kDMax, half_ulp_max, -kDMin}, "mpfr agrees below it");
}

TEST(ArithFloatSum, PassTwoCostFollowsEachBlocksExponentSpread) {
  // Per value ceil((spread + 53 + 1 + h) / 8) bytes, h = ceil(log2 N): the
  // cost model of tree_arith.h section 3, exactly, for uniform blocks (all
  // sub-blocks one size: operands of whole sub-blocks, only the last one
  // part empty).
  Rng rng(0x14u);
  constexpr uint32_t kN = 512;  // 8 blocks, 64 groups
  for (uint32_t nodes : {2u, 8u}) {
    const uint32_t h = nodes == 2 ? 1 : 3;
    for (int spread : {0, 7, 8, 23, 48, 70}) {
      std::vector<std::vector<double>> x(nodes, std::vector<double>(kN));
      for (uint32_t r = 0; r < nodes; ++r) {
        for (uint32_t k = 0; k < kN; ++k) {
          // Each block spans exactly `spread` binades: its first value on
          // node 0 sits at the bottom, its second at the top.
          const int e = r == 0 && k % kFloatSumBlock == 0   ? 0
                        : r == 0 && k % kFloatSumBlock == 1 ? spread
                                                            : static_cast<int>(rng.below(spread + 1));
          x[r][k] = (rng.chance(0.5) ? -1.0 : 1.0) * std::ldexp(1.0 + rng.uniform(), e - 20);
        }
      }
      FloatSumPlan plan;
      network_float_sum<double>(x, &plan);
      const uint32_t field = (spread + 53 + 1 + h + 7) / 8;  // bytes per value
      const uint32_t per_operand = kAluMaxWidth / (8 * field);
      LONGS_EQUAL(8 * field * per_operand, plan.width);
      LONGS_EQUAL((kN / 8 + per_operand - 1) / per_operand, plan.operands);
      check_sums(x, "spread " + std::to_string(spread) + " on " + std::to_string(nodes) + " nodes");
    }
  }
}

TEST(ArithFloatSum, RandomMixesUpToTenThousandNodes) {
  Rng rng(0x11u);
  for (uint32_t nodes : {1u, 2u, 3u, 17u, 100u, 1000u, 10000u}) {
    // Per node: whole-range values, values near 1 (cancellation, small
    // window), subnormals, and a value cancelled by another node's.
    std::vector<std::vector<double>> x(nodes, std::vector<double>(5));
    for (uint32_t i = 0; i < nodes; ++i) {
      x[i][0] = random_any<double>(rng);
      x[i][1] = random_near_one<double>(rng);
      x[i][2] = random_subnormal<double>(rng);
      x[i][3] = i % 2 ? -x[i - 1][3] : random_any<double>(rng);
      x[i][4] = rng.chance(0.01) ? random_any<double>(rng) : random_near_one<double>(rng) * 1e-300;
    }
    if (nodes % 2 == 1 && nodes > 1) x[nodes - 1][3] = kDMin;
    check_sums(x, "nodes " + std::to_string(nodes));
  }
}

TEST(ArithFloatSum, VectorsMixSpecialsZerosAndWindows) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Columns: full range (K = 2), narrow (K = 1), all zeros, +Inf, NaN.
  std::vector<std::vector<double>> x = {
      {std::ldexp(1.0, 1000), 1.0, 0.0, inf, 1.0},
      {kDMin, 3.0, -0.0, 2.0, nan},
      {-std::ldexp(1.0, 1000), -0.5, 0.0, -1.0, 2.0},
  };
  FloatSumPlan plan;
  const auto got = network_float_sum<double>(x, &plan);
  // One block: the whole range on 3 nodes (2075 window bits, 17 chunks of
  // at most 125 bits: 16 sub-blocks of 128 bytes and one of 80), and 4
  // counters of 3 bits (one sub-block of 16 bytes).
  LONGS_EQUAL(256, plan.width);
  LONGS_EQUAL(9, plan.operands);
  check_bits(kDMin, got[0], "full range");
  check_bits(3.5, got[1], "narrow");
  check_bits(0.0, got[2], "zeros");
  check_bits(inf, got[3], "+Inf");
  CHECK(std::isnan(got[4]));
  check_sums(x, "mixed vector");
}

TEST(ArithFloatSum, InfinitiesAndNans) {
  const double inf = std::numeric_limits<double>::infinity();
  const double qnan = std::numeric_limits<double>::quiet_NaN();
  const double snan = std::numeric_limits<double>::signaling_NaN();
  const double neg_nan = std::bit_cast<double>(0xfff0000000000123ull);
  check_bits(inf, network_float_sum1<double>({inf, 1, -kDMax}), "+Inf wins");
  check_bits(-inf, network_float_sum1<double>({-inf, kDMax, kDMax}), "-Inf wins over an overflow");
  check_bits(inf, network_float_sum1<double>({inf, inf}), "+Inf + +Inf");
  check_bits(qnan, network_float_sum1<double>({inf, -inf}), "+Inf + -Inf is NaN");
  check_bits(qnan, network_float_sum1<double>({1, qnan}), "NaN");
  check_bits(qnan, network_float_sum1<double>({snan, 1}), "a signalling NaN gives the quiet NaN");
  check_bits(qnan, network_float_sum1<double>({neg_nan, inf}), "a negative NaN payload is not kept");
  check_bits(std::numeric_limits<float>::quiet_NaN(), network_float_sum1<float>({-std::numeric_limits<float>::infinity(), 1.0f, std::numeric_limits<float>::infinity()}), "float +Inf + -Inf");
  check_sum<double>({inf, 2}, "mpfr side: +Inf");
  check_sum<double>({-inf, -inf, 3}, "mpfr side: -Inf");
}

TEST(ArithFloatSum, FloatsExactAndCorrectlyRounded) {
  Rng rng(0x12u);
  check_bits(1.0f, network_float_sum1<float>({1e38f, 1.0f, -1e38f}), "float cancellation");
  check_bits(kFMin, network_float_sum1<float>({std::ldexp(1.0f, 127), kFMin, -std::ldexp(1.0f, 127)}), "float spread");
  check_bits(std::numeric_limits<float>::infinity(), network_float_sum1<float>({kFMax, kFMax}), "float overflow");
  check_sum<float>({kFMax, kFMax, -kFMax}, "float no overflow between");
  check_sum<float>({1.0f, std::ldexp(1.0f, -24), kFMin}, "float sticky");
  for (uint32_t nodes : {2u, 7u, 300u, 5000u}) {
    std::vector<std::vector<float>> x(nodes, std::vector<float>(4));
    for (uint32_t i = 0; i < nodes; ++i) {
      x[i][0] = random_any<float>(rng);
      x[i][1] = random_near_one<float>(rng);
      x[i][2] = random_subnormal<float>(rng);
      x[i][3] = i % 2 ? -x[i - 1][3] : random_any<float>(rng);
    }
    FloatSumPlan plan;
    network_float_sum<float>(x, &plan);
    // 277 window bits at most: 3 chunks of 16 bytes per value (a group of 8).
    CHECK(float_sum_pass2(plan).bytes() <= 3 * 128 + plan.width);
    check_sums(x, "float nodes " + std::to_string(nodes));
  }
}

#endif  // TOROID_HAVE_MPFR

TEST(ArithFloatSum, PlanLimitsAndConsistency) {
  std::vector<uint8_t> p1(float_sum_pass1(1).bytes());
  const double one = 1.0;
  float_sum_pass1_encode<double>(&one, 1, p1.data());
  CHECK_TRUE(float_sum_plan<double>(p1.data(), 1, kFloatSumMaxNodes).is_ok());
  const auto too_many = float_sum_plan<double>(p1.data(), 1, kFloatSumMaxNodes + 1);
  CHECK(too_many.status().code() == Code::kOutOfRange);
  CHECK(float_sum_plan<double>(p1.data(), 1, 0).status().code() == Code::kOutOfRange);
  // 53 bits + sign + 2 of headroom: 7-byte fields, 56-byte sub-blocks, four
  // to an operand.
  auto plan = float_sum_plan<double>(p1.data(), 1, 4).value();
  LONGS_EQUAL(224, plan.width);
  LONGS_EQUAL(1, plan.operands);
  LONGS_EQUAL(2, plan.headroom);
  const TreePass p2 = float_sum_pass2(plan);
  CHECK(p2.op == AluOp::kAdd && p2.type == AluType::kUnsigned);
  const TreePass pass1 = float_sum_pass1(3);
  CHECK(pass1.op == AluOp::kMax && pass1.type == AluType::kUnsigned && pass1.width == 4);
  LONGS_EQUAL(kFloatSumPass1Words, pass1.operands);  // one block
  LONGS_EQUAL(2 * kFloatSumPass1Words, float_sum_pass1(kFloatSumBlock + 1).operands);
  // A pass-1 result no encoder can produce: bmin above bmax, a flag of 3.
  std::vector<uint8_t> bad = p1;
  bad[4] = 0;
  bad[5] = 0;  // (2047 - bmin) = 0 while bmax != 0
  CHECK(float_sum_plan<double>(bad.data(), 1, 4).status().code() == Code::kInvalid);
  bad = p1;
  bad[8] = 3;
  CHECK(float_sum_plan<double>(bad.data(), 1, 4).status().code() == Code::kInvalid);
}

namespace {

// Every intermediate of one float sum: pass-1 words and pass-2 operands of
// each node, their combinations, the plan and the decoded sums.
struct Trace {
  Bufs p1, p2;
  std::vector<uint8_t> r1, r2;
  FloatSumPlan plan;
  std::vector<double> sum;
};

Trace trace_float_sum(const std::vector<std::vector<double>>& x) {
  const auto nodes = static_cast<uint32_t>(x.size());
  const auto n = static_cast<uint32_t>(x[0].size());
  Trace t;
  const TreePass p1 = float_sum_pass1(n);
  t.p1.assign(nodes, std::vector<uint8_t>(p1.bytes()));
  for (uint32_t i = 0; i < nodes; ++i) float_sum_pass1_encode<double>(x[i].data(), n, t.p1[i].data());
  t.r1 = t.p1[0];
  for (uint32_t i = 1; i < nodes; ++i) combine(p1, t.r1, t.p1[i]);
  t.plan = float_sum_plan<double>(t.r1.data(), n, nodes).value();
  const TreePass p2 = float_sum_pass2(t.plan);
  t.p2.assign(nodes, std::vector<uint8_t>(p2.bytes(), 0xa5));  // encoders write every byte
  for (uint32_t i = 0; i < nodes; ++i) float_sum_pass2_encode<double>(t.plan, t.r1.data(), x[i].data(), n, t.p2[i].data());
  t.r2 = t.p2[0];
  for (uint32_t i = 1; i < nodes && p2.operands != 0; ++i) combine(p2, t.r2, t.p2[i]);
  t.sum.assign(n, 7.0);
  float_sum_decode<double>(t.plan, t.r1.data(), t.r2.data(), n, t.sum.data());
  return t;
}

// Block b of node r: a mix of what the kernels take and what they leave.
double kernel_case(Rng& rng, uint32_t r, uint32_t k) {
  const uint32_t b = k / kFloatSumBlock;
  const double sign = rng.chance(0.5) ? -1.0 : 1.0;
  const double m = 1.0 + rng.uniform();
  switch (b % 9) {
    case 0: return sign * std::ldexp(m, static_cast<int>(rng.below(3)));               // narrow: 7-byte fields
    case 1: return sign * std::ldexp(m, static_cast<int>(rng.below(49)) - 24);         // the bench's spread
    case 2: return sign * std::ldexp(m, static_cast<int>(rng.below(70)) - 600);        // 16-byte fields
    case 3: return r == 0 && k % 5 == 0 ? -0.0 : sign * m;                             // a -0: counters
    case 4: return (r % 2 ? -1.0 : 1.0) * std::ldexp(1.0 + (k % 7) * 0x1p-52, -1060);  // subnormal sums, zeros
    case 5: return std::ldexp(m, 1023);                                                // overflow to +Inf
    case 6: return (r % 2 ? -1.0 : 1.0) * std::ldexp(1.0, static_cast<int>(k % 40));   // exact zero sums
    case 7: return k % 11 == 0 ? std::ldexp(m, -1074 + 60) : sign * m * 1e300;         // two chunks
    default: return r == 1 && k % 13 == 0 ? INFINITY : sign * m;                       // Inf: counters
  }
}

}  // namespace

// The vector kernels (float_sum_avx512.cc) against the portable code: the
// same pass-1 words, pass-2 operands and sums, bit for bit, on blocks the
// kernels take and blocks they leave, lengths that end inside a group and a
// block, and lanes they hand back (subnormal, infinite and zero sums).
IGNORE_TEST(ArithFloatSum, VectorKernelsMatchThePortableCodeByteForByte) {
  for (uint32_t nodes : {1u, 2u, 3u, 8u, 300u}) {
    for (uint32_t n : {1u, 7u, 9u, 64u, 200u, 9u * 64 + 13}) {
      Rng rng(nodes * 1000 + n);
      std::vector<std::vector<double>> x(nodes, std::vector<double>(n));
      for (uint32_t r = 0; r < nodes; ++r)
        for (uint32_t k = 0; k < n; ++k) x[r][k] = kernel_case(rng, r, k);
      detail::float_sum_use_vector(false);
      const Trace want = trace_float_sum(x);
      detail::float_sum_use_vector(true);
      const Trace got = trace_float_sum(x);
      const std::string what = std::to_string(nodes) + " nodes, " + std::to_string(n) + " values";
      for (uint32_t r = 0; r < nodes; ++r) {
        CHECK_TEXT(want.p1[r] == got.p1[r], ("pass-1 words, " + what).c_str());
        CHECK_TEXT(want.p2[r] == got.p2[r], ("pass-2 operands, " + what).c_str());
      }
      LONGS_EQUAL(want.plan.width, got.plan.width);
      LONGS_EQUAL(want.plan.operands, got.plan.operands);
      for (uint32_t k = 0; k < n; ++k) check_bits(want.sum[k], got.sum[k], what + " value " + std::to_string(k));
    }
  }
}

namespace {
[[maybe_unused]] const bool kVectorTestRuns = [] {
  if (!detail::float_sum_avx512_usable()) {
    std::printf("SKIP ArithFloatSum.VectorKernelsMatchThePortableCodeByteForByte: no AVX-512 VBMI/VBMI2 on this CPU\n");
    return false;
  }
  IGNOREArithFloatSum_VectorKernelsMatchThePortableCodeByteForByte_TestShell_instance.setRunIgnored();
  return true;
}();
}  // namespace

TEST(ArithFloatSum, SameBitsOnEveryShapeWithoutMpfrToo) {
  // Reproducibility alone (no reference): 300 nodes of whole-range doubles.
  Rng rng(0x13u);
  std::vector<std::vector<double>> x(300, std::vector<double>(3));
  for (auto& node : x) {
    for (auto& v : node) v = random_any<double>(rng);
  }
  const auto a = network_float_sum<double>(x);  // network() compares the shapes
  std::reverse(x.begin(), x.end());             // and node order does not matter either
  const auto b = network_float_sum<double>(x);
  for (size_t k = 0; k < a.size(); ++k) check_bits(a[k], b[k], "reversed nodes");
}

// ===========================================================================================
TEST_GROUP(ArithFloatOrder){};

namespace {

// IEEE totalOrder on non-NaN values: -0 below +0.
template <typename F>
bool total_less(F a, F b) {
  if (a == b) return std::signbit(a) && !std::signbit(b);
  return a < b;
}

template <typename F>
F reference_extreme(Extreme e, const std::vector<F>& xs) {
  for (F v : xs) {
    if (std::isnan(v)) return std::numeric_limits<F>::quiet_NaN();
  }
  F r = xs[0];
  for (F v : xs) {
    if (e == Extreme::kMax ? total_less(r, v) : total_less(v, r)) r = v;
  }
  return r;
}

template <typename F>
void check_float_extremes(const std::vector<F>& xs, const std::string& ctx) {
  for (Extreme e : {Extreme::kMax, Extreme::kMin}) {
    const TreePass p = float_extreme_pass<F>(1);
    CHECK(p.op == AluOp::kMax && p.type == AluType::kUnsigned && p.width == sizeof(F));
    Bufs b(xs.size(), std::vector<uint8_t>(p.bytes()));
    for (size_t i = 0; i < xs.size(); ++i) float_extreme_encode<F>(e, &xs[i], 1, b[i].data());
    const auto r = network(p, b);
    F got;
    float_extreme_decode<F>(e, r.data(), 1, &got);
    check_bits(reference_extreme(e, xs), got, ctx + (e == Extreme::kMax ? " max" : " min"));
  }
}

}  // namespace

TEST(ArithFloatOrder, MaxMinOverTheWholeLine) {
  Rng rng(0x20u);
  const double inf = std::numeric_limits<double>::infinity();
  check_float_extremes<double>({-0.0, 0.0}, "signed zeros");
  check_float_extremes<double>({0.0, -0.0, -0.0}, "signed zeros reversed");
  check_float_extremes<double>({-inf, 3.0, inf, -kDMin, kDMin}, "infinities");
  check_float_extremes<double>({-1.0, -2.0, -kDMax}, "all negative");
  check_float_extremes<double>({1.0, std::numeric_limits<double>::quiet_NaN(), -inf}, "NaN");
  check_float_extremes<double>({1.0, std::bit_cast<double>(0xfff8000000000001ull)}, "negative NaN");
  check_float_extremes<float>({-0.0f, 1.5f, -std::numeric_limits<float>::infinity(), kFMin}, "float");
  check_float_extremes<float>({-2.0f, std::numeric_limits<float>::signaling_NaN()}, "float NaN");
  for (int t = 0; t < 20; ++t) {
    std::vector<double> d(1 + rng.below(50));
    std::vector<float> f(d.size());
    for (size_t i = 0; i < d.size(); ++i) {
      d[i] = random_any<double>(rng);
      f[i] = random_any<float>(rng);
    }
    check_float_extremes(d, "random doubles");
    check_float_extremes(f, "random floats");
  }
}

TEST(ArithFloatOrder, NonNegativeMaxIsTheBitPattern) {
  const std::vector<double> xs = {0.0, kDMin, 3.5, 1e300, 2.0};
  Bufs b;
  for (double v : xs) {
    std::vector<uint8_t> o(8);
    CHECK_TRUE(nonneg_max_encode<double>(&v, 1, o.data()).is_ok());
    b.push_back(o);
  }
  const auto r = network(float_extreme_pass<double>(1), b);
  double got;
  nonneg_max_decode<double>(r.data(), 1, &got);
  check_bits(1e300, got, "non-negative max");

  const float fs[] = {1.0f, 2.0f, -0.0f};
  uint8_t o[12];
  const Status s = nonneg_max_encode<float>(fs, 3, o);
  CHECK(s.code() == Code::kInvalid);
  CHECK_TEXT(s.message().find("x[2]") != std::string::npos, s.message().c_str());
  const double neg = -1.0;
  CHECK_FALSE(nonneg_max_encode<double>(&neg, 1, o).is_ok());
}

// ===========================================================================================
TEST_GROUP(ArithLoc){};

namespace {

template <typename T>
bool value_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return !std::isnan(a);  // NaN on top
    if (std::isnan(a)) return false;
    return total_less(a, b);
  } else {
    return a < b;
  }
}

template <typename T>
bool is_nan(T a) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(a);
  return false;
}

template <typename T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
  } else {
    return a == b;
  }
}

// One (value, index) per node; every node's index distinct.
template <typename T>
void check_loc(const std::vector<ValueLoc<T>>& xs, const std::string& ctx) {
  for (Extreme e : {Extreme::kMax, Extreme::kMin}) {
    const TreePass p = loc_pass<T>(1);
    CHECK(p.op == AluOp::kMax && p.type == AluType::kUnsigned && p.width == (sizeof(T) == 4 ? 8u : 16u));
    Bufs b(xs.size(), std::vector<uint8_t>(p.bytes()));
    for (size_t i = 0; i < xs.size(); ++i) loc_encode<T>(e, &xs[i], 1, b[i].data());
    const auto r = network(p, b);
    ValueLoc<T> got{};
    loc_decode<T>(e, r.data(), 1, &got);
    // Does v beat w? NaN beats every number for MAXLOC and MINLOC alike
    // (tree_arith.h section 5); then the larger / smaller value.
    const auto beats = [&](T v, T w) {
      if (is_nan(v) || is_nan(w)) return value_less(w, v);
      return e == Extreme::kMax ? value_less(w, v) : value_less(v, w);
    };
    ValueLoc<T> want = xs[0];
    for (const auto& v : xs) {
      if (beats(v.value, want.value) || (same_value(v.value, want.value) && v.index < want.index)) want = v;
    }
    CHECK_TEXT(same_value(want.value, got.value), (ctx + (e == Extreme::kMax ? " maxloc" : " minloc")).c_str());
    CHECK_EQUAL_TEXT(want.index, got.index, (ctx + (e == Extreme::kMax ? " maxloc" : " minloc")).c_str());
  }
}

template <typename T>
void check_loc_random(Rng& rng, const std::vector<T>& pool, const std::string& ctx) {
  for (uint32_t nodes : {1u, 2u, 9u, 64u}) {
    const auto idx = permutation(nodes, rng);
    std::vector<ValueLoc<T>> xs(nodes);
    for (uint32_t i = 0; i < nodes; ++i) xs[i] = {pool[rng.below(pool.size())], 1000 + 3 * idx[i]};
    check_loc<T>(xs, ctx + " nodes " + std::to_string(nodes));
  }
}

}  // namespace

TEST(ArithLoc, TiesGoToTheLowestIndex) {
  // Ties on both the maximum and the minimum, the lowest index not first.
  const std::vector<ValueLoc<int32_t>> a = {{5, 10}, {9, 4}, {9, 2}, {1, 7}, {1, 3}, {9, 8}};
  check_loc<int32_t>(a, "int32 ties");
  ValueLoc<int32_t> got{};
  Bufs b;
  for (const auto& v : a) {
    std::vector<uint8_t> o(8);
    loc_encode<int32_t>(Extreme::kMax, &v, 1, o.data());
    b.push_back(o);
  }
  loc_decode<int32_t>(Extreme::kMax, network(loc_pass<int32_t>(1), b).data(), 1, &got);
  LONGS_EQUAL(9, got.value);
  LONGS_EQUAL(2, got.index);
  // Index 0 and the largest index both survive the M - index packing.
  check_loc<int64_t>({{INT64_MIN, UINT32_MAX}, {INT64_MIN, 0}, {INT64_MAX, UINT32_MAX}, {INT64_MAX, 5}}, "int64 ends");
  check_loc<double>({{-0.0, 1}, {0.0, 2}, {0.0, 0}, {-0.0, 0xffffffffu}}, "signed zeros");
  check_loc<float>({{2.0f, 4}, {std::numeric_limits<float>::quiet_NaN(), 9}, {2.0f, 1},
                    {-std::numeric_limits<float>::quiet_NaN(), 6}}, "NaN wins, lowest index");
}

TEST(ArithLoc, RandomValuesWithManyTies) {
  Rng rng(0x30u);
  for (int t = 0; t < 10; ++t) {
    check_loc_random<int32_t>(rng, {INT32_MIN, -1, 0, 1, 7, INT32_MAX}, "int32");
    check_loc_random<int64_t>(rng, {INT64_MIN, -5, 0, 3, INT64_MAX}, "int64");
    check_loc_random<float>(rng, {-std::numeric_limits<float>::infinity(), -1.5f, -0.0f, 0.0f, kFMin, 3.0f}, "float");
    check_loc_random<double>(rng, {-kDMax, -kDMin, -0.0, 0.0, 1.0, std::numeric_limits<double>::infinity()}, "double");
  }
}

// ===========================================================================================
TEST_GROUP(ArithGatherLogic){};

TEST(ArithGatherLogic, AllgatherThroughSum) {
  Rng rng(0x40u);
  for (uint32_t block : {0u, 1u, 5u, 8u, 13u}) {
    for (uint32_t nodes : {1u, 3u, 13u, 64u}) {
      const auto layout = plan_gather(block, nodes).value();
      const TreePass p = gather_pass(layout);
      CHECK(p.op == AluOp::kAdd && p.width == kGatherWidth);
      LONGS_EQUAL((block * nodes + 7) / 8, p.operands);
      std::vector<uint8_t> want(layout.gathered_bytes());
      Bufs b(nodes, std::vector<uint8_t>(p.bytes(), 0xee));  // encode must clear everything
      for (uint32_t r = 0; r < nodes; ++r) {
        std::vector<uint8_t> mine(block);
        for (auto& v : mine) v = static_cast<uint8_t>(rng.next() | 0x80);  // carries would show
        std::copy(mine.begin(), mine.end(), want.begin() + static_cast<long>(layout.slot(r)));
        CHECK_TRUE(gather_encode(layout, r, mine.data(), b[r].data()).is_ok());
      }
      if (p.operands == 0) continue;
      const auto res = network(p, b);
      std::vector<uint8_t> got(layout.gathered_bytes());
      gather_decode(layout, res.data(), got.data());
      CHECK(got == want);
    }
  }
  CHECK(plan_gather(4, 0).status().code() == Code::kInvalid);
  CHECK(plan_gather(UINT32_MAX, UINT32_MAX).status().code() == Code::kOutOfRange);
  const auto layout = plan_gather(4, 2).value();
  uint8_t out[8];
  CHECK(gather_encode(layout, 2, "abcd", out).code() == Code::kInvalid);
}

TEST(ArithGatherLogic, LogicalOpsOnOneBit) {
  Rng rng(0x41u);
  constexpr uint32_t kN = 130;  // crosses two 64-bit operands
  for (uint32_t nodes : {1u, 2u, 9u}) {
    std::vector<std::vector<int32_t>> x(nodes, std::vector<int32_t>(kN));
    for (auto& node : x) {
      for (uint32_t k = 0; k < kN; ++k) {
        // Column k is mostly true for k % 3 == 0 (so LAND sometimes holds).
        const bool on = k % 3 == 0 ? !rng.chance(0.1) : rng.chance(0.5);
        node[k] = on ? (rng.chance(0.5) ? INT32_MIN : static_cast<int32_t>(rng.below(100)) + 1) : 0;
      }
    }
    for (Logic l : {Logic::kAnd, Logic::kOr, Logic::kXor}) {
      const TreePass p = logical_pass(l, kN);
      LONGS_EQUAL(3, p.operands);
      Bufs b(nodes, std::vector<uint8_t>(p.bytes()));
      for (uint32_t i = 0; i < nodes; ++i) logical_encode(x[i].data(), kN, b[i].data());
      const auto r = network(p, b);
      std::vector<int32_t> got(kN);
      logical_decode(r.data(), kN, got.data());
      for (uint32_t k = 0; k < kN; ++k) {
        int want = l == Logic::kAnd ? 1 : 0;
        for (const auto& node : x) {
          const int v = node[k] != 0;
          want = l == Logic::kAnd ? (want & v) : l == Logic::kOr ? (want | v) : (want ^ v);
        }
        LONGS_EQUAL(want, got[k]);
      }
    }
  }
}

TEST(ArithGatherLogic, BarrierIsAGlobalAndThatChecksTheEpoch) {
  const TreePass p = barrier_pass();
  CHECK(p.op == AluOp::kAnd && p.operands == 2 && p.width == 8);
  auto run = [&](const std::vector<uint64_t>& epochs) {
    Bufs b(epochs.size(), std::vector<uint8_t>(p.bytes()));
    for (size_t i = 0; i < epochs.size(); ++i) barrier_encode(epochs[i], b[i].data());
    return network(p, b);
  };
  CHECK_TRUE(barrier_decode(41, run({41, 41, 41, 41}).data()).is_ok());
  CHECK_TRUE(barrier_decode(0, run({0}).data()).is_ok());
  // 3 & 7 = 3: the AND alone would not notice a node in epoch 7.
  const Status s = barrier_decode(3, run({3, 7, 3}).data());
  CHECK(s.code() == Code::kInternal);
  CHECK_TEXT(s.message().find("OR 7") != std::string::npos, s.message().c_str());
  CHECK_FALSE(barrier_decode(7, run({3, 7, 3}).data()).is_ok());
}
