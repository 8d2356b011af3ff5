// The sim's link models: names, the bgl model's figures, and how it sorts
// frames onto the torus, collective and barrier channels and charges them.
#include <cstring>
#include <vector>

#include "firmware/sim_link_model.h"
#include "netstack/tree/tree_wire.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

constexpr uint32_t kFraming = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader);

// A frame of `len` bytes: a data frame carrying a torus packet of `type`, or
// (type 0) an ack.
std::vector<uint8_t> frame(uint8_t type, uint32_t len) {
  std::vector<uint8_t> f(len, 0);
  f[sizeof(wire::EthHeader) + offsetof(wire::LinkHeader, type)] =
      static_cast<uint8_t>(type ? wire::FrameType::kData : wire::FrameType::kAck);
  if (type) f[kFraming + offsetof(wire::TorusHeader, type)] = type;
  return f;
}

uint8_t classify(uint8_t type, uint32_t len, uint32_t* charged) {
  const auto f = frame(type, len);
  return bgl_classify(f.data(), len, charged);
}

}  // namespace

TEST_GROUP(SimLinkModel){};

TEST(SimLinkModel, NamesAndFigures) {
  auto d = sim_link_model("default");
  CHECK(d.is_ok());
  UNSIGNED_LONGLONGS_EQUAL(tuning::kSimLinkLatencyNs, d->latency_ns);
  CHECK(d->classify == nullptr);
  CHECK(d->head_bytes == kWholeFrame);
  CHECK_FALSE(sim_link_model("bg/l").is_ok());
  auto b = sim_link_model("bgl");
  CHECK(b.is_ok());
  STRCMP_EQUAL("bgl", b->name);
  DOUBLES_EQUAL(0.175, b->bytes_per_ns, 0);    // 1.4 Gb/s
  DOUBLES_EQUAL(0.35, b->extra[0].bytes_per_ns, 0);  // 2.8 Gb/s
  UNSIGNED_LONGLONGS_EQUAL(100, b->latency_ns);
  UNSIGNED_LONGS_EQUAL(32, b->head_bytes);
  // 2.5 us one way over 64 tree hops; 1.5 us barrier over 2 x 64 hops.
  UNSIGNED_LONGLONGS_EQUAL(39, b->extra[0].latency_ns);
  UNSIGNED_LONGLONGS_EQUAL(12, b->extra[1].latency_ns);
  UNSIGNED_LONGLONGS_EQUAL(12, b->min_latency());  // the parallel scheduler's lookahead
}

TEST(SimLinkModel, BglSortsFramesOntoTheirNetworks) {
  uint32_t charged = 0;
  // A tree packet with one 8-byte operand: channel 1, one 256-byte packet.
  const uint32_t tree_len = kFraming + sizeof(wire::TorusHeader) + sizeof(wire::TreeHeader) + 8;
  LONGS_EQUAL(1, classify(static_cast<uint8_t>(wire::PacketType::kTree), tree_len, &charged));
  UNSIGNED_LONGS_EQUAL(256, charged);
  // 300 bytes of operands: two packets.
  LONGS_EQUAL(1, classify(static_cast<uint8_t>(wire::PacketType::kTree), tree_len - 8 + 300, &charged));
  UNSIGNED_LONGS_EQUAL(512, charged);
  // A barrier message: channel 2, a signal without bytes.
  LONGS_EQUAL(2, classify(static_cast<uint8_t>(wire::PacketType::kBarrier), 70, &charged));
  UNSIGNED_LONGS_EQUAL(0, charged);
  // Torus traffic: what follows the 46 bytes of framing, in 32-byte chunks.
  LONGS_EQUAL(0, classify(static_cast<uint8_t>(wire::PacketType::kCollective), 82, &charged));
  UNSIGNED_LONGS_EQUAL(64, charged);  // 36 bytes -> 2 chunks
  LONGS_EQUAL(0, classify(static_cast<uint8_t>(wire::PacketType::kP2P), 1024, &charged));
  UNSIGNED_LONGS_EQUAL(992, charged);  // 978 -> 31 chunks
  LONGS_EQUAL(0, classify(0, 46, &charged));  // an ack: one chunk
  UNSIGNED_LONGS_EQUAL(32, charged);
}

// The sim links' retransmission timeout covers a frame and an ack of the
// same size each way plus the ack delay; never below the configured minimum
// (so 1024-byte frames keep it), never above the cap.
TEST(SimLinkModel, RetransmissionTimeoutCoversAFrameEachWay) {
  const LinkModel d = *sim_link_model("default");
  // 9000 B at 2 B/ns: 4500 ns a frame, 100 ns a hop.
  UNSIGNED_LONGLONGS_EQUAL(2 * (4500 + 100) + 1000, sim_link_rto_ns(d, 9000, 1000));
  UNSIGNED_LONGLONGS_EQUAL(tuning::kLinkRtoSimNs, sim_link_rto_ns(d, 1024, 1000));
  LinkModel slow = d;
  slow.bytes_per_ns = 0.001;
  UNSIGNED_LONGLONGS_EQUAL(tuning::kLinkRtoMaxSimNs, sim_link_rto_ns(slow, 9000, 1000));
  // bgl: the torus channel (0.175 B/ns) is the slowest a frame can take.
  const LinkModel b = *sim_link_model("bgl");
  UNSIGNED_LONGLONGS_EQUAL(2 * (5852 + 100) + 1000, sim_link_rto_ns(b, 1024, 1000));
}
