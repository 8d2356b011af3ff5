// The messenger's receive side, fed hand-built segments directly
// (Messenger::on_packet, no network): segments land straight in the posted
// buffer in any order; fields from the wire are bounded before anything is
// written (a segment whose offset + length wraps in 32 bits, lies beyond
// its message, or belongs to an oversized message is dropped and counted,
// and the bytes around the receive buffer stay untouched); truncation is an
// error naming both sizes; matching follows MPI's order (per source in send
// order, never a message that overtook an earlier one); a message spilled
// aside lands in a gated receive only once the gating send has read its
// bytes.
#include <cstring>
#include <memory>
#include <vector>

#include "netstack/p2p.h"
#include "tests/unit/netstack/net_rig.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::nettest;
using wire::MsgHeader;
using wire::MsgKind;
using wire::TorusHeader;

namespace {

constexpr uint32_t kHdr = sizeof(TorusHeader) + sizeof(MsgHeader);
const Dims kLine{{4, 1, 1}};

struct Seg {
  uint32_t src = 1;  // rank on the 4x1x1 line
  uint16_t ctx = 9;
  uint32_t seq = 0;
  uint32_t tag = 0;
  uint32_t total = 0;
  uint32_t offset = 0;
  std::vector<uint8_t> data;
};

}  // namespace

TEST_GROUP(Messenger) {
  std::unique_ptr<Rig> rig;
  NetStack* net = nullptr;
  std::unique_ptr<Messenger> m;

  void setup() override {
    rig = std::make_unique<Rig>();
    const uint32_t a = rig->add_node();
    net = &rig->add_stack(a, kLine, Coord{{0, 0, 0}});
    net->add_port(0, rig->add_port(a));
    MessengerConfig cfg;
    cfg.max_message = 1 << 20;
    m = std::make_unique<Messenger>(*net, cfg);
  }
  void teardown() override {
    m.reset();
    rig->teardown();
    rig.reset();
  }

  void feed(const Seg& s) {
    Packet* p = net->alloc();
    CHECK(p != nullptr);
    uint8_t* d = p->append(kHdr + static_cast<uint32_t>(s.data.size()));
    auto* th = reinterpret_cast<TorusHeader*>(d);
    std::memset(th, 0, sizeof *th);
    th->src[0] = static_cast<uint8_t>(s.src);
    th->type = static_cast<uint8_t>(wire::PacketType::kP2P);
    th->context.set(s.ctx);
    th->tag.set(s.seq);
    auto* mh = reinterpret_cast<MsgHeader*>(d + sizeof(TorusHeader));
    std::memset(mh, 0, sizeof *mh);
    mh->kind = static_cast<uint8_t>(MsgKind::kData);
    mh->tag.set(s.tag);
    mh->total.set(s.total);
    mh->offset.set(s.offset);
    if (!s.data.empty()) std::memcpy(d + kHdr, s.data.data(), s.data.size());
    m->on_packet(0, p);
  }

  static std::vector<uint8_t> bytes(uint32_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
    return v;
  }
};

TEST(Messenger, SegmentsLandInThePostedBufferInAnyOrder) {
  std::vector<uint8_t> buf(1000 + 64, 0xEE);  // 64 guard bytes after the receive's 1000
  RecvReq r;
  r.src = 1;
  r.context = 9;
  r.tag = 4;
  r.buf = buf.data();
  r.cap = 1000;
  CHECK(m->post(&r).is_ok());
  const auto msg = bytes(1000, 3);
  for (uint32_t off : {600u, 0u, 300u}) {
    const uint32_t n = off == 600 ? 400 : 300;
    feed(Seg{1, 9, 0, 4, 1000, off, std::vector<uint8_t>(msg.begin() + off, msg.begin() + off + n)});
  }
  CHECK(r.done());
  CHECK_TEXT(r.status().is_ok(), r.status().to_string().c_str());
  UNSIGNED_LONGLONGS_EQUAL(1000, r.length());
  CHECK(std::memcmp(buf.data(), msg.data(), 1000) == 0);
  for (size_t i = 1000; i < buf.size(); ++i) UNSIGNED_LONGS_EQUAL(0xEE, buf[i]);
  UNSIGNED_LONGLONGS_EQUAL(0, m->counters().unexpected);  // it was posted first: straight in
  UNSIGNED_LONGLONGS_EQUAL(3, m->counters().segs_received);
}

TEST(Messenger, FieldsFromTheWireAreBoundedBeforeAnythingIsWritten) {
  std::vector<uint8_t> buf(512 + 64, 0xEE);
  RecvReq r;
  r.src = kAnySource;
  r.context = 9;
  r.any_tag = true;
  r.buf = buf.data();
  r.cap = 512;
  CHECK(m->post(&r).is_ok());
  const auto data = bytes(512, 1);
  // offset + length wraps in 32 bits (0xFFFFFF00 + 512), of a 4 GiB - 1 message
  feed(Seg{1, 9, 0, 0, 0xFFFFFFFFu, 0xFFFFFF00u, data});
  // a message larger than the configured maximum (1 MiB)
  feed(Seg{1, 9, 0, 0, (1u << 20) + 1, 0, data});
  // an offset beyond the message
  feed(Seg{1, 9, 0, 0, 100, 200, std::vector<uint8_t>(8, 1)});
  // a segment running past the end of its message
  feed(Seg{1, 9, 0, 0, 600, 400, data});
  // an empty segment of a non-empty message
  feed(Seg{1, 9, 0, 0, 600, 0, {}});
  // a message number far beyond what the window allows in flight
  feed(Seg{1, 9, 1000, 0, 8, 0, std::vector<uint8_t>(8, 1)});
  UNSIGNED_LONGLONGS_EQUAL(6, m->counters().bad_segments);
  CHECK_FALSE(r.done());
  for (uint8_t b : buf) UNSIGNED_LONGS_EQUAL(0xEE, b);  // nothing written anywhere
  // A good message still arrives whole.
  feed(Seg{1, 9, 0, 7, 512, 0, data});
  CHECK(r.done() && r.status().is_ok());
  UNSIGNED_LONGS_EQUAL(7, r.msg_tag());
  CHECK(std::memcmp(buf.data(), data.data(), 512) == 0);
  for (size_t i = 512; i < buf.size(); ++i) UNSIGNED_LONGS_EQUAL(0xEE, buf[i]);
  // A segment disagreeing with its message's envelope (another total) is dropped.
  RecvReq r2;
  r2.src = 1;
  r2.context = 9;
  r2.any_tag = true;
  r2.buf = buf.data();
  r2.cap = 512;
  CHECK(m->post(&r2).is_ok());
  feed(Seg{1, 9, 1, 0, 512, 0, std::vector<uint8_t>(256, 5)});
  feed(Seg{1, 9, 1, 0, 1024, 256, std::vector<uint8_t>(256, 6)});
  UNSIGNED_LONGLONGS_EQUAL(7, m->counters().bad_segments);
  CHECK_FALSE(r2.done());
}

TEST(Messenger, ALongerMessageIsTruncatedToTheBufferAndSaysSo) {
  std::vector<uint8_t> buf(100 + 64, 0xEE);
  RecvReq r;
  r.src = 1;
  r.context = 9;
  r.tag = 1;
  r.buf = buf.data();
  r.cap = 100;
  CHECK(m->post(&r).is_ok());
  feed(Seg{1, 9, 0, 1, 300, 0, bytes(300, 9)});
  CHECK(r.done());
  CHECK(r.status().code() == Code::kOutOfRange);
  STRCMP_CONTAINS("300 bytes", r.status().message().c_str());
  STRCMP_CONTAINS("100-byte receive", r.status().message().c_str());
  UNSIGNED_LONGLONGS_EQUAL(300, r.length());
  for (size_t i = 100; i < buf.size(); ++i) UNSIGNED_LONGS_EQUAL(0xEE, buf[i]);
}

TEST(Messenger, MatchingFollowsTheSendersOrderAndTheTags) {
  // Message 1 (tag 6) overtakes message 0 (tag 5) on another path.
  feed(Seg{1, 9, 1, 6, 4, 0, {6, 6, 6, 6}});
  std::vector<uint8_t> a(4), b(4), c(4);
  RecvReq any;
  any.src = 1;
  any.context = 9;
  any.any_tag = true;
  any.buf = a.data();
  any.cap = 4;
  CHECK(m->post(&any).is_ok());
  CHECK_FALSE(any.done());  // message 0 has not begun: message 1 may not be taken before it
  feed(Seg{1, 9, 0, 5, 4, 0, {5, 5, 5, 5}});
  CHECK(any.done());
  UNSIGNED_LONGS_EQUAL(5, any.msg_tag());  // the earliest of the source
  // By tag: message 2 (tag 8), then a receive for tag 8 skips an earlier tag 7.
  feed(Seg{1, 9, 2, 7, 4, 0, {7, 7, 7, 7}});
  feed(Seg{1, 9, 3, 8, 4, 0, {8, 8, 8, 8}});
  RecvReq t8;
  t8.src = 1;
  t8.context = 9;
  t8.tag = 8;
  t8.buf = b.data();
  t8.cap = 4;
  CHECK(m->post(&t8).is_ok());
  CHECK(t8.done() && b[0] == 8);
  RecvReq rest;
  rest.src = kAnySource;
  rest.context = 9;
  rest.any_tag = true;
  rest.buf = c.data();
  rest.cap = 4;
  CHECK(m->post(&rest).is_ok());
  CHECK(rest.done() && c[0] == 6);  // the earliest left: message 1
  CHECK(m->post(&rest).is_ok());      // a finished receive may be posted again
  CHECK(rest.done() && c[0] == 7);
  CHECK(a[0] == 5);
  UNSIGNED_LONGLONGS_EQUAL(0, m->counters().spilled);  // held frames, written when taken: no second copy
  // Another context never matches.
  feed(Seg{1, 10, 4, 1, 4, 0, {1, 1, 1, 1}});
  MsgEnvelope env;
  CHECK_FALSE(m->probe(1, 9, 0, true, &env));
  CHECK(m->probe(1, 10, 0, true, &env));
  UNSIGNED_LONGS_EQUAL(10, env.context);
  UNSIGNED_LONGLONGS_EQUAL(4, env.length);
}

TEST(Messenger, WildcardTagsNeverTakeTheRuntimesReservedTags) {
  // A reserved-tag message (the MPI library's failure reports) arrives first
  // on the context an application also uses.
  feed(Seg{1, 9, 0, kReservedTagBit | 0x70u, 4, 0, {9, 9, 9, 9}});
  MsgEnvelope env;
  CHECK_FALSE(m->probe(kAnySource, 9, 0, true, &env));  // a wildcard probe does not see it
  std::vector<uint8_t> a(4), b(4);
  RecvReq any;
  any.src = kAnySource;
  any.context = 9;
  any.any_tag = true;
  any.buf = a.data();
  any.cap = 4;
  CHECK(m->post(&any).is_ok());
  CHECK_FALSE(any.done());
  feed(Seg{1, 9, 1, 3, 4, 0, {3, 3, 3, 3}});
  CHECK(any.done());
  UNSIGNED_LONGS_EQUAL(3, any.msg_tag());  // the application's message, not the earlier reserved one
  RecvReq exact;
  exact.src = kAnySource;
  exact.context = 9;
  exact.tag = kReservedTagBit | 0x70u;
  exact.buf = b.data();
  exact.cap = 4;
  CHECK(m->post(&exact).is_ok());
  CHECK(exact.done() && b[0] == 9);  // a receive naming the tag takes it
}

// Message numbers started just below 2^32 (MessengerConfig::first_seq, the
// same on every node): order, overtaking and staleness hold across the wrap.
TEST(Messenger, MessageNumbersWrapAround2To32) {
  MessengerConfig cfg;
  cfg.max_message = 1 << 20;
  cfg.first_seq = 0xFFFFFFFEu;
  m = std::make_unique<Messenger>(*net, cfg);
  // 0xFFFFFFFF (tag 6) overtakes 0xFFFFFFFE (tag 5).
  feed(Seg{1, 9, 0xFFFFFFFFu, 6, 4, 0, {6, 6, 6, 6}});
  std::vector<uint8_t> a(4), c(4);
  RecvReq any;
  any.src = 1;
  any.context = 9;
  any.any_tag = true;
  any.buf = a.data();
  any.cap = 4;
  CHECK(m->post(&any).is_ok());
  CHECK_FALSE(any.done());  // the earlier message has not begun
  feed(Seg{1, 9, 0xFFFFFFFEu, 5, 4, 0, {5, 5, 5, 5}});
  CHECK(any.done());
  UNSIGNED_LONGS_EQUAL(5, any.msg_tag());
  // Past the wrap: 1 (tag 8) before 0 (tag 7); taken in the sender's order.
  feed(Seg{1, 9, 1, 8, 4, 0, {8, 8, 8, 8}});
  feed(Seg{1, 9, 0, 7, 4, 0, {7, 7, 7, 7}});
  for (uint8_t want : {6, 7, 8}) {
    RecvReq r;
    r.src = 1;
    r.context = 9;
    r.any_tag = true;
    r.buf = c.data();
    r.cap = 4;
    CHECK(m->post(&r).is_ok());
    CHECK(r.done());
    CHECK_TEXT(r.status().is_ok(), r.status().to_string().c_str());
    UNSIGNED_LONGS_EQUAL(want, c[0]);
  }
  // A duplicate from before the wrap is stale, not a new message.
  const uint64_t stale = m->counters().stale;
  feed(Seg{1, 9, 0xFFFFFFFFu, 6, 4, 0, {6, 6, 6, 6}});
  UNSIGNED_LONGLONGS_EQUAL(stale + 1, m->counters().stale);
  MsgEnvelope env;
  CHECK_FALSE(m->probe(1, 9, 0, true, &env));  // nothing left waiting
  UNSIGNED_LONGLONGS_EQUAL(0, m->counters().held_bytes);
}

// Send handles started just below 2^64 (MessengerConfig::first_handle): the
// handles across the wrap are distinct and never 0 (the "no send" value),
// each is done once its message was taken, and a handle never issued (0,
// the next one, one before the first) is never reported done.
TEST(Messenger, SendHandlesWrapAround2To64AndSkipZero) {
  MessengerConfig cfg;
  cfg.max_message = 1 << 20;
  cfg.first_handle = ~uint64_t{0} - 1;
  m = std::make_unique<Messenger>(*net, cfg);
  net->set_handler(wire::PacketType::kP2P, m.get());  // messages to itself come back through the stack
  const Coord self{{0, 0, 0}};
  std::vector<uint8_t> out{1, 2, 3, 4}, in(4);
  std::vector<uint64_t> handles;
  for (uint32_t i = 0; i < 3; ++i) {
    out[0] = static_cast<uint8_t>(10 + i);
    RecvReq r;
    r.src = 0;
    r.context = 9;
    r.tag = i;
    r.buf = in.data();
    r.cap = in.size();
    CHECK(m->post(&r).is_ok());
    auto h = m->send(self, 9, i, out.data(), out.size());
    CHECK_TEXT(h.is_ok(), h.status().to_string().c_str());
    CHECK(r.done());
    CHECK_TEXT(r.status().is_ok(), r.status().to_string().c_str());
    UNSIGNED_LONGS_EQUAL(10 + i, in[0]);
    CHECK(m->send_done(*h));
    handles.push_back(*h);
  }
  UNSIGNED_LONGLONGS_EQUAL(~uint64_t{0} - 1, handles[0]);
  UNSIGNED_LONGLONGS_EQUAL(~uint64_t{0}, handles[1]);
  UNSIGNED_LONGLONGS_EQUAL(1, handles[2]);  // 0 skipped
  CHECK_FALSE(m->send_done(0));
  CHECK_FALSE(m->send_done(2));                  // not issued yet
  CHECK_FALSE(m->send_done(~uint64_t{0} - 2));   // before the first
}

// Receives are filed by source (any-source ones on a list of their own), yet
// a message still takes the earliest posted receive that fits, across the
// lists; a receive naming its source finds that source's unexpected message
// among other sources' earlier ones.
TEST(Messenger, ReceivesOfOneSourceAndOfAnySourceMatchInPostingOrder) {
  std::vector<std::vector<uint8_t>> buf(6, std::vector<uint8_t>(4, 0));
  RecvReq r[6];
  auto post = [&](int i, int32_t src, uint32_t tag, bool any_tag) {
    r[i].src = src;
    r[i].context = 9;
    r[i].tag = tag;
    r[i].any_tag = any_tag;
    r[i].buf = buf[i].data();
    r[i].cap = 4;
    CHECK(m->post(&r[i]).is_ok());
  };
  post(0, 1, 5, false);           // rank 1, tag 5
  post(1, kAnySource, 5, false);  // anyone, tag 5
  post(2, 2, 5, false);           // rank 2, tag 5
  post(3, 1, 0, true);            // rank 1, any tag
  feed(Seg{2, 9, 0, 5, 4, 0, {1, 1, 1, 1}});
  CHECK(r[1].done() && buf[1][0] == 1);  // the any-source receive was posted before rank 2's
  CHECK_FALSE(r[2].done());
  feed(Seg{1, 9, 0, 5, 4, 0, {2, 2, 2, 2}});
  CHECK(r[0].done() && buf[0][0] == 2);
  feed(Seg{1, 9, 1, 5, 4, 0, {3, 3, 3, 3}});
  CHECK(r[3].done() && buf[3][0] == 3);
  feed(Seg{2, 9, 1, 5, 4, 0, {4, 4, 4, 4}});
  CHECK(r[2].done() && buf[2][0] == 4);
  // Unexpected: rank 3's message first, then rank 1's.
  feed(Seg{3, 9, 0, 7, 4, 0, {5, 5, 5, 5}});
  feed(Seg{1, 9, 2, 7, 4, 0, {6, 6, 6, 6}});
  post(4, 1, 7, false);
  CHECK(r[4].done() && buf[4][0] == 6);
  post(5, kAnySource, 7, false);
  CHECK(r[5].done() && buf[5][0] == 5);
  UNSIGNED_LONGLONGS_EQUAL(6, m->counters().msgs_received);
  // A source outside the partition (4 nodes) is refused, by name.
  RecvReq bad;
  bad.src = 4;
  bad.context = 9;
  Status st = m->post(&bad);
  CHECK_FALSE(st.is_ok());
  STRCMP_CONTAINS("source rank 4 is outside the partition (4 nodes)", st.message().c_str());
  // So is a destination, by rank and by coordinates, and nothing leaves.
  const uint8_t byte = 1;
  const uint64_t sent = m->counters().msgs_sent;
  auto by_rank = m->send_rank(4, 9, 1, &byte, 1);
  CHECK_FALSE(by_rank.is_ok());
  STRCMP_CONTAINS("destination rank 4 is outside the partition (4 nodes)", by_rank.status().message().c_str());
  auto by_coord = m->send(Coord{{4, 0, 0}}, 9, 1, &byte, 1);
  CHECK_FALSE(by_coord.is_ok());
  STRCMP_CONTAINS("destination 4,0,0 is outside the partition", by_coord.status().message().c_str());
  UNSIGNED_LONGLONGS_EQUAL(sent, m->counters().msgs_sent);
}

// A completion log collects the cookies of the receives that completed, in
// completion order; past its room it says so (overflow) instead.
TEST(Messenger, ACompletionLogListsTheReceivesThatCompleted) {
  uint32_t slots[2] = {0, 0};
  CompletionLog log;
  log.slots = slots;
  log.cap = 2;
  std::vector<uint8_t> buf(12, 0);
  RecvReq r[3];
  for (uint32_t i = 0; i < 3; ++i) {
    r[i].src = 1;
    r[i].context = 9;
    r[i].tag = i;
    r[i].buf = buf.data() + 4 * i;
    r[i].cap = 4;
    r[i].log = &log;
    r[i].cookie = 10 + i;
    CHECK(m->post(&r[i]).is_ok());
  }
  feed(Seg{1, 9, 0, 2, 4, 0, {1, 1, 1, 1}});
  feed(Seg{1, 9, 1, 0, 4, 0, {2, 2, 2, 2}});
  UNSIGNED_LONGS_EQUAL(2, log.n);
  UNSIGNED_LONGS_EQUAL(12, slots[0]);
  UNSIGNED_LONGS_EQUAL(10, slots[1]);
  CHECK_FALSE(log.overflow);
  feed(Seg{1, 9, 2, 1, 4, 0, {3, 3, 3, 3}});
  CHECK(r[1].done());
  CHECK(log.overflow);
  UNSIGNED_LONGS_EQUAL(2, log.n);
}

// An in-place exchange with itself: a receive into x, gated by our send of
// x, takes a message that arrived earlier and was spilled aside. The
// message lands only once the send has read all of x (before, it landed at
// once, and the send carried parts of it instead of x's own bytes).
TEST(Messenger, ASpilledMessageWaitsForItsReceivesGate) {
  MessengerConfig cfg;
  cfg.max_message = 1 << 20;
  cfg.window = 4;          // the send of x stalls after 4 segments...
  cfg.max_held = 1;        // ...held frames are spilled at once...
  cfg.store_cap = 50000;   // ...but only the first message fits the store
  m = std::make_unique<Messenger>(*net, cfg);
  net->set_handler(wire::PacketType::kP2P, m.get());
  const Coord self{{0, 0, 0}};
  constexpr uint32_t kLen = 40000;
  const std::vector<uint8_t> other = bytes(kLen, 11), mine = bytes(kLen, 99);
  std::vector<uint8_t> x = mine, y(kLen, 0);
  auto pump = [&](auto done) {
    for (int i = 0; i < 1000 && !done(); ++i) m->poll();
    return done();
  };
  // The message for x (tag 5) arrives first, no receive for it: spilled whole.
  auto h1 = m->send(self, 9, 5, other.data(), kLen);
  CHECK(h1.is_ok());
  CHECK(pump([&] { return m->send_done(*h1); }));
  UNSIGNED_LONGLONGS_EQUAL(1, m->counters().spilled);
  // Our send of x (tag 6): its frames stay held (the store is full), so it
  // stops after its window.
  auto h2 = m->send(self, 9, 6, x.data(), kLen);
  CHECK(h2.is_ok());
  pump([] { return false; });
  CHECK_FALSE(m->send_done(*h2));
  CHECK(m->counters().store_full > 0);
  auto from_self = [&](RecvReq* q, uint32_t tag, uint8_t* buf) {
    q->src = 0;
    q->context = 9;
    q->tag = tag;
    q->buf = buf;
    q->cap = kLen;
  };
  // The receive into x, gated by that send: the spilled message must wait.
  RecvReq r;
  from_self(&r, 5, x.data());
  r.gate = *h2;
  CHECK(m->post(&r).is_ok());
  pump([] { return false; });
  CHECK_FALSE(r.done());
  CHECK(x == mine);
  // Taking the send's message lets it finish; then the spilled one lands.
  RecvReq ry;
  from_self(&ry, 6, y.data());
  CHECK(m->post(&ry).is_ok());
  CHECK(pump([&] { return ry.done() && r.done(); }));
  CHECK_TEXT(r.status().is_ok(), r.status().to_string().c_str());
  CHECK(y == mine);   // the send carried x's own bytes
  CHECK(x == other);  // and x holds the message
  UNSIGNED_LONGLONGS_EQUAL(0, m->counters().held_bytes);
}
