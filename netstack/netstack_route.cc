// The forwarding engine of NetStack: unicast (deterministic or adaptive),
// deposit-bit copies, class-routed fan-out, and the poll loop that drains
// input and injection queues. See route.h for the deadlock-freedom argument.
#include <cstring>

#include "netstack/netstack.h"

namespace toroid {

using wire::TorusHeader;

namespace {
// Packet::user bits while a class packet fans out (it may take several polls).
constexpr uint32_t kFanStarted = 1u << 31;
constexpr uint32_t kFanDeposit = 1u << 30;
constexpr uint32_t kFanDirs = 0x3f;
constexpr uint32_t kDeposited = 1u << 29;  // a unicast packet already left its copy here
constexpr uint16_t kLocalPort = 0xffff;  // "arrival port" of packets this node sent itself

Coord dst_of(const TorusHeader* th) {
  Coord c;
  for (int i = 0; i < kDims; ++i) c.c[i] = th->dst[i];
  return c;
}
}  // namespace

// Send p on the link in direction dir on vc, marking a dateline crossing.
bool NetStack::send_on(Dir dir, uint8_t vc, Packet* p) {
  const int port = port_of(dir);
  auto* th = reinterpret_cast<TorusHeader*>(p->data());
  const int d = dir_dim(dir);
  const uint8_t saved = th->flags;
  if (cfg_.dateline == Dateline::kOn && crosses_dateline(me_.c[d], dir, dims_.n[d])) {
    th->flags = static_cast<uint8_t>(th->flags | wire::crossed_flag(d));
  }
  if (!links_[port]->send(vc, p)) {
    th->flags = saved;
    return false;
  }
  if (th->flags != saved) ++ctr_.dateline_crossings;
  return true;
}

bool NetStack::route_unicast(Packet* p, int in_port) {
  auto* th = reinterpret_cast<TorusHeader*>(p->data());
  const Coord dst = dst_of(th);
  const uint16_t arrival = in_port == kLocal ? kLocalPort : static_cast<uint16_t>(in_port);
  if (dst == me_) {
    deliver(arrival, p);
    return true;
  }
  // Adaptive first: any productive direction with a credit on VC 2.
  if (th->flags & wire::kTorusAdaptive) {
    const uint8_t dirs = productive_dirs(me_, dst, th->hints, dims_);
    int best = -1;
    uint32_t best_credits = 0;
    for (int d = 0; d < kNumDirs; ++d) {
      if (!(dirs & (1u << d))) continue;
      const int port = dir_port_[d];
      if (port < 0 || !links_[port]->up()) continue;
      const uint32_t c = links_[port]->can_send(wire::kVcAdaptive) ? links_[port]->credits(wire::kVcAdaptive) : 0;
      if (c > best_credits) {
        best = d;
        best_credits = c;
      }
    }
    if (best >= 0) {
      if ((th->flags & wire::kTorusDeposit) && in_port != kLocal && !(p->user & kDeposited)) {
        if (!deposit_copy(arrival, p)) return false;
        p->user |= kDeposited;
      }
      const uint32_t saved_user = p->user;
      p->user = 0;
      if (send_on(static_cast<Dir>(best), wire::kVcAdaptive, p)) {
        ++ctr_.adaptive_hops;
        if (in_port != kLocal) ++ctr_.forwarded;
        return true;
      }
      p->user = saved_user;
    }
  }
  Hop hop;
  bool bad = false;
  if (!next_hop(me_, dst, th->hints, th->flags, dims_, cfg_.dateline, &hop, &bad) || bad) {
    ++ctr_.rx_bad_hints;
    p->free();
    return true;
  }
  const int port = port_of(hop.dir);
  if (port < 0 || links_[port]->disabled()) {
    ++ctr_.dropped_link_down;
    p->free();
    return true;
  }
  // A link that is down trains again (firmware/link_training.h): the packet
  // waits for it, holding its buffer, until it is up or the partition resets.
  if (!links_[port]->can_send(hop.vc)) return false;
  // The deposit copy is made only once the packet can move on, so a blocked
  // packet never leaves two copies.
  if ((th->flags & wire::kTorusDeposit) && in_port != kLocal && !(p->user & kDeposited)) {
    if (!deposit_copy(arrival, p)) return false;
    p->user |= kDeposited;
  }
  const uint32_t saved_user = p->user;
  p->user = 0;  // the link uses this field from here on
  if (!send_on(hop.dir, hop.vc, p)) {
    p->user = saved_user;
    return false;
  }
  ++ctr_.escape_hops;
  if (in_port != kLocal) ++ctr_.forwarded;
  return true;
}

bool NetStack::route_class(Packet* p, int in_port) {
  auto* th = reinterpret_cast<TorusHeader*>(p->data());
  const uint16_t arrival = in_port == kLocal ? kLocalPort : static_cast<uint16_t>(in_port);
  if (!(p->user & kFanStarted)) {
    const ClassEntry* e = classes_.lookup(th->cls);
    if (!e) {
      ++ctr_.rx_unknown_class;
      p->free();
      return true;
    }
    const uint8_t in_bit = in_port == kLocal ? kClassFromLocal
                                             : static_cast<uint8_t>(1u << dir_of_port(static_cast<uint16_t>(in_port)));
    if (in_port != kLocal && dir_of_port(static_cast<uint16_t>(in_port)) >= kNumDirs) {
      ++ctr_.rx_class_refused;
      p->free();
      return true;
    }
    if (!(e->accept & in_bit)) {
      ++ctr_.rx_class_refused;
      p->free();
      return true;
    }
    p->user = kFanStarted | (e->deposit ? kFanDeposit : 0) | (e->out & kFanDirs);
  }
  if (p->user & kFanDeposit) {
    // The last consumer of a leaf's packet is the local handler: no copy.
    if ((p->user & kFanDirs) == 0) {
      ++ctr_.deposited;
      deliver(arrival, p);
      return true;
    }
    if (!deposit_copy(arrival, p)) return false;
    p->user &= ~kFanDeposit;
  }
  for (int d = 0; d < kNumDirs; ++d) {
    if (!(p->user & (1u << d))) continue;
    const Dir dir = static_cast<Dir>(d);
    const int port = port_of(dir);
    if (port < 0 || links_[port]->disabled()) {
      ++ctr_.dropped_link_down;
      p->user &= ~(1u << d);
      continue;
    }
    const int dim = dir_dim(dir);
    const uint8_t vc = dateline_vc(me_.c[dim], dir, dims_.n[dim], th->flags, cfg_.dateline);
    if (!links_[port]->can_send(vc)) continue;  // try again next poll
    const bool last = (p->user & kFanDirs) == (1u << d);
    Packet* out = p;
    if (!last) {
      out = clone_packet(*p, pool_);
      if (!out) {
        ++ctr_.tx_no_buffer;
        return false;
      }
      ++ctr_.multicast_copies;
    }
    const uint32_t fan = p->user;
    out->user = 0;  // the link uses this field from here on
    if (!send_on(dir, vc, out)) {
      if (!last) out->free();
      else p->user = fan;
      continue;
    }
    if (in_port != kLocal) ++ctr_.forwarded;
    if (last) return true;
    p->user &= ~(1u << d);
  }
  if ((p->user & kFanDirs) == 0) {
    p->free();  // every direction was down
    return true;
  }
  return false;
}

// Move p back to the head of q (it could not move on this round).
static void push_front(Packet* p, Packet** head, Packet** tail, uint32_t* n) {
  p->next = *head;
  *head = p;
  if (!*tail) *tail = p;
  ++*n;
}

bool NetStack::forward_inputs() {
  if (transit_n_ == 0) return false;
  bool moved = false;
  const uint32_t nq = static_cast<uint32_t>(in_.size()) * wire::kNumVcs;
  // In round-robin order from rr_, the busy queues only (no division per
  // queue: this runs at every poll while anything is in transit).
  for (uint32_t k = 0, qi = rr_; k < nq; ++k, qi = qi + 1 == nq ? 0 : qi + 1) {
    if (!in_busy(qi)) continue;
    const uint16_t port = static_cast<uint16_t>(qi / wire::kNumVcs);
    const uint8_t vc = static_cast<uint8_t>(qi % wire::kNumVcs);
    Queue& q = in_[port][vc];
    while (q.head) {
      Packet* p = q.pop();
      const bool is_class = reinterpret_cast<const TorusHeader*>(p->data())->cls != 0;
      // route_* either keeps p (false) or consumes it: sent, delivered or freed.
      if (!(is_class ? route_class(p, port) : route_unicast(p, port))) {
        push_front(p, &q.head, &q.tail, &q.n);
        break;
      }
      links_[port]->release(vc);  // its receive buffer is free again
      --transit_n_;
      moved = true;
    }
    if (!q.head) in_busy_[qi >> 6] &= ~(uint64_t{1} << (qi & 63));
  }
  rr_ = rr_ + 1 >= nq ? 0 : rr_ + 1;
  return moved;
}

bool NetStack::poll() {
  bool busy = false;
  for (auto& l : links_)
    if (l) busy |= l->poll();
  busy |= forward_inputs();
  while (inject_.head) {
    Packet* p = inject_.pop();
    const bool is_class = reinterpret_cast<const TorusHeader*>(p->data())->cls != 0;
    if (!(is_class ? route_class(p, kLocal) : route_unicast(p, kLocal))) {
      push_front(p, &inject_.head, &inject_.tail, &inject_.n);  // order is kept
      break;
    }
    busy = true;
  }
  return busy;
}

}  // namespace toroid
