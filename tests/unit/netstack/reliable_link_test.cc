// The reliable link layer over a sim fabric, asserted by its properties:
// exactly-once, in-order, intact delivery over a lossy, corrupting,
// duplicating, reordering wire; per-VC credit flow control (a receiver never
// drops for lack of buffers); the send window; retransmission with doubling
// timeout and link-down; and the receiver's and sender's protocol moves one
// by one against a hand-driven raw peer. Every test ends with no packet
// leaked.
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

// ---- exactly once, in order, intact over a bad wire -------------------------

TEST_GROUP(ReliableLinkFaults){};

// The link timing of these runs, spelled out (today's sim tuning) so that
// the time bound below does not move when the tuning does.
static LinkConfig fault_run_config() {
  LinkConfig c;
  c.rto_ns = 5 * kUs;
  c.rto_max_ns = 200 * kUs;
  c.ack_delay_ns = 1 * kUs;
  c.down_after_ns = 2 * kMs;
  return c;
}

// 20,000 frames each way at once, of every size, on all four VCs, over a wire
// that drops 5%, corrupts 1%, duplicates 1% and reorders 5% of frames.
TEST(ReliableLinkFaults, ExactlyOnceInOrderIntactOverALossyWire) {
  constexpr uint32_t kFrames = 20000;
  // The wire's bandwidth alone needs ~5.4 ms of virtual time for the 10.7 MB
  // each way (average body 497 B + 46 B of headers, at 2 B/ns); runs take
  // about 8 ms. The bound allows for retransmissions, acks and stalls.
  constexpr uint64_t kBoundNs = 12 * kMs;
  const Dims dims = dims_of(2, 1, 1);
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const std::string at = "seed " + std::to_string(seed);
    auto plan = parse_fault_plan("drop=0.05,corrupt=0.01,dup=0.01,reorder=0.05", dims);
    CHECK_TEXT(plan.is_ok(), plan.status().to_string().c_str());
    Rig rig(seed, LinkModel{}, plan.value(), fault_run_config());
    const uint32_t a = rig.add_node();
    const uint32_t b = rig.add_node();
    auto [pa, pb] = rig.cable(a, b);
    const StreamSpec ab{seed * 1000 + 1, kFrames};
    const StreamSpec ba{seed * 1000 + 2, kFrames};
    StreamClient ca(rig.pool(a), ab, ba);
    StreamClient cb(rig.pool(b), ba, ab);
    Link& la = rig.add_link(0, pa, &ca);
    Link& lb = rig.add_link(1, pb, &cb);
    ca.link = &la;
    cb.link = &lb;
    rig.loop(a).add_poller(&ca);
    rig.loop(b).add_poller(&cb);

    CHECK_TEXT(rig.settle(kBoundNs) > 0, at.c_str());
    const uint64_t took = rig.now();
    CHECK_TEXT(took <= kBoundNs, at.c_str());

    for (StreamClient* c : {&ca, &cb}) {
      CHECK_TEXT(c->errors == 0, (at + ": " + c->error).c_str());
      UNSIGNED_LONGS_EQUAL_TEXT(kFrames, c->sent, at.c_str());
      UNSIGNED_LONGS_EQUAL_TEXT(kFrames, c->received, at.c_str());
      UNSIGNED_LONGS_EQUAL_TEXT(0, c->send_refused, at.c_str());
      CHECK_TEXT(c->downs.empty(), at.c_str());
    }
    for (const Link* l : {&la, &lb}) {
      UNSIGNED_LONGLONGS_EQUAL_TEXT(kFrames, l->counters().data_sent, at.c_str());
      UNSIGNED_LONGLONGS_EQUAL_TEXT(kFrames, l->counters().data_delivered, at.c_str());
      CHECK_TEXT(l->up(), at.c_str());
      UNSIGNED_LONGS_EQUAL_TEXT(0, l->unacked(), at.c_str());
    }
    // The faults happened and were repaired, and were seen as what they are.
    const FabricStats& fs = rig.fabric().stats();
    CHECK_TEXT(fs.dropped > 0 && fs.corrupted > 0 && fs.duplicated > 0 && fs.reordered > 0, at.c_str());
    CHECK_TEXT(sum_counter(la, lb, &LinkCounters::duplicates) > 0, at.c_str());
    CHECK_TEXT(sum_counter(la, lb, &LinkCounters::rx_crc_errors) > 0, at.c_str());
    CHECK_TEXT(sum_counter(la, lb, &LinkCounters::retransmits) > 0, at.c_str());
    CHECK_TEXT(sum_counter(la, lb, &LinkCounters::reordered) > 0, at.c_str());
    CHECK_TEXT(sum_counter(la, lb, &LinkCounters::naks_sent) > 0, at.c_str());
    // Retransmissions track the losses: at least one per data frame lost or
    // corrupted (about 6% of 40,000), and no storm. (Runs resend about 20%:
    // with a 5 us timeout below the loaded round trip, many holes are
    // resent again before the first copy's ack is back.)
    const uint64_t rexmit = sum_counter(la, lb, &LinkCounters::retransmits);
    CHECK_TEXT(rexmit >= 2 * kFrames * 5 / 100, at.c_str());
    CHECK_TEXT(rexmit <= 2 * kFrames * 40 / 100, at.c_str());
    // A receiver never drops for lack of buffers, and a correct peer never
    // oversteps its credits or the window.
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, fs.rx_overflow, at.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, sum_counter(la, lb, &LinkCounters::credit_violations), at.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, sum_counter(la, lb, &LinkCounters::out_of_window), at.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, sum_counter(la, lb, &LinkCounters::no_buffer), at.c_str());

    rig.teardown();
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, rig.in_use(), at.c_str());
  }
}

// A port that takes one frame at a time (no tx backlog): the link keeps what
// the port refused, in order, alongside retransmissions and acks.
TEST(ReliableLinkFaults, ExactlyOnceThroughAPortThatTakesOneFrameAtATime) {
  LinkModel slow;
  slow.bytes_per_ns = 1.0;
  slow.tx_backlog_ns = 0;
  auto plan = parse_fault_plan("drop=0.05,corrupt=0.01,dup=0.01,reorder=0.05", dims_of(2, 1, 1));
  Rig rig(7, slow, plan.value(), fault_run_config());
  const uint32_t a = rig.add_node();
  const uint32_t b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  const StreamSpec ab{21, 3000};
  const StreamSpec ba{22, 3000, 0b0101};  // VCs 0 and 2 only
  StreamClient ca(rig.pool(a), ab, ba);
  StreamClient cb(rig.pool(b), ba, ab);
  ca.link = &rig.add_link(0, pa, &ca);
  cb.link = &rig.add_link(1, pb, &cb);
  rig.loop(a).add_poller(&ca);
  rig.loop(b).add_poller(&cb);
  CHECK(rig.settle() > 0);
  for (StreamClient* c : {&ca, &cb}) {
    CHECK_TEXT(c->errors == 0, c->error.c_str());
    UNSIGNED_LONGS_EQUAL(3000, c->received);
  }
  CHECK(pa->stats().tx_full > 0 && pb->stats().tx_full > 0);  // the port did refuse
  CHECK(ca.link->counters().retransmits > 0 && cb.link->counters().retransmits > 0);
  UNSIGNED_LONGLONGS_EQUAL(0, rig.fabric().stats().rx_overflow);
  rig.teardown();
  UNSIGNED_LONGLONGS_EQUAL(0, rig.in_use());
}

// The same seed gives the same run, bit for bit.
TEST(ReliableLinkFaults, DeterministicForASeed) {
  uint64_t hash[2] = {0, 0};
  uint64_t rexmit[2] = {0, 0};
  for (int run = 0; run < 2; ++run) {
    auto plan = parse_fault_plan("drop=0.05,corrupt=0.01,dup=0.01,reorder=0.05", dims_of(2, 1, 1));
    Rig rig(9, LinkModel{}, plan.value(), fault_run_config());
    const uint32_t a = rig.add_node();
    const uint32_t b = rig.add_node();
    auto [pa, pb] = rig.cable(a, b);
    const StreamSpec ab{11, 2000};
    const StreamSpec ba{12, 2000};
    StreamClient ca(rig.pool(a), ab, ba);
    StreamClient cb(rig.pool(b), ba, ab);
    ca.link = &rig.add_link(0, pa, &ca);
    cb.link = &rig.add_link(1, pb, &cb);
    rig.loop(a).add_poller(&ca);
    rig.loop(b).add_poller(&cb);
    CHECK(rig.settle() > 0);
    UNSIGNED_LONGS_EQUAL(2000, cb.received);
    hash[run] = rig.fabric().trace_hash();
    rexmit[run] = ca.link->counters().retransmits + cb.link->counters().retransmits;
    rig.teardown();
    UNSIGNED_LONGLONGS_EQUAL(0, rig.in_use());
  }
  UNSIGNED_LONGLONGS_EQUAL(hash[0], hash[1]);
  UNSIGNED_LONGLONGS_EQUAL(rexmit[0], rexmit[1]);
}

// ---- flow control and window -------------------------------------------------

TEST_GROUP(ReliableLinkFlow) {
  std::unique_ptr<Rig> rig;
  RecordingClient ca, cb;
  uint32_t a = 0, b = 0;
  SimPort* pa = nullptr;
  SimPort* pb = nullptr;

  void make(LinkConfig cfg = sim_link_config()) {
    rig = std::make_unique<Rig>(1, LinkModel{}, FaultPlan{}, cfg);
    a = rig->add_node();
    b = rig->add_node();
    std::tie(pa, pb) = rig->cable(a, b);
  }
  void setup() override { make(); }
  void teardown() override {
    ca.free_held();
    cb.free_held();
    rig->teardown();
    UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
    rig.reset();
  }
  Packet* body(uint32_t node, uint32_t seq, uint32_t len = 64) {
    auto v = make_body(seq, len);
    std::memcpy(v.data(), &seq, 4);
    return packet_with(rig->pool(node), v);
  }
  static uint32_t id_of(const FrameRecord& f) {
    uint32_t id;
    std::memcpy(&id, f.body.data(), 4);
    return id;
  }
};

// The receiver's client keeps VC 1's buffers: the sender stops after exactly
// rx_credits[1] frames on VC 1 while VC 0 keeps flowing; once the buffers
// are released the rest of VC 1 follows, in order.
TEST(ReliableLinkFlow, ASenderStopsAtTheReceiversCreditsPerVc) {
  Link& la = rig->add_link(0, pa, &ca);
  Link& lb = rig->add_link(1, pb, &cb);
  const uint16_t credits = rig->link_config().rx_credits[1];
  UNSIGNED_LONGS_EQUAL(credits, la.credits(1));
  cb.hold[1] = true;

  uint32_t taken = 0;
  for (uint32_t i = 0; i < 3u * credits; ++i) {
    Packet* p = body(a, 1000 + i);
    if (!la.send(1, p)) {
      p->free();
      break;
    }
    ++taken;
  }
  UNSIGNED_LONGS_EQUAL(credits, taken);
  UNSIGNED_LONGLONGS_EQUAL(1, la.counters().credit_stalls);
  UNSIGNED_LONGS_EQUAL(0, la.credits(1));
  CHECK_FALSE(la.can_send(1));
  CHECK(la.can_send(0));

  // VC 0 flows past the stalled VC 1 (50 frames through 8 credits).
  for (uint32_t i = 0; i < 50; ++i) rig->feed(la, 0, body(a, i));
  rig->run_for(2 * kMs);
  UNSIGNED_LONGS_EQUAL(0, rig->feed_pending());
  uint32_t vc0 = 0, vc1 = 0;
  for (const FrameRecord& f : cb.frames) (f.vc == 0 ? vc0 : vc1)++;
  UNSIGNED_LONGS_EQUAL(50, vc0);
  UNSIGNED_LONGS_EQUAL(credits, vc1);
  UNSIGNED_LONGS_EQUAL(credits, cb.held.size());
  UNSIGNED_LONGS_EQUAL(0, la.credits(1));  // still held, still no credit
  UNSIGNED_LONGS_EQUAL(rig->link_config().rx_credits[0], la.credits(0));
  UNSIGNED_LONGLONGS_EQUAL(0, lb.counters().credit_violations);
  CHECK(la.up());

  // Release: the credits come back and the rest of VC 1 goes.
  cb.hold[1] = false;
  cb.release_held(1);
  for (uint32_t i = taken; i < 3u * credits; ++i) rig->feed(la, 1, body(a, 1000 + i));
  CHECK(rig->settle() > 0);
  std::vector<uint32_t> got1;
  for (const FrameRecord& f : cb.frames)
    if (f.vc == 1) got1.push_back(id_of(f));
  UNSIGNED_LONGS_EQUAL(3u * credits, got1.size());
  for (uint32_t i = 0; i < got1.size(); ++i) UNSIGNED_LONGS_EQUAL(1000 + i, got1[i]);
  UNSIGNED_LONGS_EQUAL(credits, la.credits(1));
  UNSIGNED_LONGLONGS_EQUAL(0, lb.counters().credit_violations);
  UNSIGNED_LONGLONGS_EQUAL(0, rig->fabric().stats().rx_overflow);
}

// With credits to spare, the window is what limits: never more than
// kLinkWindow frames unacknowledged, on the link's books or on the wire.
TEST(ReliableLinkFlow, NoMoreThanAWindowIsEverUnacknowledged) {
  LinkConfig cfg = sim_link_config();
  for (auto& c : cfg.rx_credits) c = 200;
  make(cfg);
  TapPort tap(pa, rig->fabric().clock());
  Link& la = rig->add_link_on(a, 0, &tap, &ca, cfg);
  ca.link = &la;
  rig->add_link(1, pb, &cb);

  uint32_t taken = 0;
  for (uint32_t i = 0; i < kLinkWindow + 5; ++i) {
    Packet* p = body(a, i);
    if (!la.send(static_cast<uint8_t>(i % wire::kNumVcs), p)) {
      p->free();
      break;
    }
    ++taken;
  }
  UNSIGNED_LONGS_EQUAL(kLinkWindow, taken);
  UNSIGNED_LONGS_EQUAL(kLinkWindow, la.unacked());
  UNSIGNED_LONGLONGS_EQUAL(1, la.counters().window_stalls);
  UNSIGNED_LONGLONGS_EQUAL(0, la.counters().credit_stalls);
  CHECK_FALSE(la.can_send(0));
  CHECK(la.credits(0) > 0);

  // A long stream: watch unacked() from a poller on a's loop, and the wire.
  struct Watch final : Poller {
    const Link* l;
    uint32_t max = 0;
    bool poll() override {
      max = std::max(max, l->unacked());
      return false;
    }
  } watch;
  watch.l = &la;
  rig->loop(a).add_poller(&watch);
  for (uint32_t i = taken; i < 2000; ++i) rig->feed(la, static_cast<uint8_t>(i % wire::kNumVcs), body(a, i, 8 + i % 900));
  CHECK(rig->settle() > 0);
  rig->loop(a).remove_poller(&watch);
  UNSIGNED_LONGS_EQUAL(kLinkWindow, watch.max);
  UNSIGNED_LONGS_EQUAL(2000, cb.frames.size());
  for (uint32_t i = 0; i < 2000; ++i) UNSIGNED_LONGS_EQUAL(i, id_of(cb.frames[i]));

  // On the wire: every data frame a sent had seq < (highest ack a had
  // received by then) + kLinkWindow.
  size_t r = 0;
  uint32_t acked = 0;
  uint32_t highest_seq = 0;
  for (const TapPort::Rec& t : tap.tx) {
    while (r < tap.rx.size() && tap.rx[r].time <= t.time) {
      if (tap.rx[r].type == kData || tap.rx[r].type == kAck) acked = std::max(acked, tap.rx[r].ack);
      ++r;
    }
    if (t.type != kData) continue;
    CHECK(t.seq < acked + kLinkWindow);
    highest_seq = std::max(highest_seq, t.seq);
  }
  UNSIGNED_LONGS_EQUAL(1999, highest_seq);
  UNSIGNED_LONGLONGS_EQUAL(0, la.counters().credit_stalls);
}

// ---- retransmission, backoff, link-down ---------------------------------------

TEST_GROUP(ReliableLinkDown) {
  std::unique_ptr<Rig> rig;
  uint32_t a = 0, b = 0;
  SimPort* pa = nullptr;
  SimPort* pb = nullptr;
  int cable = -1;

  void setup() override {
    rig = std::make_unique<Rig>(3);
    a = rig->add_node();
    b = rig->add_node();
    std::tie(pa, pb) = rig->cable(a, b);
    cable = rig->last_cable();
  }
  void teardown() override {
    rig->teardown();
    UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
    rig.reset();
  }
};

// The cable is cut mid-transfer but the port keeps reporting carrier: the
// sender resends the oldest frame at doubling intervals up to rto_max, then
// goes down once, no later than down_after_ns + rto_max after its last
// progress, and tells its client why, naming the link.
TEST(ReliableLinkDown, ASilentCutBacksOffThenGoesDown) {
  const LinkConfig cfg = rig->link_config();
  TapPort tap(pa, rig->fabric().clock());
  tap.carrier_up = true;
  const StreamSpec ab{77, 100000};
  const StreamSpec none{78, 0};
  StreamClient ca(rig->pool(a), ab, none);
  StreamClient cb(rig->pool(b), none, ab);
  Link& la = rig->add_link_on(a, 0, &tap, &ca, cfg);
  Link& lb = rig->add_link(1, pb, &cb);
  ca.link = &la;
  cb.link = &lb;
  rig->loop(a).add_poller(&ca);
  const uint64_t cut_at = 300 * kUs;
  rig->fabric().cut_link(cable, cut_at);
  rig->run_for(cut_at + cfg.down_after_ns + 4 * cfg.rto_max_ns);

  CHECK(cb.received > 100);  // it was moving before the cut
  CHECK(cb.errors == 0);
  CHECK_FALSE(la.up());
  UNSIGNED_LONGS_EQUAL(1, ca.downs.size());
  CHECK(ca.downs[0].code() == Code::kLinkDown);
  const std::string msg = ca.downs[0].message();
  CHECK_TEXT(msg.find(la.name()) != std::string::npos, msg.c_str());
  CHECK_TEXT(msg.find("no progress") != std::string::npos, msg.c_str());
  CHECK(la.down_status().code() == Code::kLinkDown);

  // The last progress: the last ack that moved a's window.
  uint64_t last_progress = 0;
  uint32_t acked = 0;
  for (const TapPort::Rec& r : tap.rx)
    if ((r.type == kData || r.type == kAck) && r.ack > acked) {
      acked = r.ack;
      last_progress = r.time;
    }
  CHECK(last_progress > 0 && last_progress <= cut_at);

  // Timeout resends after the cut: the oldest frame, flagged for an answer,
  // at intervals that double from rto up to rto_max.
  std::vector<uint64_t> resend;
  for (const TapPort::Rec& t : tap.tx)
    if (t.time > cut_at && t.type == kData && (t.flags & wire::kLinkAckReq)) {
      UNSIGNED_LONGS_EQUAL(acked, t.seq);
      resend.push_back(t.time);
    }
  CHECK(resend.size() >= 8);
  uint64_t want = cfg.rto_ns;
  UNSIGNED_LONGLONGS_EQUAL(last_progress + cfg.rto_ns, resend[0]);
  for (size_t i = 1; i < resend.size(); ++i) {
    want = std::min(want * 2, cfg.rto_max_ns);
    UNSIGNED_LONGLONGS_EQUAL(want, resend[i] - resend[i - 1]);
  }
  CHECK(la.counters().timeouts >= resend.size());

  // Down within down_after (+ one rto_max) of the last progress; nothing sent after.
  const uint64_t down_at = tap.tx.back().time;  // a's last frame went out just before
  CHECK(down_at - last_progress <= cfg.down_after_ns + cfg.rto_max_ns);
  CHECK(resend.back() - last_progress < cfg.down_after_ns);
  CHECK(rig->now() >= last_progress + cfg.down_after_ns);

  // Later sends fail and leave the packet alone; the client hears once.
  Packet* p = rig->pool(a).alloc();
  std::memset(p->append(16), 0x5a, 16);
  CHECK_FALSE(la.send(0, p));
  CHECK_FALSE(la.can_send(0));
  UNSIGNED_LONGS_EQUAL(0, la.credits(0));
  UNSIGNED_LONGS_EQUAL(16, p->len);
  p->free();
  rig->run_for(5 * cfg.down_after_ns);
  UNSIGNED_LONGS_EQUAL(1, ca.downs.size());
  UNSIGNED_LONGS_EQUAL(0, la.unacked());
  UNSIGNED_LONGS_EQUAL(0, la.tx_queued());
  // b had nothing to send, but its port (not wrapped) reports the cut: the
  // idle link reads the carrier every kCarrierCheckNs and goes down too.
  CHECK_FALSE(lb.up());
  CHECK_TEXT(lb.down_status().message().find("carrier lost") != std::string::npos,
             lb.down_status().message().c_str());
  // Everything a still holds is what its client has not freed: nothing.
  rig->teardown();
  UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
}

// A cut the port reports: the first timer expiry with data unacknowledged
// sees the carrier down and takes the link down at once.
TEST(ReliableLinkDown, CarrierLossGoesDownAtTheNextTimeout) {
  const LinkConfig cfg = rig->link_config();
  const StreamSpec ab{5, 100000};
  const StreamSpec none{6, 0};
  StreamClient ca(rig->pool(a), ab, none);
  StreamClient cb(rig->pool(b), none, ab);
  Link& la = rig->add_link(0, pa, &ca);
  Link& lb = rig->add_link(1, pb, &cb);
  ca.link = &la;
  cb.link = &lb;
  rig->loop(a).add_poller(&ca);
  const uint64_t cut_at = 100 * kUs;
  rig->fabric().cut_link(cable, cut_at);
  rig->run_for(cut_at + cfg.rto_max_ns);
  CHECK_FALSE(la.up());
  UNSIGNED_LONGS_EQUAL(1, ca.downs.size());
  const std::string msg = ca.downs[0].message();
  CHECK_TEXT(msg.find(la.name()) != std::string::npos, msg.c_str());
  CHECK_TEXT(msg.find("carrier lost") != std::string::npos, msg.c_str());
  UNSIGNED_LONGLONGS_EQUAL(1, la.counters().timeouts);
  CHECK(cb.errors == 0);
}
