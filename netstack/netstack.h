// NetStack: a node's view of its links. Owns one Link per port, maps ports
// to torus directions (from the personality), checks every received body's
// network header (type known, coordinates inside the partition, addressed to
// this node) and dispatches it by packet type. Hellos go to the link-training
// handler. Everything rejected is counted, per reason.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/event_loop.h"
#include "base/torus.h"
#include "netstack/link.h"
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

struct NetCounters {
  uint64_t rx_short_body = 0;      // body too short for its header
  uint64_t rx_unexpected_frame = 0;  // a link-level frame type nobody here consumes (ack)
  uint64_t rx_bad_packet_type = 0;
  uint64_t rx_bad_coord = 0;       // a coordinate outside the partition
  uint64_t rx_not_for_me = 0;      // destination is another node (no routing yet)
  uint64_t rx_no_handler = 0;      // nobody registered for the type
  uint64_t tx_no_buffer = 0;       // pool empty when building a frame
};
extern const CounterField kNetCountersFields[];
extern const int kNetCountersFieldCount;

class NetStack final : public Poller, public LinkClient {
 public:
  NetStack(const Dims& dims, const Coord& me, PacketPool& pool);
  ~NetStack() override;

  // Setup (before the loop runs): ports by personality index, then their directions.
  void add_port(uint16_t index, Port* port);
  void map_dir(Dir dir, uint16_t index);
  int port_of(Dir dir) const { return dir_port_[static_cast<int>(dir)]; }
  // kNumDirs if the port has no direction.
  int dir_of_port(uint16_t index) const;
  uint16_t port_count() const { return static_cast<uint16_t>(links_.size()); }
  Link& link(uint16_t index) { return *links_[index]; }
  const Link& link(uint16_t index) const { return *links_[index]; }

  void set_hello_handler(HelloHandler* h) { hello_ = h; }
  void set_handler(wire::PacketType type, PacketHandler* h) { handlers_[static_cast<int>(type)] = h; }

  const Dims& dims() const { return dims_; }
  const Coord& me() const { return me_; }
  PacketPool& pool() { return pool_; }
  // Largest body (network header + payload) that every port carries.
  uint32_t max_body() const { return max_body_; }

  // A packet with room for max_body() bytes, or nullptr (counted).
  Packet* alloc();
  bool send_hello(uint16_t port, const wire::HelloBody& hello);
  // Send p (p->data() at a TorusHeader) one hop along dir. Fills src/dst.
  // On false (no port for dir, or its queue is full) the caller keeps p.
  bool send_dir(Dir dir, Packet* p);
  uint32_t tx_space(Dir dir) const;

  bool poll() override;
  void on_frame(uint16_t index, wire::FrameType type, Packet* p) override;

  const NetCounters& counters() const { return ctr_; }

 private:
  Dims dims_;
  Coord me_;
  PacketPool& pool_;
  std::vector<std::unique_ptr<Link>> links_;
  std::array<int, kNumDirs> dir_port_;
  std::vector<int> port_dir_;
  uint32_t max_body_ = 0;
  HelloHandler* hello_ = nullptr;
  std::array<PacketHandler*, wire::kMaxPacketType + 1> handlers_{};
  NetCounters ctr_;
};

}  // namespace toroid
