// Seed 004 C's torus reduction schedule, checked without a network: every
// node's value reaches the root exactly once, no node takes more than two
// incoming streams, and streams only run towards each line's middle.
#include <map>
#include <vector>

#include "collectives/schedule/torus_middle.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;

namespace {

// Simulate the data flow: each node holds a multiset of contributions (ranks);
// a sender passes everything it holds to its neighbour, phase by phase.
void check_shape(const Dims& dims) {
  const uint32_t n = dims.nodes();
  std::vector<std::map<uint32_t, int>> held(n);
  for (uint32_t r = 0; r < n; ++r) held[r][r] = 1;
  std::vector<std::vector<MiddleRole>> roles(n);
  for (uint32_t r = 0; r < n; ++r) roles[r] = torus_middle_roles(coord_of(r, dims), dims);
  const size_t phases = n ? roles[0].size() : 0;
  for (size_t ph = 0; ph < phases; ++ph) {
    const int d = roles[0][ph].dim;
    // Lines stream towards the middle: process senders from the outside in.
    for (uint32_t step = 0; step < dims.n[d]; ++step) {
      for (uint32_t r = 0; r < n; ++r) {
        const MiddleRole& mr = roles[r][ph];
        LONGS_EQUAL(d, mr.dim);
        CHECK(mr.inputs <= 2);
        if (!mr.active || !mr.sends) continue;
        const Coord c = coord_of(r, dims);
        const uint32_t m = line_middle(dims.n[d]);
        const uint32_t dist = c.c[d] < m ? c.c[d] : dims.n[d] - 1 - c.c[d];  // 0 = outermost
        if (dist != step) continue;
        const uint32_t to = rank_of(neighbour(c, mr.send_dir, dims), dims);
        const MiddleRole& tr = roles[to][ph];
        CHECK_TEXT(tr.active, "a stream goes to a node that takes part");
        CHECK_TEXT(dir_plus(mr.send_dir) ? tr.recv_minus : tr.recv_plus, "the receiver expects it from that side");
        for (auto [k, v] : held[r]) held[to][k] += v;
        held[r].clear();
      }
    }
  }
  const uint32_t root = rank_of(torus_middle_root(dims), dims);
  for (uint32_t r = 0; r < n; ++r) {
    if (r == root) continue;
    CHECK_TEXT(held[r].empty(), "only the root holds anything at the end");
  }
  LONGS_EQUAL(n, held[root].size());
  for (auto [k, v] : held[root]) LONGS_EQUAL_TEXT(1, v, "every contribution exactly once");
}

}  // namespace

TEST_GROUP(TorusMiddleSchedule){};

TEST(TorusMiddleSchedule, EveryContributionReachesTheRootOnce) {
  for (const char* s : {"1x1x1", "2x1x1", "3x1x1", "2x2x2", "4x4x4", "8x4x2", "1x1x16", "3x5x7", "5x1x4"})
    check_shape(parse_dims(s).value());
}

TEST(TorusMiddleSchedule, OnlyTheMiddleTakesTwoStreams) {
  const Dims d{{5, 1, 1}};
  const int want_inputs[5] = {0, 1, 2, 1, 0};
  for (uint32_t x = 0; x < 5; ++x) {
    auto roles = torus_middle_roles(Coord{{x, 0, 0}}, d);
    LONGS_EQUAL(1, roles.size());
    LONGS_EQUAL(want_inputs[x], roles[0].inputs);
    CHECK_EQUAL(x != 2, roles[0].sends);
    if (x < 2) CHECK(roles[0].send_dir == Dir::kXp);
    if (x > 2) CHECK(roles[0].send_dir == Dir::kXm);
  }
  // Second phase: only the x-middles take part.
  auto off = torus_middle_roles(Coord{{1, 0, 0}}, Dims{{5, 3, 1}});
  CHECK(off[0].active && !off[1].active);
  auto on = torus_middle_roles(Coord{{2, 0, 0}}, Dims{{5, 3, 1}});
  CHECK(on[1].active && on[1].sends && on[1].send_dir == Dir::kYp);
  CHECK(torus_middle_root(Dims{{5, 3, 4}}) == (Coord{{2, 1, 2}}));
}
