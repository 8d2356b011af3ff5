// The link's liveness and identity: keepalives keep an idle link up and find
// a hung neighbour within the configured time; frames of another partition,
// or (once trained) of another node, are dropped and counted; sequence
// numbers and credit counts wrap; a reset link starts over on the sequence
// numbers training gives it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/sim/fault_plan.h"
#include "net_rig.h"
#include "stream_client.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::nettest;

namespace {

LinkConfig live_config() {
  LinkConfig c = sim_link_config();
  c.keepalive_ns = 500 * kUs;  // four probes before the 2 ms deadline (the sim rig uses 250 us)
  return c;
}

// Data frames carrying `n` numbered bodies, fed to l on VC 0.
void feed_bodies(Rig& rig, PacketPool& pool, Link& l, uint32_t first, uint32_t n) {
  for (uint32_t i = first; i < first + n; ++i) rig.feed(l, 0, packet_with(pool, make_body(i, 100)));
}

uint32_t data_frames(const RecordingClient& c) {
  uint32_t n = 0;
  for (const auto& f : c.frames) n += f.type == wire::FrameType::kData;
  return n;
}

}  // namespace

TEST_GROUP(LinkLiveness){};

// Both ends alive and silent: probes go both ways, are answered, and reach
// no client; the link never goes down.
TEST(LinkLiveness, AnIdleLinkStaysUpOnKeepalives) {
  const LinkConfig cfg = live_config();
  Rig rig(1, LinkModel{}, FaultPlan{}, cfg);
  const uint32_t a = rig.add_node(), b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  RecordingClient ca, cb;
  Link& la = rig.add_link(0, pa, &ca);
  Link& lb = rig.add_link(1, pb, &cb);
  rig.run_for(20 * cfg.down_after_ns);
  CHECK(la.up() && lb.up());
  CHECK(ca.downs.empty() && cb.downs.empty());
  CHECK(la.counters().keepalives >= 20);
  CHECK(lb.counters().keepalives >= 20);
  CHECK(ca.frames.empty() && cb.frames.empty());
  // An idle link costs a few events per keepalive period (80 periods here),
  // not a busy loop.
  CHECK(rig.fabric().stats().events < 3000);
}

// A neighbour that stops (a hung process: no frame, no carrier change) is
// found within the link-down time plus one keepalive period, on a link that
// had nothing to send.
TEST(LinkLiveness, AFrozenNeighbourIsFoundWithinTheConfiguredTime) {
  const LinkConfig cfg = live_config();
  Rig rig(1, LinkModel{}, FaultPlan{}, cfg);
  const uint32_t a = rig.add_node(), b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  RecordingClient ca, cb;
  Link& la = rig.add_link(0, pa, &ca);
  rig.add_link(1, pb, &cb);
  rig.run_for(3 * kMs);
  CHECK(la.up());
  rig.freeze(b);
  const uint64_t t0 = rig.now();
  while (la.up() && rig.now() < t0 + 4 * cfg.down_after_ns) rig.run_for(10 * kUs);
  CHECK(!la.up());
  const uint64_t found = rig.now() - t0;
  CHECK_TEXT(found <= cfg.down_after_ns + cfg.keepalive_ns + 20 * kUs, std::to_string(found).c_str());
  CHECK_TEXT(found + cfg.keepalive_ns >= cfg.down_after_ns, std::to_string(found).c_str());
  LONGS_EQUAL(1, ca.downs.size());
  CHECK(ca.downs[0].code() == Code::kLinkDown);
  CHECK_TEXT(ca.downs[0].message().find("node 0 port port0: link down: nothing heard from the neighbour for") !=
                 std::string::npos,
             ca.downs[0].message().c_str());
  CHECK(la.counters().keepalives >= 3);
}

// Both nodes read a real-like clock (their timers can fire late). Both
// stop running for three link-down times while a has data in flight to b
// (a job step holding each node's loop, both processes descheduled), then a
// runs again first.
TEST_GROUP(LinkSelfStall) {
  LinkConfig cfg = live_config();
  std::unique_ptr<Rig> rig;
  RecordingClient ca, cb;
  Link* la = nullptr;
  Link* lb = nullptr;
  uint32_t a = 0, b = 0;

  void setup() override {
    rig = std::make_unique<Rig>(1, LinkModel{}, FaultPlan{}, cfg);
    a = rig->add_real_clock_node();
    b = rig->add_real_clock_node();
    auto [pa, pb] = rig->cable(a, b);
    la = &rig->add_link(0, pa, &ca);
    lb = &rig->add_link(1, pb, &cb);
    rig->run_for(3 * kMs);
    CHECK(la->up() && lb->up());
    rig->freeze(b);
    feed_bodies(*rig, rig->pool(a), *la, 0, 3);
    rig->run_for(20 * kUs);
    UNSIGNED_LONGS_EQUAL(3, la->unacked());
    rig->freeze(a);
    rig->run_for(3 * cfg.down_after_ns);
    rig->freeze(a, false);
  }
  void teardown() override { rig.reset(); }
  static std::string first_down(const RecordingClient& x, const RecordingClient& y) {
    return !x.downs.empty() ? x.downs[0].message() : !y.downs.empty() ? y.downs[0].message() : "";
  }
};

// The first to run finds its timer late by far more than a stall grace: it
// asks its neighbour once more instead of declaring it dead, and the
// neighbour, running again a moment later, answers. Nothing goes down.
TEST(LinkSelfStall, ANodeThatWasNotRunningAsksBeforeBlamingItsNeighbour) {
  rig->run_for(cfg.down_after_ns / 8);  // less than the grace: a has asked and waits
  CHECK_TEXT(la->up(), first_down(ca, cb).c_str());
  CHECK(la->counters().self_stalls >= 1);
  rig->freeze(b, false);
  rig->run_for(2 * cfg.down_after_ns);
  CHECK_TEXT(la->up() && lb->up(), first_down(ca, cb).c_str());
  UNSIGNED_LONGS_EQUAL(0, la->unacked());
  LONGS_EQUAL(3, data_frames(cb));
  CHECK(ca.downs.empty() && cb.downs.empty());
}

// The neighbour gone for good: the node asks, and declares the link down a
// stall grace (a quarter of the link-down time) later, not at once and not
// a whole link-down time later.
TEST(LinkSelfStall, AfterItsOwnStallANodeStillFindsADeadNeighbourWithinAGrace) {
  const uint64_t t0 = rig->now();
  while (la->up() && rig->now() < t0 + 2 * cfg.down_after_ns) rig->run_for(10 * kUs);
  CHECK(!la->up());
  const uint64_t found = rig->now() - t0;
  const uint64_t grace = cfg.down_after_ns / 4;
  CHECK_TEXT(found >= grace && found <= grace + 20 * kUs, std::to_string(found).c_str());
  LONGS_EQUAL(1, ca.downs.size());
  CHECK_TEXT(ca.downs[0].message().find("link down: no progress for") != std::string::npos,
             ca.downs[0].message().c_str());
  CHECK(la->counters().self_stalls >= 1);
}

TEST_GROUP(LinkIdentity){};

// Two partitions cabled together: every data frame and ack is dropped and
// counted on both ends; hellos still reach the client (training names the
// other partition).
TEST(LinkIdentity, FramesOfAnotherPartitionAreDroppedAndCounted) {
  LinkConfig ca_cfg = sim_link_config(), cb_cfg = sim_link_config();
  ca_cfg.partition = wire::partition_tag("lab-a", 5);
  cb_cfg.partition = wire::partition_tag("lab-b", 5);
  Rig rig;
  const uint32_t a = rig.add_node(), b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  RecordingClient ca, cb;
  Link& la = rig.add_link(0, pa, &ca, ca_cfg);
  Link& lb = rig.add_link(1, pb, &cb, cb_cfg);
  feed_bodies(rig, rig.pool(a), la, 0, 5);
  feed_bodies(rig, rig.pool(b), lb, 100, 5);
  rig.run_for(1 * kMs);
  UNSIGNED_LONGS_EQUAL(0, data_frames(ca));
  UNSIGNED_LONGS_EQUAL(0, data_frames(cb));
  CHECK(la.counters().rx_foreign_partition >= 5);
  CHECK(lb.counters().rx_foreign_partition >= 5);
  CHECK(la.counters().retransmits > 0);  // nothing was ever acked
  // A hello passes, counted as foreign too.
  Packet* h = packet_with(rig.pool(a), std::vector<uint8_t>(sizeof(wire::HelloBody), 0));
  CHECK(la.send_raw(wire::FrameType::kHello, h));
  const uint64_t before = lb.counters().rx_foreign_partition;
  rig.run_for(10 * kUs);
  LONGS_EQUAL(1, cb.frames.size());
  CHECK(cb.frames[0].type == wire::FrameType::kHello);
  UNSIGNED_LONGLONGS_EQUAL(before + 1, lb.counters().rx_foreign_partition);
}

// Once training named the neighbour, frames whose Ethernet source names
// another node are dropped and counted; the trained neighbour's pass.
TEST(LinkIdentity, OnceTrainedOnlyTheNeighboursFramesPass) {
  LinkConfig cfg = sim_link_config();
  cfg.start_up = false;
  Rig rig(1, LinkModel{}, FaultPlan{}, cfg);
  const uint32_t a = rig.add_node(), b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  RecordingClient ca, cb;
  Link& la = rig.add_link(0, pa, &ca);
  Link& lb = rig.add_link(1, pb, &cb);
  CHECK(!la.up());
  Packet* early = packet_with(rig.pool(b), make_body(0, 10));
  CHECK(!lb.send(0, early));  // nothing goes before training
  early->free();
  // The rig gives every link the source address 02:54:01:02:03:port.
  const uint8_t right[3] = {1, 2, 3}, wrong[3] = {1, 2, 4};
  la.bring_up(7, 1000, right);
  lb.bring_up(1000, 7, wrong);
  feed_bodies(rig, rig.pool(a), la, 0, 3);
  feed_bodies(rig, rig.pool(b), lb, 10, 3);
  rig.run_for(500 * kUs);
  UNSIGNED_LONGS_EQUAL(0, data_frames(cb));  // b expects another node
  CHECK(lb.counters().rx_foreign_node >= 3);
  UNSIGNED_LONGS_EQUAL(3, data_frames(ca));  // a trained on b's node: its frames pass
  UNSIGNED_LONGLONGS_EQUAL(0, la.counters().rx_foreign_node);
}

TEST_GROUP(LinkWrap){};

// Streams each way over a lossy, reordering wire, the sequence numbers
// starting 40 below 2^32 (one side) and at 2^31 (the other): every frame
// arrives once, in order, intact, across the wrap.
TEST(LinkWrap, SequenceNumbersWrapAround2To32) {
  const Dims dims = dims_of(2, 1, 1);
  auto plan = parse_fault_plan("drop=0.05,dup=0.02,reorder=0.1", dims);
  CHECK(plan.is_ok());
  LinkConfig cfg = sim_link_config();
  cfg.isn = 0xffffffffu - 40;
  Rig rig(3, LinkModel{}, plan.value(), cfg);
  const uint32_t a = rig.add_node(), b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  const StreamSpec ab{71, 3000}, ba{72, 3000};
  StreamClient ca(rig.pool(a), ab, ba), cb(rig.pool(b), ba, ab);
  Link& la = rig.add_link(0, pa, &ca);
  Link& lb = rig.add_link(1, pb, &cb);
  ca.link = &la;
  cb.link = &lb;
  rig.loop(a).add_poller(&ca);
  rig.loop(b).add_poller(&cb);
  CHECK(rig.settle(50 * kMs) > 0);
  for (StreamClient* c : {&ca, &cb}) {
    CHECK_TEXT(c->errors == 0, c->error.c_str());
    UNSIGNED_LONGS_EQUAL(3000, c->received);
    CHECK(c->downs.empty());
  }
  CHECK(la.counters().retransmits + lb.counters().retransmits > 0);
  CHECK(la.unacked() == 0 && lb.unacked() == 0);
}

// Per-VC credit counts (mod 2^16 on the wire) starting just below the wrap,
// two buffers per VC: the sender never overruns the receiver across it.
TEST(LinkWrap, CreditCountsWrapAround2To16) {
  LinkConfig cfg = sim_link_config();
  cfg.credit_base = 0xffff - 3;
  for (uint16_t& c : cfg.rx_credits) c = 2;
  Rig rig(1, LinkModel{}, FaultPlan{}, cfg);
  const uint32_t a = rig.add_node(), b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  StreamSpec ab{81, 2000};
  ab.vc_mask = 0x1;  // one VC: its count wraps many times over
  const StreamSpec ba{82, 10};
  StreamClient ca(rig.pool(a), ab, ba), cb(rig.pool(b), ba, ab);
  Link& la = rig.add_link(0, pa, &ca);
  Link& lb = rig.add_link(1, pb, &cb);
  ca.link = &la;
  cb.link = &lb;
  rig.loop(a).add_poller(&ca);
  rig.loop(b).add_poller(&cb);
  CHECK(rig.settle(50 * kMs) > 0);
  CHECK_TEXT(cb.errors == 0, cb.error.c_str());
  UNSIGNED_LONGS_EQUAL(2000, cb.received);
  UNSIGNED_LONGLONGS_EQUAL(0, lb.counters().credit_violations);
  CHECK(la.counters().data_sent > 4);  // past the wrap (it sat 4 below it)
  UNSIGNED_LONGS_EQUAL(2, la.credits(0));  // all returned at the end, across the wrap
}

TEST_GROUP(LinkRetrain){};

// reset() takes a working link down quietly (the client is not told: the
// partition resets as a whole) and frees what it held; bring_up() with new
// initial sequence numbers carries data again.
TEST(LinkRetrain, ResetThenBringUpStartsOverOnNewSequenceNumbers) {
  LinkConfig cfg = sim_link_config();
  cfg.start_up = false;
  Rig rig(1, LinkModel{}, FaultPlan{}, cfg);
  const uint32_t a = rig.add_node(), b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  RecordingClient ca, cb;
  Link& la = rig.add_link(0, pa, &ca);
  Link& lb = rig.add_link(1, pb, &cb);
  const uint8_t peer[3] = {1, 2, 3};
  la.bring_up(10, 20, peer);
  lb.bring_up(20, 10, peer);
  feed_bodies(rig, rig.pool(a), la, 0, 40);
  rig.run_for(2 * kUs);  // part of it on the wire
  la.reset(error(Code::kReset, "test reset"));
  lb.reset(error(Code::kReset, "test reset"));
  CHECK(!la.up() && !lb.up());
  CHECK(ca.downs.empty() && cb.downs.empty());
  STRCMP_EQUAL("test reset", la.down_status().message().c_str());
  rig.run_for(1 * kMs);  // what was on the wire arrives at a link that is down: dropped
  CHECK(data_frames(cb) < 40);
  la.bring_up(0x80000000u, 5, peer);
  lb.bring_up(5, 0x80000000u, peer);
  CHECK(la.down_status().is_ok());
  // (Bodies the feeder still held go first, then the new ones.)
  feed_bodies(rig, rig.pool(a), la, 100, 30);
  CHECK(rig.settle() > 0);
  // Nothing arrived twice, and the new bodies arrived whole and in order.
  std::vector<std::vector<uint8_t>> got;
  for (const auto& f : cb.frames)
    if (f.type == wire::FrameType::kData) got.push_back(f.body);
  for (size_t i = 0; i < got.size(); ++i)
    for (size_t j = 0; j < i; ++j) CHECK(got[i] != got[j]);
  CHECK(got.size() >= 30);
  for (uint32_t i = 0; i < 30; ++i) CHECK(got[got.size() - 30 + i] == make_body(100 + i, 100));
  UNSIGNED_LONGLONGS_EQUAL(2, la.counters().trainings);
}

// Two ends configured with different receive buffers per VC: each hello
// advertises its own (0 for the default), and a sender keeps to what its
// peer advertised. A receiver that holds every buffer gets exactly that many
// frames and no more, and never one without a credit; a sender that assumed
// its own count instead (bring_up without the peer's) overruns it.
TEST(LinkRetrain, ASenderKeepsToTheBuffersItsPeerAdvertises) {
  LinkConfig big = sim_link_config(), small = sim_link_config();
  big.start_up = small.start_up = false;
  for (uint16_t& c : big.rx_credits) c = 16;
  for (uint16_t& c : small.rx_credits) c = 4;
  for (bool advertised : {true, false}) {
    Rig rig(1, LinkModel{}, FaultPlan{}, big);
    const uint32_t a = rig.add_node(), b = rig.add_node();
    auto [pa, pb] = rig.cable(a, b);
    RecordingClient ca, cb;
    cb.hold[0] = true;  // b keeps every buffer: a gets no credit back
    Link& la = rig.add_link(0, pa, &ca, big);
    Link& lb = rig.add_link(1, pb, &cb, small);
    UNSIGNED_LONGS_EQUAL(16, la.advertised_credits());
    UNSIGNED_LONGS_EQUAL(4, lb.advertised_credits());
    const uint8_t peer[3] = {1, 2, 3};
    la.bring_up(10, 20, peer, advertised ? Link::credits_of_hello(lb.advertised_credits()) : 0);
    lb.bring_up(20, 10, peer, Link::credits_of_hello(la.advertised_credits()));
    UNSIGNED_LONGS_EQUAL(advertised ? 4 : 16, la.credits(0));
    UNSIGNED_LONGS_EQUAL(16, lb.credits(0));
    feed_bodies(rig, rig.pool(a), la, 0, 12);
    rig.run_for(200 * kUs);
    UNSIGNED_LONGS_EQUAL(4, data_frames(cb));  // b delivers only what it had buffers for
    if (advertised) {
      UNSIGNED_LONGLONGS_EQUAL(0, lb.counters().credit_violations);
      UNSIGNED_LONGS_EQUAL(0, la.credits(0));
      cb.hold[0] = false;
      cb.release_held();
      rig.run_for(500 * kUs);
      UNSIGNED_LONGS_EQUAL(12, data_frames(cb));  // the rest once buffers come back
    } else {
      CHECK(lb.counters().credit_violations > 0);
    }
    cb.free_held();
  }
  // A link whose VCs all have the default count advertises 0, which its peer
  // reads as that default, whatever its own configuration: a 16-buffer end
  // sends a default one no more than 8.
  LinkConfig dflt = sim_link_config();
  dflt.start_up = false;
  for (uint16_t& c : dflt.rx_credits) c = tuning::kVcCredits;
  Rig rig(1, LinkModel{}, FaultPlan{}, big);
  const uint32_t a = rig.add_node(), b = rig.add_node();
  auto [pa, pb] = rig.cable(a, b);
  RecordingClient ca, cb;
  Link& la = rig.add_link(0, pa, &ca, big);
  Link& lb = rig.add_link(1, pb, &cb, dflt);
  UNSIGNED_LONGS_EQUAL(0, lb.advertised_credits());
  const uint8_t peer[3] = {1, 2, 3};
  la.bring_up(10, 20, peer, Link::credits_of_hello(lb.advertised_credits()));
  UNSIGNED_LONGS_EQUAL(tuning::kVcCredits, la.credits(0));
  LinkConfig mixed = dflt;
  mixed.rx_credits[2] = 3;
  auto [pc, pd] = rig.cable(a, b);
  (void)pd;
  RecordingClient cc;
  UNSIGNED_LONGS_EQUAL(3, rig.add_link(2, pc, &cc, mixed).advertised_credits());  // the fewest of any VC
}
