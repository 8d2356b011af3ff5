// The sim backend's link model: ports, cables, serialization, faults, the
// copy of every frame in flight, arrival into the receiver's rx ring, and
// the trace. The scheduler that drives it is in sim_sched.cc.
//
// Ownership: tx_burst copies a frame it takes into an in-flight buffer of the
// sender's region and frees the sender's reference at once; at arrival the
// receiver gets a packet from its own port's pool with those bytes. Pools
// must outlive the fabric (the fabric frees what is in rx rings).
#include <cassert>
#include <cmath>
#include <cstring>

#include "drivers/sim/sim_internal.h"

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

uint64_t LinkModel::min_latency() const {
  uint64_t m = latency_ns;
  if (classify)
    for (const LinkChannel& c : extra) m = c.latency_ns < m ? c.latency_ns : m;
  return m;
}

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

// A fast 64-bit digest of the frame bytes: four independent lanes of one
// multiply per word (so the multiplies overlap), then a final avalanche. It
// only has to make different payloads fold differently.
uint64_t hash_bytes(const uint8_t* d, uint32_t n) {
  uint64_t h[4] = {0x243f6a8885a308d3ull ^ n, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
  while (n >= 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, d + 8 * l, 8);
      h[l] = rotl64(h[l] ^ w, 29) * 0x9e3779b97f4a7c15ull;
    }
    d += 32;
    n -= 32;
  }
  uint64_t x = h[0] ^ rotl64(h[1], 17) ^ rotl64(h[2], 31) ^ rotl64(h[3], 47);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, d, 8);
    x = rotl64(x ^ w, 29) * 0x9e3779b97f4a7c15ull;
    d += 8;
    n -= 8;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, d, n);
    x = rotl64(x ^ w, 29) * 0x9e3779b97f4a7c15ull;
  }
  return mix64(x);
}

// Uniform in [0, n) from a 64-bit draw already taken.
uint64_t scale(uint64_t r, uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64); }

void fold(uint64_t* h, bool* touched, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = *h;
  x = mix64(x ^ a);
  x = mix64(x ^ b);
  x = mix64(x ^ c);
  *h = x;
  *touched = true;
}

}  // namespace

// ---- SimPort ----------------------------------------------------------------

SimPort::SimPort(SimFabric* fabric, uint32_t node, uint32_t id, std::string name, PacketPool* pool)
    : fabric_(fabric), node_(node), id_(id), pool_(pool) {
  info_.name = std::move(name);
  info_.driver = "sim";
}

SimPort::~SimPort() = default;

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
  const uint64_t now = region_->clock.now_ns();
  return (l.dir[0].cut(now) || l.dir[1].cut(now)) ? LinkState::kDown : LinkState::kUp;
}

void SimPort::reserve_rx(uint32_t n) {
  size_t cap = rx_.size() ? rx_.size() : 8;
  while (cap < n) cap *= 2;
  if (cap == rx_.size()) return;
  // A bigger ring (power of two), the old contents unrolled in order.
  const size_t old = rx_.size();
  std::vector<Packet*> bigger(cap);
  for (uint32_t i = 0; i < rx_count_; ++i) bigger[i] = rx_[(rx_head_ + i) & (old - 1)];
  rx_.swap(bigger);
  rx_head_ = 0;
}

bool SimPort::rx_push(Packet* p) {
  if (rx_count_ >= tuning::kSimRxQueueMax) return false;
  if (rx_count_ == rx_.size()) reserve_rx(rx_count_ + 1);  // doubles
  rx_[(rx_head_ + rx_count_) & (rx_.size() - 1)] = p;
  ++rx_count_;
  return true;
}

// ---- SimFabric: wiring ------------------------------------------------------

SimFabric::SimFabric(uint64_t seed, LinkModel model, FaultPlan plan, uint32_t regions, uint32_t threads)
    : seed_(seed), model_(model), plan_(std::move(plan)) {
  assert(model_.bytes_per_ns > 0 && "link bandwidth must be positive");
  if (regions == 0) regions = 1;
  threads_ = threads == 0 || threads > regions ? regions : threads;
  for (uint32_t r = 0; r < regions; ++r) {
    auto reg = std::make_unique<SimRegion>();
    reg->id = r;
    for (auto& o : reg->out) o.resize(regions);
    reg->mail_min.assign(regions, kNever);
    reg->mailed.reserve(regions);
    regions_.push_back(std::move(reg));
  }
}

SimFabric::~SimFabric() {
  if (workers_) {
    {
      std::lock_guard<std::mutex> lk(workers_->mu);
      workers_->quit = true;
      ++workers_->run_gen;
    }
    workers_->cv.notify_all();
    for (auto& t : workers_->threads) t.join();
  }
  // In-flight frames are arena memory (released with the regions); packets
  // in rx rings go back to their pools.
  for (auto& port : ports_) {
    Packet* p;
    while (port->rx_burst(&p, 1) == 1) p->free();
  }
}

VirtualClock& SimFabric::clock(uint32_t region) { return regions_[region < regions_.size() ? region : 0]->clock; }

uint64_t SimFabric::now() const {
  uint64_t t = 0;
  for (const auto& r : regions_) t = r->clock.now_ns() > t ? r->clock.now_ns() : t;
  return t;
}

uint32_t SimFabric::add_node(SimEndpoint* ep, uint32_t region) {
  const auto id = static_cast<uint32_t>(nodes_.size());
  NodeRec n;
  n.ep = ep;
  n.region = region < regions_.size() ? region : 0;
  nodes_.push_back(n);
  return id;
}

SimPort* SimFabric::add_port(uint32_t node, std::string name, PacketPool* pool, uint32_t max_frame, bool integrity) {
  assert(node < nodes_.size() && pool);
  assert(!(integrity && plan_.corrupt > 0) && "a corrupting medium guarantees no integrity");
  const auto id = static_cast<uint32_t>(ports_.size());
  // The constructor is private to SimPort; make_unique cannot reach it.
  ports_.push_back(std::unique_ptr<SimPort>(new SimPort(this, node, id, std::move(name), pool)));
  SimPort* p = ports_.back().get();
  NodeRec& n = nodes_[node];
  p->local_ = n.nports++;
  p->region_ = regions_[n.region].get();
  p->info_.max_frame = max_frame;
  p->info_.medium_integrity = integrity;
  if (!n.first_port) n.first_port = p;
  else n.last_port->next_on_node_ = p;
  n.last_port = p;
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

bool SimFabric::quiet() const {
  for (const auto& port : ports_)
    if (!port->wire_.empty() || port->rx_count_ > 0) return false;
  return true;
}

uint64_t SimFabric::trace_hash() const {
  // Each port's two streams are deterministic whatever the thread count;
  // fold them in port order.
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& p : ports_) {
    if (p->tx_traced_) h = mix64(mix64(h ^ (uint64_t{p->id_} << 1)) ^ p->tx_trace_);
    if (p->rx_traced_) h = mix64(mix64(h ^ (uint64_t{p->id_} << 1 | 1)) ^ p->rx_trace_);
  }
  return h;
}

const FabricStats& SimFabric::stats() const {
  stats_ = FabricStats{};
  for (const auto& r : regions_) add_counters(&stats_, &r->stats, kFabricStatsFields, kFabricStatsFieldCount);
  return stats_;
}

// ---- SimFabric: the link model (hot path) -----------------------------------

uint16_t SimFabric::transmit(SimPort* from, Packet** pkts, uint16_t n) {
  SimRegion& reg = *from->region_;
  FabricStats& st = reg.stats;
  const uint64_t now = reg.clock.now_ns();
  uint16_t i = 0;
  for (; i < n; ++i) {
    Packet* p = pkts[i];
    if (p->len > from->info_.max_frame) {
      ++st.frames_offered;
      ++st.oversize;
      fold(&from->tx_trace_, &from->tx_traced_, now, (uint64_t{kTrOversize} << 56) | from->id_, p->len);
      p->free();
      continue;
    }
    if (from->link_ < 0) {
      ++st.frames_offered;
      ++st.cut_dropped;
      fold(&from->tx_trace_, &from->tx_traced_, now, (uint64_t{kTrCut} << 56) | from->id_, p->len);
      p->free();
      continue;
    }
    const auto link_id = static_cast<uint32_t>(from->link_);
    Link& link = links_[link_id];
    const int d = from->side_;
    Link::Half& h = link.dir[d];
    if (h.cut(now)) {
      ++st.frames_offered;
      ++st.cut_dropped;
      fold(&from->tx_trace_, &from->tx_traced_, now, link_tag(kTrCut, link_id, d), p->len);
      p->free();
      continue;
    }
    uint32_t charged = p->len;
    uint8_t ch = model_.classify ? model_.classify(p->data(), p->len, &charged) : 0;
    if (ch >= kSimChannels) ch = 0;
    uint64_t& busy = h.busy_until[ch];
    if (busy > now && busy - now > model_.tx_backlog_ns) {
      // Backlog full: the caller keeps pkts[i..n). Come back when it has
      // drained to exactly the limit, so the retry is taken.
      from->stats_.tx_full += n - i;
      wake(from->node_, busy - model_.tx_backlog_ns);
      break;
    }
    ++st.frames_offered;
    from->stats_.tx_packets += 1;
    from->stats_.tx_bytes += p->len;

    const uint64_t start = busy > now ? busy : now;
    const double bw = model_.channel_bw(ch);
    const auto ser = static_cast<uint64_t>(std::ceil(static_cast<double>(charged) / bw));
    const uint32_t head = model_.channel_head(ch);
    const uint64_t head_ser =
        head >= charged ? ser : static_cast<uint64_t>(std::ceil(static_cast<double>(head) / bw));
    busy = start + ser;
    uint64_t arrival = start + head_ser + model_.channel_latency(ch) + plan_.delay_ns;
    const uint64_t order = h.frames++;
    SimPort* to = link.end[1 - d];

    if (!plan_.any_random()) {
      SimFrame* f = reg.arena.get(p->len);
      std::memcpy(f->data(), p->data(), p->len);
      f->digest = hash_bytes(f->data(), f->len);
      p->free();
      post(reg, to, arrival, order, f);
      continue;
    }
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
      ++st.dropped;
      fold(&from->tx_trace_, &from->tx_traced_, now, link_tag(kTrDrop, link_id, d), 0);
      p->free();
      continue;
    }
    // The wire's own copy: flipping a bit never touches the sender's buffer.
    SimFrame* f = reg.arena.get(p->len);
    std::memcpy(f->data(), p->data(), p->len);
    p->free();
    if (u_corrupt < plan_.corrupt && f->len > 0) {
      const uint64_t bit = scale(r_bit, uint64_t{f->len} * 8);
      f->data()[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      f->flipped = static_cast<uint32_t>(bit);
      ++st.corrupted;
      fold(&from->tx_trace_, &from->tx_traced_, now, link_tag(kTrCorrupt, link_id, d), bit);
    }
    f->digest = hash_bytes(f->data(), f->len);  // after any flip: the bytes that arrive
    if (u_reorder < plan_.reorder) {
      const uint64_t hold = 1 + scale(r_hold, tuning::kSimReorderHoldNs);
      arrival += hold;
      ++st.reordered;
      fold(&from->tx_trace_, &from->tx_traced_, now, link_tag(kTrReorder, link_id, d), hold);
    }
    if (u_dup < plan_.dup) {
      // The copy is of the frame as it goes on the wire (after any bit flip).
      SimFrame* c = reg.arena.get(f->len);
      std::memcpy(c->data(), f->data(), f->len);
      c->flipped = f->flipped;
      c->digest = f->digest;
      ++st.duplicated;
      fold(&from->tx_trace_, &from->tx_traced_, now, link_tag(kTrDup, link_id, d), arrival + 1);
      post(reg, to, arrival + 1, order, c);
    }
    post(reg, to, arrival, order, f);
  }
  return i;
}

void SimFabric::post(SimRegion& from, SimPort* to, uint64_t arrival, uint64_t order, void* frame) {
  const SimWire w{arrival, order, static_cast<SimFrame*>(frame)};
  SimRegion& dst = *to->region_;
  if (&dst == &from || !parallel_) {
    to->wire_.insert(w);
    touch(dst, to->node_, arrival);
    return;
  }
  // Another region's port: merged there after this window's barrier. The
  // arrival is at least one lookahead away, so it falls in a later window.
  std::vector<SimMail>& box = from.out[from.parity][dst.id];
  if (box.empty()) {
    from.mailed.push_back(dst.id);
    from.mail_min[dst.id] = arrival;
  } else if (arrival < from.mail_min[dst.id]) {
    from.mail_min[dst.id] = arrival;
  }
  box.push_back(SimMail{to->id_, w});
}

// A frame reaches `to` at `now` (its region's thread).
void SimFabric::arrive(SimRegion& r, uint64_t now, SimPort* to, void* frame) {
  auto* f = static_cast<SimFrame*>(frame);
  FabricStats& st = r.stats;
  const auto link_id = static_cast<uint32_t>(to->link_);
  const int d = 1 - to->side_;  // the direction that carries frames into `to`
  const uint32_t len = f->len;
  if (links_[link_id].dir[d].cut(now)) {
    ++st.cut_dropped;
    fold(&to->rx_trace_, &to->rx_traced_, now, link_tag(kTrCut, link_id, d), len);
    r.arena.put(f);
    return;
  }
  const uint64_t digest = f->digest;
  if (to->rx_count_ >= tuning::kSimRxQueueMax) {
    ++st.rx_overflow;
    ++to->stats_.rx_dropped;
    fold(&to->rx_trace_, &to->rx_traced_, now, (uint64_t{kTrOverflow} << 56) | to->id_, digest);
    r.arena.put(f);
    return;
  }
  Packet* p = to->pool_->alloc();
  uint8_t* dst = p ? p->append(len) : nullptr;
  if (!dst) {
    if (p) p->free();
    ++st.no_buffer;
    ++to->stats_.rx_dropped;
    fold(&to->rx_trace_, &to->rx_traced_, now, (uint64_t{kTrNoBuffer} << 56) | to->id_, digest);
    r.arena.put(f);
    return;
  }
  std::memcpy(dst, f->data(), len);
  const uint32_t flipped = f->flipped;
  r.arena.put(f);
  p->port = to->local_;
  to->rx_push(p);
  ++st.frames_delivered;
  st.bytes_delivered += len;
  ++to->stats_.rx_packets;
  to->stats_.rx_bytes += len;
  if (flipped != SimFrame::kIntact && corrupt_observer_)
    corrupt_observer_->on_corrupt_delivered(*to, to->stats_.rx_packets, flipped);
  fold(&to->rx_trace_, &to->rx_traced_, now, (uint64_t{kTrDeliver} << 56) | to->id_, mix64(len) ^ digest);
}

}  // namespace toroid
