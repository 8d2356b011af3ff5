// The reliable link's protocol, move by move, against a hand-driven raw
// peer: the receiver's acks, naks, duplicates, window and credit checks,
// and the sender's window, sack resends, credit probes, backoff and
// link-down. Every test ends with no packet leaked.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "base/rng.h"
#include "drivers/sim/fault_plan.h"
#include "net_rig.h"
#include "stream_client.h"
#include "tap_port.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::nettest;
using wire::FrameType;

// ---- the protocol, move by move, against a raw peer ----------------------------

// Node a is a raw port driven by the test (hand-built frames in, frames
// drained and parsed out); node b runs the Link under test.
TEST_GROUP(ReliableLinkReceiver) {
  std::unique_ptr<Rig> rig;
  RecordingClient cb;
  Link* lb = nullptr;
  uint32_t a = 0, b = 0;
  SimPort* pa = nullptr;
  SimPort* pb = nullptr;

  void make(LinkConfig cfg) {
    rig = std::make_unique<Rig>(1, LinkModel{}, FaultPlan{}, cfg);
    a = rig->add_node();
    b = rig->add_node();
    std::tie(pa, pb) = rig->cable(a, b);
    lb = &rig->add_link(1, pb, &cb);
  }
  void setup() override { make(sim_link_config()); }
  void teardown() override {
    cb.free_held();
    rig->teardown();
    UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
    rig.reset();
  }
  void inject(uint32_t seq, uint8_t vc = 0, uint8_t flags = 0) {
    FrameFields f;
    f.seq = seq;
    f.vc = vc;
    f.flags = flags;
    inject_frame(kData, f, make_body(seq, 40));
  }
  void inject_frame(uint8_t type, const FrameFields& f, const std::vector<uint8_t>& body = {}) {
    Packet* p = build_frame(rig->pool(a), type, body, f);
    UNSIGNED_LONGS_EQUAL(1, pa->tx_burst(&p, 1));
  }
  // A reply "at once" arrives within kNow (a frame each way: serialisation
  // and latency); a delayed ack within kLater.
  static constexpr uint64_t kNow = 500;
  uint64_t later() const { return rig->link_config().ack_delay_ns + kNow; }
  // Frames b sent back, after `ns` of virtual time.
  std::vector<WireFrame> replies(uint64_t ns) {
    rig->run_for(ns);
    return drain(pa);
  }
  bool delivered_in_order(uint32_t n) const {
    if (cb.frames.size() != n) return false;
    for (uint32_t i = 0; i < n; ++i)
      if (cb.frames[i].body != make_body(i, 40)) return false;
    return true;
  }
};

TEST(ReliableLinkReceiver, InOrderDataIsDeliveredAndAckedAfterTheAckDelay) {
  const LinkConfig& cfg = rig->link_config();
  for (uint32_t s = 0; s < 3; ++s) inject(s, 2);
  auto r = replies(cfg.ack_delay_ns / 2);
  CHECK(delivered_in_order(3));
  UNSIGNED_LONGS_EQUAL(2, cb.frames[0].vc);
  CHECK(r.empty());  // coalescing: not yet
  r = replies(cfg.ack_delay_ns);
  UNSIGNED_LONGS_EQUAL(1, r.size());  // one ack for all three
  UNSIGNED_LONGS_EQUAL(kAck, r[0].type);
  UNSIGNED_LONGS_EQUAL(3, r[0].f.ack);
  UNSIGNED_LONGS_EQUAL(0, r[0].f.sack);
  UNSIGNED_LONGS_EQUAL(0, r[0].f.flags);
  UNSIGNED_LONGS_EQUAL(3, r[0].f.credits[2]);  // released at once by the client: 3 credits back on VC 2
  UNSIGNED_LONGS_EQUAL(0, r[0].f.credits[0]);
  CHECK(r[0].body.empty());
  UNSIGNED_LONGLONGS_EQUAL(1, lb->counters().acks_sent);
  UNSIGNED_LONGLONGS_EQUAL(3, lb->counters().data_delivered);
  CHECK(rig->settle() > 0);
}

TEST(ReliableLinkReceiver, AGapIsNakedOnceHeldAndDeliveredInOrderWhenFilled) {
  inject(1);
  auto r = replies(kNow);  // at once, not after the ack delay
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(kAck, r[0].type);
  UNSIGNED_LONGS_EQUAL(wire::kLinkNak, r[0].f.flags);
  UNSIGNED_LONGS_EQUAL(0, r[0].f.ack);
  UNSIGNED_LONGS_EQUAL(1, r[0].f.sack);  // seq 1 held
  CHECK(cb.frames.empty());
  // Behind the same gap: no second NAK; a new gap beyond it: a NAK again.
  inject(2);
  r = replies(kNow);
  CHECK(r.empty());
  inject(5);
  r = replies(kNow);
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(wire::kLinkNak, r[0].f.flags);
  UNSIGNED_LONGS_EQUAL(0b10011, r[0].f.sack);  // 1, 2 and 5
  UNSIGNED_LONGLONGS_EQUAL(2, lb->counters().naks_sent);
  UNSIGNED_LONGLONGS_EQUAL(3, lb->counters().reordered);
  // Fill the first gap: 0, 1, 2 go up in order; 5 waits for 3 and 4.
  inject(0);
  r = replies(later());
  CHECK(delivered_in_order(3));
  UNSIGNED_LONGS_EQUAL(3, r.back().f.ack);
  UNSIGNED_LONGS_EQUAL(0b10, r.back().f.sack);  // 5 = 3 + 1 + 1
  inject(4);
  inject(3);
  r = replies(later());
  CHECK(delivered_in_order(6));
  UNSIGNED_LONGS_EQUAL(6, r.back().f.ack);
  UNSIGNED_LONGS_EQUAL(0, r.back().f.sack);
  UNSIGNED_LONGLONGS_EQUAL(6, lb->counters().data_delivered);
  UNSIGNED_LONGLONGS_EQUAL(0, lb->counters().duplicates);
}

TEST(ReliableLinkReceiver, DuplicatesAreDroppedAndAckedAtOnce) {
  inject(0);
  inject(2);
  replies(later());
  inject(0);  // delivered already
  auto r = replies(kNow);
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(1, r[0].f.ack);
  UNSIGNED_LONGS_EQUAL(0b1, r[0].f.sack);  // 2 = 1 + 1 + 0
  inject(2);  // held out of order already
  r = replies(kNow);
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGLONGS_EQUAL(2, lb->counters().duplicates);
  UNSIGNED_LONGS_EQUAL(1, cb.frames.size());
  inject(1);
  replies(later());
  CHECK(delivered_in_order(3));
}

TEST(ReliableLinkReceiver, FramesBeyondTheWindowAreDropped) {
  inject(kLinkWindow);  // rx_next 0: the window is [0, 32)
  inject(1000);
  inject(0u - 5u);      // before rx_next: an old duplicate
  auto r = replies(later());
  UNSIGNED_LONGLONGS_EQUAL(2, lb->counters().out_of_window);
  UNSIGNED_LONGLONGS_EQUAL(1, lb->counters().duplicates);
  CHECK(cb.frames.empty());
  inject(kLinkWindow - 1);  // the last seq in the window is held
  r = replies(kNow);
  UNSIGNED_LONGS_EQUAL(1u << (kLinkWindow - 2), r.back().f.sack);
  UNSIGNED_LONGLONGS_EQUAL(2, lb->counters().out_of_window);
  for (uint32_t s = 0; s + 1 < kLinkWindow; ++s) inject(s, static_cast<uint8_t>(s % wire::kNumVcs));
  // (32 frames in flight at most 8 per VC: the client releases each at once.)
  replies(later());
  CHECK(delivered_in_order(kLinkWindow));
}

// A peer that sends without a credit: counted, dropped, not acked; once a
// buffer is released the same frame is taken.
TEST(ReliableLinkReceiver, ACreditViolationIsCountedAndDroppedUnacked) {
  LinkConfig cfg = sim_link_config();
  cfg.rx_credits[0] = 2;
  make(cfg);
  cb.hold[0] = true;
  inject(0);
  inject(1);
  inject(2);  // no credit left on VC 0
  auto r = replies(later());
  UNSIGNED_LONGLONGS_EQUAL(1, lb->counters().credit_violations);
  UNSIGNED_LONGS_EQUAL(2, cb.frames.size());
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(2, r[0].f.ack);  // 2 was not taken
  UNSIGNED_LONGS_EQUAL(0, r[0].f.sack);
  UNSIGNED_LONGS_EQUAL(0, r[0].f.credits[0]);
  // Other VCs have their own buffers.
  inject(2, 1);
  r = replies(later());
  UNSIGNED_LONGS_EQUAL(3, r.back().f.ack);
  UNSIGNED_LONGS_EQUAL(3, cb.frames.size());
  // Release one VC 0 buffer: the credit goes back, and a frame on VC 0 is taken.
  cb.hold[0] = false;
  Packet* first = cb.held.front();
  cb.held.erase(cb.held.begin());
  first->free();
  lb->release(0);
  r = replies(later());
  UNSIGNED_LONGS_EQUAL(1, r.back().f.credits[0]);
  inject(3);
  r = replies(later());
  UNSIGNED_LONGS_EQUAL(4, r.back().f.ack);
  UNSIGNED_LONGS_EQUAL(4, cb.frames.size());
  UNSIGNED_LONGLONGS_EQUAL(1, lb->counters().credit_violations);
}

// No buffer for a bare ack: counted, and the ack goes when one is free.
TEST(ReliableLinkReceiver, AnAckWaitsForABuffer) {
  inject(0);
  rig->run_for(kNow);  // delivered; the ack is due after the delay
  UNSIGNED_LONGS_EQUAL(1, cb.frames.size());
  std::vector<Packet*> all;
  while (Packet* p = rig->pool(b).alloc()) all.push_back(p);
  auto r = replies(later());
  CHECK(r.empty());
  CHECK(lb->counters().no_buffer >= 1);
  for (Packet* p : all) p->free();
  r = replies(later());
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(1, r[0].f.ack);
}

// The ack delay runs from the first frame an ack answers. A data frame of
// ours that carries the ack ends that wait: a frame received after it
// gets its own full delay (a bare ack at the first frame's deadline would
// be one that our next data frame could still carry).
TEST(ReliableLinkReceiver, AnAckIsDueOneDelayAfterTheFirstFrameItAnswers) {
  const uint64_t d = rig->link_config().ack_delay_ns;
  constexpr uint64_t kHop = 200;  // a frame arrives within this (100 ns latency)
  inject(0);                      // at 0: its ack is due before kHop + d
  rig->run_for(kHop);
  CHECK(lb->send(0, packet_with(rig->pool(b), make_body(7, 30))));  // carries ack 1
  auto r = replies(kHop);
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(kData, r[0].type);
  UNSIGNED_LONGS_EQUAL(1, r[0].f.ack);
  // Frame 1 at 2 kHop: its ack is due after 2 kHop + d. At frame 0's
  // deadline no bare ack goes; at frame 1's one does, answering frame 1.
  inject(1);
  r = replies(d - kHop);  // to kHop + d: past frame 0's deadline, before frame 1's
  CHECK(r.empty());
  UNSIGNED_LONGLONGS_EQUAL(0, lb->counters().acks_sent);
  r = replies(d);
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(kAck, r[0].type);
  UNSIGNED_LONGS_EQUAL(2, r[0].f.ack);
  UNSIGNED_LONGLONGS_EQUAL(1, lb->counters().acks_sent);
  FrameFields f;  // the peer acks our frame: nothing left to resend
  f.ack = 1;
  inject_frame(kAck, f);
  rig->run_for(kHop);
}

TEST(ReliableLinkReceiver, AProbeIsAnsweredAtOnce) {
  FrameFields f;
  f.flags = wire::kLinkAckReq;
  inject_frame(kAck, f);
  auto r = replies(kNow);
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(kAck, r[0].type);
  UNSIGNED_LONGLONGS_EQUAL(1, lb->counters().acks_received);
  // A data frame asking for an answer is acked at once too.
  inject(0, 0, wire::kLinkAckReq);
  r = replies(kNow);
  UNSIGNED_LONGS_EQUAL(1, r.size());
  UNSIGNED_LONGS_EQUAL(1, r[0].f.ack);
}

// Node b is a raw port driven by the test; node a runs the Link under test,
// its port tapped.
TEST_GROUP(ReliableLinkSender) {
  std::unique_ptr<Rig> rig;
  std::unique_ptr<TapPort> tap;
  RecordingClient ca;
  Link* la = nullptr;
  uint32_t a = 0, b = 0;
  SimPort* pa = nullptr;
  SimPort* pb = nullptr;
  LinkConfig cfg;

  void setup() override {
    cfg = sim_link_config();
    cfg.rto_ns = 100 * kUs;  // long enough to stay out of the way unless waited for
    cfg.rto_max_ns = 800 * kUs;
    rig = std::make_unique<Rig>(1, LinkModel{}, FaultPlan{}, cfg);
    a = rig->add_node();
    b = rig->add_node();
    std::tie(pa, pb) = rig->cable(a, b);
    tap = std::make_unique<TapPort>(pa, rig->fabric().clock());
    la = &rig->add_link_on(a, 0, tap.get(), &ca, cfg);
    ca.link = la;
  }
  void teardown() override {
    rig->teardown();
    UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
    rig.reset();
  }
  void send(uint32_t n, uint8_t vc = 0) {
    for (uint32_t i = 0; i < n; ++i) CHECK(la->send(vc, packet_with(rig->pool(a), make_body(i, 30))));
  }
  void ack(uint32_t ack_seq, uint32_t sack = 0, uint16_t freed0 = 0, uint8_t flags = 0) {
    FrameFields f;
    f.ack = ack_seq;
    f.sack = sack;
    f.credits[0] = freed0;
    f.flags = flags;
    Packet* p = build_frame(rig->pool(b), kAck, {}, f);
    UNSIGNED_LONGS_EQUAL(1, pb->tx_burst(&p, 1));
  }
  std::vector<WireFrame> sent(uint64_t ns) {
    rig->run_for(ns);
    return drain(pb);
  }
};

TEST(ReliableLinkSender, AcksFreeTheWindowAndCreditsComeBack) {
  send(5);
  auto w = sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(5, w.size());
  UNSIGNED_LONGS_EQUAL(5, la->unacked());
  UNSIGNED_LONGS_EQUAL(cfg.rx_credits[0] - 5u, la->credits(0));
  const uint64_t held = rig->pool(a).stats().in_use;
  ack(3);
  sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(2, la->unacked());
  UNSIGNED_LONGLONGS_EQUAL(held - 3, rig->pool(a).stats().in_use);  // the window let go of 0..2
  UNSIGNED_LONGS_EQUAL(cfg.rx_credits[0] - 5u, la->credits(0));     // but the peer still holds the buffers
  ack(3, 0, 4);
  sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(cfg.rx_credits[0] - 1u, la->credits(0));
  ack(2, 0, 2);  // stale: moves nothing back
  sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(2, la->unacked());
  UNSIGNED_LONGS_EQUAL(cfg.rx_credits[0] - 1u, la->credits(0));
  ack(40, 0, 60);  // beyond anything sent: ignored
  sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(2, la->unacked());
  UNSIGNED_LONGS_EQUAL(cfg.rx_credits[0] - 1u, la->credits(0));
  ack(5, 0, 5);
  sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(0, la->unacked());
  UNSIGNED_LONGS_EQUAL(cfg.rx_credits[0], la->credits(0));
  UNSIGNED_LONGLONGS_EQUAL(0, la->counters().retransmits);
  UNSIGNED_LONGLONGS_EQUAL(5, la->counters().acks_received);
  CHECK(rig->settle() > 0);  // nothing left to time
}

TEST(ReliableLinkSender, SackHolesAreResentOnceAsCopies) {
  send(6);
  sent(cfg.rto_ns / 2 + 1 * kUs);  // old enough to resend
  // The peer holds 2, 3 and 5 (sack bit i: seq ack + 1 + i): 0, 1 and 4
  // are holes; nothing is known beyond 5.
  ack(0, 0b10110, 0, wire::kLinkNak);
  auto w = sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(3, w.size());
  for (size_t i = 0; i < 3; ++i) {
    UNSIGNED_LONGS_EQUAL(kData, w[i].type);
    CHECK(w[i].body == make_body(static_cast<uint32_t>(i), 30) || w[i].f.seq == 4);
    UNSIGNED_LONGS_EQUAL(0, w[i].f.flags);
  }
  UNSIGNED_LONGS_EQUAL(0, w[0].f.seq);  // lowest first
  UNSIGNED_LONGS_EQUAL(1, w[1].f.seq);
  UNSIGNED_LONGS_EQUAL(4, w[2].f.seq);
  CHECK(w[2].body == make_body(4, 30));
  UNSIGNED_LONGLONGS_EQUAL(3, la->counters().retransmits);
  // The same sack again at once: just resent, not again.
  ack(0, 0b10110);
  w = sent(1 * kUs);
  CHECK(w.empty());
  ack(6, 0, 6);
  sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(0, la->unacked());
  UNSIGNED_LONGLONGS_EQUAL(3, la->counters().retransmits);
  UNSIGNED_LONGLONGS_EQUAL(0, la->counters().timeouts);
}

// A frame overtaken by a reordered one is not resent at once: a hole is
// resent only when its frame has been out for half a timeout.
TEST(ReliableLinkSender, AFreshHoleIsNotResent) {
  send(3);
  sent(1 * kUs);
  ack(0, 0b10, 0, wire::kLinkNak);  // 2 arrived before 0 and 1
  auto w = sent(1 * kUs);
  CHECK(w.empty());
  UNSIGNED_LONGLONGS_EQUAL(0, la->counters().retransmits);
  ack(3, 0, 3);
  sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(0, la->unacked());
}

// With credits the peer never returns, the sender probes with doubling
// intervals; an ack with the credits stops it.
TEST(ReliableLinkSender, LostCreditsAreProbedFor) {
  send(cfg.rx_credits[0]);
  sent(1 * kUs);
  UNSIGNED_LONGS_EQUAL(0, la->credits(0));
  ack(cfg.rx_credits[0]);  // every frame acked, no buffer freed (yet)
  const uint64_t acked_at = rig->now();
  sent(cfg.rto_ns + 2 * cfg.rto_ns + 4 * cfg.rto_ns + 1 * kUs);
  std::vector<uint64_t> probes;
  for (const TapPort::Rec& t : tap->tx)
    if (t.type == kAck && (t.flags & wire::kLinkAckReq)) probes.push_back(t.time);
  UNSIGNED_LONGS_EQUAL(3, probes.size());
  const uint64_t ack_seen = acked_at + 100 + (kOverhead + 1) / 2;  // latency + serialisation
  CHECK(probes[0] >= ack_seen + cfg.rto_ns - 1 * kUs && probes[0] <= ack_seen + cfg.rto_ns + 1 * kUs);
  UNSIGNED_LONGLONGS_EQUAL(2 * cfg.rto_ns, probes[1] - probes[0]);
  UNSIGNED_LONGLONGS_EQUAL(4 * cfg.rto_ns, probes[2] - probes[1]);
  UNSIGNED_LONGLONGS_EQUAL(0, la->counters().timeouts);  // probes are not data timeouts
  CHECK(la->up());
  ack(cfg.rx_credits[0], 0, cfg.rx_credits[0]);
  CHECK(rig->settle() > 0);  // the probing stopped
  UNSIGNED_LONGS_EQUAL(cfg.rx_credits[0], la->credits(0));
}

// A peer that holds our credits and stops answering probes: down after
// down_after_ns without a word from it; with the carrier gone, at the next probe.
TEST(ReliableLinkSender, UnansweredProbesTakeTheLinkDown) {
  send(3);
  sent(1 * kUs);
  ack(3);  // acked, buffers not returned
  sent(1 * kUs);
  const uint64_t heard = rig->now() - 1 * kUs + 100;  // about when a read that ack
  rig->run_for(cfg.down_after_ns + cfg.rto_max_ns);
  CHECK_FALSE(la->up());
  UNSIGNED_LONGS_EQUAL(1, ca.downs.size());
  const std::string msg = ca.downs[0].message();
  CHECK_TEXT(msg.find(la->name() + ": link down: no answer") != std::string::npos, msg.c_str());
  CHECK_TEXT(msg.find("3 receive buffers not returned") != std::string::npos, msg.c_str());
  const uint64_t last_probe = tap->tx.back().time;
  CHECK(last_probe < heard + cfg.down_after_ns);
  drain(pb);
}

TEST(ReliableLinkSender, CarrierLossWhileOwedCreditsTakesTheLinkDown) {
  send(3);
  sent(1 * kUs);
  ack(3);
  sent(1 * kUs);
  rig->fabric().cut_link(rig->last_cable(), rig->now());
  rig->run_for(cfg.rto_ns + 1 * kUs);
  CHECK_FALSE(la->up());
  UNSIGNED_LONGS_EQUAL(1, ca.downs.size());
  CHECK(ca.downs[0].message().find("carrier lost (3 receive buffers not returned)") != std::string::npos);
  drain(pb);
}

// Unanswered data: the oldest frame is resent with an answer request, and
// the timer backs off; answering moves the window and resets it.
TEST(ReliableLinkSender, TheTimerResendsTheOldestAndBacksOff) {
  send(4);
  auto w = sent(cfg.rto_ns + 1 * kUs);
  UNSIGNED_LONGS_EQUAL(5, w.size());
  UNSIGNED_LONGS_EQUAL(0, w[4].f.seq);
  UNSIGNED_LONGS_EQUAL(wire::kLinkAckReq, w[4].f.flags);
  UNSIGNED_LONGLONGS_EQUAL(1, la->counters().timeouts);
  w = sent(2 * cfg.rto_ns);
  UNSIGNED_LONGS_EQUAL(1, w.size());  // doubled
  UNSIGNED_LONGS_EQUAL(0, w[0].f.seq);
  ack(2, 0, 2);
  w = sent(cfg.rto_ns + 1 * kUs);  // reset on progress: back to rto
  UNSIGNED_LONGS_EQUAL(1, w.size());
  UNSIGNED_LONGS_EQUAL(2, w[0].f.seq);
  UNSIGNED_LONGLONGS_EQUAL(3, la->counters().timeouts);
  UNSIGNED_LONGLONGS_EQUAL(3, la->counters().retransmits);
  ack(4, 0, 4);
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(0, la->unacked());
}
