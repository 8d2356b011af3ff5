#include <cmath>
#include <cstdint>

#include "base/rng.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

static_assert(mix64(0) != mix64(1));

namespace {
// Mean number of differing bits between two streams (32 for independent ones).
double mean_bit_distance(Rng a, Rng b, int n) {
  uint64_t bits = 0;
  for (int i = 0; i < n; ++i) bits += static_cast<uint64_t>(__builtin_popcountll(a.next() ^ b.next()));
  return static_cast<double>(bits) / n;
}
}  // namespace

TEST_GROUP(Rng) {};

TEST(Rng, SameSeedSameStream) {
  Rng a(42), b(42);
  for (int i = 0; i < 1000; ++i) UNSIGNED_LONGLONGS_EQUAL(a.next(), b.next());
  a.reseed(7);
  b.reseed(7);
  for (int i = 0; i < 100; ++i) CHECK_EQUAL(a.below(1000), b.below(1000));
}

TEST(Rng, DifferentSeedDifferentStream) {
  Rng a(42), b(43);
  int same = 0;
  for (int i = 0; i < 1000; ++i) same += a.next() == b.next();
  LONGS_EQUAL(0, same);
  DOUBLES_EQUAL(32.0, mean_bit_distance(Rng(1), Rng(2), 10000), 1.0);
  DOUBLES_EQUAL(32.0, mean_bit_distance(Rng(0), Rng(1ull << 63), 10000), 1.0);
}

TEST(Rng, DeriveIsDeterministicAndIndependent) {
  Rng a = Rng::derive(99, 5), b = Rng::derive(99, 5);
  for (int i = 0; i < 100; ++i) UNSIGNED_LONGLONGS_EQUAL(a.next(), b.next());
  // Neighbouring streams, the parent seed's own stream, and another seed's
  // stream with the same id all look unrelated.
  DOUBLES_EQUAL(32.0, mean_bit_distance(Rng::derive(99, 5), Rng::derive(99, 6), 10000), 1.0);
  DOUBLES_EQUAL(32.0, mean_bit_distance(Rng::derive(99, 0), Rng(99), 10000), 1.0);
  DOUBLES_EQUAL(32.0, mean_bit_distance(Rng::derive(99, 5), Rng::derive(100, 5), 10000), 1.0);
  // Drawing from one child does not move another.
  Rng c1 = Rng::derive(7, 1), c2 = Rng::derive(7, 2), c2_ref = Rng::derive(7, 2);
  for (int i = 0; i < 50; ++i) c1.next();
  UNSIGNED_LONGLONGS_EQUAL(c2_ref.next(), c2.next());
}

TEST(Rng, UniformInUnitInterval) {
  Rng r(3);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = r.uniform();
    CHECK_TRUE(u >= 0.0 && u < 1.0);
    sum += u;
  }
  DOUBLES_EQUAL(0.5, sum / 100000, 0.01);
}

TEST(Rng, BelowStaysInRange) {
  Rng r(11);
  const uint64_t ns[] = {1, 2, 3, 7, 1000, (1ull << 40) + 3, ~0ull};
  for (uint64_t n : ns) {
    uint64_t max_seen = 0;
    for (int i = 0; i < 5000; ++i) {
      const uint64_t v = r.below(n);
      CHECK_TRUE(v < n);
      if (v > max_seen) max_seen = v;
    }
    if (n > 1 && n <= 1000) UNSIGNED_LONGLONGS_EQUAL(n - 1, max_seen);  // reaches the top
    if (n == 1) UNSIGNED_LONGLONGS_EQUAL(0, max_seen);
  }
}

TEST(Rng, BelowRoughlyUniform) {
  Rng r(2024);
  constexpr int kBuckets = 10;
  constexpr int kDraws = 100000;
  int count[kBuckets] = {};
  for (int i = 0; i < kDraws; ++i) count[r.below(kBuckets)]++;
  double chi2 = 0;
  const double expect = static_cast<double>(kDraws) / kBuckets;
  for (int c : count) chi2 += (c - expect) * (c - expect) / expect;
  // 9 degrees of freedom: mean 9, P(chi2 > 40) ~ 1e-5. A biased generator
  // (e.g. always the low buckets) lands in the thousands.
  CHECK_TEXT(chi2 < 40.0, "chi-square too large");
}

TEST(Rng, ChanceRate) {
  Rng r(5);
  constexpr int kDraws = 100000;
  const double ps[] = {0.3, 0.01, 0.9};
  for (double p : ps) {
    int hits = 0;
    for (int i = 0; i < kDraws; ++i) hits += r.chance(p);
    const double sigma = std::sqrt(kDraws * p * (1 - p));
    CHECK_TEXT(std::fabs(hits - kDraws * p) < 5 * sigma, "chance rate outside 5 sigma");
  }
  for (int i = 0; i < 1000; ++i) {
    CHECK_FALSE(r.chance(0.0));
    CHECK_FALSE(r.chance(-1.0));
    CHECK_TRUE(r.chance(1.0));
  }
}
