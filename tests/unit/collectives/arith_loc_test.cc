// MINLOC/MAXLOC on the combine network and the gather and logical
// operations, in every tree shape, against plain C++.
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
