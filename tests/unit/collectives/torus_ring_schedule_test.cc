// The torus ring allreduce schedule, checked without a network.

#include <vector>

#include "collectives/schedule/torus_ring.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;

TEST_GROUP(TorusRingSchedule){};

TEST(TorusRingSchedule, OnePhasePerDimensionLongerThanOne) {
  auto ph = torus_ring_phases(Dims{{4, 1, 3}}, Coord{{1, 0, 2}});
  LONGS_EQUAL(2, ph.size());
  LONGS_EQUAL(0, ph[0].dim);
  LONGS_EQUAL(3, ph[0].steps);
  CHECK(ph[0].send_dir == Dir::kXp && ph[0].recv_dir == Dir::kXm);
  LONGS_EQUAL(2, ph[1].dim);
  LONGS_EQUAL(2, ph[1].steps);
  CHECK(ph[1].send_dir == Dir::kZp && ph[1].recv_dir == Dir::kZm);
  CHECK(torus_ring_phases(Dims{{1, 1, 1}}, Coord{}).empty());
}

// A side of two nodes has one neighbour over two cables: both nodes use the
// cable 0(+) - 1(-), so data (and the acks it carries) goes both ways on it
// instead of one way on each.
TEST(TorusRingSchedule, SideOfTwoUsesOneCableBothWays) {
  for (uint32_t x = 0; x < 2; ++x) {
    auto ph = torus_ring_phases(Dims{{2, 1, 1}}, Coord{{x, 0, 0}});
    LONGS_EQUAL(1, ph.size());
    LONGS_EQUAL(1, ph[0].steps);
    const Dir want = x == 0 ? Dir::kXp : Dir::kXm;
    CHECK(ph[0].send_dir == want && ph[0].recv_dir == want);
  }
}

TEST(TorusRingSchedule, TotalStepsIsSumOfLineLengthsMinusOne) {
  uint32_t steps = 0;
  for (const auto& p : torus_ring_phases(Dims{{8, 8, 8}}, Coord{})) steps += p.steps;
  LONGS_EQUAL(21, steps);
}

TEST(TorusRingSchedule, PacketsPerStep) {
  LONGS_EQUAL(1, packets_per_step(0, 100));  // a zero-length step still carries a token
  LONGS_EQUAL(1, packets_per_step(1, 100));
  LONGS_EQUAL(1, packets_per_step(100, 100));
  LONGS_EQUAL(2, packets_per_step(101, 100));
  LONGS_EQUAL(82, packets_per_step(8192, 100));
  LONGS_EQUAL(118, elems_per_packet(950, 8));
}

// Every node of a ring of n receives every other node's contribution exactly
// once over the n-1 steps (and never its own): the sum is complete.
TEST(TorusRingSchedule, EveryContributionArrivesExactlyOnce) {
  for (uint32_t n = 2; n <= 17; ++n) {
    for (uint32_t pos = 0; pos < n; ++pos) {
      std::vector<int> seen(n, 0);
      seen[pos] = 1;  // its own value is the starting sum
      for (uint32_t k = 0; k + 1 < n; ++k) ++seen[ring_source(pos, n, k)];
      for (uint32_t r = 0; r < n; ++r) LONGS_EQUAL_TEXT(1, seen[r], "contribution counted once");
    }
  }
}
