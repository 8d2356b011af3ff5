// Test helpers for the netstack: a sim fabric of idle nodes whose Links and
// NetStacks the test polls by hand, recording clients and handlers that copy
// what they are given and free it at once, and hand-built frames made from
// the wire spec (with a bitwise reference CRC32C, so they do not trust the
// code under test).
//
// Teardown order is the whole point of Rig: stacks and links (which free
// their tx queues), then the fabric (which frees frames in flight), and only
// then may the pools' in_use be read as "leaked".
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "drivers/sim/sim_fabric.h"
#include "netstack/link.h"
#include "netstack/netstack.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"

namespace toroid::nettest {

constexpr uint32_t kOverhead = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader);  // 38
constexpr uint32_t kBufSize = 2048;
constexpr uint32_t kMaxFrame = 1024;
constexpr uint32_t kMaxBody = kMaxFrame - kOverhead;

// CRC32C, one bit at a time (reflected polynomial 0x82F63B78): slow and obviously right.
inline uint32_t ref_crc32c(const void* data, size_t len, uint32_t crc = 0) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  while (len--) {
    crc ^= *p++;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// Body byte i of test body `seq`: differs between bodies and offsets.
inline uint8_t body_byte(uint32_t seq, uint32_t i) { return static_cast<uint8_t>(mix64(uint64_t{seq} << 20 | i)); }
inline std::vector<uint8_t> make_body(uint32_t seq, uint32_t len) {
  std::vector<uint8_t> v(len);
  for (uint32_t i = 0; i < len; ++i) v[i] = body_byte(seq, i);
  return v;
}

inline Packet* packet_with(PacketPool& pool, const std::vector<uint8_t>& bytes) {
  Packet* p = pool.alloc();
  if (!p) return nullptr;
  uint8_t* d = p->append(static_cast<uint32_t>(bytes.size()));
  if (!d) { p->free(); return nullptr; }
  if (!bytes.empty()) std::memcpy(d, bytes.data(), bytes.size());
  return p;
}

inline wire::EthHeader* eth_of(Packet* p) { return reinterpret_cast<wire::EthHeader*>(p->data()); }
inline wire::LinkHeader* lh_of(Packet* p) {
  return reinterpret_cast<wire::LinkHeader*>(p->data() + sizeof(wire::EthHeader));
}

// Recompute the CRC over the link header (crc = 0) and everything after it.
inline void reseal(Packet* p) {
  wire::LinkHeader* lh = lh_of(p);
  lh->crc.set(0);
  lh->crc.set(ref_crc32c(lh, p->len - sizeof(wire::EthHeader)));
}

// A well-formed frame from the spec alone: Ethernet, link header, body.
inline Packet* build_frame(PacketPool& pool, uint8_t type, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> bytes(kOverhead + body.size());
  auto* eh = reinterpret_cast<wire::EthHeader*>(bytes.data());
  std::memset(eh->dst, 0xff, 6);
  wire::node_mac(eh->src, 9, 8, 7, 6);
  eh->ethertype.set(wire::kEtherType);
  auto* lh = reinterpret_cast<wire::LinkHeader*>(bytes.data() + sizeof(wire::EthHeader));
  lh->version = wire::kWireVersion;
  lh->type = type;
  lh->length.set(static_cast<uint16_t>(body.size()));
  if (!body.empty()) std::memcpy(bytes.data() + kOverhead, body.data(), body.size());
  Packet* p = packet_with(pool, bytes);
  if (p) reseal(p);
  return p;
}

// Network header + payload of a data body.
inline std::vector<uint8_t> torus_body(const Coord& dst, const Coord& src, uint8_t type, uint32_t payload,
                                       uint32_t seq = 0) {
  std::vector<uint8_t> v(sizeof(wire::TorusHeader) + payload);
  auto* th = reinterpret_cast<wire::TorusHeader*>(v.data());
  for (int i = 0; i < kDims; ++i) {
    th->dst[i] = static_cast<uint8_t>(dst.c[i]);
    th->src[i] = static_cast<uint8_t>(src.c[i]);
  }
  th->type = type;
  th->context.set(0x1234);
  th->tag.set(seq);
  for (uint32_t i = 0; i < payload; ++i) v[sizeof(wire::TorusHeader) + i] = body_byte(seq, i);
  return v;
}

inline Coord xyz(uint32_t x, uint32_t y, uint32_t z) {
  Coord c;
  c.c = {x, y, z};
  return c;
}
inline Dims dims_of(uint32_t x, uint32_t y, uint32_t z) {
  Dims d;
  d.n = {x, y, z};
  return d;
}

class IdleEndpoint final : public SimEndpoint {
 public:
  uint64_t sim_step(uint64_t) override { return kNever; }
};

struct FrameRecord {
  uint16_t index;
  wire::FrameType type;
  std::vector<uint8_t> body;
};

class RecordingClient final : public LinkClient {
 public:
  void on_frame(uint16_t index, wire::FrameType type, Packet* p) override {
    frames.push_back(FrameRecord{index, type, std::vector<uint8_t>(p->data(), p->data() + p->len)});
    p->free();
  }
  std::vector<FrameRecord> frames;
};

struct PacketRecord {
  uint16_t port;
  std::vector<uint8_t> bytes;  // TorusHeader + payload
  const wire::TorusHeader& header() const { return *reinterpret_cast<const wire::TorusHeader*>(bytes.data()); }
};

class RecordingHandler final : public PacketHandler {
 public:
  void on_packet(uint16_t port, Packet* p) override {
    packets.push_back(PacketRecord{port, std::vector<uint8_t>(p->data(), p->data() + p->len)});
    p->free();
  }
  std::vector<PacketRecord> packets;
};

class RecordingHello final : public HelloHandler {
 public:
  void on_hello(uint16_t port, const wire::HelloBody& hello) override {
    ports.push_back(port);
    hellos.push_back(hello);
  }
  std::vector<uint16_t> ports;
  std::vector<wire::HelloBody> hellos;
};

// Sim nodes with their own pools; the test adds Links or NetStacks on top
// and moves frames with settle().
class Rig {
 public:
  explicit Rig(uint64_t seed = 1, LinkModel model = LinkModel{}, FaultPlan plan = FaultPlan{})
      : fabric_(std::make_unique<SimFabric>(seed, model, std::move(plan))) {}
  ~Rig() { teardown(); }
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;

  SimFabric& fabric() { return *fabric_; }

  uint32_t add_node(uint32_t max_packets = 4096, uint32_t buf_size = kBufSize) {
    auto n = std::make_unique<Node>(buf_size, max_packets);
    n->id = fabric_->add_node(&n->ep);
    nodes_.push_back(std::move(n));
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  HeapPacketPool& pool(uint32_t node) { return nodes_[node]->pool; }
  SimPort* add_port(uint32_t node, uint32_t max_frame = kMaxFrame) {
    return fabric_->add_port(nodes_[node]->id, "port", &nodes_[node]->pool, max_frame);
  }
  // A port on each node, cabled together.
  std::pair<SimPort*, SimPort*> cable(uint32_t a, uint32_t b, uint32_t max_frame = kMaxFrame) {
    SimPort* pa = add_port(a, max_frame);
    SimPort* pb = add_port(b, max_frame);
    fabric_->connect(pa, pb);
    return {pa, pb};
  }

  Link& add_link(uint16_t index, Port* port, LinkClient* client, uint32_t tx_cap = 1024) {
    uint8_t mac[6];
    wire::node_mac(mac, 1, 2, 3, static_cast<uint8_t>(index));
    links_.push_back(std::make_unique<Link>(index, port, mac, client, tx_cap));
    return *links_.back();
  }
  NetStack& add_stack(uint32_t node, const Dims& dims, const Coord& me) {
    stacks_.push_back(std::make_unique<NetStack>(dims, me, pool(node)));
    return *stacks_.back();
  }

  // Poll every Link and NetStack and run the fabric until nothing moves.
  // Returns the rounds it took (bounded, so a livelock fails instead of hanging).
  int settle(int max_rounds = 100000) {
    for (int round = 1; round <= max_rounds; ++round) {
      bool busy = false;
      for (auto& l : links_) busy |= l->poll();
      for (auto& s : stacks_) busy |= s->poll();
      fabric_->run();
      if (busy) continue;
      bool queued = false;
      for (auto& l : links_) queued |= l->tx_queued() > 0;
      for (auto& s : stacks_)
        for (uint16_t i = 0; i < s->port_count(); ++i) queued |= s->link(i).tx_queued() > 0;
      if (!queued && fabric_->idle() && rx_pending() == 0) return round;
    }
    return -1;
  }

  uint32_t rx_pending() const {
    uint32_t n = 0;
    for (auto& l : links_) n += static_cast<const SimPort*>(l->port())->rx_queued();
    for (auto& s : stacks_)
      for (uint16_t i = 0; i < s->port_count(); ++i) n += static_cast<const SimPort*>(s->link(i).port())->rx_queued();
    return n;
  }

  uint64_t in_use() const {
    uint64_t n = 0;
    for (auto& node : nodes_) n += node->pool.stats().in_use;
    return n;
  }

  // Drop stacks, links and the fabric (each frees what it still holds); the
  // pools stay, so in_use() afterwards counts real leaks.
  void teardown() {
    stacks_.clear();
    links_.clear();
    fabric_.reset();
  }

 private:
  struct Node {
    Node(uint32_t buf_size, uint32_t max_packets) : pool(buf_size, max_packets) {}
    HeapPacketPool pool;
    IdleEndpoint ep;
    uint32_t id = 0;
  };
  // Declaration order is destruction order reversed: pools go last.
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unique_ptr<SimFabric> fabric_;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<std::unique_ptr<NetStack>> stacks_;
};

}  // namespace toroid::nettest
