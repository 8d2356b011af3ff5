// The barrier `torus-ring` (collectives/algos/torus/barrier_torus_ring.h) on
// trained sim partitions, with and without "drop=0.05,corrupt=0.01":
// - nobody is released before the last node arrives (the first or the last
//   rank late, on one, two and three dimensions);
// - each node receives exactly the ring's sum over dimensions of (n - 1)
//   collective packets per barrier (one on two nodes);
// - on two nodes every packet crosses the one cable 0(+) - 1(-), both ways
//   (the link counters: the other cable carries no data);
// - sub-communicators are refused with the reason (torus links are the
//   world's), and the selector takes it for a two-node world only.
#include <memory>
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "collectives/select.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

#include "tests/sim/coll_helpers.h"
#include "tests/sim/torus/torus_test_util.h"

using namespace toroid;
using namespace toroid::test;
using namespace toroid::test::torus;

namespace {

const bool kRegistryBuilt = !algorithms().empty();

CollArgs barrier_args() {
  CollArgs b;
  b.kind = CollKind::kBarrier;
  return b;
}

void releases_nobody_early(const char* dims_s, const std::string& faults) {
  auto rig = booted_rig(dims_s, faults);
  const uint32_t n = rig->node_count();
  const Dims dims = parse_dims(dims_s).value();
  uint64_t ring_steps = 0;
  for (int d = 0; d < kDims; ++d) ring_steps += dims.n[d] - 1;
  for (uint32_t late : {0u, n - 1}) {
    std::vector<uint64_t> rx0(n);
    for (uint32_t r = 0; r < n; ++r) rx0[r] = rig->node(r).comm().counters().rx_packets;
    for (uint32_t r = 0; r < n; ++r)
      if (r != late) CHECK_TRUE(rig->node(r).comm().start(barrier_args(), "torus-ring").is_ok());
    // 50 us of virtual time: the others' packets have long arrived (a ring
    // step takes about a microsecond), and the rings stop at the late node.
    for (uint32_t r = 0; r < n; ++r) rig->fabric().wake(r, rig->fabric().now());
    rig->fabric().run(rig->fabric().now() + 50 * kUs);
    for (uint32_t r = 0; r < n; ++r)
      if (r != late)
        CHECK_TEXT(rig->node(r).comm().in_flight(),
                   (std::string(dims_s) + ": rank " + std::to_string(r) + " released before rank " +
                    std::to_string(late) + " arrived")
                       .c_str());
    CHECK_TRUE(rig->node(late).comm().start(barrier_args(), "torus-ring").is_ok());
    STRCMP_EQUAL("", finish_world(*rig).c_str());
    for (uint32_t r = 0; r < n; ++r) LONGS_EQUAL(ring_steps, rig->node(r).comm().counters().rx_packets - rx0[r]);
  }
  // Back to back, each node starting the next as soon as it left the last.
  for (int i = 0; i < 20; ++i) check_all_ok(run_coll(*rig, world_comms(*rig), [](size_t) { return barrier_args(); },
                                                     "torus-ring"),
                                            "torus-ring barrier");
}

}  // namespace

TEST_GROUP(TorusBarrier){};

TEST(TorusBarrier, TwoNodesReleaseNobodyEarly) { releases_nobody_early("2x1x1", ""); }
TEST(TorusBarrier, TwoNodesWithFaults) { releases_nobody_early("2x1x1", kFaults); }
TEST(TorusBarrier, TwoNodesUseOneCableBothWays) {
  auto rig = booted_rig("2x1x1", "");
  auto sent = [&](uint32_t r, Dir d) {
    NetStack& net = rig->node(r).net();
    return net.link(static_cast<uint16_t>(net.port_of(d))).counters().data_sent;
  };
  const uint64_t a0 = sent(0, Dir::kXp), b0 = sent(0, Dir::kXm), a1 = sent(1, Dir::kXm), b1 = sent(1, Dir::kXp);
  for (int i = 0; i < 10; ++i)
    check_all_ok(run_coll(*rig, world_comms(*rig), [](size_t) { return barrier_args(); }, "torus-ring"),
                 "torus-ring barrier");
  LONGS_EQUAL(10, sent(0, Dir::kXp) - a0);  // node 0 sends on x+ ...
  LONGS_EQUAL(10, sent(1, Dir::kXm) - a1);  // ... node 1 on x-: the same cable
  LONGS_EQUAL(0, sent(0, Dir::kXm) - b0);
  LONGS_EQUAL(0, sent(1, Dir::kXp) - b1);
}

TEST(TorusBarrier, ThreeDimensionsWithFaults) { releases_nobody_early("3x2x2", kFaults); }
TEST(TorusBarrier, Line5) { releases_nobody_early("5x1x1", ""); }

TEST(TorusBarrier, WorldOnlyAndChosenForTwoNodes) {
  const AlgoInfo* info = nullptr;
  for (const AlgoInfo& a : algorithms())
    if (a.kind == CollKind::kBarrier && std::string(a.name) == "torus-ring") info = &a;
  CHECK(info != nullptr);
  CommInfo sub;
  sub.size = 2;
  sub.shape = parse_dims("2x1x1").value();
  const std::string why = algo_unusable(*info, sub, barrier_args());
  CHECK_TEXT(why.find("world") != std::string::npos, why.c_str());
  auto rig = booted_rig("2x1x1", "");
  check_all_ok(run_coll(*rig, world_comms(*rig), [](size_t) { return barrier_args(); }, ""), "selector's barrier");
  STRCMP_EQUAL("torus-ring", rig->node(0).comm().algo().c_str());
}
