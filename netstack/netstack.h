// NetStack: a node's network. Owns one reliable Link per port, maps ports to
// torus directions (from the personality), and is the node's torus router:
//
// - Received data frames addressed elsewhere wait in an input queue per
//   (port, VC) (bounded by the link's credits) and are forwarded, the same
//   buffer and no payload copy, when the next link has a credit on the
//   next VC (route.h: dimension order with dateline VCs, or minimal-adaptive
//   with the deterministic escape). Transit packets give their receive
//   buffer (credit) back when they leave.
// - Packets with the deposit flag leave a copy at every node they pass (a
//   line broadcast injected once per direction); class-routed packets
//   (cls != 0) follow the node's ClassTable: deposit and/or a copy per
//   output direction.
// - Packets for this node go to the handler registered for their type, and
//   their credit is returned at once (the local sink always drains).
// - Local sends wait in an injection queue when the first link is busy.
//
// Every rejected frame or packet is counted, per reason. A link that goes
// down is reported to every LinkDownListener.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/event_loop.h"
#include "base/torus.h"
#include "netstack/classroute.h"
#include "netstack/link.h"
#include "netstack/route.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"

namespace toroid {

class HelloHandler {
 public:
  virtual ~HelloHandler() = default;
  virtual void on_hello(uint16_t port, const wire::HelloBody& hello) = 0;
};

class PacketHandler {
 public:
  virtual ~PacketHandler() = default;
  // p->data() is the TorusHeader; the handler owns p from here.
  virtual void on_packet(uint16_t port, Packet* p) = 0;
};

class LinkDownListener {
 public:
  virtual ~LinkDownListener() = default;
  virtual void on_link_down(uint16_t port, const Status& why) = 0;
};

struct NetConfig {
  LinkConfig link;
  Dateline dateline = Dateline::kOn;  // kOff only to demonstrate the deadlock it prevents
  bool adaptive = false;              // default routing for send()
  uint32_t inject_cap = tuning::kInjectQueue;
};

struct NetCounters {
  uint64_t rx_short_body = 0;        // body too short for its header
  uint64_t rx_unexpected_frame = 0;  // a frame type nobody consumes here
  uint64_t rx_bad_packet_type = 0;
  uint64_t rx_bad_coord = 0;         // a coordinate outside the partition
  uint64_t rx_bad_hints = 0;         // no hinted direction for a dimension still to travel
  uint64_t rx_unknown_class = 0;     // class id with no table entry here
  uint64_t rx_class_refused = 0;     // class entry does not accept that input direction
  uint64_t rx_no_handler = 0;        // nobody registered for the type
  uint64_t delivered = 0;            // packets handed to local handlers
  uint64_t deposited = 0;            // copies left by deposit-bit / class packets
  uint64_t forwarded = 0;            // transit packets sent on (no copy)
  uint64_t multicast_copies = 0;     // extra copies made for class fan-out
  uint64_t adaptive_hops = 0;
  uint64_t escape_hops = 0;          // hops on the deterministic VCs
  uint64_t dateline_crossings = 0;
  uint64_t inject_full = 0;          // send() refused: injection queue full
  uint64_t dropped_link_down = 0;    // next hop's link is down
  uint64_t tx_no_buffer = 0;         // pool empty when building or copying
};
extern const CounterField kNetCountersFields[];
extern const int kNetCountersFieldCount;

struct SendOptions {
  bool adaptive = false;  // minimal-adaptive routing for this packet
  bool deposit = false;   // leave a copy at every node on the way
  uint8_t hints = 0;      // force directions (0: minimal route)
};

class NetStack final : public Poller, public LinkClient {
 public:
  NetStack(const Dims& dims, const Coord& me, PacketPool& pool, EventLoop& loop, const NetConfig& cfg);
  ~NetStack() override;

  // ---- setup (before the loop runs) ----
  // label names the port in messages ("port0 (x+)"); default: the port's own name.
  void add_port(uint16_t index, Port* port, const std::string& label = "");
  void map_dir(Dir dir, uint16_t index);
  Status set_class(uint8_t cls, const ClassEntry& e) { return classes_.set(cls, e); }
  ClassTable& classes() { return classes_; }
  const ClassTable& classes() const { return classes_; }
  void set_hello_handler(HelloHandler* h) { hello_ = h; }
  void set_handler(wire::PacketType type, PacketHandler* h) { handlers_[static_cast<int>(type)] = h; }
  void add_link_down_listener(LinkDownListener* l) { down_listeners_.push_back(l); }
  void set_adaptive(bool on) { cfg_.adaptive = on; }

  int port_of(Dir dir) const { return dir_port_[static_cast<int>(dir)]; }
  int dir_of_port(uint16_t index) const;  // kNumDirs if none
  uint16_t port_count() const { return static_cast<uint16_t>(links_.size()); }
  Link& link(uint16_t index) { return *links_[index]; }
  const Link& link(uint16_t index) const { return *links_[index]; }
  const Dims& dims() const { return dims_; }
  const Coord& me() const { return me_; }
  PacketPool& pool() { return pool_; }
  // Largest body (network header + payload) that every port carries.
  // Largest torus body the ports carry; a node without ports (1x1x1)
  // sends only to itself, in bodies as large as its pool's buffers.
  uint32_t max_body() const;

  // ---- sending ----
  Packet* alloc();  // nullptr if the pool is empty (counted)
  bool send_hello(uint16_t port, const wire::HelloBody& hello);
  // Routed unicast: p->data() at a TorusHeader whose dst, type, context and
  // tag are set; src, hints and flags are filled here. Sent now, or queued
  // for injection; false (caller keeps p) when the injection queue is full.
  bool send(Packet* p, const SendOptions& opt = {});
  // One hop on the cable in direction dir (to that neighbour), now or never:
  // false (caller keeps p) if the link has no credit. priority: VC 3.
  bool send_dir(Dir dir, Packet* p, bool priority = false);
  bool can_send_dir(Dir dir, bool priority = false) const;
  uint32_t tx_space(Dir dir) const;  // credits for a one-hop send along dir
  // Class-routed multicast from this node (its entry must accept local).
  bool send_class(uint8_t cls, Packet* p);
  uint32_t inject_queued() const { return inject_.n; }
  bool can_inject() const { return inject_.n < cfg_.inject_cap; }

  // ---- event loop and links ----
  bool poll() override;
  void on_frame(uint16_t index, wire::FrameType type, Packet* p) override;
  void on_data(uint16_t index, Packet* p) override;
  void on_link_down(uint16_t index, const Status& why) override;
  // First link-down seen (ok while every link is up).
  const Status& link_status() const { return link_down_; }
  // The partition resets (firmware/link_training.h): every packet waiting
  // here is freed and every link starts over, down, until training brings
  // it up again. Nobody is told (the caller resets the layers above).
  void reset(const Status& why);

  const NetCounters& counters() const { return ctr_; }
  // Packets waiting in input queues (transit) right now.
  uint32_t transit_queued() const;
  // Nothing of this node's waits to leave: the inject queue, the transit
  // queues and every link's transmit queue are empty (what was sent is in
  // the medium, acknowledged or not). A node that is about to stop polling
  // for a while (a benchmark checking a result) waits for this, so that a
  // neighbour never waits on frames it holds.
  bool tx_drained() const;

 private:
  struct Queue {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    uint32_t n = 0;
    void push(Packet* p);
    Packet* pop();
  };
  static constexpr int kLocal = -1;  // "input port" of locally injected packets

  bool check_header(Packet* p);
  void deliver(uint16_t port, Packet* p);
  bool deposit_copy(uint16_t port, const Packet* p);
  // Try to move p one step on (forward, deliver, or fan out); true when p is
  // gone from the caller's hands.
  bool route_unicast(Packet* p, int in_port);
  bool route_class(Packet* p, int in_port);
  bool send_on(Dir dir, uint8_t vc, Packet* p);
  bool forward_inputs();

  Dims dims_;
  Coord me_;
  // Per direction, fixed at construction: the neighbour there, and the VC
  // a packet this node starts in that direction takes (send_dir).
  std::array<Coord, kNumDirs> nbr_;
  std::array<uint8_t, kNumDirs> dir_vc_;
  PacketPool& pool_;
  EventLoop& loop_;
  NetConfig cfg_;
  Status link_down_;
  std::vector<std::unique_ptr<Link>> links_;
  std::array<int, kNumDirs> dir_port_;
  std::vector<int> port_dir_;
  uint32_t max_body_ = 0;
  ClassTable classes_;
  HelloHandler* hello_ = nullptr;
  std::array<PacketHandler*, wire::kMaxPacketType + 1> handlers_{};
  std::vector<LinkDownListener*> down_listeners_;
  std::vector<std::array<Queue, wire::kNumVcs>> in_;  // per port, per VC
  Queue inject_;
  uint32_t rr_ = 0;  // round-robin start over input queues
  // Bit port * kNumVcs + vc: that input queue holds packets (forward_inputs
  // visits only those, without touching the others).
  std::vector<uint64_t> in_busy_;
  bool in_busy(uint32_t qi) const { return (in_busy_[qi >> 6] >> (qi & 63)) & 1; }
  uint32_t transit_n_ = 0;  // packets in the input queues (all ports and VCs)
  NetCounters ctr_;
};

}  // namespace toroid
