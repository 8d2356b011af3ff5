// Line broadcast by the deposit bit, and plane / box multicast by class
// routes: every target gets each packet exactly once, and the injecting
// node sends each packet once per direction (counted on its links).
#include <string>
#include <vector>

#include "netstack/classroute.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

struct Counter final : PacketHandler {
  std::vector<uint32_t> tags;
  void on_packet(uint16_t, Packet* p) override {
    tags.push_back(reinterpret_cast<const wire::TorusHeader*>(p->data())->tag.get());
    p->free();
  }
};

// A trained partition whose nodes count kControl packets.
struct Partition {
  explicit Partition(const char* dims) : rig(options(dims, "train")) {
    CHECK_TRUE(rig.build().is_ok());
    const SimSummary s = rig.run();
    LONGS_EQUAL(s.nodes, s.passed);
    counters.resize(rig.node_count());
    for (uint32_t r = 0; r < rig.node_count(); ++r)
      rig.node(r).net().set_handler(wire::PacketType::kControl, &counters[r]);
  }
  Packet* packet(uint32_t rank, uint32_t tag) {
    NetStack& net = rig.node(rank).net();
    Packet* p = net.alloc();
    auto* th = reinterpret_cast<wire::TorusHeader*>(p->append(sizeof(wire::TorusHeader) + 64));
    std::memset(th, 0, sizeof *th + 64);
    th->type = static_cast<uint8_t>(wire::PacketType::kControl);
    th->tag.set(tag);
    return p;
  }
  uint64_t sent_on(uint32_t rank, Dir d) {
    const NetStack& net = rig.node(rank).net();
    const int port = net.port_of(d);
    return port < 0 ? 0 : net.link(static_cast<uint16_t>(port)).counters().data_sent;
  }
  void settle() { settle_quiet(rig); }
  LogCapture log;
  SimRig rig;
  std::vector<Counter> counters;
};

}  // namespace

TEST_GROUP(Multicast){};

TEST(Multicast, LineBroadcastByDepositBit) {
  Partition part("8x4x1");
  const Dims dims{{8, 4, 1}};
  const Coord src{{3, 1, 0}};
  const uint32_t sr = rank_of(src, dims);
  const uint64_t before_p = part.sent_on(sr, Dir::kXp), before_m = part.sent_on(sr, Dir::kXm);
  constexpr uint32_t kPackets = 20;
  for (uint32_t k = 0; k < kPackets; ++k) {
    // One packet per direction, to the far end of each half of the ring.
    Packet* plus = part.packet(sr, k);
    auto* th = reinterpret_cast<wire::TorusHeader*>(plus->data());
    th->dst[0] = 7; th->dst[1] = 1; th->dst[2] = 0;
    SendOptions so;
    so.deposit = true;
    so.hints = 1u << static_cast<int>(Dir::kXp);
    CHECK(part.rig.node(sr).net().send(plus, so));
    Packet* minus = part.packet(sr, k);
    th = reinterpret_cast<wire::TorusHeader*>(minus->data());
    th->dst[0] = 0; th->dst[1] = 1; th->dst[2] = 0;
    so.hints = 1u << static_cast<int>(Dir::kXm);
    CHECK(part.rig.node(sr).net().send(minus, so));
  }
  part.settle();
  for (uint32_t r = 0; r < part.rig.node_count(); ++r) {
    const Coord c = coord_of(r, dims);
    const bool target = c.c[1] == 1 && r != sr;
    LONGS_EQUAL_TEXT(target ? kPackets : 0, part.counters[r].tags.size(), c.to_string().c_str());
    for (uint32_t k = 0; k < part.counters[r].tags.size(); ++k) LONGS_EQUAL(k, part.counters[r].tags[k]);
  }
  // Injected once per direction: kPackets data frames on each of its x links.
  UNSIGNED_LONGLONGS_EQUAL(kPackets, part.sent_on(sr, Dir::kXp) - before_p);
  UNSIGNED_LONGLONGS_EQUAL(kPackets, part.sent_on(sr, Dir::kXm) - before_m);
}

static void class_multicast(const char* dims_s, const ClassRoute& route, const Coord& root, int plane_dim) {
  Partition part(dims_s);
  const Dims dims = route.dims;
  CHECK_TRUE(verify_route(route).is_ok());
  for (uint32_t r = 0; r < part.rig.node_count(); ++r)
    CHECK_TRUE(part.rig.node(r).net().classes().install(3, route, coord_of(r, dims)).is_ok());
  const uint32_t rr = rank_of(root, dims);
  std::vector<uint64_t> before(kNumDirs);
  for (int d = 0; d < kNumDirs; ++d) before[d] = part.sent_on(rr, static_cast<Dir>(d));
  constexpr uint32_t kPackets = 10;
  for (uint32_t k = 0; k < kPackets; ++k) CHECK(part.rig.node(rr).net().send_class(3, part.packet(rr, k)));
  part.settle();
  for (uint32_t r = 0; r < part.rig.node_count(); ++r) {
    const Coord c = coord_of(r, dims);
    const bool in_group = plane_dim < 0 || c.c[plane_dim] == root.c[plane_dim];
    const bool target = in_group && r != rr;
    LONGS_EQUAL_TEXT(target ? kPackets : 0, part.counters[r].tags.size(), c.to_string().c_str());
  }
  const ClassEntry& e = route.by_rank[rr];
  for (int d = 0; d < kNumDirs; ++d) {
    const uint64_t sent = part.sent_on(rr, static_cast<Dir>(d)) - before[d];
    UNSIGNED_LONGLONGS_EQUAL_TEXT((e.out & (1u << d)) ? kPackets : 0, sent, dir_name(static_cast<Dir>(d)));
  }
}

TEST(Multicast, PlaneByClassRoute) {
  const Dims dims{{4, 4, 3}};
  const Coord root{{1, 2, 1}};
  class_multicast("4x4x3", make_plane_route(dims, root, 0, 1), root, 2);
}

TEST(Multicast, BoxByClassRoute) {
  const Dims dims{{3, 4, 2}};
  const Coord root{{2, 0, 1}};
  class_multicast("3x4x2", make_box_route(dims, root), root, -1);
}

TEST(Multicast, UnknownClassIsDroppedAndCounted) {
  Partition part("4x1x1");
  Packet* p = part.packet(0, 1);
  // Not installed on the sender: refused locally, counted.
  CHECK(part.rig.node(0).net().send_class(9, p));
  part.settle();
  UNSIGNED_LONGLONGS_EQUAL(1, part.rig.node(0).net().counters().rx_unknown_class);
  for (auto& c : part.counters) CHECK(c.tags.empty());
}
