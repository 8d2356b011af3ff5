// NetStack setup, local sends, receive-side checks and local delivery. The
// forwarding engine is in netstack_route.cc.
#include "netstack/netstack.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace toroid {

using wire::FrameType;
using wire::HelloBody;
using wire::TorusHeader;

const CounterField kNetCountersFields[] = {
    TOROID_COUNTER(NetCounters, rx_short_body),      TOROID_COUNTER(NetCounters, rx_unexpected_frame),
    TOROID_COUNTER(NetCounters, rx_bad_packet_type), TOROID_COUNTER(NetCounters, rx_bad_coord),
    TOROID_COUNTER(NetCounters, rx_bad_hints),       TOROID_COUNTER(NetCounters, rx_unknown_class),
    TOROID_COUNTER(NetCounters, rx_class_refused),   TOROID_COUNTER(NetCounters, rx_no_handler),
    TOROID_COUNTER(NetCounters, delivered),          TOROID_COUNTER(NetCounters, deposited),
    TOROID_COUNTER(NetCounters, forwarded),          TOROID_COUNTER(NetCounters, multicast_copies),
    TOROID_COUNTER(NetCounters, adaptive_hops),      TOROID_COUNTER(NetCounters, escape_hops),
    TOROID_COUNTER(NetCounters, dateline_crossings), TOROID_COUNTER(NetCounters, inject_full),
    TOROID_COUNTER(NetCounters, dropped_link_down),  TOROID_COUNTER(NetCounters, tx_no_buffer),
};
const int kNetCountersFieldCount = sizeof(kNetCountersFields) / sizeof(kNetCountersFields[0]);

void NetStack::Queue::push(Packet* p) {
  p->next = nullptr;
  if (tail) tail->next = p;
  else head = p;
  tail = p;
  ++n;
}

Packet* NetStack::Queue::pop() {
  Packet* p = head;
  if (!p) return nullptr;
  head = p->next;
  if (!head) tail = nullptr;
  --n;
  p->next = nullptr;
  return p;
}

NetStack::NetStack(const Dims& dims, const Coord& me, PacketPool& pool, EventLoop& loop, const NetConfig& cfg)
    : dims_(dims), me_(me), pool_(pool), loop_(loop), cfg_(cfg) {
  dir_port_.fill(-1);
  for (int i = 0; i < kNumDirs; ++i) {
    const Dir dir = static_cast<Dir>(i);
    const int d = dir_dim(dir);
    nbr_[i] = neighbour(me_, dir, dims_);
    dir_vc_[i] = dateline_vc(me_.c[d], dir, dims_.n[d], 0, cfg_.dateline);
  }
}

NetStack::~NetStack() {
  for (auto& per_port : in_)
    for (auto& q : per_port)
      while (Packet* p = q.pop()) p->free();
  while (Packet* p = inject_.pop()) p->free();
}

void NetStack::add_port(uint16_t index, Port* port, const std::string& label) {
  if (links_.size() <= index) {
    links_.resize(index + 1);
    port_dir_.resize(index + 1, kNumDirs);
    in_.resize(index + 1);
    in_busy_.resize((in_.size() * wire::kNumVcs + 63) / 64, 0);
  }
  uint8_t mac[6];
  wire::node_mac(mac, static_cast<uint8_t>(me_.c[0]), static_cast<uint8_t>(me_.c[1]),
                 static_cast<uint8_t>(me_.c[2]), static_cast<uint8_t>(index));
  const std::string name = "node " + me_.to_string() + " port " + (label.empty() ? port->info().name : label);
  links_[index] = std::make_unique<Link>(index, port, mac, this, loop_, cfg_.link, name);
  const uint32_t overhead = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader);
  assert(pool_.buf_size() > tuning::kPacketHeadroom && "packet buffers smaller than their headroom");
  const uint32_t frame = std::min(port->info().max_frame, pool_.buf_size() - tuning::kPacketHeadroom);
  const uint32_t body = frame > overhead ? frame - overhead : 0;
  max_body_ = max_body_ == 0 ? body : std::min(max_body_, body);
}

uint32_t NetStack::max_body() const {
  if (!links_.empty()) return max_body_;
  const uint32_t overhead = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader);
  const uint32_t room = pool_.buf_size() > tuning::kPacketHeadroom ? pool_.buf_size() - tuning::kPacketHeadroom : 0;
  return room > overhead ? room - overhead : 0;
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

uint32_t NetStack::transit_queued() const { return transit_n_; }

bool NetStack::tx_drained() const {
  if (inject_.n != 0 || transit_n_ != 0) return false;
  for (const auto& l : links_)
    if (l && l->tx_queued() != 0) return false;
  return true;
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
  if (!links_[port]->send_raw(FrameType::kHello, p)) {
    p->free();
    return false;
  }
  return true;
}

static void stamp(TorusHeader* th, const Coord& src, const Coord& dst) {
  for (int i = 0; i < kDims; ++i) {
    th->src[i] = static_cast<uint8_t>(src.c[i]);
    th->dst[i] = static_cast<uint8_t>(dst.c[i]);
  }
}

bool NetStack::can_send_dir(Dir dir, bool priority) const {
  const int port = port_of(dir);
  if (port < 0) return false;
  const uint8_t vc = priority ? static_cast<uint8_t>(wire::kVcPriority) : dir_vc_[static_cast<int>(dir)];
  return links_[port]->can_send(vc);
}

uint32_t NetStack::tx_space(Dir dir) const {
  const int port = port_of(dir);
  if (port < 0) return 0;
  return links_[port]->credits(dir_vc_[static_cast<int>(dir)]);
}

bool NetStack::send_dir(Dir dir, Packet* p, bool priority) {
  const int port = port_of(dir);
  if (port < 0 || p->len < sizeof(TorusHeader)) return false;
  auto* th = reinterpret_cast<TorusHeader*>(p->data());
  stamp(th, me_, nbr_[static_cast<int>(dir)]);
  th->hints = static_cast<uint8_t>(1u << static_cast<int>(dir));
  th->flags = priority ? wire::kTorusPriority : 0;
  const uint8_t vc = priority ? static_cast<uint8_t>(wire::kVcPriority) : dir_vc_[static_cast<int>(dir)];
  if (!links_[port]->send(vc, p)) return false;
  if (vc == wire::kVcHigh) ++ctr_.dateline_crossings;
  return true;
}

bool NetStack::send(Packet* p, const SendOptions& opt) {
  if (p->len < sizeof(TorusHeader)) return false;
  if (inject_.n >= cfg_.inject_cap) {
    ++ctr_.inject_full;
    return false;
  }
  auto* th = reinterpret_cast<TorusHeader*>(p->data());
  Coord dst;
  for (int i = 0; i < kDims; ++i) dst.c[i] = th->dst[i];
  stamp(th, me_, dst);
  th->cls = 0;
  th->hints = opt.hints ? opt.hints : minimal_hints(me_, dst, dims_);
  th->flags = static_cast<uint8_t>((opt.deposit ? wire::kTorusDeposit : 0) |
                                   (opt.adaptive || cfg_.adaptive ? wire::kTorusAdaptive : 0));
  // Keep per-source order: a packet may overtake nothing already queued.
  if (inject_.n == 0 && route_unicast(p, kLocal)) return true;
  inject_.push(p);
  return true;
}

bool NetStack::send_class(uint8_t cls, Packet* p) {
  if (p->len < sizeof(TorusHeader)) return false;
  if (inject_.n >= cfg_.inject_cap) {
    ++ctr_.inject_full;
    return false;
  }
  auto* th = reinterpret_cast<TorusHeader*>(p->data());
  stamp(th, me_, me_);
  th->cls = cls;
  th->hints = 0;
  th->flags = 0;
  p->user = 0;
  if (inject_.n == 0 && route_class(p, kLocal)) return true;
  inject_.push(p);
  return true;
}

void NetStack::reset(const Status& why) {
  // Transit packets hold receive buffers of links that start over below:
  // freed without a release.
  for (auto& per_port : in_)
    for (auto& q : per_port)
      while (Packet* p = q.pop()) p->free();
  transit_n_ = 0;
  std::fill(in_busy_.begin(), in_busy_.end(), 0);
  while (Packet* p = inject_.pop()) p->free();
  for (auto& l : links_)
    if (l && !l->disabled()) l->reset(why);
}

void NetStack::on_link_down(uint16_t index, const Status& why) {
  if (link_down_.is_ok()) link_down_ = why;
  // Packets waiting to go out on that link are dropped when they reach the
  // head of their queue (route_* counts them); listeners fail their waits.
  for (LinkDownListener* l : down_listeners_) l->on_link_down(index, why);
}

// Checks every field a router reads; counts and frees p when it is bad.
bool NetStack::check_header(Packet* p) {
  if (p->len < sizeof(TorusHeader)) {
    ++ctr_.rx_short_body;
    return false;
  }
  const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
  if (th->type == 0 || th->type > wire::kMaxPacketType) {
    ++ctr_.rx_bad_packet_type;
    return false;
  }
  for (int i = 0; i < kDims; ++i) {
    if (th->dst[i] >= dims_.n[i] || th->src[i] >= dims_.n[i]) {
      ++ctr_.rx_bad_coord;
      return false;
    }
  }
  if (th->cls != 0 && !classes_.lookup(th->cls)) {
    ++ctr_.rx_unknown_class;
    return false;
  }
  return true;
}

void NetStack::on_data(uint16_t index, Packet* p) {
  const uint8_t vc = static_cast<uint8_t>(p->vc);
  p->user = 0;
  if (!check_header(p)) {
    p->free();
    links_[index]->release(vc);
    return;
  }
  // Transit and local packets alike queue behind what arrived before them
  // on this (port, VC): order per link and channel is kept.
  Queue& q = in_[index][vc];
  if (q.n == 0) {
    const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
    const bool moved = th->cls ? route_class(p, index) : route_unicast(p, index);
    if (moved) {
      links_[index]->release(vc);
      return;
    }
  }
  q.push(p);
  ++transit_n_;
  const uint32_t qi = uint32_t{index} * wire::kNumVcs + vc;
  in_busy_[qi >> 6] |= uint64_t{1} << (qi & 63);
}

void NetStack::deliver(uint16_t port, Packet* p) {
  const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
  PacketHandler* h = handlers_[th->type];
  if (!h) {
    ++ctr_.rx_no_handler;
    p->free();
    return;
  }
  ++ctr_.delivered;
  h->on_packet(port, p);
}

bool NetStack::deposit_copy(uint16_t port, const Packet* p) {
  Packet* c = clone_packet(*p, pool_);
  if (!c) {
    ++ctr_.tx_no_buffer;
    return false;
  }
  ++ctr_.deposited;
  deliver(port, c);
  return true;
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
  ++ctr_.rx_unexpected_frame;
  p->free();
}

}  // namespace toroid
