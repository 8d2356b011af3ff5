#include "netstack/netstack.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace toroid {

using wire::FrameType;
using wire::HelloBody;
using wire::TorusHeader;

const CounterField kNetCountersFields[] = {
    TOROID_COUNTER(NetCounters, rx_short_body), TOROID_COUNTER(NetCounters, rx_unexpected_frame),
    TOROID_COUNTER(NetCounters, rx_bad_packet_type),
    TOROID_COUNTER(NetCounters, rx_bad_coord),  TOROID_COUNTER(NetCounters, rx_not_for_me),
    TOROID_COUNTER(NetCounters, rx_no_handler), TOROID_COUNTER(NetCounters, tx_no_buffer),
};
const int kNetCountersFieldCount = sizeof(kNetCountersFields) / sizeof(kNetCountersFields[0]);

NetStack::NetStack(const Dims& dims, const Coord& me, PacketPool& pool)
    : dims_(dims), me_(me), pool_(pool) {
  dir_port_.fill(-1);
}

NetStack::~NetStack() = default;

void NetStack::add_port(uint16_t index, Port* port) {
  if (links_.size() <= index) {
    links_.resize(index + 1);
    port_dir_.resize(index + 1, kNumDirs);
  }
  uint8_t mac[6];
  wire::node_mac(mac, static_cast<uint8_t>(me_.c[0]), static_cast<uint8_t>(me_.c[1]),
                 static_cast<uint8_t>(me_.c[2]), static_cast<uint8_t>(index));
  links_[index] = std::make_unique<Link>(index, port, mac, this, tuning::kCollTxQueue);
  const uint32_t overhead = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader);
  assert(pool_.buf_size() > tuning::kPacketHeadroom && "packet buffers smaller than their headroom");
  const uint32_t frame = std::min(port->info().max_frame, pool_.buf_size() - tuning::kPacketHeadroom);
  const uint32_t body = frame > overhead ? frame - overhead : 0;
  max_body_ = max_body_ == 0 ? body : std::min(max_body_, body);
}

void NetStack::map_dir(Dir dir, uint16_t index) {
  assert(index < links_.size() && links_[index] && "map_dir: add_port first");
  const int old = port_dir_[index];
  if (old < kNumDirs) dir_port_[old] = -1;
  dir_port_[static_cast<int>(dir)] = index;
  port_dir_[index] = static_cast<int>(dir);
}

int NetStack::dir_of_port(uint16_t index) const {
  return index < port_dir_.size() ? port_dir_[index] : kNumDirs;
}

Packet* NetStack::alloc() {
  Packet* p = pool_.alloc();
  if (!p) ++ctr_.tx_no_buffer;
  return p;
}

bool NetStack::send_hello(uint16_t port, const HelloBody& hello) {
  if (port >= links_.size() || !links_[port]) return false;
  Packet* p = alloc();
  if (!p) return false;
  std::memcpy(p->append(sizeof hello), &hello, sizeof hello);
  if (!links_[port]->send(FrameType::kHello, p)) {
    p->free();
    return false;
  }
  return true;
}

bool NetStack::send_dir(Dir dir, Packet* p) {
  const int port = port_of(dir);
  if (port < 0 || p->len < sizeof(TorusHeader)) return false;
  auto* th = reinterpret_cast<TorusHeader*>(p->data());
  const Coord to = neighbour(me_, dir, dims_);
  for (int i = 0; i < kDims; ++i) {
    th->src[i] = static_cast<uint8_t>(me_.c[i]);
    th->dst[i] = static_cast<uint8_t>(to.c[i]);
  }
  return links_[port]->send(FrameType::kData, p);
}

uint32_t NetStack::tx_space(Dir dir) const {
  const int port = port_of(dir);
  return port < 0 ? 0 : links_[port]->tx_space();
}

bool NetStack::poll() {
  bool busy = false;
  for (auto& l : links_)
    if (l) busy |= l->poll();
  return busy;
}

void NetStack::on_frame(uint16_t index, FrameType type, Packet* p) {
  if (type == FrameType::kHello) {
    HelloBody h;
    if (p->len < sizeof h) {
      ++ctr_.rx_short_body;
    } else if (hello_) {
      std::memcpy(&h, p->data(), sizeof h);
      hello_->on_hello(index, h);
    } else {
      ++ctr_.rx_no_handler;
    }
    p->free();
    return;
  }
  if (type != FrameType::kData) {
    ++ctr_.rx_unexpected_frame;
    p->free();
    return;
  }
  if (p->len < sizeof(TorusHeader)) {
    ++ctr_.rx_short_body;
    p->free();
    return;
  }
  const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
  if (th->type == 0 || th->type > wire::kMaxPacketType) {
    ++ctr_.rx_bad_packet_type;
    p->free();
    return;
  }
  for (int i = 0; i < kDims; ++i) {
    if (th->dst[i] >= dims_.n[i] || th->src[i] >= dims_.n[i]) {
      ++ctr_.rx_bad_coord;
      p->free();
      return;
    }
  }
  for (int i = 0; i < kDims; ++i) {
    if (th->dst[i] != me_.c[i]) {
      ++ctr_.rx_not_for_me;
      p->free();
      return;
    }
  }
  PacketHandler* h = handlers_[th->type];
  if (!h) {
    ++ctr_.rx_no_handler;
    p->free();
    return;
  }
  h->on_packet(index, p);
}

}  // namespace toroid
