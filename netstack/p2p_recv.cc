// Messenger receive side: bounds checks, message tracking per source,
// matching against posted receives, delivery straight from the frame into
// the receive's buffer, unexpected messages held as frames (spills: p2p_spill.cc).
#include <algorithm>
#include <cstring>

#include "netstack/p2p.h"
#include "netstack/p2p_internal.h"

namespace toroid {

using wire::MsgHeader;
using wire::TorusHeader;

// ---- message records ----

InMsg* Messenger::find_msg(Peer& pr, uint32_t seq) {
  for (InMsg* m = pr.msgs; m; m = m->next)
    if (m->seq == seq) return m;
  return nullptr;
}

InMsg* Messenger::new_msg(Peer& pr, uint32_t seq, uint16_t ctx, uint32_t tag, uint64_t total) {
  InMsg* m = free_msgs_;
  if (m) {
    free_msgs_ = m->next;
  } else {
    m = new InMsg();
    msg_store_.push_back(m);
  }
  m->pr = &pr;
  m->seq = seq;
  m->ctx = ctx;
  m->tag = tag;
  m->total = total;
  m->got = 0;
  m->req = nullptr;
  m->error = Status::ok();
  m->held_head = m->held_tail = nullptr;
  m->held = 0;
  m->spilled = false;
  // Keep the source's list in seq order (arrival order but for overtaking).
  InMsg** at = &pr.msgs;
  while (*at && static_cast<int32_t>((*at)->seq - seq) < 0) at = &(*at)->next;
  m->next = *at;
  *at = m;
  // Unexpected until a receive takes it.
  m->on_unexpected = true;
  m->unx_next = nullptr;
  m->unx_prev = unexpected_tail_;
  if (unexpected_tail_) unexpected_tail_->unx_next = m;
  else unexpected_head_ = m;
  unexpected_tail_ = m;
  return m;
}

void Messenger::unlink_unexpected(InMsg* m) {
  if (!m->on_unexpected) return;
  if (m->unx_prev) m->unx_prev->unx_next = m->unx_next;
  else unexpected_head_ = m->unx_next;
  if (m->unx_next) m->unx_next->unx_prev = m->unx_prev;
  else unexpected_tail_ = m->unx_prev;
  m->unx_prev = m->unx_next = nullptr;
  m->on_unexpected = false;
}

void Messenger::free_msg(InMsg* m) {
  Peer& pr = *m->pr;
  if (m->gated) {
    for (size_t i = 0; i < gated_.size(); ++i)
      if (gated_[i] == m) {
        gated_[i] = gated_.back();
        gated_.pop_back();
        break;
      }
    m->gated = false;
  }
  for (InMsg** at = &pr.msgs; *at; at = &(*at)->next) {
    if (*at != m) continue;
    *at = m->next;
    break;
  }
  unlink_unexpected(m);
  drop_held(m);
  if (m->spill) {
    store_bytes_ -= m->spill_cap;
    ctr_.held_bytes -= m->total;
    if (spare_.size() < tuning::kP2pSpareBuffers) spare_.push_back(SpillBuf{std::move(m->spill), m->spill_cap});
    m->spill.reset();
    m->spill_cap = 0;
  }
  m->req = nullptr;
  m->error = Status::ok();
  m->next = free_msgs_;
  free_msgs_ = m;
}

// Frees held frames without writing them (their segments count as consumed).
void Messenger::drop_held(InMsg* m) {
  if (!m->held) return;
  Peer& pr = *m->pr;
  while (Packet* p = m->held_head) {
    m->held_head = p->next;
    ctr_.held_bytes -= p->len - kMsgHeaders;
    p->free();
  }
  m->held_tail = nullptr;
  held_frames_ -= m->held;
  pr.held -= m->held;
  consume(pr, m->held);
  m->held = 0;
}

// ---- sequence numbers of a source ----

// Bit i of seen: seq contig + i has begun to arrive (bit 0 is always clear).
void Messenger::mark_seen(Peer& pr, uint32_t seq) {
  const uint32_t d = seq - pr.contig;
  if (d < 64) pr.seen |= uint64_t{1} << d;
  while (pr.seen & 1) {
    pr.seen >>= 1;
    ++pr.contig;
  }
}

// Every earlier message of its source has begun to arrive: a receive may
// take it without overtaking one of them.
bool Messenger::matchable(const Peer& pr, const InMsg& m) const { return static_cast<int32_t>(m.seq - pr.contig) < 0; }

bool Messenger::fits(const RecvReq& r, uint32_t src, uint16_t ctx, uint32_t tag) {
  return r.context == ctx && (r.src == kAnySource || static_cast<uint32_t>(r.src) == src) &&
         (r.any_tag ? (tag & kReservedTagBit) == 0 : r.tag == tag);
}

// ---- credits ----

void Messenger::consume(Peer& pr, uint32_t segs) {
  pr.took += segs;
  ctr_.segs_received += segs;
  // Credit goes back in batches, early enough that a sender with a full
  // window never idles.
  if (!pr.credit_queued && pr.took - pr.took_reported >= std::max<uint32_t>(1, cfg_.window / 4)) {
    pr.credit_queued = true;
    credit_due_.push_back(pr.rank);
  }
}

// ---- arrival ----

void Messenger::take_data(uint32_t src, Packet* p) {
  const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
  const auto* mh = reinterpret_cast<const MsgHeader*>(p->data() + sizeof(TorusHeader));
  const uint16_t ctx = th->context.get();
  const uint32_t seq = th->tag.get();
  const uint32_t tag = mh->tag.get();
  const uint64_t total = mh->total.get();
  const uint64_t off = mh->offset.get();
  const uint64_t n = p->len - kMsgHeaders;
  Peer& pr = peer(src);
  // Bounds first, in 64 bits: nothing from the wire indexes memory unchecked.
  if (total > cfg_.max_message || off > total || n > total - off || (n == 0 && total != 0)) {
    ++ctr_.bad_segments;
    p->free();
    consume(pr, 1);
    return;
  }
  InMsg* m = find_msg(pr, seq);
  if (!m) {
    const uint32_t d = seq - pr.contig;
    if (static_cast<int32_t>(d) < 0 || (d < 64 && ((pr.seen >> d) & 1))) {
      ++ctr_.stale;  // a message already finished, aborted or discarded
      p->free();
      consume(pr, 1);
      return;
    }
    if (d >= 64) {  // more messages in flight than the window allows
      ++ctr_.bad_segments;
      p->free();
      consume(pr, 1);
      return;
    }
    // A new message: its first frame is held like any unexpected one, then
    // the messages this one makes matchable meet the posted receives (a
    // receive that takes it writes the frame out at once).
    m = new_msg(pr, seq, ctx, tag, total);
    m->sync = (mh->flags & wire::kMsgFlagSync) != 0;
    hold(m, pr, p, n);
    const uint32_t before = pr.contig;
    mark_seen(pr, seq);
    if (pr.contig != before) match_new(src, pr);
    if (m->on_unexpected) ++ctr_.unexpected;  // (m may be finished and recycled: only read if still listed)
    return;
  } else if (m->ctx != ctx || m->tag != tag || m->total != total) {
    ++ctr_.bad_segments;  // a segment disagreeing with its message's envelope
    p->free();
    consume(pr, 1);
    return;
  }
  if (m->req && !m->spilled) {
    if (!gate_clear(m->req, off, n)) {  // our own send has not read those bytes yet
      hold(m, pr, p, n);
      if (!m->gated) {
        m->gated = true;
        gated_.push_back(m);
      }
      return;
    }
    write_segment(m, off, p->data() + kMsgHeaders, n);
    p->free();
    m->got += n;
    consume(pr, 1);
    if (m->got == m->total && m->held == 0) complete(m, Status::ok());
    return;
  }
  if (m->spilled) {
    if (n) std::memcpy(m->spill.get() + off, p->data() + kMsgHeaders, n);
    p->free();
    m->got += n;
    consume(pr, 1);
    (void)apply_spill(m);
    return;
  }
  hold(m, pr, p, n);
}

// Unexpected: hold the frame itself; its credit waits with it.
void Messenger::hold(InMsg* m, Peer& pr, Packet* p, uint64_t n) {
  p->next = nullptr;
  if (m->held_tail) m->held_tail->next = p;
  else m->held_head = p;
  m->held_tail = p;
  ++m->held;
  ++pr.held;
  if (pr.held >= tied_frames() && !pr.heavy) {
    pr.heavy = true;
    pr.next_heavy = heavy_head_;
    heavy_head_ = &pr;
  }
  ++held_frames_;
  ctr_.held_bytes += n;
  ctr_.peak_held_bytes = std::max(ctr_.peak_held_bytes, ctr_.held_bytes);
  spill_check_ = true;
}

// Messages of src that just became matchable meet the posted receives, in
// seq order; each takes the first posted receive that fits.
void Messenger::match_new(uint32_t src, Peer& pr) {
  for (InMsg* m = pr.msgs; m;) {
    InMsg* next = m->next;  // bind() may finish m and recycle it
    if (!m->req && m->on_unexpected && matchable(pr, *m)) {
      // The earliest posted of the first that fits among this source's
      // receives and the first among the any-source ones (each list is in
      // posting order), not a scan of every posted receive.
      RecvReq* r = pr.posted.head;
      while (r && !fits(*r, src, m->ctx, m->tag)) r = r->bnext_;
      RecvReq* any = any_source_.head;
      while (any && !fits(*any, src, m->ctx, m->tag)) any = any->bnext_;
      if (any && (!r || any->order_ < r->order_)) r = any;
      if (r) bind(r, m);
    }
    m = next;
  }
}

// ---- receives ----

Status Messenger::post(RecvReq* r) {
  if (r->posted_ || r->msg_) return error(Code::kInvalid, "post: the receive is already posted");
  if (r->cap > 0 && !r->buf) return error(Code::kInvalid, "post: no buffer for %llu bytes",
                                          static_cast<unsigned long long>(r->cap));
  if (r->action.fn && r->action.unit == 0) return error(Code::kInvalid, "post: a reducing receive needs a unit");
  if (!status_) return status_;
  r->done_ = false;
  r->status_ = Status::ok();
  r->length_ = 0;
  // From one source: its earliest unexpected message (by seq) that fits,
  // found in its own list rather than among every source's.
  if (r->src != kAnySource) {
    if (static_cast<uint32_t>(r->src) >= net_.dims().nodes())
      return error(Code::kInvalid, "post: source rank %d is outside the partition (%u nodes)", r->src,
                   net_.dims().nodes());
    Peer& pr = peer(static_cast<uint32_t>(r->src));
    for (InMsg* q = pr.msgs; q; q = q->next) {
      if (q->on_unexpected && fits(*r, q->src(), q->ctx, q->tag) && matchable(pr, *q)) {
        bind(r, q);
        return Status::ok();
      }
    }
    link_posted(r, &pr.posted);
    return Status::ok();
  }
  // From any source: the earliest arrived message that fits; then the
  // earliest of its source (a later one of the same source may have
  // overtaken it on another path).
  for (InMsg* m = unexpected_head_; m; m = m->unx_next) {
    if (!fits(*r, m->src(), m->ctx, m->tag)) continue;
    Peer& pr = *m->pr;
    if (!matchable(pr, *m)) continue;
    InMsg* first = m;
    for (InMsg* q = pr.msgs; q && q != m; q = q->next) {
      if (q->on_unexpected && fits(*r, q->src(), q->ctx, q->tag) && matchable(pr, *q)) {
        first = q;
        break;
      }
    }
    bind(r, first);
    return Status::ok();
  }
  link_posted(r, &any_source_);
  return Status::ok();
}

// Onto the posted list (every posted receive, in order) and its bucket.
void Messenger::link_posted(RecvReq* r, RecvBucket* b) {
  r->posted_ = true;
  r->order_ = ++posts_;
  r->next_ = nullptr;
  r->prev_ = posted_tail_;
  if (posted_tail_) posted_tail_->next_ = r;
  else posted_head_ = r;
  posted_tail_ = r;
  r->bucket_ = b;
  r->bnext_ = nullptr;
  r->bprev_ = b->tail;
  if (b->tail) b->tail->bnext_ = r;
  else b->head = r;
  b->tail = r;
  spill_check_ = true;
}

void Messenger::unlink_posted(RecvReq* r) {
  if (!r->posted_) return;
  if (r->prev_) r->prev_->next_ = r->next_;
  else posted_head_ = r->next_;
  if (r->next_) r->next_->prev_ = r->prev_;
  else posted_tail_ = r->prev_;
  r->next_ = r->prev_ = nullptr;
  RecvBucket* b = r->bucket_;
  if (r->bprev_) r->bprev_->bnext_ = r->bnext_;
  else b->head = r->bnext_;
  if (r->bnext_) r->bnext_->bprev_ = r->bprev_;
  else b->tail = r->bprev_;
  r->bnext_ = r->bprev_ = nullptr;
  r->bucket_ = nullptr;
  r->posted_ = false;
}

bool Messenger::unpost(RecvReq* r) {
  if (r->msg_) return false;  // data is landing in its buffer
  unlink_posted(r);
  return true;
}

void Messenger::withdraw(RecvReq* r) {
  if (InMsg* m = r->msg_) {
    m->req = nullptr;
    r->msg_ = nullptr;
    free_msg(m);  // later segments of it are stale
  }
  unlink_posted(r);
}

bool Messenger::probe(int32_t src, uint16_t context, uint32_t tag, bool any_tag, MsgEnvelope* out) const {
  RecvReq want;
  want.src = src;
  want.context = context;
  want.tag = tag;
  want.any_tag = any_tag;
  for (const InMsg* m = unexpected_head_; m; m = m->unx_next) {
    if (!fits(want, m->src(), m->ctx, m->tag)) continue;
    if (!matchable(*m->pr, *m)) continue;
    const InMsg* first = m;
    for (const InMsg* q = m->pr->msgs; q && q != m; q = q->next) {
      if (q->on_unexpected && fits(want, q->src(), q->ctx, q->tag) && matchable(*m->pr, *q)) {
        first = q;
        break;
      }
    }
    *out = MsgEnvelope{first->src(), first->ctx, first->tag, first->total};
    return true;
  }
  return false;
}

// Bind r to m: from here m's segments land in r's buffer. Frames m held
// are written out now (and their credit returns).
void Messenger::bind(RecvReq* r, InMsg* m) {
  unlink_posted(r);
  unlink_unexpected(m);
  r->msg_ = m;
  r->source_ = m->src();
  r->msg_tag_ = m->tag;
  r->length_ = m->total;
  m->req = r;
  if (m->sync) ack_match(m);
  if (m->total > r->cap) ++ctr_.truncated;
  if (m->spilled) {
    (void)apply_spill(m);
    return;
  }
  if (!release_gated(m) && m->held && !m->gated) {
    m->gated = true;
    gated_.push_back(m);
  }
}

// Whether bytes [off, off + n) of r's buffer may be written now: they do
// not overlap what r's gating send has still to read.
bool Messenger::gate_clear(const RecvReq* r, uint64_t off, uint64_t n) const {
  if (!r->gate || n == 0 || off >= r->cap) return true;
  const uint64_t len = std::min(n, r->cap - off);
  const SendOp* op = find_active(r->gate);
  if (!op) return true;  // the send has left
  const uint8_t* unsent = op->data + op->offset;
  const uint8_t* end = op->data + op->len;
  const uint8_t* b = r->buf + off;
  return !(b < end && unsent < b + len);
}

// Write out the held frames of bound message m that may land now; true if
// m is finished (and recycled).
bool Messenger::release_gated(InMsg* m) {
  if (m->spilled) return apply_spill(m);
  Peer& pr = *m->pr;
  uint32_t released = 0;
  Packet** at = &m->held_head;
  Packet* last = nullptr;
  while (Packet* p = *at) {
    const Seg s = seg_of(p);
    if (!gate_clear(m->req, s.off, s.n)) {
      last = p;
      at = &p->next;
      continue;
    }
    *at = p->next;
    write_segment(m, s.off, s.data, s.n);
    m->got += s.n;
    ctr_.held_bytes -= s.n;
    p->free();
    ++released;
  }
  m->held_tail = last;
  m->held -= released;
  held_frames_ -= released;
  pr.held -= released;
  if (released) consume(pr, released);
  if (m->held == 0 && m->got == m->total) {
    complete(m, Status::ok());
    return true;
  }
  return false;
}

// Gated messages whose sends moved on: write what may land now.
bool Messenger::flush_gated() {
  bool moved = false;
  for (size_t i = 0; i < gated_.size();) {
    InMsg* m = gated_[i];
    const uint32_t before = m->held;
    if (release_gated(m)) {  // finished: free_msg took it off the list (slot i holds the next one)
      moved = true;
      continue;
    }
    moved |= m->held != before;
    // Still waiting: held frames, or a whole spilled message (apply_spill).
    if (m->held == 0 && !(m->spilled && m->got == m->total)) {
      m->gated = false;
      gated_[i] = gated_.back();
      gated_.pop_back();
    } else {
      ++i;
    }
  }
  return moved;
}

// Copy (or combine) one segment into the bound receive's buffer, within its
// capacity. A reducing receive takes whole units only.
bool Messenger::write_segment(InMsg* m, uint64_t off, const uint8_t* data, uint64_t n) {
  if (!m->error.is_ok()) return false;
  RecvReq* r = m->req;
  const uint64_t avail = off < r->cap ? std::min<uint64_t>(n, r->cap - off) : 0;
  if (!avail) return true;
  if (r->action.fn) {
    const uint32_t unit = r->action.unit;
    if (off % unit || avail % unit) {
      m->error = error(Code::kInvalid,
                       "a %llu-byte segment at offset %llu of a message from rank %u does not hold whole %u-byte "
                       "elements (mismatched datatypes across nodes?)",
                       static_cast<unsigned long long>(n), static_cast<unsigned long long>(off), m->src(), unit);
      return false;
    }
    r->action.fn(r->action.ctx, r->buf + off, data, avail);
  } else {
    std::memcpy(r->buf + off, data, avail);
  }
  return true;
}

void Messenger::complete(InMsg* m, Status st) {
  RecvReq* r = m->req;
  if (st.is_ok() && !m->error.is_ok()) st = m->error;
  if (st.is_ok() && m->total > r->cap)
    st = error(Code::kOutOfRange, "a message of %llu bytes from rank %u (tag %u) was truncated to the %llu-byte receive",
               static_cast<unsigned long long>(m->total), m->src(), m->tag, static_cast<unsigned long long>(r->cap));
  r->msg_ = nullptr;
  r->done_ = true;
  completed(r);
  r->status_ = std::move(st);
  ++ctr_.msgs_received;
  free_msg(m);
}

// ---- aborts and discards ----

void Messenger::discard_msg(InMsg* m) {
  if (m->req) {
    RecvReq* r = m->req;
    r->msg_ = nullptr;
    r->done_ = true;
    completed(r);
    r->status_ = error(Code::kAborted, "rank %u dropped its message (tag %u) part way", m->src(), m->tag);
    m->req = nullptr;
  }
  // Bytes still to come are stale when they arrive (the seq is seen).
  free_msg(m);
}

void Messenger::abort_msg(uint32_t src, uint32_t seq) {
  ++ctr_.aborted;
  (void)drop_msg(src, seq, false);
}

// Message seq of src goes, whether it has begun to arrive (discarded) or
// not (seen now: its segments will be stale, and the messages after it need
// not wait for it to be matched in order). keep_bound: not one a receive
// has taken. False when nothing was dropped (taken, or over already).
bool Messenger::drop_msg(uint32_t src, uint32_t seq, bool keep_bound) {
  Peer& pr = peer(src);
  if (InMsg* m = find_msg(pr, seq)) {
    if (keep_bound && m->req) return false;
    discard_msg(m);
    return true;
  }
  const uint32_t d = seq - pr.contig;
  if (d >= 64 || ((pr.seen >> d) & 1)) return false;
  const uint32_t before = pr.contig;
  mark_seen(pr, seq);
  if (pr.contig != before) match_new(src, pr);
  return true;
}

uint32_t Messenger::discard(uint16_t context, uint32_t lo, uint32_t hi) {
  uint32_t n = 0;
  for (InMsg* m = unexpected_head_; m;) {
    InMsg* next = m->unx_next;
    if (m->ctx == context && m->tag - lo < hi - lo) {
      discard_msg(m);
      ++n;
    }
    m = next;
  }
  return n;
}

}  // namespace toroid
