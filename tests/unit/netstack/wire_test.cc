// Wire formats: sizes, and that every multi-byte field sits big-endian at the
// byte offset the spec gives (so any host reads the same frame the same way).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::wire;

namespace {

template <typename T>
const uint8_t* bytes_of(const T& t) {
  return reinterpret_cast<const uint8_t*>(&t);
}

void check_bytes(const uint8_t* at, std::initializer_list<uint8_t> want) {
  size_t i = 0;
  for (uint8_t b : want) {
    UNSIGNED_LONGS_EQUAL(b, at[i]);
    ++i;
  }
}

}  // namespace

TEST_GROUP(Wire){};

TEST(Wire, Sizes) {
  UNSIGNED_LONGS_EQUAL(14, sizeof(EthHeader));
  UNSIGNED_LONGS_EQUAL(32, sizeof(LinkHeader));
  UNSIGNED_LONGS_EQUAL(16, sizeof(TorusHeader));
  UNSIGNED_LONGS_EQUAL(72, sizeof(HelloBody));
  UNSIGNED_LONGS_EQUAL(1, alignof(LinkHeader));  // packed: may sit at any offset in a frame
  UNSIGNED_LONGS_EQUAL(1, alignof(TorusHeader));
}

// docs/wire.md, "Hello body": the offsets the dissector and the capture
// check read.
TEST(Wire, HelloBodyFieldsAreBigEndianAtTheirOffsets) {
  HelloBody h;
  std::memset(&h, 0, sizeof h);
  h.coord[0] = 1;
  h.dir = 2;
  h.dims[2] = 3;
  h.flags = kHelloHeard | kHelloDone;
  h.boot_id.set(0x0102030405060708ull);
  h.peer_boot.set(0x1112131415161718ull);
  h.generation.set(0x21222324u);
  h.isn.set(0x31323334u);
  h.origin[0] = 4;
  h.origin[1] = 5;
  h.origin[2] = 6;
  h.origin_dir = 3;
  h.cause = static_cast<uint8_t>(ResetCause::kRebooted);
  std::memcpy(h.partition, "lab-a", 5);
  UNSIGNED_LONGS_EQUAL(8, offsetof(HelloBody, boot_id));
  UNSIGNED_LONGS_EQUAL(16, offsetof(HelloBody, peer_boot));
  UNSIGNED_LONGS_EQUAL(24, offsetof(HelloBody, generation));
  UNSIGNED_LONGS_EQUAL(28, offsetof(HelloBody, isn));
  UNSIGNED_LONGS_EQUAL(32, offsetof(HelloBody, origin));
  UNSIGNED_LONGS_EQUAL(36, offsetof(HelloBody, cause));
  UNSIGNED_LONGS_EQUAL(40, offsetof(HelloBody, partition));
  check_bytes(bytes_of(h), {1, 0, 0, 2, 0, 0, 3, 3,                         //
                            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // boot_id @8
                            0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,  // peer_boot @16
                            0x21, 0x22, 0x23, 0x24,                          // generation @24
                            0x31, 0x32, 0x33, 0x34,                          // isn @28
                            4, 5, 6, 3, 2, 0, 0, 0,                          // origin, dir, cause @32
                            'l', 'a', 'b', '-', 'a', 0});                    // partition @40
}

TEST(Wire, PartitionTagsAreZeroOnlyForNoPartitionAndDifferForNearNames) {
  UNSIGNED_LONGS_EQUAL(0, partition_tag("", 0));
  const uint16_t a = partition_tag("lab-a", 5), b = partition_tag("lab-b", 5);
  CHECK(a != 0);
  CHECK(b != 0);
  CHECK(a != b);
  UNSIGNED_LONGS_EQUAL(a, partition_tag("lab-a", 5));  // a pure function of the id
  // Every one-character id tags differently and never 0.
  std::vector<uint16_t> seen;
  for (int ch = 33; ch < 127; ++ch) {
    const char c = static_cast<char>(ch);
    const uint16_t t = partition_tag(&c, 1);
    CHECK(t != 0);
    for (uint16_t u : seen) CHECK(t != u);
    seen.push_back(t);
  }
}

TEST(Wire, EthHeaderLayout) {
  EthHeader e;
  std::memset(&e, 0, sizeof e);
  e.ethertype.set(kEtherType);
  UNSIGNED_LONGS_EQUAL(12, offsetof(EthHeader, ethertype));
  check_bytes(bytes_of(e) + 12, {0x88, 0xB5});
  UNSIGNED_LONGS_EQUAL(0x88B5, e.ethertype.get());

  uint8_t mac[6];
  node_mac(mac, 3, 1, 2, 5);
  check_bytes(mac, {0x02, 'T', 3, 1, 2, 5});
  CHECK((mac[0] & 0x02) != 0);  // locally administered
  CHECK((mac[0] & 0x01) == 0);  // unicast
}

TEST(Wire, LinkHeaderFieldsAreBigEndianAtTheirOffsets) {
  LinkHeader h;
  std::memset(&h, 0, sizeof h);
  h.version = kWireVersion;
  h.type = static_cast<uint8_t>(FrameType::kHello);
  h.flags = 0xA5;
  h.vc = 0x5A;
  h.seq.set(0x01020304u);
  h.ack.set(0x05060708u);
  h.sack.set(0x090A0B0Cu);
  h.credits[0].set(0x0D0Eu);
  h.credits[1].set(0x0F10u);
  h.credits[2].set(0x1112u);
  h.credits[3].set(0x1314u);
  h.length.set(0x1516u);
  h.partition.set(0x1718u);
  h.crc.set(0x191A1B1Cu);
  const uint8_t* b = bytes_of(h);
  check_bytes(b, {kWireVersion, 3, 0xA5, 0x5A,  //
                  0x01, 0x02, 0x03, 0x04,       // seq @4
                  0x05, 0x06, 0x07, 0x08,       // ack @8
                  0x09, 0x0A, 0x0B, 0x0C,       // sack @12
                  0x0D, 0x0E, 0x0F, 0x10,       // credits[0..1] @16
                  0x11, 0x12, 0x13, 0x14,       // credits[2..3] @20
                  0x15, 0x16,                   // length @24
                  0x17, 0x18,                   // partition @26
                  0x19, 0x1A, 0x1B, 0x1C});     // crc @28
  UNSIGNED_LONGS_EQUAL(16, offsetof(LinkHeader, credits));
  UNSIGNED_LONGS_EQUAL(24, offsetof(LinkHeader, length));
  UNSIGNED_LONGS_EQUAL(26, offsetof(LinkHeader, partition));
  UNSIGNED_LONGS_EQUAL(28, offsetof(LinkHeader, crc));
  // Reading back goes through the same swap.
  UNSIGNED_LONGS_EQUAL(0x01020304u, h.seq.get());
  UNSIGNED_LONGS_EQUAL(0x1314u, h.credits[3].get());
  UNSIGNED_LONGS_EQUAL(0x1516u, h.length.get());
  UNSIGNED_LONGS_EQUAL(0x191A1B1Cu, h.crc.get());
}

TEST(Wire, VcAndLinkFlagNumbersAreStable) {
  UNSIGNED_LONGS_EQUAL(4, kNumVcs);
  UNSIGNED_LONGS_EQUAL(0, kVcLow);
  UNSIGNED_LONGS_EQUAL(1, kVcHigh);
  UNSIGNED_LONGS_EQUAL(2, kVcAdaptive);
  UNSIGNED_LONGS_EQUAL(3, kVcPriority);
  UNSIGNED_LONGS_EQUAL(1, kLinkNak);
  UNSIGNED_LONGS_EQUAL(2, kLinkAckReq);
}

TEST(Wire, FrameAndPacketTypeNumbersAreStable) {
  UNSIGNED_LONGS_EQUAL(1, static_cast<int>(FrameType::kData));
  UNSIGNED_LONGS_EQUAL(2, static_cast<int>(FrameType::kAck));
  UNSIGNED_LONGS_EQUAL(3, static_cast<int>(FrameType::kHello));
  UNSIGNED_LONGS_EQUAL(3, kMaxFrameType);
  UNSIGNED_LONGS_EQUAL(1, static_cast<int>(PacketType::kNeighbour));
  UNSIGNED_LONGS_EQUAL(2, static_cast<int>(PacketType::kCollective));
  UNSIGNED_LONGS_EQUAL(3, static_cast<int>(PacketType::kP2P));
  UNSIGNED_LONGS_EQUAL(4, static_cast<int>(PacketType::kControl));
  UNSIGNED_LONGS_EQUAL(5, static_cast<int>(PacketType::kTree));
  UNSIGNED_LONGS_EQUAL(6, static_cast<int>(PacketType::kBarrier));
  UNSIGNED_LONGS_EQUAL(6, kMaxPacketType);
  UNSIGNED_LONGS_EQUAL(1, kWireVersion);
}

TEST(Wire, TorusHeaderFieldsAreBigEndianAtTheirOffsets) {
  TorusHeader t;
  std::memset(&t, 0, sizeof t);
  t.dst[0] = 1; t.dst[1] = 2; t.dst[2] = 3;
  t.src[0] = 4; t.src[1] = 5; t.src[2] = 6;
  t.cls = 7;
  t.hints = 8;
  t.flags = kTorusDeposit;
  t.type = static_cast<uint8_t>(PacketType::kCollective);
  t.context.set(0xBEEF);
  t.tag.set(0xDEADC0DEu);
  check_bytes(bytes_of(t), {1, 2, 3, 4, 5, 6, 7, 8, 1, 2,  //
                            0xBE, 0xEF,                     // context @10
                            0xDE, 0xAD, 0xC0, 0xDE});       // tag @12
  UNSIGNED_LONGS_EQUAL(10, offsetof(TorusHeader, context));
  UNSIGNED_LONGS_EQUAL(12, offsetof(TorusHeader, tag));
  UNSIGNED_LONGS_EQUAL(0xBEEF, t.context.get());
  UNSIGNED_LONGS_EQUAL(0xDEADC0DEu, t.tag.get());
}

TEST(Wire, HelloBodyLayout) {
  HelloBody h;
  std::memset(&h, 0, sizeof h);
  h.coord[0] = 1; h.coord[1] = 2; h.coord[2] = 3;
  h.dir = 4;
  h.dims[0] = 5; h.dims[1] = 6; h.dims[2] = 7;
  h.flags = kHelloHeard | kHelloDone;
  h.boot_id.set(0x0102030405060708ull);
  check_bytes(bytes_of(h), {1, 2, 3, 4, 5, 6, 7, 3, 1, 2, 3, 4, 5, 6, 7, 8});
  UNSIGNED_LONGS_EQUAL(8, offsetof(HelloBody, boot_id));
  CHECK(h.boot_id.get() == 0x0102030405060708ull);
}
