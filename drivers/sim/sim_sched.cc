// The sim backend's discrete-event scheduler.
//
// Each region keeps its nodes in a min-heap keyed by the earliest instant a
// node has work: a pending step (wake) or the first frame waiting to arrive
// at one of its ports. Processing a node at instant t moves every frame that
// arrived by t into its rx rings, then steps it once, then re-keys it. So an
// event costs one heap operation per node instant, not one per frame, and
// nothing stale is ever queued.
//
// Several regions run in windows of one lookahead L (the smallest link
// latency plus the fault plan's fixed delay): after a barrier every region
// knows the earliest pending instant T of the whole partition, and runs its
// own nodes over [T, T + L). A frame sent at t >= T arrives at t + L or
// later, so nothing another region does in the window can reach it inside
// the window. Frames for another region are posted to a mailbox for that
// window's parity and merged after the next barrier. Mailboxes and the
// published minima are double-buffered by window parity, so one barrier per
// window is enough.

#include "drivers/sim/sim_internal.h"

namespace toroid {

// ---- node heap --------------------------------------------------------------

uint64_t SimFabric::node_key(const NodeRec& n) const {
  uint64_t k = n.wake_at;
  for (const SimPort* p = n.first_port; p; p = p->next_on_node_) {
    const SimWireQueue& q = p->wire_;
    if (!q.empty() && q.front().arrival < k) k = q.front().arrival;
  }
  return k;
}

// The node has work at t (or earlier than its key said).
void SimFabric::touch(SimRegion& r, uint32_t node, uint64_t t) {
  NodeRec& n = nodes_[node];
  if (t >= n.key) return;
  n.key = t;
  if (r.processing == node) return;  // settle() re-keys it when its step is over
  auto& h = r.heap;
  uint32_t i = n.heap_pos;
  if (i == ~0u) {
    i = static_cast<uint32_t>(h.size());
    h.push_back(SimHeapEntry{t, node});
  }
  while (i > 0) {  // sift up
    const uint32_t parent = (i - 1) / 2;
    if (h[parent].key <= t) break;
    h[i] = h[parent];
    nodes_[h[i].node].heap_pos = i;
    i = parent;
  }
  h[i] = SimHeapEntry{t, node};
  n.heap_pos = i;
}

// Re-key a node after it was processed (its key can only have grown).
void SimFabric::settle(SimRegion& r, uint32_t node) {
  NodeRec& n = nodes_[node];
  auto& h = r.heap;
  const uint64_t key = node_key(n);
  n.key = key;
  uint32_t i = n.heap_pos;
  SimHeapEntry e{key, node};
  if (key == kNever) {  // no work left: take it out, move the last entry into its place
    n.heap_pos = ~0u;
    e = h.back();
    h.pop_back();
    if (i == h.size()) return;
  }
  const auto size = static_cast<uint32_t>(h.size());
  for (;;) {  // sift down
    uint32_t c = 2 * i + 1;
    if (c >= size) break;
    if (c + 1 < size && h[c + 1].key < h[c].key) ++c;
    if (h[c].key >= e.key) break;
    h[i] = h[c];
    nodes_[h[i].node].heap_pos = i;
    i = c;
  }
  while (i > 0) {  // the moved-in last entry may belong further up
    const uint32_t parent = (i - 1) / 2;
    if (h[parent].key <= e.key) break;
    h[i] = h[parent];
    nodes_[h[i].node].heap_pos = i;
    i = parent;
  }
  h[i] = e;
  nodes_[e.node].heap_pos = i;
}

void SimFabric::wake(uint32_t node, uint64_t at_ns) {
  NodeRec& n = nodes_[node];
  SimRegion& r = *regions_[n.region];
  const uint64_t now = r.clock.now_ns();
  if (at_ns < now) at_ns = now;
  if (at_ns >= n.wake_at) return;  // an earlier (or the same) step is already pending
  n.wake_at = at_ns;
  touch(r, node, at_ns);
}

void SimFabric::reserve_events(size_t n) {
  std::vector<size_t> per_region(regions_.size(), 0);
  for (const NodeRec& node : nodes_) ++per_region[node.region];
  for (size_t i = 0; i < regions_.size(); ++i) {
    regions_[i]->heap.reserve(per_region[i]);
    regions_[i]->arena.reserve(n);
  }
  // A direction holds at most its backlog plus one latency of frames on the
  // wire (each at least kMinWireFrame bytes), twice that with duplicates; the
  // arrival queue compacts once its consumed head is half of it, so twice
  // again, plus the compaction's slack.
  uint64_t most_ns = model_.tx_backlog_ns + plan_.delay_ns + plan_.jitter_ns + tuning::kSimReorderHoldNs;
  double most_bw = model_.bytes_per_ns;
  uint64_t most_latency = model_.latency_ns;
  for (int c = 1; c < kSimChannels; ++c) {
    most_bw = model_.channel_bw(c) > most_bw ? model_.channel_bw(c) : most_bw;
    most_latency = model_.channel_latency(c) > most_latency ? model_.channel_latency(c) : most_latency;
  }
  most_ns += most_latency;
  const auto in_flight = static_cast<size_t>(static_cast<double>(most_ns) * most_bw / kMinWireFrame) + 1;
  const size_t wire = 4 * in_flight + 64;
  for (auto& port : ports_) {
    port->wire_.v.reserve(wire);
    port->reserve_rx(tuning::kSimRxQueueMax);
  }
}

bool SimFabric::idle() const {
  for (const auto& r : regions_)
    if (!r->heap.empty()) return false;
  return true;
}

uint64_t SimFabric::next_event() const {
  uint64_t t = kNever;
  for (const auto& r : regions_)
    if (!r->heap.empty() && r->heap[0].key < t) t = r->heap[0].key;
  return t;
}

// ---- one region -------------------------------------------------------------

void SimFabric::process_node(SimRegion& r, uint32_t node) {
  NodeRec& n = nodes_[node];
  const uint64_t t = n.key;
  r.processing = node;
  r.clock.set(t);
  bool delivered = false;
  uint64_t arrivals = 0;
  for (SimPort* p = n.first_port; p; p = p->next_on_node_) {
    SimWireQueue& q = p->wire_;
    while (!q.empty() && q.front().arrival <= t) {
      SimFrame* f = q.front().frame;
      q.pop();
      const uint32_t before = p->rx_count_;
      arrive(r, t, p, f);
      delivered |= p->rx_count_ != before;
      ++arrivals;
    }
  }
  r.stats.events += arrivals;
  if (delivered || n.wake_at <= t) {
    n.wake_at = kNever;
    if (n.ep) {
      ++r.stats.steps;
      ++r.stats.events;
      const uint64_t next = n.ep->sim_step(t);
      if (next != kNever) {
        const uint64_t at = next > t ? next : t + 1;  // time always advances
        if (at < n.wake_at) n.wake_at = at;
      }
    }
  }
  r.processing = ~0u;
  settle(r, node);
}

uint64_t SimFabric::process(SimRegion& r, uint64_t end_excl, double wall_budget_s, bool* out_of_time) {
  const uint64_t events0 = r.stats.events;
  const double deadline = wall_budget_s > 0 ? wall_seconds() + wall_budget_s : 0;
  uint32_t n = 0;
  while (!r.heap.empty() && r.heap[0].key < end_excl) {
    if (!parallel_ && stop_.load(std::memory_order_relaxed)) break;
    process_node(r, r.heap[0].node);
    if (deadline > 0 && (++n & 1023) == 0 && wall_seconds() >= deadline) {
      *out_of_time = true;
      break;
    }
  }
  return r.stats.events - events0;
}

// ---- runs -------------------------------------------------------------------

uint64_t SimFabric::run(uint64_t until_ns, double wall_budget_s) {
  stop_.store(false, std::memory_order_relaxed);
  if (regions_.size() == 1) {
    bool out_of_time = false;
    return process(*regions_[0], until_ns == kNever ? kNever : until_ns + 1, wall_budget_s, &out_of_time);
  }
  return run_parallel(until_ns, wall_budget_s);
}

void SimFabric::drain_mail(SimRegion& r, uint32_t parity) {
  for (auto& src : regions_) {
    std::vector<SimMail>& box = src->out[parity][r.id];
    for (const SimMail& m : box) {
      SimPort* p = ports_[m.port].get();
      p->wire_.insert(m.wire);
      touch(r, p->node_, m.wire.arrival);
    }
    box.clear();
  }
}

void SimFabric::region_loop(uint32_t region) {
  SimRegion& reg = *regions_[region];
  Workers& w = *workers_;
  const uint64_t lookahead = model_.min_latency() + plan_.delay_ns;
  const double start = region == 0 ? wall_seconds() : 0;
  for (uint64_t k = 0;; ++k) {
    std::vector<Workers::Slot>& slots = w.next[k & 1];
    uint64_t mine = reg.heap.empty() ? kNever : reg.heap[0].key;
    if (reg.sent_min < mine) mine = reg.sent_min;
    reg.sent_min = kNever;
    slots[region].next = mine;
    if (region == 0) slots[0].out_of_time = budget_ > 0 && k > 0 && wall_seconds() - start >= budget_;
    w.barrier.arrive_and_wait();
    uint64_t t = kNever;
    for (const auto& s : slots) t = s.next < t ? s.next : t;
    // Frames posted in the window before (its parity is the other one).
    drain_mail(reg, static_cast<uint32_t>((k + 1) & 1));
    if (t == kNever || t > until_ || slots[0].out_of_time || stop_.load(std::memory_order_relaxed)) break;
    const uint64_t end = until_ - t < lookahead ? until_ + 1 : t + lookahead;
    reg.parity = static_cast<uint32_t>(k & 1);
    bool unused = false;
    process(reg, end, 0, &unused);
    if (region == 0) ++windows_;
  }
}

uint64_t SimFabric::run_parallel(uint64_t until_ns, double wall_budget_s) {
  const auto n = static_cast<uint32_t>(regions_.size());
  if (!workers_) {
    workers_ = std::make_unique<Workers>(n);
    for (uint32_t r = 1; r < n; ++r) {
      workers_->threads.emplace_back([this, r] {
        Workers& w = *workers_;
        uint64_t seen = 0;
        for (;;) {
          {
            std::unique_lock<std::mutex> lk(w.mu);
            w.cv.wait(lk, [&] { return w.run_gen != seen; });
            seen = w.run_gen;
            if (w.quit) return;
          }
          region_loop(r);
          {
            std::lock_guard<std::mutex> lk(w.mu);
            ++w.done;
          }
          w.cv.notify_all();
        }
      });
    }
  }
  uint64_t events0 = 0;
  for (const auto& r : regions_) events0 += r->stats.events;
  until_ = until_ns;
  budget_ = wall_budget_s;
  parallel_ = true;
  {
    std::lock_guard<std::mutex> lk(workers_->mu);
    workers_->done = 0;
    ++workers_->run_gen;
  }
  workers_->cv.notify_all();
  region_loop(0);
  {
    std::unique_lock<std::mutex> lk(workers_->mu);
    workers_->cv.wait(lk, [&] { return workers_->done == n - 1; });
  }
  parallel_ = false;
  uint64_t events1 = 0;
  for (const auto& r : regions_) events1 += r->stats.events;
  return events1 - events0;
}

}  // namespace toroid
