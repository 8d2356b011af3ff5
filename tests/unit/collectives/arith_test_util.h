// What the arithmetic tests share (arith_*_test.cc): a simulated combine
// network folding the nodes' encoded operands with the ALU in several tree
// shapes, an MPFR reference for the float SUM, and input generators.
#pragma once
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

namespace toroid::arithtest {

using namespace toroid;
using namespace toroid::arith;


using Bufs = std::vector<std::vector<uint8_t>>;

// --- the simulated combine network ------------------------------------------------------

enum class Shape { kChain, kReverse, kShuffled, kBinary, kRandomTree };
constexpr Shape kShapes[] = {Shape::kChain, Shape::kReverse, Shape::kShuffled, Shape::kBinary, Shape::kRandomTree};

inline void combine(const TreePass& p, std::vector<uint8_t>& acc, const std::vector<uint8_t>& in) {
  alu_combine(p.op, p.type, p.width, acc.data(), in.data(), p.operands);
}

inline std::vector<uint32_t> permutation(size_t n, Rng& rng) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i);
  for (size_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
  return v;
}

// What the root holds after every router combined its own operands with its
// children's partial results, for one tree shape.
inline std::vector<uint8_t> fold(const TreePass& p, const Bufs& nodes, Shape shape, uint64_t seed) {
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
inline std::vector<uint8_t> network(const TreePass& p, const Bufs& nodes) {
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
inline void check_bits(F want, F got, const std::string& ctx) {
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
inline void check_sum(const std::vector<F>& xs, const std::string& ctx) {
  const F got = network_float_sum1<F>(xs);
  check_bits(reference_sum<F>(xs), got, ctx);
}

// Vectors: x[node][k] against the reference of column k.
template <typename F>
inline void check_sums(const std::vector<std::vector<F>>& x, const std::string& ctx) {
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

inline const double kDMin = std::numeric_limits<double>::denorm_min();  // 2^-1074
inline const double kDMax = std::numeric_limits<double>::max();
inline const float kFMin = std::numeric_limits<float>::denorm_min();  // 2^-149
inline const float kFMax = std::numeric_limits<float>::max();


// IEEE totalOrder on non-NaN values: -0 below +0.
template <typename F>
bool total_less(F a, F b) {
  if (a == b) return std::signbit(a) && !std::signbit(b);
  return a < b;
}

}  // namespace toroid::arithtest
