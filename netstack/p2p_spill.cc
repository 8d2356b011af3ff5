// Messenger: unexpected messages copied aside ("spilled") into a bounded
// store, and only where holding their frames could deadlock (a receive
// waiting on a source whose window is half held, or too many frames held
// in all); the held frames themselves are in p2p_recv.cc.
#include <algorithm>
#include <cstring>

#include "netstack/p2p.h"
#include "netstack/p2p_internal.h"

namespace toroid {

// The whole message is in its spill buffer and a receive took it: one
// more copy into the receive, then it is done; true if so. A receive gated
// by one of our own sends (an in-place exchange: it lands where that send
// reads) takes it only once the send has read every byte it would
// overwrite; until then the message waits on the gated list (its frames
// are gone, so it ties up no credit).
bool Messenger::apply_spill(InMsg* m) {
  if (!m->req || m->got != m->total) return false;
  if (!gate_clear(m->req, 0, m->total)) {
    if (!m->gated) {
      m->gated = true;
      gated_.push_back(m);
    }
    return false;
  }
  const uint64_t total = m->total;
  write_segment(m, 0, m->spill.get(), total);
  complete(m, Status::ok());
  return true;
}

bool Messenger::spill(InMsg* m) {
  if (m->spilled) return true;
  SpillBuf buf;
  for (size_t i = 0; i < spare_.size(); ++i) {
    if (spare_[i].cap < m->total) continue;
    buf = std::move(spare_[i]);
    spare_[i] = std::move(spare_.back());
    spare_.pop_back();
    break;
  }
  const uint64_t cap = buf.data ? buf.cap : std::max<uint64_t>(m->total, 64);
  if (store_bytes_ + cap > cfg_.store_cap) {
    ++ctr_.store_full;
    if (buf.data) spare_.push_back(std::move(buf));
    return false;
  }
  if (!buf.data) buf = SpillBuf{std::unique_ptr<uint8_t[]>(new uint8_t[cap]), cap};
  m->spill = std::move(buf.data);
  m->spill_cap = cap;
  m->spilled = true;
  store_bytes_ += cap;
  ctr_.held_bytes += m->total;
  ctr_.peak_held_bytes = std::max(ctr_.peak_held_bytes, ctr_.held_bytes);
  ++ctr_.spilled;
  Peer& pr = *m->pr;
  const uint32_t held = m->held;
  while (Packet* p = m->held_head) {
    m->held_head = p->next;
    const Seg s = seg_of(p);
    if (s.n) std::memcpy(m->spill.get() + s.off, s.data, s.n);
    m->got += s.n;
    ctr_.held_bytes -= s.n;
    p->free();
  }
  m->held_tail = nullptr;
  m->held = 0;
  held_frames_ -= held;
  pr.held -= held;
  if (held) consume(pr, held);
  return true;
}

void Messenger::spill_source(Peer& pr) {
  for (InMsg* m = pr.msgs; m; m = m->next)
    if (m->on_unexpected && m->held && matchable(pr, *m) && !spill(m)) {
      spill_check_ = true;  // the store is full: try again later
      return;
    }
}

// Holding frames could deadlock in two cases; spill there and only there:
// - a posted receive waits on a source whose window is half tied up in held
//   frames of messages that do not fit it (the message it waits for may
//   need that credit to be sent at all);
// - more than max_held frames are held in all (the packet pool is shared
//   with the links).
void Messenger::spill_blockers() {
  const uint32_t tied = tied_frames();
  // Our send to a source waits for its credit while we hold half its
  // window: each side may be holding the other's frames. Spill ours.
  // Only the peers on the stalled list (a scan of every peer here was a
  // sixth of an 8x8x8 self-test's time, in its all-to-all cases).
  Peer* stalled = stalled_head_;
  stalled_head_ = nullptr;
  while (stalled) {
    Peer* pr = stalled;
    stalled = pr->next_stalled;
    pr->next_stalled = nullptr;
    pr->stalled = false;
    if (pr->held >= tied) spill_source(*pr);
  }
  // A posted receive that waits on a source holding half its window. Only a
  // peer on the heavy list can hold that much (hold() puts it there), so
  // the posted receives are scanned only while the list is not empty (an
  // all-to-all step posts a receive per rank, and this runs at each hold).
  if (heavy_head_) {
    bool any_source = false;  // an any-source receive may wait on every peer: one scan for them all
    for (RecvReq* r = posted_head_; r; r = r->next_) {
      if (r->src == kAnySource) {
        any_source = true;
        continue;
      }
      Peer* pr = find_peer(static_cast<uint32_t>(r->src));
      if (pr && pr->held >= tied) spill_source(*pr);
    }
    if (any_source)
      for (Peer* pr : peer_store_)
        if (pr->held >= tied) spill_source(*pr);
    for (Peer** link = &heavy_head_; Peer* pr = *link;) {
      if (pr->held >= tied) {
        link = &pr->next_heavy;
        continue;
      }
      *link = pr->next_heavy;
      pr->next_heavy = nullptr;
      pr->heavy = false;
    }
  }
  for (InMsg* m = unexpected_head_; m && held_frames_ > cfg_.max_held;) {
    InMsg* next = m->unx_next;
    if (m->held && matchable(*m->pr, *m) && !spill(m)) {
      spill_check_ = true;
      break;
    }
    m = next;
  }
}

}  // namespace toroid
