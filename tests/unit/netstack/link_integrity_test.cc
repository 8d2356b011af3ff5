// Link over a medium that guarantees frame integrity: two io_uring ports on
// an AF_UNIX socketpair (real ports, real kernel), which declare
// PortInfo::medium_integrity. There data and acks leave without a CRC
// (kLinkNoCrc, crc 0) and hellos with one; a receiver skips the check only
// for a flagged frame on its own port with integrity, never for a hello, and
// still checks every unflagged frame. (A port without integrity refusing
// flagged frames, and the sim fabric's corruption being caught: link_test.cc.)
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/event_loop.h"
#include "drivers/uring/uring_port.h"
#include "net_rig.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::nettest;
using wire::FrameType;
using wire::LinkHeader;

namespace {

constexpr uint32_t kPoolBuf = kUringMaxFrame + tuning::kPacketHeadroom;
constexpr uint32_t kBigBody = kUringMaxFrame - kOverhead;  // a jumbo frame's body

// The CRC field a frame would carry, computed by the bitwise reference.
uint32_t wire_crc(const Packet* f) {
  std::vector<uint8_t> covered(f->data() + sizeof(wire::EthHeader), f->data() + f->len);
  for (int i = 28; i < 32; ++i) covered.at(i) = 0;
  return ref_crc32c(covered.data(), covered.size());
}

uint32_t count_type(const std::vector<Packet*>& frames, FrameType type) {
  uint32_t n = 0;
  for (Packet* p : frames) n += lh_of(p)->type == static_cast<uint8_t>(type);
  return n;
}

// Polls the links it is given; the loop runs their timers.
class LinkPoller final : public Poller {
 public:
  bool poll() override {
    bool busy = false;
    for (Link* l : links) busy |= l->poll();
    return busy;
  }
  std::vector<Link*> links;
};

}  // namespace

TEST_GROUP(LinkIntegrity) {
  RealClock clock;
  std::unique_ptr<EventLoop> loop;
  std::unique_ptr<HeapPacketPool> pool;
  std::unique_ptr<UringPort> pa, pb;
  std::unique_ptr<Link> la, lb;
  RecordingClient ca, cb;
  LinkPoller poller;

  void setup() override {
    loop = std::make_unique<EventLoop>(clock);
    pool = std::make_unique<HeapPacketPool>(kPoolBuf, 4096);
    int sv[2];
    CHECK_EQUAL(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
    UringPortConfig cfg;
    cfg.pool = pool.get();
    cfg.spec = "uring:fd=" + std::to_string(sv[0]);
    auto a = UringPort::open(cfg);
    cfg.spec = "uring:fd=" + std::to_string(sv[1]);
    auto b = UringPort::open(cfg);
    CHECK_TEXT(a.is_ok(), a.status().to_string().c_str());
    CHECK_TEXT(b.is_ok(), b.status().to_string().c_str());
    pa = std::move(a.value());
    pb = std::move(b.value());
    const Status sa = pa->start(kSec), sb = pb->start(kSec);
    CHECK_TEXT(sa.is_ok(), sa.to_string().c_str());
    CHECK_TEXT(sb.is_ok(), sb.to_string().c_str());
    loop->add_poller(&poller);
  }
  void teardown() override {
    loop->remove_poller(&poller);
    la.reset();
    lb.reset();
    ca.free_held();
    cb.free_held();
    pa.reset();  // close() frees what the kernel still had
    pb.reset();
    UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
    pool.reset();
    loop.reset();
  }

  Link& add_link(std::unique_ptr<Link>& slot, uint16_t index, Port* port, RecordingClient* client) {
    uint8_t mac[6];
    wire::node_mac(mac, 1, 2, 3, static_cast<uint8_t>(index));
    slot = std::make_unique<Link>(index, port, mac, client, *loop, LinkConfig{}, "node 1,2,3 " + port->info().name);
    client->link = slot.get();
    poller.links.push_back(slot.get());
    return *slot;
  }
  // Run the loop until done() (every wait has a timeout).
  template <typename Done>
  void run_until(Done&& done, const char* what) {
    const Status st = loop->run_until(done, 5 * kSec, what);
    CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  }
  // Frames arriving on a port with no Link on it, raw, appended to `got`
  // until have(got) says enough.
  template <typename Have>
  void take_raw(Port& port, std::vector<Packet*>& got, Have&& have) {
    run_until([&] {
      Packet* p;
      while (port.rx_burst(&p, 1) == 1) got.push_back(p);
      return have(got);
    }, "raw frames");
  }
};

TEST(LinkIntegrity, BothEndsOfAUnixSocketDeclareIntegrity) {
  CHECK_TRUE(pa->info().medium_integrity);
  CHECK_TRUE(pb->info().medium_integrity);
}

// What the sender puts on the wire: data and acks flagged with crc 0 (no CRC
// computed), hellos unflagged with a CRC that checks.
TEST(LinkIntegrity, DataAndAcksLeaveWithoutACrcHellosWithOne) {
  Link& l = add_link(la, 0, pa.get(), &ca);
  CHECK(l.send(0, packet_with(*pool, make_body(1, 100))));
  CHECK(l.send(2, packet_with(*pool, make_body(2, kBigBody))));
  CHECK(l.send_raw(FrameType::kHello, packet_with(*pool, make_body(3, sizeof(wire::HelloBody)))));
  std::vector<Packet*> got;
  take_raw(*pb, got, [](const std::vector<Packet*>& g) {
    return count_type(g, FrameType::kData) >= 2 && count_type(g, FrameType::kHello) == 1;
  });
  // A flagged data frame from the peer, crc 0, acking both: l accepts it
  // (its port has integrity) and answers with a bare ack.
  FrameFields f;
  f.flags = wire::kLinkNoCrc;
  f.ack = 2;
  Packet* in = build_frame(*pool, static_cast<uint8_t>(FrameType::kData), make_body(4, 64), f);
  lh_of(in)->crc.set(0);
  UNSIGNED_LONGS_EQUAL(1, pb->tx_burst(&in, 1));
  take_raw(*pb, got, [](const std::vector<Packet*>& g) { return count_type(g, FrameType::kAck) >= 1; });

  for (Packet* p : got) {
    const LinkHeader* lh = lh_of(p);
    if (lh->type == static_cast<uint8_t>(FrameType::kHello)) {
      UNSIGNED_LONGS_EQUAL(0, lh->flags);
      UNSIGNED_LONGS_EQUAL(wire_crc(p), lh->crc.get());
    } else {
      // Retransmitted copies (a slow machine) are data frames like the rest.
      UNSIGNED_LONGS_EQUAL(wire::kLinkNoCrc, lh->flags & wire::kLinkNoCrc);
      UNSIGNED_LONGS_EQUAL(0, lh->crc.get());
    }
    p->free();
  }
  UNSIGNED_LONGS_EQUAL(1, ca.frames.size());  // the flagged data frame came through
  CHECK(ca.frames[0].body == make_body(4, 64));
  UNSIGNED_LONGLONGS_EQUAL(0, l.counters().rx_crc_errors + l.counters().rx_no_crc_refused);
  UNSIGNED_LONGS_EQUAL(0, l.unacked());
}

// The receiver: only a flagged data or ack frame skips the check; unflagged
// frames are still checked on this medium, and a flagged hello is refused.
TEST(LinkIntegrity, TheReceiverSkipsTheCheckOnlyForFlaggedDataAndAcks) {
  Link& l = add_link(lb, 1, pb.get(), &cb);
  const auto body = make_body(9, 700);
  FrameFields flagged;
  flagged.flags = wire::kLinkNoCrc;
  enum class Crc { kGood, kZero, kBad };
  struct Case {
    const char* what;
    uint8_t type;
    bool flag;
    Crc crc;
    uint64_t LinkCounters::*counter;  // nullptr: accepted
  };
  const Case cases[] = {
      {"flagged data, crc 0", 1, true, Crc::kZero, nullptr},
      {"flagged data, crc garbage", 1, true, Crc::kBad, nullptr},
      {"flagged ack, crc 0", 2, true, Crc::kZero, nullptr},
      {"unflagged data, good crc", 1, false, Crc::kGood, nullptr},
      {"unflagged data, bad crc", 1, false, Crc::kBad, &LinkCounters::rx_crc_errors},
      {"unflagged hello, bad crc", 3, false, Crc::kBad, &LinkCounters::rx_crc_errors},
      {"flagged hello, crc 0", 3, true, Crc::kZero, &LinkCounters::rx_no_crc_refused},
      {"flagged hello, good crc", 3, true, Crc::kGood, &LinkCounters::rx_no_crc_refused},
  };
  for (const Case& c : cases) {
    const std::vector<uint8_t> b = c.type == 2 ? std::vector<uint8_t>{} : body;
    Packet* p = build_frame(*pool, c.type, b, c.flag ? flagged : FrameFields{});  // sealed: a good CRC
    if (c.crc == Crc::kZero) lh_of(p)->crc.set(0);
    if (c.crc == Crc::kBad) lh_of(p)->crc.set(lh_of(p)->crc.get() ^ 0xdeadbeef);
    const LinkCounters before = l.counters();
    FrameType t{};
    const bool ok = l.validate(p, &t);
    if (ok) {
      UNSIGNED_LONGS_EQUAL_TEXT(b.size(), p->len, c.what);
      CHECK_TEXT(b.empty() || std::memcmp(p->data(), b.data(), b.size()) == 0, c.what);
      UNSIGNED_LONGS_EQUAL_TEXT(c.type, static_cast<uint8_t>(t), c.what);
    }
    p->free();
    if (!c.counter) {
      CHECK_TEXT(ok, c.what);
    } else {
      CHECK_FALSE_TEXT(ok, c.what);
      UNSIGNED_LONGLONGS_EQUAL_TEXT((before.*c.counter) + 1, (l.counters().*c.counter), c.what);
    }
  }
  UNSIGNED_LONGLONGS_EQUAL(2, l.counters().rx_crc_errors);
  UNSIGNED_LONGLONGS_EQUAL(2, l.counters().rx_no_crc_refused);
}

// End to end over the socketpair: many data frames of every size class, in
// both directions, all delivered in order and intact, none of them carrying
// or needing a CRC.
TEST(LinkIntegrity, ALinkOverAnIntactMediumDeliversEverythingWithoutACrc) {
  Link& l0 = add_link(la, 0, pa.get(), &ca);
  Link& l1 = add_link(lb, 1, pb.get(), &cb);
  constexpr uint32_t kFrames = 600;
  const uint32_t sizes[] = {1, 64, 1500, kBigBody};
  uint32_t sent0 = 0, sent1 = 0;
  auto body_of = [&](uint32_t i) { return make_body(i, sizes[i % 4]); };
  run_until([&] {
    while (sent0 < kFrames && l0.can_send(0) && l0.send(0, packet_with(*pool, body_of(sent0)))) ++sent0;
    while (sent1 < kFrames && l1.can_send(1) && l1.send(1, packet_with(*pool, body_of(sent1)))) ++sent1;
    return ca.frames.size() == kFrames && cb.frames.size() == kFrames && l0.unacked() == 0 && l1.unacked() == 0;
  }, "600 frames each way");
  for (uint32_t i = 0; i < kFrames; ++i) {
    CHECK(cb.frames[i].body == body_of(i));
    CHECK(ca.frames[i].body == body_of(i));
  }
  for (Link* l : {&l0, &l1}) {
    const LinkCounters& k = l->counters();
    UNSIGNED_LONGLONGS_EQUAL(kFrames, k.data_delivered);
    UNSIGNED_LONGLONGS_EQUAL(0, k.rx_crc_errors + k.rx_no_crc_refused + k.rx_bad_length + k.rx_bad_type);
  }
}
