// The seeded fault plan on sim links: determinism of the whole trace, the
// rate of each fault kind, and what each fault does to the frames.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>

#include "sim_test_node.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

constexpr uint32_t kFrames = 20000;
constexpr uint32_t kLen = 64;                // 32 ns on the default 2 B/ns wire
constexpr uint64_t kSer = 32;
constexpr uint64_t kLatency = tuning::kSimLinkLatencyNs;

// `hits` out of `n` trials is within five binomial standard deviations of p.
void check_rate(const char* what, uint64_t hits, uint64_t n, double p) {
  const double sd = std::sqrt(p * (1 - p) / static_cast<double>(n));
  const double f = static_cast<double>(hits) / static_cast<double>(n);
  const std::string msg = std::string(what) + ": " + std::to_string(hits) + " of " + std::to_string(n) +
                          " is " + std::to_string(f) + ", expected " + std::to_string(p);
  CHECK_TEXT(std::fabs(f - p) <= 5 * sd, msg.c_str());
}

// kFrames frames of kLen bytes over one link, sender backpressured, receiver
// draining; returns the receiver's log. The wire never idles, so frame i
// leaves the wire at kSer * (i + 1).
struct OneLink {
  Rig rig;
  TestNode& a;
  TestNode& b;
  explicit OneLink(const FaultPlan& plan, uint64_t seed = 42, bool keep_bytes = false)
      : rig(seed, LinkModel{}, plan), a(rig.add_node()), b(rig.add_node()) {
    rig.cable(a, b);
    b.keep_bytes = keep_bytes;
    a.send(a.ports[0], kFrames, kLen);
    rig.fabric.wake(a.id, 0);
    rig.fabric.run();
    CHECK_FALSE(a.pending());
  }
  const FabricStats& stats() const { return rig.fabric.stats(); }
};

uint64_t base_arrival(uint32_t seq) { return kSer * (seq + 1) + kLatency; }

std::set<uint32_t> received_seqs(const TestNode& n) {
  std::set<uint32_t> s;
  for (const auto& r : n.rx) s.insert(r.seq);
  return s;
}

// Several nodes and links, every direction busy, a plan with every fault kind.
struct Outcome {
  uint64_t hash;
  FabricStats stats;
  std::vector<std::vector<uint32_t>> seqs;   // per node: payload seq numbers in arrival order
  std::vector<std::vector<uint64_t>> times;  // per node: arrival times
};

Outcome run_mesh(uint64_t seed, const FaultPlan& plan) {
  Rig rig(seed, LinkModel{}, plan);
  for (int i = 0; i < 4; ++i) rig.add_node();
  auto& n = rig.nodes;
  rig.cable(*n[0], *n[1]);
  rig.cable(*n[1], *n[2]);
  rig.cable(*n[2], *n[3]);
  rig.cable(*n[3], *n[0]);
  rig.cable(*n[0], *n[2]);  // a chord
  uint32_t k = 0;
  for (auto& node : n) {
    for (SimPort* p : node->ports) {
      node->send(p, 400, 64 + 97 * (k % 9), k * 1000);  // streams of different lengths
      ++k;
    }
    rig.fabric.wake(node->id, 0);
  }
  rig.fabric.run();
  Outcome o{rig.fabric.trace_hash(), rig.fabric.stats(), {}, {}};
  for (auto& node : n) {
    CHECK_FALSE(node->pending());
    o.seqs.emplace_back();
    o.times.emplace_back();
    node->arrivals(&o.seqs.back(), &o.times.back());
  }
  return o;
}

std::string counters(const FabricStats& s) { return format_counters(&s, kFabricStatsFields, kFabricStatsFieldCount, true); }

}  // namespace

TEST_GROUP(SimFaults){};

TEST(SimFaults, SameSeedGivesTheSameTraceDifferentSeedDoesNot) {
  const FaultPlan plan = plan_of("drop=0.03,corrupt=0.03,dup=0.03,reorder=0.05,delay=1us,jitter=200ns");
  const Outcome a = run_mesh(7, plan);
  const Outcome b = run_mesh(7, plan);
  const Outcome c = run_mesh(8, plan);

  // Every fault kind happened, and the books balance.
  const FabricStats& s = a.stats;
  UNSIGNED_LONGLONGS_EQUAL(10 * 400, s.frames_offered);
  CHECK(s.dropped > 0 && s.corrupted > 0 && s.duplicated > 0 && s.reordered > 0);
  UNSIGNED_LONGLONGS_EQUAL(s.frames_offered + s.duplicated,
                           s.frames_delivered + s.dropped + s.cut_dropped + s.rx_overflow + s.oversize);

  UNSIGNED_LONGLONGS_EQUAL(a.hash, b.hash);
  STRCMP_EQUAL(counters(a.stats).c_str(), counters(b.stats).c_str());
  CHECK(a.seqs == b.seqs);
  CHECK(a.times == b.times);

  CHECK(a.hash != c.hash);
  CHECK(a.seqs != c.seqs);  // a different pattern of drops, dups and reorders
  CHECK(counters(a.stats) != counters(c.stats));
}

TEST(SimFaults, WithoutRandomFaultsTheTraceDoesNotDependOnTheSeed) {
  const FaultPlan plan = plan_of("delay=2us");
  const Outcome a = run_mesh(1, plan);
  const Outcome b = run_mesh(2, plan);
  UNSIGNED_LONGLONGS_EQUAL(a.hash, b.hash);
  UNSIGNED_LONGLONGS_EQUAL(4000, a.stats.frames_delivered);
  // ...but it does depend on the traffic.
  CHECK(a.hash != run_mesh(1, plan_of("delay=3us")).hash);
}

TEST(SimFaults, DropRate) {
  OneLink l(plan_of("drop=0.05"));
  const FabricStats& s = l.stats();
  UNSIGNED_LONGLONGS_EQUAL(kFrames, s.frames_offered);
  check_rate("drop", s.dropped, kFrames, 0.05);
  UNSIGNED_LONGLONGS_EQUAL(kFrames - s.dropped, l.b.rx.size());
  UNSIGNED_LONGLONGS_EQUAL(0, s.corrupted + s.duplicated + s.reordered + s.cut_dropped);
  // The survivors arrive in order and on time.
  uint32_t last = 0;
  for (size_t i = 0; i < l.b.rx.size(); ++i) {
    const auto& r = l.b.rx[i];
    if (i) CHECK(r.seq > last);
    last = r.seq;
    UNSIGNED_LONGLONGS_EQUAL(base_arrival(r.seq), r.time);
  }
  UNSIGNED_LONGLONGS_EQUAL(0, l.a.pool.stats().in_use);
}

TEST(SimFaults, DropPatternDependsOnTheSeedOnly) {
  OneLink x(plan_of("drop=0.05"), 1);
  OneLink y(plan_of("drop=0.05"), 2);
  CHECK(received_seqs(x.b) != received_seqs(y.b));
  // Other fault kinds switched on do not move the drops: every frame draws
  // the same random numbers whatever the plan's rates are.
  OneLink z(plan_of("drop=0.05,corrupt=0.2,dup=0.1,reorder=0.3,jitter=100ns"), 1, true);
  std::set<uint32_t> survivors;
  const std::set<uint32_t> want = received_seqs(x.b);
  // z may corrupt the seq field, so identify frames by content: a frame is
  // seq s if it differs from expected_frame(s) in at most one bit.
  for (const auto& r : z.b.rx) {
    uint32_t s = r.seq;
    if (bit_difference(r.bytes, expected_frame(s, kLen)) > 1) {
      // The flipped bit is in the seq field itself: find the one-bit neighbour.
      for (int bit = 0; bit < 32; ++bit) {
        const uint32_t t = s ^ (1u << bit);
        if (t < kFrames && bit_difference(r.bytes, expected_frame(t, kLen)) == 1) { s = t; break; }
      }
    }
    survivors.insert(s);
  }
  CHECK(survivors == want);
  UNSIGNED_LONGLONGS_EQUAL(x.stats().dropped, z.stats().dropped);
}

TEST(SimFaults, CorruptFlipsExactlyOneBit) {
  OneLink l(plan_of("corrupt=0.01"), 42, true);
  const FabricStats& s = l.stats();
  check_rate("corrupt", s.corrupted, kFrames, 0.01);
  LONGS_EQUAL(kFrames, l.b.rx.size());  // nothing lost, nothing reordered
  uint64_t flipped = 0;
  std::set<int> bit_positions;
  for (uint32_t i = 0; i < kFrames; ++i) {
    const auto& r = l.b.rx[i];
    const std::vector<uint8_t> sent = expected_frame(i, kLen);
    const int diff = bit_difference(r.bytes, sent);
    CHECK_TEXT(diff == 0 || diff == 1, std::to_string(i).c_str());
    if (diff == 1) {
      ++flipped;
      for (uint32_t b = 0; b < kLen; ++b)
        if (r.bytes[b] != sent[b]) bit_positions.insert(static_cast<int>(b * 8 + __builtin_ctz(r.bytes[b] ^ sent[b])));
    }
    UNSIGNED_LONGLONGS_EQUAL(base_arrival(i), r.time);
  }
  UNSIGNED_LONGLONGS_EQUAL(s.corrupted, flipped);
  CHECK(bit_positions.size() > 100);  // spread over the frame (512 bit positions)
}

TEST(SimFaults, DuplicatesAreByteIdenticalCopies) {
  OneLink l(plan_of("dup=0.01"), 42, true);
  const FabricStats& s = l.stats();
  check_rate("dup", s.duplicated, kFrames, 0.01);
  UNSIGNED_LONGLONGS_EQUAL(0, s.no_buffer);
  UNSIGNED_LONGLONGS_EQUAL(kFrames + s.duplicated, l.b.rx.size());
  uint32_t next = 0;
  uint64_t copies = 0;
  for (size_t i = 0; i < l.b.rx.size(); ++i) {
    const auto& r = l.b.rx[i];
    if (next < kFrames && r.bytes == expected_frame(next, kLen)) {
      UNSIGNED_LONGLONGS_EQUAL(base_arrival(next), r.time);
      ++next;
      continue;
    }
    // Not the next original: it must be a copy of the frame just before it, 1 ns later.
    CHECK(i > 0);
    CHECK(r.bytes == l.b.rx[i - 1].bytes);
    UNSIGNED_LONGLONGS_EQUAL(l.b.rx[i - 1].time + 1, r.time);
    ++copies;
  }
  UNSIGNED_LONGS_EQUAL(kFrames, next);
  UNSIGNED_LONGLONGS_EQUAL(s.duplicated, copies);
  // The sender's buffers all went back at once; every arriving frame, copies
  // included, got a buffer from the receiver's pool.
  UNSIGNED_LONGLONGS_EQUAL(0, l.a.pool.stats().in_use);
  UNSIGNED_LONGLONGS_EQUAL(kFrames + s.duplicated, l.b.pool.stats().allocs);
  UNSIGNED_LONGLONGS_EQUAL(0, l.b.pool.stats().in_use);
}

TEST(SimFaults, DuplicateWithoutABufferIsCountedNotDelivered) {
  // The receiving port's pool has room for exactly one frame (outlives rig),
  // and the receiver never drains: the original takes the buffer, the copy
  // arriving 1 ns later finds none.
  HeapPacketPool one(2048, 1);
  Rig rig(1, LinkModel{}, plan_of("dup=1"));
  TestNode& a = rig.add_node();
  TestNode& b = rig.add_node();
  b.drain = false;
  SimPort* tx = a.add_port();
  SimPort* rx = rig.fabric.add_port(b.id, "tight", &one, 1500);
  rig.fabric.connect(tx, rx);
  CHECK(a.send_now(tx, 5, 100));
  rig.fabric.run();
  UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.stats().duplicated);
  UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.stats().no_buffer);
  UNSIGNED_LONGLONGS_EQUAL(1, rig.fabric.stats().frames_delivered);
  UNSIGNED_LONGS_EQUAL(1, rx->rx_queued());
  UNSIGNED_LONGLONGS_EQUAL(1, rx->stats().rx_dropped);
  UNSIGNED_LONGLONGS_EQUAL(1, one.stats().exhausted);
  UNSIGNED_LONGLONGS_EQUAL(0, a.pool.stats().in_use);  // the sender's buffer went back at transmit
}

TEST(SimFaults, ReorderLetsLaterFramesOvertake) {
  OneLink l(plan_of("reorder=0.05"));
  const FabricStats& s = l.stats();
  check_rate("reorder", s.reordered, kFrames, 0.05);
  LONGS_EQUAL(kFrames, l.b.rx.size());
  // Everything arrives exactly once...
  std::set<uint32_t> seqs = received_seqs(l.b);
  UNSIGNED_LONGS_EQUAL(kFrames, seqs.size());
  UNSIGNED_LONGS_EQUAL(kFrames - 1, *seqs.rbegin());
  // ...but not in order: count arrivals that come after a higher sequence number.
  uint32_t highest = 0;
  uint64_t late = 0, held = 0;
  for (size_t i = 0; i < l.b.rx.size(); ++i) {
    const auto& r = l.b.rx[i];
    if (i && r.seq < highest) ++late;
    highest = std::max(highest, r.seq);
    const uint64_t extra = r.time - base_arrival(r.seq);
    CHECK_TEXT(extra <= tuning::kSimReorderHoldNs, std::to_string(r.seq).c_str());
    if (extra > 0) ++held;
  }
  UNSIGNED_LONGLONGS_EQUAL(s.reordered, held);  // only held frames are late
  CHECK(late > 0);
  // A frame held up to 2 us is overtaken by most of the ~60 frames behind it.
  CHECK(late >= s.reordered / 2);
}

TEST(SimFaults, JitterStaysWithinItsBound) {
  OneLink l(plan_of("jitter=500ns,delay=1us"));
  LONGS_EQUAL(kFrames, l.b.rx.size());
  uint64_t lo = kNever, hi = 0;
  for (const auto& r : l.b.rx) {
    const uint64_t base = base_arrival(r.seq) + 1000;
    CHECK(r.time >= base);
    const uint64_t extra = r.time - base;
    CHECK(extra <= 500);
    lo = std::min(lo, extra);
    hi = std::max(hi, extra);
  }
  CHECK(lo <= 5);  // both ends of [0, 500] are reached (20,000 draws)
  CHECK(hi >= 495);
  UNSIGNED_LONGLONGS_EQUAL(0, l.stats().dropped + l.stats().corrupted + l.stats().duplicated + l.stats().reordered);
}

TEST(SimFaults, FaultsDrawPerDirection) {
  // Traffic in one direction does not shift the other direction's pattern.
  auto drops_b_to_a = [](bool a_sends) {
    Rig rig(3, LinkModel{}, plan_of("drop=0.1"));
    TestNode& a = rig.add_node();
    TestNode& b = rig.add_node();
    rig.cable(a, b);
    if (a_sends) a.send(a.ports[0], 3000, 64);
    b.send(b.ports[0], 2000, 64);
    rig.fabric.wake(a.id, 0);
    rig.fabric.wake(b.id, 0);
    rig.fabric.run();
    return received_seqs(a);
  };
  const auto quiet = drops_b_to_a(false);
  const auto busy = drops_b_to_a(true);
  CHECK(quiet.size() < 2000);
  CHECK(quiet == busy);
}
