// The sim backend's link model and discrete-event scheduler.
//
// Ownership: a frame taken by tx_burst belongs to the fabric until it is
// pushed into the receiver's rx ring (then to whoever rx_bursts it) or lost
// (then the fabric frees it back to its pool). Pools must outlive the fabric.
#include "drivers/sim/sim_fabric.h"

#include <cassert>
#include <cmath>
#include <cstring>

namespace toroid {

const CounterField kFabricStatsFields[] = {
    TOROID_COUNTER(FabricStats, frames_offered), TOROID_COUNTER(FabricStats, frames_delivered),
    TOROID_COUNTER(FabricStats, bytes_delivered), TOROID_COUNTER(FabricStats, dropped),
    TOROID_COUNTER(FabricStats, corrupted),     TOROID_COUNTER(FabricStats, duplicated),
    TOROID_COUNTER(FabricStats, reordered),     TOROID_COUNTER(FabricStats, cut_dropped),
    TOROID_COUNTER(FabricStats, rx_overflow),   TOROID_COUNTER(FabricStats, no_buffer),
    TOROID_COUNTER(FabricStats, oversize),      TOROID_COUNTER(FabricStats, events),
    TOROID_COUNTER(FabricStats, steps),
};
const int kFabricStatsFieldCount = static_cast<int>(sizeof kFabricStatsFields / sizeof kFabricStatsFields[0]);
static_assert(sizeof(FabricStats) == 13 * sizeof(uint64_t), "add the new FabricStats field to kFabricStatsFields");

// One cable. Direction d carries frames from end[d] to end[1 - d]; each
// direction serializes and draws its random numbers on its own.
struct SimFabric::Link {
  struct Half {
    uint64_t busy_until = 0;  // the transmitter is busy sending until then
    uint64_t cut_at = kNever;
    uint64_t cut_until = kNever;
    bool cut(uint64_t now) const { return cut_at <= now && now < cut_until; }
    Rng rng;
  };
  SimPort* end[2] = {nullptr, nullptr};
  Half dir[2];
};

namespace {

// What the trace records, folded into the hash with the event.
enum TraceKind : uint64_t {
  kTrDeliver = 1,
  kTrDrop,
  kTrCorrupt,
  kTrDup,
  kTrReorder,
  kTrCut,
  kTrOverflow,
  kTrOversize,
  kTrNoBuffer,
};

uint64_t link_tag(TraceKind kind, uint32_t link, int dir) {
  return (uint64_t{kind} << 56) | (uint64_t{link} << 1) | static_cast<uint64_t>(dir);
}

uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// A fast 64-bit digest of the frame bytes (one multiply per word, then a
// final avalanche); it only has to make different payloads fold differently.
uint64_t hash_bytes(const uint8_t* d, uint32_t n) {
  uint64_t h = 0x243f6a8885a308d3ull ^ n;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, d, 8);
    h = rotl64(h ^ w, 29) * 0x9e3779b97f4a7c15ull;
    d += 8;
    n -= 8;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, d, n);
    h = rotl64(h ^ w, 29) * 0x9e3779b97f4a7c15ull;
  }
  return mix64(h);
}

// Uniform in [0, n) from a 64-bit draw already taken.
uint64_t scale(uint64_t r, uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64); }

}  // namespace

// ---- SimPort ----------------------------------------------------------------

SimPort::SimPort(SimFabric* fabric, uint32_t node, uint32_t id, std::string name, PacketPool* pool)
    : fabric_(fabric), node_(node), id_(id), pool_(pool) {
  info_.name = std::move(name);
  info_.driver = "sim";
}

uint16_t SimPort::rx_burst(Packet** pkts, uint16_t n) {
  uint16_t k = 0;
  const uint32_t mask = static_cast<uint32_t>(rx_.size()) - 1;
  while (k < n && rx_count_ > 0) {
    pkts[k++] = rx_[rx_head_];
    rx_head_ = (rx_head_ + 1) & mask;
    --rx_count_;
  }
  return k;
}

uint16_t SimPort::tx_burst(Packet** pkts, uint16_t n) { return fabric_->transmit(this, pkts, n); }

LinkState SimPort::link_state() const {
  if (link_ < 0) return LinkState::kDown;
  const auto& l = fabric_->links_[static_cast<size_t>(link_)];
  const uint64_t now = fabric_->now();
  return (l.dir[0].cut(now) || l.dir[1].cut(now)) ? LinkState::kDown : LinkState::kUp;
}

bool SimPort::rx_push(Packet* p) {
  if (rx_count_ >= tuning::kSimRxQueueMax) return false;
  if (rx_count_ == rx_.size()) {
    // Ring full: double it (power of two), unrolling the old contents in order.
    const size_t old = rx_.size();
    std::vector<Packet*> bigger(old ? old * 2 : 8);
    for (uint32_t i = 0; i < rx_count_; ++i) bigger[i] = rx_[(rx_head_ + i) & (old - 1)];
    rx_.swap(bigger);
    rx_head_ = 0;
  }
  rx_[(rx_head_ + rx_count_) & (rx_.size() - 1)] = p;
  ++rx_count_;
  return true;
}

// ---- SimFabric: wiring ------------------------------------------------------

SimFabric::SimFabric(uint64_t seed, LinkModel model, FaultPlan plan)
    : seed_(seed), model_(model), plan_(std::move(plan)) {
  assert(model_.bytes_per_ns > 0 && "link bandwidth must be positive");
}

SimFabric::~SimFabric() {
  while (!events_.empty()) {
    if (events_.top().pkt) events_.top().pkt->free();
    events_.pop();
  }
  for (auto& port : ports_) {
    Packet* p;
    while (port->rx_burst(&p, 1) == 1) p->free();
  }
}

bool SimFabric::quiet() const {
  if (in_flight_ > 0) return false;
  for (const auto& port : ports_)
    if (port->rx_queued() > 0) return false;
  return true;
}

uint32_t SimFabric::add_node(SimEndpoint* ep) {
  const auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(ep);
  wake_at_.push_back(kNever);
  wake_seq_.push_back(0);
  port_count_.push_back(0);
  return id;
}

SimPort* SimFabric::add_port(uint32_t node, std::string name, PacketPool* pool, uint32_t max_frame) {
  assert(node < nodes_.size() && pool);
  const auto id = static_cast<uint32_t>(ports_.size());
  // The constructor is private to SimPort; make_unique cannot reach it.
  ports_.push_back(std::unique_ptr<SimPort>(new SimPort(this, node, id, std::move(name), pool)));
  SimPort* p = ports_.back().get();
  p->local_ = port_count_[node]++;
  p->info_.max_frame = max_frame;
  return p;
}

int SimFabric::connect(SimPort* a, SimPort* b) {
  if (!a || !b || a == b || a->fabric_ != this || b->fabric_ != this || a->connected() || b->connected())
    return -1;
  const int id = static_cast<int>(links_.size());
  Link l;
  l.end[0] = a;
  l.end[1] = b;
  for (int d = 0; d < 2; ++d) l.dir[d].rng = Rng::derive(seed_, static_cast<uint64_t>(id) * 2 + static_cast<uint64_t>(d));
  links_.push_back(l);
  a->link_ = id;
  a->side_ = 0;
  b->link_ = id;
  b->side_ = 1;
  return id;
}

void SimFabric::cut_link(int link, uint64_t at_ns, uint64_t until_ns) {
  assert(link >= 0 && static_cast<size_t>(link) < links_.size());
  for (auto& h : links_[static_cast<size_t>(link)].dir) {
    h.cut_at = at_ns;
    h.cut_until = until_ns;
  }
}

// ---- SimFabric: scheduler ---------------------------------------------------

void SimFabric::push(uint64_t t, EvKind kind, uint32_t target, Packet* p) {
  if (kind != EvKind::kStep) ++in_flight_;
  events_.push(Event{t, seq_++, p, target, kind});
}

void SimFabric::reserve_events(size_t n) {
  std::vector<Event> v;
  v.reserve(std::max(n, events_.size()));
  while (!events_.empty()) {
    v.push_back(events_.top());
    events_.pop();
  }
  events_ = decltype(events_)(std::greater<Event>(), std::move(v));
}

void SimFabric::trace(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t h = trace_hash_;
  h = mix64(h ^ a);
  h = mix64(h ^ b);
  h = mix64(h ^ c);
  trace_hash_ = h;
}

void SimFabric::wake(uint32_t node, uint64_t at_ns) {
  assert(node < nodes_.size());
  const uint64_t now = clock_.now_ns();
  if (at_ns < now) at_ns = now;
  if (at_ns >= wake_at_[node]) return;  // an earlier (or the same) step is already pending
  // The kStep pushed before (if any) is now stale; step() recognises it by seq.
  wake_at_[node] = at_ns;
  wake_seq_[node] = seq_;
  push(at_ns, EvKind::kStep, node, nullptr);
}

uint64_t SimFabric::run(uint64_t until_ns) {
  stop_ = false;
  uint64_t count = 0;
  while (!stop_ && !events_.empty()) {
    const Event ev = events_.top();
    if (ev.time > until_ns) break;
    events_.pop();
    clock_.set(ev.time);
    ++count;
    ++stats_.events;
    if (ev.kind == EvKind::kStep) {
      step(ev.time, ev.target, ev.seq);
    } else {
      --in_flight_;
      deliver(ev.time, ports_[ev.target].get(), ev.pkt, ev.kind == EvKind::kDeliverCorrupt);
    }
  }
  return count;
}

void SimFabric::step(uint64_t now, uint32_t node, uint64_t seq) {
  if (seq != wake_seq_[node] || wake_at_[node] != now) return;  // superseded by an earlier wake
  wake_at_[node] = kNever;
  ++stats_.steps;
  SimEndpoint* ep = nodes_[node];
  if (!ep) return;
  const uint64_t next = ep->sim_step(now);
  if (next != kNever) wake(node, next > now ? next : now + 1);
}

// ---- SimFabric: the link model (hot path) -----------------------------------

uint16_t SimFabric::transmit(SimPort* from, Packet** pkts, uint16_t n) {
  const uint64_t now = clock_.now_ns();
  uint16_t i = 0;
  for (; i < n; ++i) {
    Packet* p = pkts[i];
    if (p->len > from->info_.max_frame) {
      ++stats_.frames_offered;
      ++stats_.oversize;
      trace(now, (uint64_t{kTrOversize} << 56) | from->id_, p->len);
      p->free();
      continue;
    }
    if (from->link_ < 0) {
      ++stats_.frames_offered;
      ++stats_.cut_dropped;
      trace(now, (uint64_t{kTrCut} << 56) | from->id_, p->len);
      p->free();
      continue;
    }
    const auto link_id = static_cast<uint32_t>(from->link_);
    Link& link = links_[link_id];
    const int d = from->side_;
    Link::Half& h = link.dir[d];
    if (h.cut(now)) {
      ++stats_.frames_offered;
      ++stats_.cut_dropped;
      trace(now, link_tag(kTrCut, link_id, d), p->len);
      p->free();
      continue;
    }
    if (h.busy_until > now && h.busy_until - now > model_.tx_backlog_ns) {
      // Backlog full: the caller keeps pkts[i..n). Come back when it has
      // drained to exactly the limit, so the retry is taken.
      from->stats_.tx_full += n - i;
      wake(from->node_, h.busy_until - model_.tx_backlog_ns);
      break;
    }
    ++stats_.frames_offered;
    from->stats_.tx_packets += 1;
    from->stats_.tx_bytes += p->len;

    const uint64_t start = h.busy_until > now ? h.busy_until : now;
    const auto ser = static_cast<uint64_t>(std::ceil(static_cast<double>(p->len) / model_.bytes_per_ns));
    const uint64_t done = start + ser;
    h.busy_until = done;
    uint64_t arrival = done + model_.latency_ns + plan_.delay_ns;
    SimPort* to = link.end[1 - d];

    EvKind kind = EvKind::kDeliver;
    if (plan_.any_random()) {
      // The same draws for every frame, whatever the rates and whatever is
      // decided, so switching one fault kind on (jitter included) never
      // shifts another kind's per-frame pattern.
      const uint64_t r_jitter = h.rng.next();
      const double u_drop = h.rng.uniform();
      const double u_corrupt = h.rng.uniform();
      const double u_dup = h.rng.uniform();
      const double u_reorder = h.rng.uniform();
      const uint64_t r_bit = h.rng.next();
      const uint64_t r_hold = h.rng.next();
      arrival += scale(r_jitter, plan_.jitter_ns + 1);  // uniform in [0, jitter]

      if (u_drop < plan_.drop) {
        ++stats_.dropped;
        trace(now, link_tag(kTrDrop, link_id, d), 0);
        p->free();
        continue;
      }
      if (u_corrupt < plan_.corrupt && p->len > 0 && p->shared()) {
        // The sender keeps a reference (for retransmission): corrupt a copy,
        // as a wire would, never the sender's buffer.
        Packet* c = clone_packet(*p, from->tx_pool());
        p->free();
        if (!c) {
          ++stats_.no_buffer;
          trace(now, link_tag(kTrNoBuffer, link_id, d), 0);
          continue;
        }
        p = c;
      }
      if (u_corrupt < plan_.corrupt && p->len > 0) {
        const uint64_t bit = scale(r_bit, uint64_t{p->len} * 8);
        p->data()[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        p->user = static_cast<uint32_t>(bit);  // the fabric is this frame's only owner here
        kind = EvKind::kDeliverCorrupt;
        ++stats_.corrupted;
        trace(now, link_tag(kTrCorrupt, link_id, d), bit);
      }
      if (u_reorder < plan_.reorder) {
        const uint64_t hold = 1 + scale(r_hold, tuning::kSimReorderHoldNs);
        arrival += hold;
        ++stats_.reordered;
        trace(now, link_tag(kTrReorder, link_id, d), hold);
      }
      if (u_dup < plan_.dup) {
        // The copy is of the frame as it goes on the wire (after any bit flip).
        Packet* c = clone_packet(*p, from->tx_pool());
        if (c) {
          c->user = p->user;
          ++stats_.duplicated;
          trace(now, link_tag(kTrDup, link_id, d), arrival + 1);
          push(arrival + 1, kind, to->id_, c);
        } else {
          ++stats_.no_buffer;
          trace(now, link_tag(kTrNoBuffer, link_id, d), 0);
        }
      }
    }
    push(arrival, kind, to->id_, p);
  }
  return i;
}

void SimFabric::deliver(uint64_t now, SimPort* to, Packet* p, bool corrupt) {
  const auto link_id = static_cast<uint32_t>(to->link_);
  const int d = 1 - to->side_;  // the direction that carries frames into `to`
  if (links_[link_id].dir[d].cut(now)) {
    ++stats_.cut_dropped;
    trace(now, link_tag(kTrCut, link_id, d), p->len);
    p->free();
    return;
  }
  const uint32_t len = p->len;
  const uint64_t digest = hash_bytes(p->data(), len);
  if (!to->rx_push(p)) {
    ++stats_.rx_overflow;
    ++to->stats_.rx_dropped;
    trace(now, (uint64_t{kTrOverflow} << 56) | to->id_, digest);
    p->free();
    return;
  }
  p->port = to->local_;
  ++stats_.frames_delivered;
  stats_.bytes_delivered += len;
  ++to->stats_.rx_packets;
  to->stats_.rx_bytes += len;
  if (corrupt) {
    const uint32_t bit = p->user;
    p->user = 0;  // the receiver's scratch from here on
    if (corrupt_observer_) corrupt_observer_->on_corrupt_delivered(*to, to->stats_.rx_packets, bit);
  }
  trace(now, (uint64_t{kTrDeliver} << 56) | to->id_, mix64(len) ^ digest);
  wake(to->node_, now);
}

}  // namespace toroid
