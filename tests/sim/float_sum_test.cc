// The exact two-pass float SUM on the real combine network: equal, bit for
// bit, to MPFR's correctly rounded sum on adversarial inputs, on every node,
// for three partition shapes holding the same eight contributions, and for
// trees rooted at different nodes.
#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/rng.h"
#include "collectives/tree_float_sum.h"
#include "netstack/tree/combine.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

constexpr uint32_t kNodes = 8;
constexpr uint32_t kValues = 64;

// Contribution of linear rank r, element i: depends on (r, i) only.
double value(uint32_t r, uint32_t i) {
  switch (i) {
    case 0: return r == 0 ? 1e308 : r == 1 ? -1e308 : r == 2 ? 1.0 : 0.0;          // massive cancellation
    case 1: return r == 0 ? 0x1p1023 : r == 1 ? 0x1p-1074 : r == 2 ? -0x1p1023 : 0x1p-1074 * 3;
    case 2: return std::ldexp(static_cast<double>(2 * r + 1), -1074);            // subnormals only
    case 3: return -0.0;                                                          // all -0 => -0
    case 4: return r % 2 ? -0.0 : 0.0;                                           // mixed => +0
    case 5: return r == 3 ? INFINITY : 1.0;                                      // +Inf
    case 6: return r == 3 ? INFINITY : r == 6 ? -INFINITY : 2.0;                 // +Inf + -Inf => NaN
    case 7: return r == 5 ? NAN : 1.0;                                           // NaN
    case 8: return r == 0 ? 0x1.fffffffffffffp1023 : r == 1 ? 0x1.fffffffffffffp1023 : 0.0;  // overflow
    case 9: return (r % 2 ? -1.0 : 1.0) * std::ldexp(1.0, 1000 - 300 * static_cast<int>(r));  // spread
    default: {
      Rng rng(mix64(i * 131 + r));
      const double m = 1.0 + rng.uniform();
      const int e = static_cast<int>(rng.below(2098)) - 1074;
      return (rng.next() & 1 ? -1.0 : 1.0) * std::ldexp(m, e);
    }
  }
}

// MPFR: exact sum at 2400 bits, then one rounding to nearest even.
double reference(uint32_t i) {
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  for (uint32_t r = 0; r < kNodes; ++r) {
    const double v = value(r, i);
    nan |= std::isnan(v);
    pinf |= v == INFINITY;
    ninf |= v == -INFINITY;
    all_neg_zero &= v == 0.0 && std::signbit(v);
  }
  if (nan || (pinf && ninf)) return NAN;
  if (pinf) return INFINITY;
  if (ninf) return -INFINITY;
  mpfr_t acc, x;
  mpfr_init2(acc, 2400);
  mpfr_init2(x, 64);
  mpfr_set_zero(acc, 1);
  for (uint32_t r = 0; r < kNodes; ++r) {
    mpfr_set_d(x, value(r, i), MPFR_RNDN);
    mpfr_add(acc, acc, x, MPFR_RNDN);  // exact at this precision
  }
  double d = mpfr_get_d(acc, MPFR_RNDN);
  const bool zero = mpfr_zero_p(acc);
  mpfr_clear(acc);
  mpfr_clear(x);
  if (zero) d = all_neg_zero ? -0.0 : 0.0;
  return d;
}

bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Runs the sum on every node of `dims` over tree class `cls` rooted at
// `root`; returns node 0's result after checking all nodes agree with MPFR.
std::vector<double> run_sum(const char* dims_s, uint32_t root_rank) {
  LogCapture log;
  SimRig rig(options(dims_s, "train", 1));
  CHECK_TRUE(rig.build().is_ok());
  LONGS_EQUAL(kNodes, rig.run().passed);
  const Dims dims = parse_dims(dims_s).value();
  const uint8_t cls = 2;
  const ClassRoute tree = make_tree_route(dims, coord_of(root_rank, dims));
  std::vector<std::vector<double>> in(kNodes, std::vector<double>(kValues)), out = in;
  std::vector<TreeFloatSum<double>> sums(kNodes);
  for (uint32_t r = 0; r < kNodes; ++r) {
    CHECK_TRUE(rig.node(r).combine().add_tree(cls, tree).is_ok());
    for (uint32_t i = 0; i < kValues; ++i) in[r][i] = value(r, i);
    Status st = sums[r].start(&rig.node(r).combine(), cls, 1, in[r].data(), out[r].data(), kValues, kNodes);
    CHECK_TRUE_TEXT(st.is_ok(), st.to_string().c_str());
  }
  // Drive both passes: the nodes' loops move packets; the test advances the
  // state machines between slices of virtual time.
  for (int slice = 0; slice < 200; ++slice) {
    for (uint32_t r = 0; r < kNodes; ++r) rig.fabric().wake(r, rig.fabric().now());
    rig.fabric().run(rig.fabric().now() + 100 * kUs);
    bool all = true;
    for (auto& s : sums) {
      s.progress();
      all &= s.done();
    }
    if (all) break;
  }
  for (uint32_t r = 0; r < kNodes; ++r) {
    CHECK_TRUE_TEXT(sums[r].done(), "finished");
    CHECK_TRUE_TEXT(sums[r].status().is_ok(), sums[r].status().to_string().c_str());
    for (uint32_t i = 0; i < kValues; ++i) {
      const double want = reference(i);
      char msg[160];
      snprintf(msg, sizeof msg, "%s root %u node %u element %u: got %a want %a", dims_s, root_rank, r, i, out[r][i],
               want);
      CHECK_TEXT(same(out[r][i], want), msg);
    }
  }
  return out[0];
}

}  // namespace

TEST_GROUP(FloatSum){};

TEST(FloatSum, ExactAndIdenticalAcrossShapesAndRoots) {
  const auto a = run_sum("2x2x2", 0);
  const auto b = run_sum("8x1x1", 0);
  const auto c = run_sum("4x2x1", 0);
  const auto d = run_sum("2x2x2", 5);
  const auto e = run_sum("8x1x1", 3);
  for (uint32_t i = 0; i < kValues; ++i) {
    CHECK(same(a[i], b[i]));
    CHECK(same(a[i], c[i]));
    CHECK(same(a[i], d[i]));
    CHECK(same(a[i], e[i]));
  }
  // The adversarial cases are what they claim to be.
  CHECK(same(a[0], 1.0));
  CHECK(same(a[3], -0.0));
  CHECK(same(a[4], 0.0));
  CHECK(same(a[5], INFINITY));
  CHECK(std::isnan(a[6]) && std::isnan(a[7]));
  CHECK(same(a[8], INFINITY));  // overflow rounds to +Inf
}
