// Traffic over the full netstack (reliable links, router, messages) on a
// 4x4x4 torus with a lossy, corrupting, duplicating, reordering medium:
// every message of every pattern arrives exactly once and intact, with
// deterministic and adaptive routing, five seeds each, within a virtual-time
// bound. And the deadlock the dateline VCs prevent, shown with them off.
#include <string>

#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

const char kFaults[] = "drop=0.05,corrupt=0.01,dup=0.01,reorder=0.05";
// Every pattern below finishes well inside this on 4x4x4 (the slowest,
// alltoall with faults, takes about a third of it).
constexpr uint64_t kBoundNs = 20 * kMs;

struct Totals {
  uint64_t expected = 0, delivered = 0, duplicates = 0, corrupt = 0, lost = 0;
};

Totals totals(const SimRig& rig) {
  Totals t;
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    const Job* job = rig.node(r).job();
    if (!job) continue;
    for (const auto& [k, v] : job->totals()) {
      if (k == "expected") t.expected += v;
      else if (k == "delivered") t.delivered += v;
      else if (k == "duplicates") t.duplicates += v;
      else if (k == "corrupt") t.corrupt += v;
      else if (k == "lost") t.lost += v;
    }
  }
  return t;
}

uint64_t link_sum(const SimRig& rig, uint64_t LinkCounters::*field) {
  uint64_t s = 0;
  for (uint32_t r = 0; r < rig.node_count(); ++r)
    for (uint16_t i = 0; i < rig.node(r).net().port_count(); ++i) s += rig.node(r).net().link(i).counters().*field;
  return s;
}

void run_pattern(const char* pattern, const char* routing, uint32_t messages, uint32_t size) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    LogCapture log;
    SimOptions o = options("4x4x4", "traffic", seed, kFaults);
    o.job_args = {{"pattern", pattern}, {"routing", routing}, {"messages", std::to_string(messages)},
                  {"size", std::to_string(size)}};
    SimRig rig(o);
    CHECK_TRUE(rig.build().is_ok());
    const SimSummary s = rig.run();
    const std::string what = std::string(pattern) + "/" + routing + " seed " + std::to_string(seed) + ": " +
                             s.first_error;
    CHECK_EQUAL_TEXT(s.nodes, s.passed, what.c_str());
    const Totals t = totals(rig);
    CHECK_TEXT(t.expected > 0, what.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(t.expected, t.delivered, what.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, t.duplicates, what.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, t.corrupt, what.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, t.lost, what.c_str());
    CHECK_TEXT(s.virtual_ns < kBoundNs, what.c_str());
    // The medium really misbehaved, and the link layer really repaired it.
    const FabricStats& f = rig.fabric().stats();
    CHECK_TEXT(f.dropped > 0 && f.corrupted > 0 && f.duplicated > 0 && f.reordered > 0, what.c_str());
    CHECK_TEXT(link_sum(rig, &LinkCounters::retransmits) > 0, what.c_str());
    CHECK_TEXT(link_sum(rig, &LinkCounters::rx_crc_errors) > 0, what.c_str());
    CHECK_TEXT(link_sum(rig, &LinkCounters::duplicates) > 0, what.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, f.rx_overflow, what.c_str());  // credits: never dropped for lack of buffers
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, link_sum(rig, &LinkCounters::credit_violations), what.c_str());
  }
}

}  // namespace

TEST_GROUP(Traffic){};

TEST(Traffic, UniformDeterministic) { run_pattern("uniform", "det", 16, 700); }
TEST(Traffic, UniformAdaptive) { run_pattern("uniform", "adaptive", 16, 700); }
TEST(Traffic, TransposeDeterministic) { run_pattern("transpose", "det", 16, 700); }
TEST(Traffic, TransposeAdaptive) { run_pattern("transpose", "adaptive", 16, 700); }
TEST(Traffic, BitComplementDeterministic) { run_pattern("bitcomp", "det", 16, 700); }
TEST(Traffic, BitComplementAdaptive) { run_pattern("bitcomp", "adaptive", 16, 700); }
TEST(Traffic, NeighborDeterministic) { run_pattern("neighbor", "det", 24, 700); }
TEST(Traffic, NeighborAdaptive) { run_pattern("neighbor", "adaptive", 24, 700); }
TEST(Traffic, AllToAllDeterministic) { run_pattern("alltoall", "det", 1, 300); }
TEST(Traffic, AllToAllAdaptive) { run_pattern("alltoall", "adaptive", 1, 300); }

// Adaptive routing really took other minimal paths (not only the escape).
TEST(Traffic, AdaptiveRoutingUsesTheAdaptiveChannel) {
  LogCapture log;
  SimOptions o = options("4x4x4", "traffic", 2);
  o.job_args = {{"pattern", "uniform"}, {"routing", "adaptive"}, {"messages", "16"}, {"size", "700"}};
  SimRig rig(o);
  CHECK_TRUE(rig.build().is_ok());
  LONGS_EQUAL(64, rig.run().passed);
  uint64_t adaptive = 0, deterministic = 0;
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    adaptive += rig.node(r).net().counters().adaptive_hops;
    deterministic += rig.node(r).net().counters().escape_hops;
  }
  CHECK(adaptive > 0);
  // Deterministic runs use no adaptive hop at all.
  SimOptions d = o;
  d.job_args["routing"] = "det";
  SimRig det(d);
  CHECK_TRUE(det.build().is_ok());
  LONGS_EQUAL(64, det.run().passed);
  for (uint32_t r = 0; r < det.node_count(); ++r) UNSIGNED_LONGLONGS_EQUAL(0, det.node(r).net().counters().adaptive_hops);
  (void)deterministic;
}

// The ring pattern on an 8-node ring loads every x+ link with packets that
// continue x+: with dateline VCs it completes; with them off (a test flag)
// the channels wait on each other in a cycle and nothing moves any more.
TEST(Traffic, DatelineVcsPreventTheRingDeadlock) {
  auto run = [](Dateline dl, SimSummary* s, uint32_t* stuck) {
    LogCapture log;
    SimOptions o = options("8x1x1", "traffic", 1);
    o.job_args = {{"pattern", "ring"}, {"messages", "16"}, {"size", "4000"}};
    o.vc_credits = 2;
    o.dateline = dl;
    o.job_timeout_ns = 20 * kMs;
    SimRig rig(o);
    CHECK_TRUE(rig.build().is_ok());
    *s = rig.run();
    *stuck = 0;
    for (uint32_t r = 0; r < rig.node_count(); ++r) *stuck += rig.node(r).net().transit_queued();
    // Every wrap link crossing used the high VC, and only with the dateline on.
    uint64_t crossings = 0;
    for (uint32_t r = 0; r < rig.node_count(); ++r) crossings += rig.node(r).net().counters().dateline_crossings;
    CHECK(dl == Dateline::kOn ? crossings > 0 : crossings == 0);
  };
  SimSummary on, off;
  uint32_t stuck_on = 0, stuck_off = 0;
  run(Dateline::kOn, &on, &stuck_on);
  LONGS_EQUAL_TEXT(8, on.passed, on.first_error.c_str());
  UNSIGNED_LONGS_EQUAL(0, stuck_on);
  CHECK(on.virtual_ns < 5 * kMs);
  run(Dateline::kOff, &off, &stuck_off);
  LONGS_EQUAL(0, off.passed);
  // Packets are still parked in transit queues when the jobs give up: a
  // deadlock, not a slow network.
  CHECK(stuck_off > 0);
  CHECK_TEXT(off.first_error.find("not finished within") != std::string::npos, off.first_error.c_str());
}
