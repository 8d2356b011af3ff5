// Test helpers for the netstack: a sim fabric of nodes, each with its own
// pool and EventLoop on the fabric's virtual clock, whose Links and NetStacks
// are polled (and whose timers run) when the fabric steps the node;
// recording clients and handlers that copy what they are given and free it
// (or hold it, to keep the peer out of credits); and hand-built frames made
// from the wire spec (with a bitwise reference CRC32C, so they do not trust
// the code under test).
//
// Teardown order is the whole point of Rig: stacks and links (which free
// their queues and windows), then the fabric (which frees frames in flight),
// and only then may the pools' in_use be read as "leaked".
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/event_loop.h"
#include "drivers/sim/sim_fabric.h"
#include "netstack/link.h"
#include "netstack/netstack.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"

namespace toroid::nettest {

constexpr uint32_t kOverhead = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader);  // 46
constexpr uint32_t kBufSize = 2048;
constexpr uint32_t kMaxFrame = 1024;
constexpr uint32_t kMaxBody = kMaxFrame - kOverhead;

// The link timing the sim rig uses (virtual time).
inline LinkConfig sim_link_config() {
  LinkConfig c;
  c.rto_ns = tuning::kLinkRtoSimNs;
  c.rto_max_ns = tuning::kLinkRtoMaxSimNs;
  c.ack_delay_ns = tuning::kLinkAckDelaySimNs;
  c.down_after_ns = tuning::kLinkDownSimNs;
  return c;
}

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

// Link-header fields of a hand-built frame.
struct FrameFields {
  uint32_t seq = 0;
  uint8_t vc = 0;
  uint8_t flags = 0;
  uint32_t ack = 0;
  uint32_t sack = 0;
  uint16_t credits[wire::kNumVcs] = {};
};

// A well-formed frame from the spec alone: Ethernet, link header, body.
inline Packet* build_frame(PacketPool& pool, uint8_t type, const std::vector<uint8_t>& body,
                           const FrameFields& f = FrameFields{}) {
  std::vector<uint8_t> bytes(kOverhead + body.size());
  auto* eh = reinterpret_cast<wire::EthHeader*>(bytes.data());
  std::memset(eh->dst, 0xff, 6);
  wire::node_mac(eh->src, 9, 8, 7, 6);
  eh->ethertype.set(wire::kEtherType);
  auto* lh = reinterpret_cast<wire::LinkHeader*>(bytes.data() + sizeof(wire::EthHeader));
  lh->version = wire::kWireVersion;
  lh->type = type;
  lh->flags = f.flags;
  lh->vc = f.vc;
  lh->seq.set(f.seq);
  lh->ack.set(f.ack);
  lh->sack.set(f.sack);
  for (int i = 0; i < wire::kNumVcs; ++i) lh->credits[i].set(f.credits[i]);
  lh->length.set(static_cast<uint16_t>(body.size()));
  if (!body.empty()) std::memcpy(bytes.data() + kOverhead, body.data(), body.size());
  Packet* p = packet_with(pool, bytes);
  if (p) reseal(p);
  return p;
}

// A frame as it was on the wire, parsed by the spec (for raw-port peers).
struct WireFrame {
  uint8_t type = 0;
  FrameFields f;
  std::vector<uint8_t> body;
};
inline WireFrame parse_frame(const Packet* p) {
  WireFrame w;
  const auto* lh = reinterpret_cast<const wire::LinkHeader*>(p->data() + sizeof(wire::EthHeader));
  w.type = lh->type;
  w.f.seq = lh->seq.get();
  w.f.vc = lh->vc;
  w.f.flags = lh->flags;
  w.f.ack = lh->ack.get();
  w.f.sack = lh->sack.get();
  for (int i = 0; i < wire::kNumVcs; ++i) w.f.credits[i] = lh->credits[i].get();
  w.body.assign(p->data() + kOverhead, p->data() + p->len);
  return w;
}

// Take everything off a raw port's rx ring, parsed, and free it.
inline std::vector<WireFrame> drain(Port* port) {
  std::vector<WireFrame> out;
  Packet* p;
  while (port->rx_burst(&p, 1) == 1) {
    out.push_back(parse_frame(p));
    p->free();
  }
  return out;
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

struct FrameRecord {
  uint16_t index;
  wire::FrameType type;  // kData (from on_data) or the raw frame's type
  uint8_t vc;
  std::vector<uint8_t> body;
};

// Records what a Link passes up. Data buffers are released at once unless
// hold[vc] is set; then they stay with the client (keeping the peer short of
// credits) until release_held().
class RecordingClient final : public LinkClient {
 public:
  ~RecordingClient() override { free_held(); }
  void on_frame(uint16_t index, wire::FrameType type, Packet* p) override {
    frames.push_back(FrameRecord{index, type, 0, std::vector<uint8_t>(p->data(), p->data() + p->len)});
    p->free();
  }
  void on_data(uint16_t index, Packet* p) override {
    const auto vc = static_cast<uint8_t>(p->vc);
    frames.push_back(FrameRecord{index, wire::FrameType::kData, vc, std::vector<uint8_t>(p->data(), p->data() + p->len)});
    if (hold[vc]) {
      held.push_back(p);
      return;
    }
    p->free();
    if (link) link->release(vc);
  }
  void on_link_down(uint16_t index, const Status& why) override {
    down_index.push_back(index);
    downs.push_back(why);
  }
  // Give back the held buffers of vc (all VCs if vc < 0), in arrival order.
  void release_held(int vc = -1) {
    std::vector<Packet*> keep;
    for (Packet* p : held) {
      if (vc >= 0 && p->vc != vc) {
        keep.push_back(p);
        continue;
      }
      const auto v = static_cast<uint8_t>(p->vc);
      p->free();
      if (link) link->release(v);
    }
    held.swap(keep);
  }
  void free_held() {
    for (Packet* p : held) p->free();
    held.clear();
  }

  Link* link = nullptr;  // set by Rig::add_link
  bool hold[wire::kNumVcs] = {};
  std::vector<Packet*> held;
  std::vector<FrameRecord> frames;
  std::vector<uint16_t> down_index;
  std::vector<Status> downs;
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

// Sim nodes with their own pools and event loops; the test adds Links or
// NetStacks on top. A node step polls its links and stacks and runs its
// loop (pollers the test added, timers) until nothing moves, then asks to
// be woken at its next timer: the Links' retransmission and ack timers run
// in virtual time. settle() runs until every node is idle with no timer
// armed; run_for() runs a stretch of virtual time.
class Rig {
 public:
  explicit Rig(uint64_t seed = 1, LinkModel model = LinkModel{}, FaultPlan plan = FaultPlan{},
               LinkConfig cfg = sim_link_config())
      : cfg_(cfg), fabric_(std::make_unique<SimFabric>(seed, model, std::move(plan))) {}
  ~Rig() { teardown(); }
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;

  SimFabric& fabric() { return *fabric_; }
  uint64_t now() const { return fabric_->now(); }
  const LinkConfig& link_config() const { return cfg_; }

  uint32_t add_node(uint32_t max_packets = 4096, uint32_t buf_size = kBufSize) {
    return add_node_on(fabric_->clock(), max_packets, buf_size);
  }
  // A node whose loop reads the fabric's time through a clock that says it
  // is not virtual: what a real rig's node does where lateness is possible
  // (a frozen node's timers fire late when it runs again).
  uint32_t add_real_clock_node(uint32_t max_packets = 4096, uint32_t buf_size = kBufSize) {
    return add_node_on(real_like_, max_packets, buf_size);
  }
  uint32_t add_node_on(const Clock& clock, uint32_t max_packets, uint32_t buf_size) {
    auto n = std::make_unique<Node>(clock, buf_size, max_packets);
    n->id = fabric_->add_node(n.get());
    nodes_.push_back(std::move(n));
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  HeapPacketPool& pool(uint32_t node) { return nodes_[node]->pool; }
  EventLoop& loop(uint32_t node) { return nodes_[node]->loop; }
  // A frozen node is not stepped: frames pile up on its ports, its timers wait.
  void freeze(uint32_t node, bool frozen = true) { nodes_[node]->frozen = frozen; }

  SimPort* add_port(uint32_t node, uint32_t max_frame = kMaxFrame) {
    return fabric_->add_port(nodes_[node]->id, "port" + std::to_string(nodes_[node]->ports++), &nodes_[node]->pool,
                             max_frame);
  }
  // A port on each node, cabled together; last_cable() is the fabric's link id.
  std::pair<SimPort*, SimPort*> cable(uint32_t a, uint32_t b, uint32_t max_frame = kMaxFrame) {
    SimPort* pa = add_port(a, max_frame);
    SimPort* pb = add_port(b, max_frame);
    last_cable_ = fabric_->connect(pa, pb);
    return {pa, pb};
  }
  int last_cable() const { return last_cable_; }

  // A Link on `node` over `port` (any Port: a SimPort or a test wrapper).
  Link& add_link_on(uint32_t node, uint16_t index, Port* port, LinkClient* client, const LinkConfig& cfg) {
    uint8_t mac[6];
    wire::node_mac(mac, 1, 2, 3, static_cast<uint8_t>(index));
    const std::string name = "node " + std::to_string(node) + " port " + port->info().name;
    links_.push_back(std::make_unique<Link>(index, port, mac, client, nodes_[node]->loop, cfg, name));
    nodes_[node]->links.push_back(links_.back().get());
    return *links_.back();
  }
  Link& add_link(uint16_t index, SimPort* port, LinkClient* client) {
    return add_link_on(node_of(port), index, port, client, cfg_);
  }
  Link& add_link(uint16_t index, SimPort* port, LinkClient* client, const LinkConfig& cfg) {
    return add_link_on(node_of(port), index, port, client, cfg);
  }
  Link& add_link(uint16_t index, SimPort* port, RecordingClient* client) {
    return add_link(index, port, client, cfg_);
  }
  Link& add_link(uint16_t index, SimPort* port, RecordingClient* client, const LinkConfig& cfg) {
    Link& l = add_link_on(node_of(port), index, port, static_cast<LinkClient*>(client), cfg);
    client->link = &l;
    return l;
  }

  NetStack& add_stack(uint32_t node, const Dims& dims, const Coord& me) {
    NetConfig nc;
    nc.link = cfg_;
    stacks_.push_back(std::make_unique<NetStack>(dims, me, pool(node), nodes_[node]->loop, nc));
    nodes_[node]->stacks.push_back(stacks_.back().get());
    return *stacks_.back();
  }

  // Send p on l's vc as soon as the link takes it (in feed order per link):
  // a sender that waits for credits and window instead of failing.
  void feed(Link& l, uint8_t vc, Packet* p) {
    for (auto& n : nodes_)
      for (auto& f : n->feeds)
        if (f.link == &l) {
          f.q.emplace_back(vc, p);
          return;
        }
    for (auto& n : nodes_)
      for (Link* x : n->links)
        if (x == &l) {
          n->feeds.push_back(Feed{&l, {}});
          n->feeds.back().q.emplace_back(vc, p);
          return;
        }
  }
  size_t feed_pending() const {
    size_t k = 0;
    for (auto& n : nodes_)
      for (auto& f : n->feeds) k += f.q.size();
    return k;
  }

  // Step every node and run the fabric until nothing is left to do (no
  // frame in flight, no timer armed, nothing waiting to be fed), at most
  // max_ns of virtual time. Returns the events it took (> 0), or -1 if it
  // did not settle in time.
  int settle(uint64_t max_ns = 100 * kMs) {
    const uint64_t start = fabric_->now();
    for (auto& n : nodes_) fabric_->wake(n->id, start);
    const uint64_t events = fabric_->run(start + max_ns);
    if (!fabric_->idle() || feed_pending() > 0) return -1;
    return static_cast<int>(std::min<uint64_t>(events, INT_MAX));
  }
  // Step every node now and run the fabric for ns of virtual time (the
  // clock ends at now + ns even if the last event came earlier).
  void run_for(uint64_t ns) {
    const uint64_t start = fabric_->now();
    for (auto& n : nodes_) fabric_->wake(n->id, start);
    fabric_->run(start + ns);
    fabric_->clock().set(start + ns);
  }

  uint32_t rx_pending() const {
    uint32_t n = 0;
    for (auto& l : links_) {
      const auto* sp = dynamic_cast<const SimPort*>(l->port());
      if (sp) n += sp->rx_queued();
    }
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
    for (auto& n : nodes_) {
      for (auto& f : n->feeds)
        for (auto& [vc, p] : f.q) p->free();
      n->feeds.clear();
      n->links.clear();
      n->stacks.clear();
    }
    stacks_.clear();
    links_.clear();
    fabric_.reset();
  }

 private:
  class RealLikeClock final : public Clock {
   public:
    explicit RealLikeClock(const Rig& rig) : rig_(rig) {}
    uint64_t now_ns() const override { return rig_.now(); }
    bool is_virtual() const override { return false; }

   private:
    const Rig& rig_;
  };
  struct Feed {
    Link* link;
    std::deque<std::pair<uint8_t, Packet*>> q;
  };
  struct Node final : SimEndpoint {
    Node(const Clock& clock, uint32_t buf_size, uint32_t max_packets) : pool(buf_size, max_packets), loop(clock) {}
    uint64_t sim_step(uint64_t) override {
      if (frozen) return kNever;
      for (uint32_t round = 0; round < tuning::kSimMaxStepRounds; ++round) {
        bool busy = pump_feeds();
        for (Link* l : links) busy |= l->poll();
        for (NetStack* s : stacks) busy |= s->poll();
        busy |= loop.run_once();
        if (!busy) break;
      }
      return loop.next_deadline();
    }
    bool pump_feeds() {
      bool busy = false;
      for (auto& f : feeds) {
        while (!f.q.empty() && f.link->can_send(f.q.front().first)) {
          if (!f.link->send(f.q.front().first, f.q.front().second)) break;
          f.q.pop_front();
          busy = true;
        }
      }
      return busy;
    }
    HeapPacketPool pool;
    EventLoop loop;
    uint32_t id = 0;
    uint32_t ports = 0;
    bool frozen = false;
    std::vector<Link*> links;
    std::vector<NetStack*> stacks;
    std::vector<Feed> feeds;
  };
  uint32_t node_of(const SimPort* port) const {
    for (uint32_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i]->id == port->node()) return i;
    return 0;
  }

  LinkConfig cfg_;
  int last_cable_ = -1;
  RealLikeClock real_like_{*this};  // before the nodes whose loops read it
  // Declaration order is destruction order reversed: pools (in nodes) go last.
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unique_ptr<SimFabric> fabric_;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<std::unique_ptr<NetStack>> stacks_;
};

}  // namespace toroid::nettest
