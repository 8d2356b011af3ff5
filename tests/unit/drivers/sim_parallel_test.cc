// The scheduler on several threads (regions): every node sees the same
// frames at the same instants, steps at the same instants, and the trace hash
// and counters are the same, whatever the number of regions and however the
// nodes are spread over them; a wall budget pauses a run without changing it.
#include <string>
#include <vector>

#include "sim_test_node.h"
// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>
#include <CppUTest/MemoryLeakWarningPlugin.h>

using namespace toroid;
using namespace toroid::test;

namespace {

struct Outcome {
  uint64_t hash = 0;
  std::string stats;
  std::vector<std::vector<uint32_t>> seqs;   // per node: payload seq numbers in arrival order
  std::vector<std::vector<uint64_t>> times;  // per node: arrival times
  std::vector<std::vector<uint64_t>> steps;  // per node: step instants
  uint64_t windows = 0;
};

// A ring of 8 nodes with chords, every node sending on every port, timers
// that fire in between, and the nodes spread over `regions` by `spread`,
// run by `threads` threads (0: one per region).
Outcome run_ring(uint32_t regions, const FaultPlan& plan, uint32_t (*spread)(uint32_t node, uint32_t regions),
                 double budget = 0, int* pauses = nullptr, uint32_t threads = 0) {
  Rig rig(5, LinkModel{}, plan, regions, threads);
  constexpr uint32_t kNodes = 8;
  for (uint32_t i = 0; i < kNodes; ++i) rig.add_node(spread(i, regions));
  auto& n = rig.nodes;
  for (uint32_t i = 0; i < kNodes; ++i) rig.cable(*n[i], *n[(i + 1) % kNodes]);
  rig.cable(*n[0], *n[4]);
  rig.cable(*n[2], *n[7]);
  uint32_t k = 0;
  for (auto& node : n) {
    for (SimPort* p : node->ports) {
      node->send(p, 300, 64 + 131 * (k % 7), k * 1000);
      ++k;
    }
    node->deadlines = {777, 5000 + node->id, 40000};
    rig.fabric.wake(node->id, node->id * 3);
  }
  if (budget > 0) {
    while (!rig.fabric.idle()) {
      rig.fabric.run(kNever, budget);
      ++*pauses;
    }
  } else {
    rig.fabric.run();
  }
  Outcome o;
  o.hash = rig.fabric.trace_hash();
  o.stats = format_counters(&rig.fabric.stats(), kFabricStatsFields, kFabricStatsFieldCount);
  o.windows = rig.fabric.windows();
  for (auto& node : n) {
    CHECK_FALSE(node->pending());
    o.seqs.emplace_back();
    o.times.emplace_back();
    node->arrivals(&o.seqs.back(), &o.times.back());
    o.steps.push_back(node->step_times);
  }
  return o;
}

uint32_t blocks(uint32_t node, uint32_t regions) { return node * regions / 8; }
uint32_t round_robin(uint32_t node, uint32_t regions) { return node % regions; }

void check_same(const Outcome& a, const Outcome& b) {
  UNSIGNED_LONGLONGS_EQUAL(a.hash, b.hash);
  STRCMP_EQUAL(a.stats.c_str(), b.stats.c_str());
  CHECK(a.seqs == b.seqs);
  CHECK(a.times == b.times);
  CHECK(a.steps == b.steps);
}

}  // namespace

// CppUTest's leak detector is not thread-safe: the region threads allocate
// (rings and queues grow) while it counts, so it is off in this group.
TEST_GROUP(SimParallel) {
  void setup() override { MemoryLeakWarningPlugin::saveAndDisableNewDeleteOverloads(); }
  void teardown() override { MemoryLeakWarningPlugin::restoreNewDeleteOverloads(); }
};

TEST(SimParallel, EveryRegionCountGivesTheSameRun) {
  const FaultPlan clean;
  const Outcome one = run_ring(1, clean, blocks);
  UNSIGNED_LONGLONGS_EQUAL(0, one.windows);
  CHECK(one.seqs[0].size() > 500);
  for (uint32_t regions : {2u, 3u, 8u}) {
    const Outcome many = run_ring(regions, clean, blocks);
    check_same(one, many);
    CHECK(many.windows > 100);  // it really ran in windows
    check_same(one, run_ring(regions, clean, round_robin));
  }
}

// More regions than threads: the threads share the regions out window by
// window (a region runs on whichever thread takes it first), and the run is
// still the one a single region gives.
TEST(SimParallel, FewerThreadsThanRegionsGiveTheSameRun) {
  const FaultPlan plan = plan_of("drop=0.05,dup=0.05,reorder=0.1,jitter=300ns");
  const Outcome one = run_ring(1, plan, blocks);
  for (uint32_t regions : {3u, 8u}) {
    const Outcome shared = run_ring(regions, plan, blocks, 0, nullptr, 2);
    check_same(one, shared);
    CHECK(shared.windows > 100);
    check_same(one, run_ring(regions, plan, round_robin, 0, nullptr, 2));
  }
  int pauses = 0;
  check_same(one, run_ring(8, plan, blocks, 1e-9, &pauses, 3));
  CHECK(pauses > 10);
}

// Sparse traffic: a frame crosses into a region that has nothing else to do
// (no node of it is pending), at a random instant far from the window it was
// sent in; the region must still be run for it, in its window.
TEST(SimParallel, MailWakesAnOtherwiseIdleRegion) {
  const auto run = [](uint32_t regions, uint32_t threads) {
    Rig rig(9, LinkModel{}, plan_of("jitter=5us"), regions, threads);
    constexpr uint32_t kNodes = 6;
    for (uint32_t i = 0; i < kNodes; ++i) rig.add_node(i * regions / kNodes);
    auto& n = rig.nodes;
    for (uint32_t i = 0; i + 1 < kNodes; ++i) rig.cable(*n[i], *n[i + 1]);
    n[0]->send(n[0]->ports[0], 40, 200);  // down the line, node by node
    for (uint32_t i = 1; i + 1 < kNodes; ++i)
      n[i]->on_step = [](TestNode& self, uint64_t) {
        while (self.rx.size() > self.forwarded) self.send_now(self.ports[1], self.rx[self.forwarded++].seq, 200);
      };
    rig.fabric.wake(0, 0);
    rig.fabric.run();
    std::vector<uint32_t> seqs;
    std::vector<uint64_t> times;
    n[kNodes - 1]->arrivals(&seqs, &times);
    return std::make_pair(seqs, times);
  };
  const auto one = run(1, 0);
  UNSIGNED_LONGS_EQUAL(40, one.first.size());
  for (uint32_t regions : {3u, 6u}) CHECK(one == run(regions, 2));
}

TEST(SimParallel, FaultsDrawTheSamePatternOnEveryRegionCount) {
  const FaultPlan plan = plan_of("drop=0.05,corrupt=0.05,dup=0.05,reorder=0.1,jitter=300ns,delay=50ns");
  const Outcome one = run_ring(1, plan, blocks);
  CHECK(one.stats.find("dropped=") != std::string::npos);
  CHECK(one.stats.find("duplicated=") != std::string::npos);
  CHECK(one.stats.find("reordered=") != std::string::npos);
  check_same(one, run_ring(2, plan, round_robin));
  check_same(one, run_ring(4, plan, blocks));
}

TEST(SimParallel, AWallBudgetPausesWithoutChangingTheRun) {
  const FaultPlan plan = plan_of("drop=0.02,jitter=100ns");
  const Outcome whole = run_ring(2, plan, blocks);
  int pauses = 0;
  // A budget this small runs about one window per call.
  const Outcome paused = run_ring(2, plan, blocks, 1e-9, &pauses);
  check_same(whole, paused);
  CHECK(pauses > 10);
  int pauses1 = 0;
  check_same(run_ring(1, plan, blocks), run_ring(1, plan, blocks, 1e-9, &pauses1));
}

TEST(SimParallel, LookaheadIsTheSmallestLatencyInUse) {
  LinkModel m;
  m.latency_ns = 100;
  UNSIGNED_LONGLONGS_EQUAL(100, m.min_latency());
  m.extra[0].latency_ns = 7;  // channels beyond 0 count only with a classifier
  UNSIGNED_LONGLONGS_EQUAL(100, m.min_latency());
  m.classify = [](const uint8_t*, uint32_t len, uint32_t* charged) -> uint8_t {
    *charged = len;
    return 0;
  };
  UNSIGNED_LONGLONGS_EQUAL(7, m.min_latency());
}
