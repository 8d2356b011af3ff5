// NetStack over sim ports and reliable links: bodies addressed to this node
// reach the handler for their packet type; malformed ones are dropped and
// counted by reason; hellos reach the hello handler byte for byte; send_dir
// addresses a packet to the neighbour along a direction, wrapping around the
// torus, and is refused while the link has no credit. (Forwarding through
// the node: the sim tests.)
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "net_rig.h"
#include "netstack/route.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::nettest;
using wire::FrameType;
using wire::PacketType;

namespace {

// The partition of every test here: 4x2x3, so x wraps at 4, y at 2, z at 3.
const Dims kDims432 = dims_of(4, 2, 3);

uint8_t pt(PacketType t) { return static_cast<uint8_t>(t); }

// not_routable: packets for another node that this node cannot send on
// (no port in their direction, or no valid next hop).
void check_counters(const NetCounters& c, uint64_t short_body, uint64_t bad_type, uint64_t bad_coord,
                    uint64_t not_routable, uint64_t no_handler) {
  UNSIGNED_LONGLONGS_EQUAL(short_body, c.rx_short_body);
  UNSIGNED_LONGLONGS_EQUAL(bad_type, c.rx_bad_packet_type);
  UNSIGNED_LONGLONGS_EQUAL(bad_coord, c.rx_bad_coord);
  UNSIGNED_LONGLONGS_EQUAL(not_routable, c.dropped_link_down + c.rx_bad_hints);
  UNSIGNED_LONGLONGS_EQUAL(no_handler, c.rx_no_handler);
  UNSIGNED_LONGLONGS_EQUAL(0, c.tx_no_buffer);
}

uint64_t rx_drops(const NetCounters& c) {
  return c.rx_short_body + c.rx_unexpected_frame + c.rx_bad_packet_type + c.rx_bad_coord + c.rx_bad_hints +
         c.rx_unknown_class + c.rx_class_refused + c.dropped_link_down + c.rx_no_handler;
}

void check_coord(const uint8_t got[3], const Coord& want, const char* what) {
  for (int i = 0; i < kDims; ++i) UNSIGNED_LONGS_EQUAL_TEXT(want.c[i], got[i], what);
}

}  // namespace

// A raw Link on node a injects whatever bodies the test builds; node b runs
// the NetStack under test at (0,1,0), its port 1 cabled to a, port 0 idle.
TEST_GROUP(NetStack) {
  std::unique_ptr<Rig> rig;
  RecordingClient ca;
  RecordingHandler coll;
  Link* la = nullptr;
  NetStack* sb = nullptr;
  uint32_t a = 0, b = 0;
  const Coord me = xyz(0, 1, 0);
  const Coord peer = xyz(3, 1, 0);  // b's x- neighbour

  void setup() override {
    rig = std::make_unique<Rig>();
    a = rig->add_node();
    b = rig->add_node();
    SimPort* idle = rig->add_port(b);
    auto [pa, pb] = rig->cable(a, b);
    la = &rig->add_link(0, pa, &ca);
    sb = &rig->add_stack(b, kDims432, me);
    sb->add_port(0, idle);
    sb->add_port(1, pb);
    sb->map_dir(Dir::kXm, 1);
    sb->set_handler(PacketType::kCollective, &coll);
  }
  void teardown() override {
    rig->teardown();
    UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
    rig.reset();
  }

  // Data goes reliably, as the link's credits allow; other types unsequenced.
  void inject(const std::vector<uint8_t>& body, FrameType type = FrameType::kData) {
    if (type == FrameType::kData) rig->feed(*la, wire::kVcLow, packet_with(rig->pool(a), body));
    else CHECK(la->send_raw(type, packet_with(rig->pool(a), body)));
  }
  void settle() {
    CHECK(rig->settle() > 0);
    UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());  // every drop freed, every handler freed
  }
};

TEST(NetStack, PortsDirectionsAndMaxBody) {
  UNSIGNED_LONGS_EQUAL(2, sb->port_count());
  LONGS_EQUAL(1, sb->port_of(Dir::kXm));
  LONGS_EQUAL(-1, sb->port_of(Dir::kXp));
  LONGS_EQUAL(static_cast<int>(Dir::kXm), sb->dir_of_port(1));
  LONGS_EQUAL(kNumDirs, sb->dir_of_port(0));   // a port with no direction
  LONGS_EQUAL(kNumDirs, sb->dir_of_port(57));  // no such port
  CHECK(sb->dims() == kDims432);
  CHECK(sb->me() == me);
  UNSIGNED_LONGS_EQUAL(kMaxFrame - kOverhead, sb->max_body());
  UNSIGNED_LONGS_EQUAL(rig->link_config().rx_credits[wire::kVcHigh], sb->tx_space(Dir::kXm));  // 0 -> 3 wraps: VC 1
  UNSIGNED_LONGS_EQUAL(0, sb->tx_space(Dir::kYp));

  // The smallest port limits max_body...
  const uint32_t c = rig->add_node();
  NetStack& s = rig->add_stack(c, kDims432, xyz(1, 1, 1));
  s.add_port(0, rig->add_port(c, 1500));
  UNSIGNED_LONGS_EQUAL(1500 - kOverhead, s.max_body());
  s.add_port(1, rig->add_port(c, 300));
  UNSIGNED_LONGS_EQUAL(300 - kOverhead, s.max_body());
  s.add_port(2, rig->add_port(c, 1500));
  UNSIGNED_LONGS_EQUAL(300 - kOverhead, s.max_body());
  // ...and so does the pool's buffer, less the headroom.
  const uint32_t d = rig->add_node(16, 600);
  NetStack& t = rig->add_stack(d, kDims432, xyz(2, 1, 1));
  t.add_port(0, rig->add_port(d, 1500));
  UNSIGNED_LONGS_EQUAL(600 - tuning::kPacketHeadroom - kOverhead, t.max_body());
  Packet* p = t.alloc();
  CHECK(p != nullptr);
  CHECK(p->tailroom() >= t.max_body());
  CHECK(p->headroom() >= kOverhead);
  p->free();
}

TEST(NetStack, DeliversPacketsAddressedToMeToTheirHandlerInOrder) {
  const uint32_t max_payload = sb->max_body() - sizeof(wire::TorusHeader);
  std::vector<std::vector<uint8_t>> sent;
  for (uint32_t i = 0; i < 60; ++i) {
    const uint32_t payload = i == 59 ? max_payload : (i * 37) % (max_payload + 1);
    sent.push_back(torus_body(me, peer, pt(PacketType::kCollective), payload, i));
    inject(sent.back());
  }
  settle();
  UNSIGNED_LONGS_EQUAL(sent.size(), coll.packets.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    UNSIGNED_LONGS_EQUAL(1, coll.packets[i].port);
    CHECK(coll.packets[i].bytes == sent[i]);
  }
  check_counters(sb->counters(), 0, 0, 0, 0, 0);
  UNSIGNED_LONGLONGS_EQUAL(sent.size(), sb->link(1).counters().data_delivered);
  UNSIGNED_LONGLONGS_EQUAL(sent.size(), sb->counters().delivered);
}

TEST(NetStack, EachPacketTypeGoesToItsOwnHandler) {
  RecordingHandler h[wire::kMaxPacketType + 1];
  for (uint8_t t = 1; t <= wire::kMaxPacketType; ++t) sb->set_handler(static_cast<PacketType>(t), &h[t]);
  constexpr uint32_t kTypes = wire::kMaxPacketType;
  for (uint32_t i = 0; i < 10 * kTypes; ++i) inject(torus_body(me, peer, static_cast<uint8_t>(1 + i % kTypes), 10, i));
  settle();
  CHECK(coll.packets.empty());  // replaced by h[kCollective]
  for (uint8_t t = 1; t <= wire::kMaxPacketType; ++t) {
    UNSIGNED_LONGS_EQUAL(10, h[t].packets.size());
    for (size_t k = 0; k < h[t].packets.size(); ++k) {
      UNSIGNED_LONGS_EQUAL(t, h[t].packets[k].header().type);
      UNSIGNED_LONGS_EQUAL(k * kTypes + t - 1, h[t].packets[k].header().tag.get());
    }
  }
  check_counters(sb->counters(), 0, 0, 0, 0, 0);
}

TEST(NetStack, BodiesShorterThanTheTorusHeaderAreDropped) {
  const auto full = torus_body(me, peer, pt(PacketType::kCollective), 0);
  for (uint32_t len : {0u, 1u, 8u, 15u}) inject(std::vector<uint8_t>(full.begin(), full.begin() + len));
  inject(full);  // exactly a header, no payload: fine
  settle();
  check_counters(sb->counters(), 4, 0, 0, 0, 0);
  UNSIGNED_LONGS_EQUAL(1, coll.packets.size());
  CHECK(coll.packets[0].bytes == full);
}

TEST(NetStack, UnknownPacketTypesAreDropped) {
  for (uint8_t t : {uint8_t{0}, uint8_t{wire::kMaxPacketType + 1}, uint8_t{0x80}, uint8_t{255}})
    inject(torus_body(me, peer, t, 20));
  settle();
  check_counters(sb->counters(), 0, 4, 0, 0, 0);
  CHECK(coll.packets.empty());
}

TEST(NetStack, CoordinatesOutsideThePartitionAreDropped) {
  const uint8_t c = pt(PacketType::kCollective);
  inject(torus_body(xyz(4, 1, 0), peer, c, 8));        // dst x = dims
  inject(torus_body(xyz(0, 2, 0), peer, c, 8));        // dst y
  inject(torus_body(xyz(0, 1, 3), peer, c, 8));        // dst z
  inject(torus_body(xyz(255, 255, 255), peer, c, 8));
  inject(torus_body(me, xyz(4, 0, 0), c, 8));          // src x
  inject(torus_body(me, xyz(0, 0, 3), c, 8));          // src z
  inject(torus_body(me, xyz(3, 1, 2), c, 8, 7));       // the far corner: inside
  settle();
  check_counters(sb->counters(), 0, 0, 6, 0, 0);
  UNSIGNED_LONGS_EQUAL(1, coll.packets.size());
  UNSIGNED_LONGS_EQUAL(7, coll.packets[0].header().tag.get());
}

// Class-routed packets: an id with no table entry here, and an entry that
// does not accept the input direction, are dropped and counted; an accepted
// one is deposited.
TEST(NetStack, UnknownOrRefusedClassesAreDropped) {
  const uint8_t c = pt(PacketType::kCollective);
  auto with_class = [&](uint8_t cls, uint32_t tag) {
    auto body = torus_body(me, peer, c, 8, tag);
    reinterpret_cast<wire::TorusHeader*>(body.data())->cls = cls;
    return body;
  };
  CHECK_TRUE(sb->set_class(2, ClassEntry{dir_bit(Dir::kXp), 0, true}).is_ok());  // accepts only from x+
  CHECK_TRUE(sb->set_class(3, ClassEntry{dir_bit(Dir::kXm), 0, true}).is_ok());  // from x-: deposit
  inject(with_class(9, 1));    // no such class here
  inject(with_class(15, 2));   // the largest id, unset
  inject(with_class(2, 3));    // arrives from x-, refused
  inject(with_class(3, 4));    // accepted
  settle();
  UNSIGNED_LONGLONGS_EQUAL(2, sb->counters().rx_unknown_class);
  UNSIGNED_LONGLONGS_EQUAL(1, sb->counters().rx_class_refused);
  UNSIGNED_LONGS_EQUAL(1, coll.packets.size());
  UNSIGNED_LONGS_EQUAL(4, coll.packets[0].header().tag.get());
}

// b has a link only towards x-: packets for other nodes that would leave
// any other way are counted and dropped, never delivered here.
TEST(NetStack, PacketsForAnotherNodeThatCannotMoveOnAreDropped) {
  const uint8_t c = pt(PacketType::kCollective);
  for (const Coord& other : {xyz(1, 1, 0), xyz(0, 0, 0), xyz(0, 1, 1), xyz(0, 1, 2)}) {
    auto body = torus_body(other, peer, c, 8);
    reinterpret_cast<wire::TorusHeader*>(body.data())->hints = minimal_hints(me, other, kDims432);
    inject(body);
  }
  settle();
  check_counters(sb->counters(), 0, 0, 0, 4, 0);
  CHECK(coll.packets.empty());
  UNSIGNED_LONGLONGS_EQUAL(0, sb->counters().delivered);
}

TEST(NetStack, PacketsWithNoHandlerAreDropped) {
  inject(torus_body(me, peer, pt(PacketType::kNeighbour), 8));
  inject(torus_body(me, peer, pt(PacketType::kP2P), 8));
  inject(torus_body(me, peer, pt(PacketType::kControl), 8));
  inject(torus_body(me, peer, pt(PacketType::kCollective), 8));
  settle();
  check_counters(sb->counters(), 0, 0, 0, 0, 3);
  UNSIGNED_LONGS_EQUAL(1, coll.packets.size());
  sb->set_handler(PacketType::kCollective, nullptr);  // unregister
  inject(torus_body(me, peer, pt(PacketType::kCollective), 8));
  settle();
  check_counters(sb->counters(), 0, 0, 0, 0, 4);
  UNSIGNED_LONGS_EQUAL(1, coll.packets.size());
}

TEST(NetStack, EveryDropReasonInOneStreamKeepsTheGoodPacketsInOrder) {
  const uint8_t c = pt(PacketType::kCollective);
  inject(torus_body(me, peer, c, 30, 0));
  inject(std::vector<uint8_t>(5, 0));                  // short
  inject(torus_body(me, peer, 0, 30));                 // bad type
  inject(torus_body(me, peer, c, 30, 1));
  inject(torus_body(xyz(0, 1, 9), peer, c, 30));       // bad coord
  inject(torus_body(xyz(1, 1, 0), peer, c, 30));       // not for me
  inject(torus_body(me, peer, pt(PacketType::kP2P), 30));  // no handler
  inject(torus_body(me, peer, c, 30, 2));
  settle();
  check_counters(sb->counters(), 1, 1, 1, 1, 1);
  UNSIGNED_LONGS_EQUAL(3, coll.packets.size());
  for (uint32_t i = 0; i < 3; ++i) CHECK(coll.packets[i].bytes == torus_body(me, peer, c, 30, i));
}

// Acks are the link's business: consumed there, never passed up.
TEST(NetStack, AckFramesNeverReachAPacketHandler) {
  inject(torus_body(me, peer, pt(PacketType::kCollective), 8), FrameType::kAck);
  inject(std::vector<uint8_t>{}, FrameType::kAck);
  settle();
  CHECK(coll.packets.empty());
  UNSIGNED_LONGLONGS_EQUAL(2, sb->link(1).counters().acks_received);
  UNSIGNED_LONGLONGS_EQUAL(0, rx_drops(sb->counters()));
}

TEST(NetStack, HellosReachTheHelloHandlerByteForByte) {
  RecordingHello hello;
  sb->set_hello_handler(&hello);
  wire::HelloBody h{};
  h.coord[0] = 3; h.coord[1] = 1; h.coord[2] = 0;
  h.dir = static_cast<uint8_t>(Dir::kXp);
  h.dims[0] = 4; h.dims[1] = 2; h.dims[2] = 3;
  h.flags = wire::kHelloHeard;
  h.boot_id.set(0x0123456789ABCDEFull);
  std::vector<uint8_t> body(sizeof h);
  std::memcpy(body.data(), &h, sizeof h);
  inject(body, FrameType::kHello);
  h.flags = wire::kHelloHeard | wire::kHelloDone;
  h.boot_id.set(42);
  std::memcpy(body.data(), &h, sizeof h);
  inject(body, FrameType::kHello);
  inject(std::vector<uint8_t>(body.begin(), body.begin() + 15), FrameType::kHello);  // one byte short
  settle();

  UNSIGNED_LONGS_EQUAL(2, hello.hellos.size());
  UNSIGNED_LONGS_EQUAL(1, hello.ports[0]);
  UNSIGNED_LONGS_EQUAL(1, hello.ports[1]);
  UNSIGNED_LONGS_EQUAL(wire::kHelloHeard, hello.hellos[0].flags);
  CHECK(hello.hellos[0].boot_id.get() == 0x0123456789ABCDEFull);
  MEMCMP_EQUAL(&h, &hello.hellos[1], sizeof h);
  check_counters(sb->counters(), 1, 0, 0, 0, 0);
  CHECK(coll.packets.empty());

  sb->set_hello_handler(nullptr);
  inject(body, FrameType::kHello);
  settle();
  check_counters(sb->counters(), 1, 0, 0, 0, 1);
  UNSIGNED_LONGS_EQUAL(2, hello.hellos.size());
}

// Two NetStacks on one cable: a at (3,1,0) sends x+, b at (0,1,0) sends x-;
// both hops wrap around the x ring.
TEST_GROUP(NetStackPair) {
  std::unique_ptr<Rig> rig;
  RecordingHandler ha, hb;
  RecordingHello hello_a, hello_b;
  NetStack* sa = nullptr;
  NetStack* sb = nullptr;
  uint32_t a = 0, b = 0;
  const Coord ca = xyz(3, 1, 0);
  const Coord cb = xyz(0, 1, 0);

  void setup() override { make(4096); }
  void make(uint32_t max_packets_a) {
    rig = std::make_unique<Rig>();
    a = rig->add_node(max_packets_a);
    b = rig->add_node();
    auto [pa, pb] = rig->cable(a, b);
    sa = &rig->add_stack(a, kDims432, ca);
    sb = &rig->add_stack(b, kDims432, cb);
    sa->add_port(0, pa);
    sa->map_dir(Dir::kXp, 0);
    sb->add_port(0, pb);
    sb->map_dir(Dir::kXm, 0);
    for (auto [s, h, hh] : {std::tuple{sa, &ha, &hello_a}, std::tuple{sb, &hb, &hello_b}}) {
      s->set_handler(PacketType::kCollective, h);
      s->set_hello_handler(hh);
    }
  }
  void teardown() override {
    rig->teardown();
    UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
    rig.reset();
  }
  // A collective packet with junk src/dst for send_dir to overwrite.
  Packet* junk_addressed(NetStack& s, uint32_t seq, uint32_t payload = 24) {
    auto body = torus_body(xyz(201, 202, 203), xyz(204, 205, 206), pt(PacketType::kCollective), payload, seq);
    auto* th = reinterpret_cast<wire::TorusHeader*>(body.data());
    th->cls = 0;  // (a class id would need a class table entry)
    th->hints = 0x15;
    th->flags = wire::kTorusDeposit;
    Packet* p = s.alloc();
    std::memcpy(p->append(static_cast<uint32_t>(body.size())), body.data(), body.size());
    return p;
  }
};

TEST(NetStackPair, SendDirFillsSourceAndWrappedNeighbour) {
  for (uint32_t i = 0; i < 10; ++i) {
    if (i == rig->link_config().rx_credits[wire::kVcHigh]) CHECK(rig->settle() > 0);  // credits back
    CHECK(sa->send_dir(Dir::kXp, junk_addressed(*sa, i)));
    CHECK(sb->send_dir(Dir::kXm, junk_addressed(*sb, 100 + i)));
  }
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
  UNSIGNED_LONGS_EQUAL(10, hb.packets.size());
  UNSIGNED_LONGS_EQUAL(10, ha.packets.size());
  for (uint32_t i = 0; i < 10; ++i) {
    const wire::TorusHeader& tb = hb.packets[i].header();
    check_coord(tb.src, xyz(3, 1, 0), "a's x+ hop: src");
    check_coord(tb.dst, xyz(0, 1, 0), "a's x+ hop: dst wraps 3 -> 0");
    const wire::TorusHeader& ta = ha.packets[i].header();
    check_coord(ta.src, xyz(0, 1, 0), "b's x- hop: src");
    check_coord(ta.dst, xyz(3, 1, 0), "b's x- hop: dst wraps 0 -> 3");
    // One hop: the hint is the direction taken, no routing flags; the rest
    // is the sender's.
    UNSIGNED_LONGS_EQUAL(i, tb.tag.get());
    UNSIGNED_LONGS_EQUAL(100 + i, ta.tag.get());
    UNSIGNED_LONGS_EQUAL(1u << static_cast<int>(Dir::kXp), tb.hints);
    UNSIGNED_LONGS_EQUAL(1u << static_cast<int>(Dir::kXm), ta.hints);
    for (const wire::TorusHeader* t : {&ta, &tb}) {
      UNSIGNED_LONGS_EQUAL(0, t->cls);
      UNSIGNED_LONGS_EQUAL(0, t->flags);
      UNSIGNED_LONGS_EQUAL(pt(PacketType::kCollective), t->type);
      UNSIGNED_LONGS_EQUAL(0x1234, t->context.get());
    }
    const auto want_b = torus_body(xyz(0, 0, 0), xyz(0, 0, 0), 0, 24, i);
    MEMCMP_EQUAL(want_b.data() + 16, hb.packets[i].bytes.data() + 16, 24);
    UNSIGNED_LONGS_EQUAL(0, hb.packets[i].port);
  }
  check_counters(sa->counters(), 0, 0, 0, 0, 0);
  check_counters(sb->counters(), 0, 0, 0, 0, 0);
}

TEST(NetStackPair, SendDirWithoutAPortReturnsFalseAndTheCallerKeepsThePacket) {
  for (Dir d : {Dir::kXm, Dir::kYp, Dir::kYm, Dir::kZp, Dir::kZm}) {
    Packet* p = junk_addressed(*sa, 5);
    const std::vector<uint8_t> before(p->data(), p->data() + p->len);
    CHECK_FALSE(sa->send_dir(d, p));
    UNSIGNED_LONGS_EQUAL(0, sa->tx_space(d));
    CHECK(std::vector<uint8_t>(p->data(), p->data() + p->len) == before);
    p->free();
  }
  CHECK(rig->settle() > 0);
  CHECK(hb.packets.empty());
}

TEST(NetStackPair, SendDirWithoutACreditReturnsFalseUntilCreditsComeBack) {
  const uint32_t cap = rig->link_config().rx_credits[wire::kVcHigh];  // 3 -> 0 wraps: VC 1
  UNSIGNED_LONGS_EQUAL(cap, sa->tx_space(Dir::kXp));
  for (uint32_t i = 0; i < cap; ++i) CHECK(sa->send_dir(Dir::kXp, junk_addressed(*sa, i, 8)));
  UNSIGNED_LONGS_EQUAL(0, sa->tx_space(Dir::kXp));
  CHECK_FALSE(sa->can_send_dir(Dir::kXp));
  Packet* p = junk_addressed(*sa, cap, 8);
  CHECK_FALSE(sa->send_dir(Dir::kXp, p));
  UNSIGNED_LONGLONGS_EQUAL(1, sa->link(0).counters().credit_stalls);
  UNSIGNED_LONGS_EQUAL(8 + sizeof(wire::TorusHeader), p->len);  // no link headers left on it
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(cap, sa->tx_space(Dir::kXp));
  CHECK(sa->send_dir(Dir::kXp, p));
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(cap + 1, hb.packets.size());
  for (uint32_t i = 0; i <= cap; ++i) UNSIGNED_LONGS_EQUAL(i, hb.packets[i].header().tag.get());
}

TEST(NetStackPair, SendHelloBothWays) {
  wire::HelloBody h{};
  h.coord[0] = 3; h.coord[1] = 1; h.coord[2] = 0;
  h.dir = static_cast<uint8_t>(Dir::kXp);
  h.dims[0] = 4; h.dims[1] = 2; h.dims[2] = 3;
  h.boot_id.set(0xFEEDFACECAFEBEEFull);
  CHECK(sa->send_hello(0, h));
  wire::HelloBody g = h;
  g.coord[0] = 0;
  g.dir = static_cast<uint8_t>(Dir::kXm);
  g.flags = wire::kHelloHeard;
  g.boot_id.set(7);
  CHECK(sb->send_hello(0, g));
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(1, hello_b.hellos.size());
  UNSIGNED_LONGS_EQUAL(1, hello_a.hellos.size());
  UNSIGNED_LONGS_EQUAL(0, hello_b.ports[0]);
  MEMCMP_EQUAL(&h, &hello_b.hellos[0], sizeof h);
  MEMCMP_EQUAL(&g, &hello_a.hellos[0], sizeof g);
  CHECK(ha.packets.empty() && hb.packets.empty());
  check_counters(sa->counters(), 0, 0, 0, 0, 0);
  check_counters(sb->counters(), 0, 0, 0, 0, 0);
}

TEST(NetStackPair, SendHelloOnAFullQueueFreesItsPacket) {
  wire::HelloBody h{};
  const uint32_t cap = rig->link_config().tx_cap;
  for (uint32_t i = 0; i < cap; ++i) CHECK(sa->send_hello(0, h));
  UNSIGNED_LONGLONGS_EQUAL(cap, rig->pool(a).stats().in_use);
  CHECK_FALSE(sa->send_hello(0, h));
  UNSIGNED_LONGLONGS_EQUAL(cap, rig->pool(a).stats().in_use);
  UNSIGNED_LONGLONGS_EQUAL(1, sa->link(0).counters().tx_queue_full);
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(cap, hello_b.hellos.size());
}

TEST(NetStackPair, AllocCountsAnEmptyPool) {
  make(16);
  std::vector<Packet*> held;
  for (int i = 0; i < 16; ++i) {
    Packet* p = sa->alloc();
    CHECK(p != nullptr);
    held.push_back(p);
  }
  POINTERS_EQUAL(nullptr, sa->alloc());
  UNSIGNED_LONGLONGS_EQUAL(1, sa->counters().tx_no_buffer);
  CHECK_FALSE(sa->send_hello(0, wire::HelloBody{}));
  UNSIGNED_LONGLONGS_EQUAL(2, sa->counters().tx_no_buffer);
  for (Packet* p : held) p->free();
  CHECK(sa->send_hello(0, wire::HelloBody{}));
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(1, hello_b.hellos.size());
}

// One node with all six directions, each port cabled to a probe that sees
// the raw bodies: send_dir picks the mapped port and the right neighbour.
TEST_GROUP(NetStackSixDirs){};

TEST(NetStackSixDirs, SendDirAddressesTheNeighbourAlongEachDirection) {
  Rig rig;
  const Coord me = xyz(3, 1, 0);
  // In 4x2x3 from (3,1,0); y has two nodes, so y+ and y- reach the same one.
  const Coord want[kNumDirs] = {xyz(0, 1, 0), xyz(2, 1, 0), xyz(3, 0, 0),
                                xyz(3, 0, 0), xyz(3, 1, 1), xyz(3, 1, 2)};
  const Dir port_dir[kNumDirs] = {Dir::kZm, Dir::kYp, Dir::kXp, Dir::kYm, Dir::kZp, Dir::kXm};
  const uint32_t s = rig.add_node();
  NetStack& st = rig.add_stack(s, kDims432, me);
  RecordingClient probes[kNumDirs];
  for (uint16_t i = 0; i < kNumDirs; ++i) {
    const uint32_t probe = rig.add_node();
    auto [ps, pp] = rig.cable(s, probe);
    st.add_port(i, ps);
    st.map_dir(port_dir[i], i);
    rig.add_link(0, pp, &probes[i]);
  }
  for (uint16_t i = 0; i < kNumDirs; ++i) {
    LONGS_EQUAL(i, st.port_of(port_dir[i]));
    LONGS_EQUAL(static_cast<int>(port_dir[i]), st.dir_of_port(i));
  }
  for (int d = 0; d < kNumDirs; ++d) {
    Packet* p = st.alloc();
    const auto body = torus_body(xyz(250, 250, 250), xyz(251, 251, 251), pt(PacketType::kNeighbour), 4,
                                 static_cast<uint32_t>(d));
    std::memcpy(p->append(static_cast<uint32_t>(body.size())), body.data(), body.size());
    CHECK(st.send_dir(static_cast<Dir>(d), p));
  }
  CHECK(rig.settle() > 0);
  for (uint16_t i = 0; i < kNumDirs; ++i) {
    const std::string at = std::string("port ") + std::to_string(i) + " (" + dir_name(port_dir[i]) + ")";
    UNSIGNED_LONGS_EQUAL_TEXT(1, probes[i].frames.size(), at.c_str());
    const FrameRecord& f = probes[i].frames[0];
    CHECK_TEXT(f.type == FrameType::kData, at.c_str());
    const auto* th = reinterpret_cast<const wire::TorusHeader*>(f.body.data());
    UNSIGNED_LONGS_EQUAL_TEXT(static_cast<int>(port_dir[i]), th->tag.get(), at.c_str());
    check_coord(th->src, me, at.c_str());
    check_coord(th->dst, want[static_cast<int>(port_dir[i])], at.c_str());
  }
  rig.teardown();
  UNSIGNED_LONGLONGS_EQUAL(0, rig.in_use());
}
