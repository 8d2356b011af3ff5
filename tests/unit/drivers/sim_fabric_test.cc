// The sim link model and scheduler without random faults: timing,
// serialization, backpressure, cut links, who gets stepped and when.
#include <cmath>
#include <map>

#include "sim_test_node.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

// Defaults spelled out so the expected times below read directly.
LinkModel model(uint64_t latency = 100, double bw = 2.0, uint64_t backlog = 20 * kUs) {
  LinkModel m;
  m.latency_ns = latency;
  m.bytes_per_ns = bw;
  m.tx_backlog_ns = backlog;
  return m;
}

uint64_t ser(uint32_t len, double bw) { return static_cast<uint64_t>(std::ceil(len / bw)); }

}  // namespace

TEST_GROUP(SimFabric){};

TEST(SimFabric, NodesPortsAndLinksGetDenseIds) {
  Rig rig(1);
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  UNSIGNED_LONGS_EQUAL(0, a.id);
  UNSIGNED_LONGS_EQUAL(1, b.id);
  SimPort* a0 = a.add_port(1024);
  SimPort* b0 = b.add_port(1024);
  SimPort* a1 = a.add_port(512);
  SimPort* a2 = a.add_port(512);
  UNSIGNED_LONGS_EQUAL(0, a0->local_index());
  UNSIGNED_LONGS_EQUAL(1, a1->local_index());
  UNSIGNED_LONGS_EQUAL(2, a2->local_index());
  UNSIGNED_LONGS_EQUAL(0, b0->local_index());
  UNSIGNED_LONGS_EQUAL(0, a0->id());
  UNSIGNED_LONGS_EQUAL(1, b0->id());
  UNSIGNED_LONGS_EQUAL(3, a2->id());
  UNSIGNED_LONGS_EQUAL(1, b0->node());
  STRCMP_EQUAL("port1", a1->info().name.c_str());
  STRCMP_EQUAL("sim", a1->info().driver.c_str());
  UNSIGNED_LONGS_EQUAL(512, a1->info().max_frame);
  POINTERS_EQUAL(&a.pool, &a1->tx_pool());

  CHECK_FALSE(a0->connected());
  CHECK(a0->link_state() == LinkState::kDown);
  LONGS_EQUAL(0, rig.fabric.connect(a2, b0));
  LONGS_EQUAL(-1, rig.fabric.connect(a2, a1));  // a2 is already cabled
  LONGS_EQUAL(-1, rig.fabric.connect(a0, a0));
  LONGS_EQUAL(1, rig.fabric.connect(a0, a1));   // a loopback cable on one node is fine
  CHECK(a2->connected());
  CHECK(b0->link_state() == LinkState::kUp);
}

TEST(SimFabric, RxSetsTheLocalPortIndex) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  b.add_port();  // b's local port 0 stays unconnected
  b.add_port();
  rig.cable(a, b);  // b's local port 2
  CHECK(a.send_now(a.ports[0], 7, 64));
  rig.fabric.run();
  LONGS_EQUAL(1, b.rx.size());
  UNSIGNED_LONGS_EQUAL(2, b.rx[0].port);
  UNSIGNED_LONGS_EQUAL(7, b.rx[0].seq);
  UNSIGNED_LONGLONGS_EQUAL(1, b.ports[2]->stats().rx_packets);
  UNSIGNED_LONGLONGS_EQUAL(64, b.ports[2]->stats().rx_bytes);
  UNSIGNED_LONGLONGS_EQUAL(1, a.ports[0]->stats().tx_packets);
  UNSIGNED_LONGLONGS_EQUAL(64, a.ports[0]->stats().tx_bytes);
}

TEST(SimFabric, SingleFrameArrivesAfterSerializationPlusLatency) {
  for (uint32_t len : {1u, 64u, 1000u, 1001u, 1500u}) {
    for (double bw : {2.0, 0.75, 10.0}) {
      Rig rig(1, model(250, bw));
      TestNode& a = rig.add_node();
      TestNode& b = rig.add_node();
      rig.cable(a, b);
      CHECK(a.send_now(a.ports[0], 1, len));
      rig.fabric.run();
      LONGS_EQUAL(1, b.rx.size());
      UNSIGNED_LONGLONGS_EQUAL(ser(len, bw) + 250, b.rx[0].time);
      UNSIGNED_LONGLONGS_EQUAL(b.rx[0].time, rig.fabric.now());
      UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.stats().frames_delivered);
      UNSIGNED_LONGLONGS_EQUAL(len, rig.fabric.stats().bytes_delivered);
    }
  }
  UNSIGNED_LONGLONGS_EQUAL(501, ser(1001, 2.0));  // ceil, not truncation
}

TEST(SimFabric, DelayAddsExactlyItsValue) {
  FaultPlan plan;
  plan.delay_ns = 3 * kUs;
  Rig rig(1, model(), plan);
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  CHECK(a.send_now(a.ports[0], 1, 1000));
  CHECK(a.send_now(a.ports[0], 2, 1000));
  rig.fabric.run();
  LONGS_EQUAL(2, b.rx.size());
  UNSIGNED_LONGLONGS_EQUAL(500 + 100 + 3000, b.rx[0].time);
  UNSIGNED_LONGLONGS_EQUAL(1000 + 100 + 3000, b.rx[1].time);
}

TEST(SimFabric, BackToBackFramesSerialize) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  CHECK(a.send_now(a.ports[0], 1, 1000));
  CHECK(a.send_now(a.ports[0], 2, 1000));
  CHECK(a.send_now(a.ports[0], 3, 200));
  rig.fabric.run();
  LONGS_EQUAL(3, b.rx.size());
  UNSIGNED_LONGLONGS_EQUAL(600, b.rx[0].time);
  UNSIGNED_LONGLONGS_EQUAL(1100, b.rx[1].time);  // one serialization time later
  UNSIGNED_LONGLONGS_EQUAL(1200, b.rx[2].time);
  UNSIGNED_LONGS_EQUAL(1, b.rx[0].seq);
  UNSIGNED_LONGS_EQUAL(2, b.rx[1].seq);
  UNSIGNED_LONGS_EQUAL(3, b.rx[2].seq);
}

TEST(SimFabric, AnIdleLinkStartsSendingAtOnce) {
  // A frame sent after the wire went idle starts at `now`, not at the old busy_until.
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  a.deadlines = {5000};
  a.on_step = [](TestNode& n, uint64_t now) {
    if (now == 0 || now == 5000) CHECK(n.send_now(n.ports[0], static_cast<uint32_t>(now), 100));
  };
  rig.fabric.wake(a.id, 0);
  rig.fabric.run();
  LONGS_EQUAL(2, b.rx.size());
  UNSIGNED_LONGLONGS_EQUAL(150, b.rx[0].time);
  UNSIGNED_LONGLONGS_EQUAL(5150, b.rx[1].time);
}

TEST(SimFabric, DirectionsAreIndependent) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  // a saturates a->b with ten frames; b's single frame b->a is not queued behind them.
  for (uint32_t i = 0; i < 10; ++i) CHECK(a.send_now(a.ports[0], i, 1000));
  CHECK(b.send_now(b.ports[0], 99, 1000));
  rig.fabric.run();
  LONGS_EQUAL(10, b.rx.size());
  LONGS_EQUAL(1, a.rx.size());
  UNSIGNED_LONGLONGS_EQUAL(600, a.rx[0].time);
  for (uint32_t i = 0; i < 10; ++i) UNSIGNED_LONGLONGS_EQUAL(600 + 500 * i, b.rx[i].time);
}

TEST(SimFabric, TxBackpressureTakesOnlyWhatTheBacklogAllows) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  // 1000-byte frames take 500 ns each; the backlog check admits a frame while
  // busy_until - now <= 20 us, i.e. 41 frames (busy until 20.5 us) at t = 0.
  Packet* pkts[64];
  for (uint32_t i = 0; i < 64; ++i) {
    pkts[i] = a.pool.alloc();
    fill_frame(pkts[i], i, 1000);
  }
  const uint16_t took = a.ports[0]->tx_burst(pkts, 64);
  UNSIGNED_LONGS_EQUAL(41, took);
  UNSIGNED_LONGLONGS_EQUAL(64 - 41, a.ports[0]->stats().tx_full);
  UNSIGNED_LONGLONGS_EQUAL(41, a.ports[0]->stats().tx_packets);
  UNSIGNED_LONGLONGS_EQUAL(41, rig.fabric.stats().frames_offered);
  // The caller still owns the rest: they are intact and unsent.
  for (uint32_t i = took; i < 64; ++i) UNSIGNED_LONGS_EQUAL(1000, pkts[i]->len);
  // Again right away: nothing is taken, and that is counted too.
  UNSIGNED_LONGS_EQUAL(0, a.ports[0]->tx_burst(pkts + took, 64 - took));
  UNSIGNED_LONGLONGS_EQUAL(2 * (64 - 41), a.ports[0]->stats().tx_full);
  // The sender is woken when the backlog has drained back to the limit.
  a.drain = false;
  rig.fabric.run(499);
  UNSIGNED_LONGLONGS_EQUAL(0, a.steps);
  rig.fabric.run(500);
  UNSIGNED_LONGLONGS_EQUAL(1, a.steps);
  UNSIGNED_LONGLONGS_EQUAL(500, a.step_times[0]);
  UNSIGNED_LONGS_EQUAL(1, a.ports[0]->tx_burst(pkts + took, 64 - took));  // exactly one more fits
  for (uint32_t i = took + 1; i < 64; ++i) pkts[i]->free();
  rig.fabric.run();
  LONGS_EQUAL(42, b.rx.size());
}

TEST(SimFabric, BackpressuredSenderIsWokenAndFinishesAtLineRate) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  const uint32_t n = 2000;
  a.send(a.ports[0], n, 1000);
  rig.fabric.wake(a.id, 0);
  rig.fabric.run();
  CHECK_FALSE(a.pending());
  LONGS_EQUAL(n, b.rx.size());
  for (uint32_t i = 0; i < n; ++i) {
    UNSIGNED_LONGS_EQUAL(i, b.rx[i].seq);  // all delivered, in order
    // The wire never idles: the sender is back before the backlog runs dry.
    UNSIGNED_LONGLONGS_EQUAL(500ull * (i + 1) + 100, b.rx[i].time);
  }
  CHECK(a.ports[0]->stats().tx_full > 0);
  UNSIGNED_LONGLONGS_EQUAL(n, a.ports[0]->stats().tx_packets);
  // The first wake comes when the backlog has drained to the limit: 41 frames
  // (20.5 us) were taken at t = 0, so at 0.5 us.
  CHECK(a.steps > 1);
  UNSIGNED_LONGLONGS_EQUAL(500, a.step_times[1]);
  UNSIGNED_LONGLONGS_EQUAL(n, rig.fabric.stats().frames_delivered);
  UNSIGNED_LONGLONGS_EQUAL(0, a.pool.stats().in_use);
}

TEST(SimFabric, OversizeAndUnconnectedFramesAreTakenFreedAndCounted) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b, 256);
  SimPort* loose = a.add_port();
  CHECK(a.send_now(a.ports[0], 1, 257));  // taken (never handed back), but dropped
  CHECK(a.send_now(a.ports[0], 2, 256));
  CHECK(a.send_now(loose, 3, 64));
  rig.fabric.run();
  LONGS_EQUAL(1, b.rx.size());
  UNSIGNED_LONGS_EQUAL(2, b.rx[0].seq);
  UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.stats().oversize);
  UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.stats().cut_dropped);
  UNSIGNED_LONGLONGS_EQUAL(3, rig.fabric.stats().frames_offered);
  UNSIGNED_LONGLONGS_EQUAL(0, a.pool.stats().in_use);
}

TEST(SimFabric, CutLinkLosesLaterFramesAndFlipsStateAtT) {
  const uint64_t T = 10250;
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  const int link = rig.cable(a, b);
  rig.fabric.cut_link(link, T);
  // a sends one 1000-byte frame every microsecond (500 ns on the wire, 600 ns to arrive)
  // and samples its port's link state at every step, including just before T.
  std::vector<std::pair<uint64_t, LinkState>> states;
  for (uint64_t t = 1000; t < 20000; t += 1000) a.deadlines.push_back(t);
  a.deadlines.insert(a.deadlines.begin() + 10, {T - 1, T});
  a.on_step = [&states](TestNode& n, uint64_t now) {
    states.emplace_back(now, n.ports[0]->link_state());
    if (now % 1000 == 0) n.send_now(n.ports[0], static_cast<uint32_t>(now / 1000), 1000);
  };
  rig.fabric.wake(a.id, 0);
  rig.fabric.run();
  // Frames sent at 0 .. 9 us arrived before T; the one sent at 10 us was in
  // flight at T (due at 10.6 us) and is lost; 11 .. 19 us are dropped at tx.
  LONGS_EQUAL(10, b.rx.size());
  for (uint32_t i = 0; i < 10; ++i) {
    UNSIGNED_LONGS_EQUAL(i, b.rx[i].seq);
    UNSIGNED_LONGLONGS_EQUAL(1000 * i + 600, b.rx[i].time);
  }
  UNSIGNED_LONGLONGS_EQUAL(10, rig.fabric.stats().cut_dropped);
  UNSIGNED_LONGLONGS_EQUAL(20, rig.fabric.stats().frames_offered);
  for (const auto& [t, s] : states) {
    if (t < T) CHECK_TEXT(s == LinkState::kUp, std::to_string(t).c_str());
    else CHECK_TEXT(s == LinkState::kDown, std::to_string(t).c_str());
  }
  bool saw_before = false, saw_at = false;
  for (const auto& st : states) {
    saw_before |= st.first == T - 1;
    saw_at |= st.first == T;
  }
  CHECK(saw_before && saw_at);
  // Both directions are down: b's frame to a is dropped.
  CHECK(b.ports[0]->link_state() == LinkState::kDown);
  CHECK(b.send_now(b.ports[0], 5, 64));
  rig.fabric.run();
  LONGS_EQUAL(0, a.rx.size());
  UNSIGNED_LONGLONGS_EQUAL(11, rig.fabric.stats().cut_dropped);
  UNSIGNED_LONGLONGS_EQUAL(0, a.pool.stats().in_use);
  UNSIGNED_LONGLONGS_EQUAL(0, b.pool.stats().in_use);
}

TEST(SimFabric, CutAtZeroIsDeadFromBoot) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.fabric.cut_link(rig.cable(a, b), 0);
  CHECK(a.ports[0]->link_state() == LinkState::kDown);
  CHECK(a.send_now(a.ports[0], 1, 64));
  rig.fabric.run();
  LONGS_EQUAL(0, b.rx.size());
  UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.stats().cut_dropped);
}

TEST(SimFabric, OnlyNodesWithWorkAreStepped) {
  Rig rig(1, model());
  for (int i = 0; i < 1000; ++i) rig.add_node();
  TestNode& a = *rig.nodes[17];
  TestNode& b = *rig.nodes[923];
  for (auto& n : rig.nodes) n->add_port();  // every node has a port; most stay uncabled
  rig.fabric.connect(a.ports[0], b.ports[0]);
  a.send(a.ports[0], 500, 200);
  rig.fabric.wake(a.id, 0);
  rig.fabric.run();
  LONGS_EQUAL(500, b.rx.size());
  uint64_t total = 0;
  for (auto& n : rig.nodes) {
    if (n.get() != &a && n.get() != &b) UNSIGNED_LONGLONGS_EQUAL(0, n->steps);
    total += n->steps;
  }
  CHECK(a.steps >= 1);
  CHECK(b.steps >= 1);
  UNSIGNED_LONGLONGS_EQUAL(total, rig.fabric.stats().steps);
  // Several frames landing at one instant cost one step, not one each.
  CHECK(b.steps <= 500);
}

TEST(SimFabric, DeliveriesAtOneInstantCostOneStep) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  TestNode& c = rig.add_node();
  rig.cable(a, c);
  rig.cable(b, c);
  CHECK(a.send_now(a.ports[0], 1, 100));
  CHECK(b.send_now(b.ports[0], 2, 100));
  rig.fabric.run();
  LONGS_EQUAL(2, c.rx.size());
  UNSIGNED_LONGLONGS_EQUAL(1, c.steps);
  UNSIGNED_LONGLONGS_EQUAL(150, c.step_times[0]);
}

TEST(SimFabric, DeadlinesAreSteppedExactlyOnceDespiteEarlierWakes) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  b.deadlines = {1000, 2000, 3000, 7000};
  // Things that wake b in between come before its pending deadline:
  // deliveries at 150 and 1550, two external wakes at 2500, one at 3000
  // where a step is already pending.
  a.deadlines = {1400};
  a.on_step = [](TestNode& n, uint64_t now) {
    if (now == 0 || now == 1400) n.send_now(n.ports[0], static_cast<uint32_t>(now), 100);
  };
  rig.fabric.wake(a.id, 0);
  rig.fabric.wake(b.id, 0);
  rig.fabric.wake(b.id, 200);    // later than the pending one at 0: no new event
  rig.fabric.run(2400);
  rig.fabric.wake(b.id, 2500);
  rig.fabric.wake(b.id, 2500);
  rig.fabric.wake(b.id, 3000);
  rig.fabric.run();
  std::map<uint64_t, int> at;
  for (uint64_t t : b.step_times) ++at[t];
  for (const auto& [t, n] : at) LONGS_EQUAL_TEXT(1, n, std::to_string(t).c_str());
  const std::vector<uint64_t> want = {0, 150, 1000, 1550, 2000, 2500, 3000, 7000};
  LONGS_EQUAL(want.size(), b.step_times.size());
  for (size_t i = 0; i < want.size(); ++i) UNSIGNED_LONGLONGS_EQUAL(want[i], b.step_times[i]);
  CHECK(rig.fabric.idle());
}

TEST(SimFabric, WakeInThePastRunsNow) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  a.deadlines = {5000};
  rig.fabric.wake(a.id, 0);
  rig.fabric.run();
  UNSIGNED_LONGLONGS_EQUAL(5000, rig.fabric.now());
  rig.fabric.wake(a.id, 10);
  rig.fabric.run();
  LONGS_EQUAL(3, a.step_times.size());
  UNSIGNED_LONGLONGS_EQUAL(5000, a.step_times[2]);
}

TEST(SimFabric, ADeadlineAtNowIsPushedOneNanosecondLater) {
  // A node that keeps asking to run "now" is stepped at now + 1 each time:
  // virtual time always advances, it never spins at one instant.
  struct Eager : SimEndpoint {
    std::vector<uint64_t> times;
    uint64_t sim_step(uint64_t now) override {
      times.push_back(now);
      if (times.size() == 1) return 0;  // already in the past
      return times.size() < 4 ? now : kNever;
    }
  } eager;
  SimFabric fabric(1, model(), FaultPlan{});
  const uint32_t id = fabric.add_node(&eager);
  fabric.wake(id, 7);
  fabric.run();
  LONGS_EQUAL(4, eager.times.size());
  for (size_t i = 0; i < 4; ++i) UNSIGNED_LONGLONGS_EQUAL(7 + i, eager.times[i]);
}

TEST(SimFabric, RunStopsAtUntilAndOnStop) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  a.deadlines = {100, 200, 300, 400};
  a.on_step = [&rig](TestNode&, uint64_t now) {
    if (now == 300) rig.fabric.stop();
  };
  rig.fabric.wake(a.id, 0);
  UNSIGNED_LONGLONGS_EQUAL(3, rig.fabric.run(200));  // steps at 0, 100, 200
  UNSIGNED_LONGLONGS_EQUAL(200, rig.fabric.now());
  UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.run());     // 300, which calls stop()
  UNSIGNED_LONGLONGS_EQUAL(300, rig.fabric.now());
  CHECK_FALSE(rig.fabric.idle());
  UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.run());     // stop is reset: 400
  CHECK(rig.fabric.idle());
  UNSIGNED_LONGLONGS_EQUAL(5, rig.fabric.stats().events);
  UNSIGNED_LONGLONGS_EQUAL(5, rig.fabric.stats().steps);
}

TEST(SimFabric, RxOverflowIsCountedWhenTheReceiverNeverDrains) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  b.drain = false;
  const uint32_t extra = 10;
  a.send(a.ports[0], tuning::kSimRxQueueMax + extra, 64);
  rig.fabric.wake(a.id, 0);
  rig.fabric.run();
  UNSIGNED_LONGLONGS_EQUAL(tuning::kSimRxQueueMax, b.ports[0]->rx_queued());
  UNSIGNED_LONGLONGS_EQUAL(extra, rig.fabric.stats().rx_overflow);
  UNSIGNED_LONGLONGS_EQUAL(extra, b.ports[0]->stats().rx_dropped);
  UNSIGNED_LONGLONGS_EQUAL(tuning::kSimRxQueueMax, rig.fabric.stats().frames_delivered);
  // What is queued is the first kSimRxQueueMax frames, in order.
  Packet* burst[tuning::kBurst];
  uint32_t expect = 0;
  uint16_t n;
  while ((n = b.ports[0]->rx_burst(burst, tuning::kBurst)) > 0) {
    for (uint16_t i = 0; i < n; ++i) {
      uint32_t seq;
      std::memcpy(&seq, burst[i]->data(), 4);
      UNSIGNED_LONGS_EQUAL(expect++, seq);
      burst[i]->free();
    }
  }
  UNSIGNED_LONGS_EQUAL(tuning::kSimRxQueueMax, expect);
  UNSIGNED_LONGLONGS_EQUAL(0, a.pool.stats().in_use);
}

TEST(SimFabric, RxRingWrapsAndGrowsPreservingOrder) {
  Rig rig(1, model());
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  rig.cable(a, b);
  b.drain = false;
  // Interleave pushes and pops so the ring wraps before it grows.
  uint32_t sent = 0, got = 0;
  Packet* burst[tuning::kBurst];
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < round % 13 + 1; ++k) CHECK(a.send_now(a.ports[0], sent++, 64));
    rig.fabric.run();
    const uint16_t n = b.ports[0]->rx_burst(burst, static_cast<uint16_t>(round % 5 + 1));
    for (uint16_t i = 0; i < n; ++i) {
      uint32_t seq;
      std::memcpy(&seq, burst[i]->data(), 4);
      UNSIGNED_LONGS_EQUAL(got++, seq);
      burst[i]->free();
    }
  }
  uint16_t n;
  while ((n = b.ports[0]->rx_burst(burst, tuning::kBurst)) > 0) {
    for (uint16_t i = 0; i < n; ++i) {
      uint32_t seq;
      std::memcpy(&seq, burst[i]->data(), 4);
      UNSIGNED_LONGS_EQUAL(got++, seq);
      burst[i]->free();
    }
  }
  UNSIGNED_LONGS_EQUAL(sent, got);
}

TEST(SimFabric, DestructorReturnsEveryHeldFrameToItsPool) {
  HeapPacketPool pool(2048, 1024);
  {
    SimFabric fabric(1, model(), FaultPlan{});
    struct Idle : SimEndpoint {
      uint64_t sim_step(uint64_t) override { return kNever; }
    } ea, eb;
    const uint32_t a = fabric.add_node(&ea);
    const uint32_t b = fabric.add_node(&eb);
    SimPort* pa = fabric.add_port(a, "p", &pool, 1500);
    SimPort* pb = fabric.add_port(b, "p", &pool, 1500);
    fabric.connect(pa, pb);
    for (int i = 0; i < 30; ++i) {
      Packet* p = pool.alloc();
      p->append(100);
      UNSIGNED_LONGS_EQUAL(1, pa->tx_burst(&p, 1));
    }
    // The medium copied every frame and gave the sender's buffers back.
    UNSIGNED_LONGLONGS_EQUAL(0, pool.stats().in_use);
    fabric.run(1000);  // some are in b's rx ring (in packets of b's pool), the rest still in flight
    CHECK(pb->rx_queued() > 0);
    CHECK(pb->rx_queued() < 30);
    CHECK_FALSE(fabric.idle());
    UNSIGNED_LONGLONGS_EQUAL(pb->rx_queued(), pool.stats().in_use);
  }
  UNSIGNED_LONGLONGS_EQUAL(0, pool.stats().in_use);
}

TEST(SimFabric, FabricStatsCounterTable) {
  FabricStats s;
  s.frames_offered = 3;
  s.oversize = 1;
  s.steps = 9;
  LONGS_EQUAL(13, kFabricStatsFieldCount);
  STRCMP_EQUAL("frames_offered=3 oversize=1 steps=9",
               format_counters(&s, kFabricStatsFields, kFabricStatsFieldCount).c_str());
}
