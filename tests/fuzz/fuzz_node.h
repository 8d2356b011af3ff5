// What the binary fuzz targets share: a node whose ports are fed by the
// fuzzer (FuzzPort), with the real NetStack, its Links, pool, event loop and
// a virtual clock (FuzzNode), and the frames a neighbour would send it.
//
// The neighbour behind each FuzzPort is played by the harness: it sends
// data frames in sequence with a valid CRC (so the fuzzer's bytes reach the
// parsers above the link instead of dying at the CRC check), and it acks
// and credits everything the node sends, so forwarding and end-to-end
// credits keep flowing. What the fuzzer controls is the body of each frame:
// everything from the network (torus) header on.
//
// Invariants checked on every input (a violation aborts, which libFuzzer
// reports as a crash): no packet is leaked once the node is torn down.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/event_loop.h"
#include "base/log.h"
#include "base/torus.h"
#include "drivers/packet.h"
#include "drivers/port.h"
#include "netstack/crc32c.h"
#include "netstack/link.h"
#include "netstack/netstack.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"
#include "fuzz_input.h"
#include "fuzz_text.h"
#include "../unit/netstack/net_rig.h"

namespace toroid::fuzz {

constexpr uint32_t kBufSize = 2048;
constexpr uint32_t kMaxFrame = 1024;  // Ethernet header included
constexpr uint32_t kFrameOverhead = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader);
constexpr uint32_t kMaxPackets = 2048;

// Log lines of failed operations would flood the fuzzer's output (and
// slow it down): a target calls this from LLVMFuzzerInitialize.
inline void quiet_logs() {
  set_log_sink([](LogLevel, const std::string&) {});
}

// One pool for every input of the process: its buffers are allocated once,
// not per input (which would dominate an input's time under ASan). Every
// input must give back all it took (FuzzNode::teardown checks).
inline HeapPacketPool& shared_pool() {
  static HeapPacketPool pool(kBufSize, kMaxPackets);
  return pool;
}

// Ethernet + link header + body in a fresh packet. The length field is the
// body's; the CRC is computed when `seal`, else left as given in crc.
inline Packet* make_frame(PacketPool& pool, const wire::LinkHeader& lh_in, const uint8_t* body, uint32_t len,
                          bool seal) {
  Packet* p = pool.alloc();
  if (!p) return nullptr;
  uint8_t* d = p->append(kFrameOverhead + len);
  if (!d) {
    p->free();
    return nullptr;
  }
  auto* eh = reinterpret_cast<wire::EthHeader*>(d);
  std::memset(eh->dst, 0xff, 6);
  wire::node_mac(eh->src, 9, 9, 9, 0);
  eh->ethertype.set(wire::kEtherType);
  auto* lh = reinterpret_cast<wire::LinkHeader*>(d + sizeof(wire::EthHeader));
  std::memcpy(lh, &lh_in, sizeof *lh);
  if (len) std::memcpy(d + kFrameOverhead, body, len);
  if (seal) {
    lh->crc.set(0);
    lh->crc.set(crc32c(lh, sizeof(wire::LinkHeader) + len));
  }
  return p;
}

// A Port whose rx ring the harness fills and whose tx side plays the peer:
// it reads the link header of each frame the node sends (to ack it later)
// and frees it.
class FuzzPort final : public Port {
 public:
  FuzzPort(PacketPool& pool, std::string name, bool integrity = false) : pool_(pool) {
    info_.name = std::move(name);
    info_.driver = "fuzz";
    info_.max_frame = kMaxFrame;
    info_.medium_integrity = integrity;
  }
  ~FuzzPort() override {
    for (Packet* p : rx_) p->free();
  }
  uint16_t rx_burst(Packet** pkts, uint16_t n) override {
    uint16_t k = 0;
    while (k < n && !rx_.empty()) {
      pkts[k++] = rx_.front();
      rx_.pop_front();
    }
    return k;
  }
  uint16_t tx_burst(Packet** pkts, uint16_t n) override {
    for (uint16_t i = 0; i < n; ++i) {
      Packet* p = pkts[i];
      if (p->len > info_.max_frame) violated("the node sent a frame longer than the port's max_frame");
      if (p->len >= kFrameOverhead) {
        const auto* lh = reinterpret_cast<const wire::LinkHeader*>(p->data() + sizeof(wire::EthHeader));
        if (lh->type == static_cast<uint8_t>(wire::FrameType::kData) && lh->vc < wire::kNumVcs) {
          const uint32_t seq = lh->seq.get();
          if (static_cast<int32_t>(seq - next_ack_) >= 0) {  // new, not a retransmission
            next_ack_ = seq + 1;
            ++freed_[lh->vc];
            owed_ = true;
          }
        }
      }
      ++stats_.tx_packets;
      stats_.tx_bytes += p->len;
      p->free();
    }
    return n;
  }
  const PortInfo& info() const override { return info_; }
  LinkState link_state() const override { return down_ ? LinkState::kDown : LinkState::kUp; }
  PacketPool& tx_pool() override { return pool_; }

  void push_rx(Packet* p) {
    p->port = 0;
    rx_.push_back(p);
  }
  void set_down(bool down) { down_ = down; }
  size_t rx_queued() const { return rx_.size(); }

  // The peer's link header for its next frame: every frame we sent acked,
  // every buffer freed. A data frame takes the next sequence number.
  wire::LinkHeader peer_header(wire::FrameType type, uint8_t vc, uint32_t body_len) {
    wire::LinkHeader lh;
    std::memset(&lh, 0, sizeof lh);
    lh.version = wire::kWireVersion;
    lh.type = static_cast<uint8_t>(type);
    lh.vc = vc;
    lh.seq.set(type == wire::FrameType::kData ? peer_seq_++ : 0);
    lh.ack.set(next_ack_);
    for (int v = 0; v < wire::kNumVcs; ++v) lh.credits[v].set(freed_[v]);
    lh.length.set(static_cast<uint16_t>(body_len));
    owed_ = false;
    return lh;
  }
  // Whether the node sent data since the peer last acked.
  bool ack_owed() const { return owed_; }

 private:
  PacketPool& pool_;
  PortInfo info_;
  std::deque<Packet*> rx_;
  bool down_ = false;
  uint32_t peer_seq_ = 0;             // the peer's next data seq
  uint32_t next_ack_ = 0;             // one past the newest data seq the node sent
  uint16_t freed_[wire::kNumVcs] = {};  // the node's data frames per VC (the peer frees at once)
  bool owed_ = false;
};

// Virtual time: the sim's link timing.
inline LinkConfig fuzz_link_config() { return nettest::sim_link_config(); }

// One node: a port per direction that has a link (port i = the i-th such
// direction in x+ x- y+ y- z+ z- order), a NetStack over them, its loop on
// a virtual clock. Users (engines, messengers) are created by the target
// after it and must be destroyed before teardown().
class FuzzNode {
 public:
  FuzzNode(const Dims& dims, const Coord& me, bool adaptive = false)
      : pool_(shared_pool()), loop_(clock_) {
    if (pool_.stats().in_use != 0) violated("packets in use before the input started");
    clock_.set(1000);
    NetConfig nc;
    nc.link = fuzz_link_config();
    nc.adaptive = adaptive;
    net_ = std::make_unique<NetStack>(dims, me, pool_, loop_, nc);
    for (int d = 0; d < kNumDirs; ++d) {
      const Dir dir = static_cast<Dir>(d);
      if (!has_link(dir, dims)) continue;
      const auto index = static_cast<uint16_t>(ports_.size());
      ports_.push_back(std::make_unique<FuzzPort>(pool_, "port" + std::to_string(index)));
      net_->add_port(index, ports_.back().get());
      net_->map_dir(dir, index);
      port_of_dir_[d] = ports_.back().get();
    }
    loop_.add_poller(net_.get());
  }
  ~FuzzNode() { teardown(); }
  FuzzNode(const FuzzNode&) = delete;
  FuzzNode& operator=(const FuzzNode&) = delete;

  NetStack& net() { return *net_; }
  EventLoop& loop() { return loop_; }
  HeapPacketPool& pool() { return pool_; }
  VirtualClock& clock() { return clock_; }
  size_t port_count() const { return ports_.size(); }
  FuzzPort& port(size_t i) { return *ports_[i]; }
  // The port along dir; nullptr where the dimension has no link.
  FuzzPort* port_of(Dir dir) { return port_of_dir_[static_cast<int>(dir)]; }

  // A frame from the neighbour on port i (data: in sequence), CRC sealed.
  void deliver(size_t i, uint8_t vc, const uint8_t* body, uint32_t len,
               wire::FrameType type = wire::FrameType::kData) {
    FuzzPort& fp = *ports_[i];
    const wire::LinkHeader lh = fp.peer_header(type, vc, len);
    if (Packet* p = make_frame(pool_, lh, body, len, true)) fp.push_rx(p);
  }
  // Rounds of the loop until nothing moves (at most `rounds`), the peers
  // acking what the node sent in between; the clock moves step_ns a round.
  void run(uint32_t rounds = 64, uint64_t step_ns = 200) {
    for (uint32_t r = 0; r < rounds; ++r) {
      ack_from_peers();
      clock_.set(clock_.now_ns() + step_ns);
      if (!loop_.run_once() && !any_ack_owed()) break;
    }
  }
  // Virtual time passes with the peers silent (timers fire: retransmission,
  // link-down, operation deadlines).
  void advance(uint64_t ns) {
    clock_.set(clock_.now_ns() + ns);
    loop_.run_once();
  }

  // Drops the stack and the ports (each frees what it holds) and checks that
  // every packet went back to the pool.
  void teardown() {
    if (!net_) return;
    net_.reset();
    ports_.clear();
    if (pool_.stats().in_use != 0) violated("packets leaked: pool in_use != 0 after teardown");
  }

 private:
  void ack_from_peers() {
    for (auto& fp : ports_) {
      if (!fp->ack_owed()) continue;
      const wire::LinkHeader lh = fp->peer_header(wire::FrameType::kAck, 0, 0);
      if (Packet* p = make_frame(pool_, lh, nullptr, 0, true)) fp->push_rx(p);
    }
  }
  bool any_ack_owed() const {
    for (auto& fp : ports_)
      if (fp->ack_owed()) return true;
    return false;
  }

  VirtualClock clock_;
  HeapPacketPool& pool_;
  EventLoop loop_;
  std::vector<std::unique_ptr<FuzzPort>> ports_;
  FuzzPort* port_of_dir_[kNumDirs] = {};
  std::unique_ptr<NetStack> net_;
};

// A coordinate inside dims, from the input.
inline Coord read_coord(Input& in, const Dims& dims) {
  Coord c;
  for (int i = 0; i < kDims; ++i) c.c[i] = in.ConsumeIntegralInRange<uint32_t>(0, dims.n[i] - 1);
  return c;
}

// body = a zeroed torus header (dst, src, type set) and `extra` zero bytes;
// returns the header.
inline wire::TorusHeader* start_body(std::vector<uint8_t>& body, size_t extra, const Coord& dst, const Coord& src,
                                     wire::PacketType type) {
  body.assign(sizeof(wire::TorusHeader) + extra, 0);
  auto* th = reinterpret_cast<wire::TorusHeader*>(body.data());
  for (int i = 0; i < kDims; ++i) {
    th->dst[i] = static_cast<uint8_t>(dst.c[i]);
    th->src[i] = static_cast<uint8_t>(src.c[i]);
  }
  th->type = static_cast<uint8_t>(type);
  return th;
}

// Small partitions the binary targets pick from (the first input byte):
// rings, a 2-node dimension (both cables to one neighbour), a full torus.
inline Dims fuzz_dims(uint8_t pick) {
  static const uint32_t kShapes[][3] = {{4, 1, 1}, {2, 2, 1}, {4, 4, 2}, {2, 2, 2}, {8, 1, 1}, {3, 3, 3}};
  const auto& s = kShapes[pick % (sizeof kShapes / sizeof kShapes[0])];
  Dims d;
  d.n = {s[0], s[1], s[2]};
  return d;
}

}  // namespace toroid::fuzz
