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
// latency plus the fault plan's fixed delay): after a barrier every thread
// knows the earliest pending instant T of the whole partition, and the
// regions with work in [T, T + L) are run, each by one thread: its own
// thread if that one gets to it first, else another with nothing of its
// own left (thread_loop). A frame sent at t >= T arrives at
// t + L or later, so nothing another region does in the window can reach a
// region inside the window, whichever thread runs it and when. Frames for
// another region are posted to a mailbox for that window's parity and
// merged by the region's next run. There are more regions than threads
// (sim_rig.cc), so a window whose work sits in a few regions still keeps
// every thread busy. What the threads share is listed with
// SimFabric::Workers (sim_internal.h); one barrier per window orders it.

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
  // Frames are taken from the sender's region and put back by the
  // receiver's: each arena plans for its nodes' share, and half as much
  // again for frames that drifted in from other regions.
  for (size_t i = 0; i < regions_.size(); ++i) {
    regions_[i]->heap.reserve(per_region[i]);
    const size_t share = regions_.size() == 1 || nodes_.empty() ? n : n * per_region[i] / nodes_.size();
    regions_[i]->arena.reserve(regions_.size() == 1 ? n : share + share / 2);
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

// Region r's share of window `window`: the mail of the window before, then
// its nodes up to end_excl; then what the next window needs to know of it.
void SimFabric::run_region(SimRegion& r, uint64_t window, uint64_t end_excl) {
  Workers& w = *workers_;
  r.parity = static_cast<uint32_t>(window & 1);
  drain_mail(r, static_cast<uint32_t>((window + 1) & 1));
  bool unused = false;
  process(r, end_excl, 0, &unused);
  w.heap[(window + 1) & 1][r.id].at = r.heap.empty() ? kNever : r.heap[0].key;
  std::vector<Workers::Mail>& mail = w.mail[window % 3];
  for (uint32_t d : r.mailed) {
    const uint64_t at = r.mail_min[d];
    uint64_t cur = mail[d].at.load(std::memory_order_relaxed);
    while (at < cur && !mail[d].at.compare_exchange_weak(cur, at, std::memory_order_relaxed)) {
    }
  }
  r.mailed.clear();
}

// One scheduler thread's part of a run; returns the window it stopped at
// (the same on every thread).
uint64_t SimFabric::thread_loop(uint32_t thread) {
  Workers& w = *workers_;
  const auto nregions = static_cast<uint32_t>(regions_.size());
  const uint64_t lookahead = model_.min_latency() + plan_.delay_ns;
  const double start = thread == 0 ? wall_seconds() : 0;
  std::vector<uint32_t>& ready = w.ready[thread];
  const uint64_t base = w.window_base;
  for (uint64_t k = 0;; ++k) {
    const uint32_t p = static_cast<uint32_t>(k & 1);
    if (thread == 0) w.out_of_time[p] = budget_ > 0 && k > 0 && wall_seconds() - start >= budget_;
    w.barrier.arrive_and_wait();
    const std::vector<Workers::Next>& heap = w.heap[p];
    const std::vector<Workers::Mail>& mail = w.mail[(k + 2) % 3];  // posted in window k - 1
    uint64_t t = kNever;
    for (uint32_t r = 0; r < nregions; ++r) {
      const uint64_t m = mail[r].at.load(std::memory_order_relaxed);
      const uint64_t h = heap[r].at;
      t = std::min(t, std::min(m, h));
    }
    if (t == kNever || t > until_ || w.out_of_time[p] || stop_.load(std::memory_order_relaxed)) return k;
    const uint64_t end = until_ - t < lookahead ? until_ + 1 : t + lookahead;
    // The regions with work in this window (every thread lists the same);
    // nobody runs the others, so thread 0 carries their instants over.
    ready.clear();
    std::vector<Workers::Next>& next = w.heap[p ^ 1];
    for (uint32_t r = 0; r < nregions; ++r) {
      if (heap[r].at < end || mail[r].at.load(std::memory_order_relaxed) != kNever) ready.push_back(r);
      else if (thread == 0) next[r].at = heap[r].at;
    }
    if (thread == 0) {
      for (Workers::Mail& m : w.mail[(k + 1) % 3]) m.at.store(kNever, std::memory_order_relaxed);
      ++windows_;
    }
    // This thread's own regions first, in order, then the others' from
    // their far end (where their own thread comes last), each taken by
    // whoever marks it first: a region mostly stays with one thread (its
    // nodes stay in that core's cache), and a thread with nothing left of
    // its own takes over the work of one still busy.
    const uint64_t stamp = base + k + 1;
    const auto mine_of = [&](uint32_t r) { return static_cast<uint32_t>(uint64_t{r} * threads_ / nregions); };
    const auto take = [&](uint32_t r) {
      if (w.taken[r].v.load(std::memory_order_relaxed) == stamp) return;
      if (w.taken[r].v.exchange(stamp, std::memory_order_relaxed) == stamp) return;
      run_region(*regions_[r], k, end);
    };
    for (uint32_t r : ready)
      if (mine_of(r) == thread) take(r);
    for (size_t i = ready.size(); i-- > 0;)
      if (mine_of(ready[i]) != thread) take(ready[i]);
  }
}

uint64_t SimFabric::run_parallel(uint64_t until_ns, double wall_budget_s) {
  const uint32_t nthreads = threads_;
  if (!workers_) {
    workers_ = std::make_unique<Workers>(nthreads, static_cast<uint32_t>(regions_.size()));
    for (uint32_t th = 1; th < nthreads; ++th) {
      workers_->threads.emplace_back([this, th] {
        Workers& w = *workers_;
        uint64_t seen = 0;
        for (;;) {
          {
            std::unique_lock<std::mutex> lk(w.mu);
            w.cv.wait(lk, [&] { return w.run_gen != seen; });
            seen = w.run_gen;
            if (w.quit) return;
          }
          thread_loop(th);
          {
            std::lock_guard<std::mutex> lk(w.mu);
            ++w.done;
          }
          w.cv.notify_all();
        }
      });
    }
  }
  Workers& w = *workers_;
  uint64_t events0 = 0;
  for (const auto& r : regions_) events0 += r->stats.events;
  // Between runs every frame is on its port's wire (the last window's mail
  // was merged), so the regions' heaps say it all.
  for (const auto& r : regions_) w.heap[0][r->id].at = r->heap.empty() ? kNever : r->heap[0].key;
  for (auto& m : w.mail)
    for (Workers::Mail& x : m) x.at.store(kNever, std::memory_order_relaxed);
  until_ = until_ns;
  budget_ = wall_budget_s;
  parallel_ = true;
  {
    std::lock_guard<std::mutex> lk(w.mu);
    w.done = 0;
    ++w.run_gen;
  }
  w.cv.notify_all();
  const uint64_t last = thread_loop(0);
  {
    std::unique_lock<std::mutex> lk(w.mu);
    w.cv.wait(lk, [&] { return w.done == nthreads - 1; });
  }
  w.window_base += last + 1;  // the next run's stamps follow this one's
  // The frames posted in the last window run are merged now.
  for (const auto& r : regions_) drain_mail(*r, static_cast<uint32_t>((last + 1) & 1));
  parallel_ = false;
  uint64_t events1 = 0;
  for (const auto& r : regions_) events1 += r->stats.events;
  return events1 - events0;
}

}  // namespace toroid
