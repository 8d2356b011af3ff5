// Seed 004's integer methods on the combine network (collectives/arith/):
// sums of N nodes' values within the bias limits, and at the extremes, in
// every tree shape, against plain C++.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "arith_test_util.h"  // CppUTest last, through it

using namespace toroid;
using namespace toroid::arith;
using namespace toroid::arithtest;

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
