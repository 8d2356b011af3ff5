// Messenger setup, packet dispatch, link-down and the poller. Sending is in
// p2p_send.cc, matching and delivery in p2p_recv.cc.
#include "netstack/p2p.h"

#include <algorithm>

#include "netstack/p2p_internal.h"

namespace toroid {

namespace {
constexpr uint32_t kInitialMsgs = 32;  // message records made up front
}  // namespace

using wire::MsgHeader;
using wire::MsgKind;
using wire::TorusHeader;

const CounterField kP2pCountersFields[] = {
    TOROID_COUNTER(P2pCounters, msgs_sent),    TOROID_COUNTER(P2pCounters, msgs_received),
    TOROID_COUNTER(P2pCounters, segs_sent),    TOROID_COUNTER(P2pCounters, segs_received),
    TOROID_COUNTER(P2pCounters, credit_msgs),  TOROID_COUNTER(P2pCounters, credit_stalls),
    TOROID_COUNTER(P2pCounters, bad_segments), TOROID_COUNTER(P2pCounters, unexpected),
    TOROID_COUNTER(P2pCounters, spilled),      TOROID_COUNTER(P2pCounters, store_full),
    TOROID_COUNTER(P2pCounters, truncated),    TOROID_COUNTER(P2pCounters, aborted),
    TOROID_COUNTER(P2pCounters, stale),        TOROID_COUNTER(P2pCounters, cancelled),
};
const int kP2pCountersFieldCount = sizeof(kP2pCountersFields) / sizeof(kP2pCountersFields[0]);

Messenger::Messenger(NetStack& net, const MessengerConfig& cfg) : net_(net), cfg_(cfg) {
  cfg_.window = std::clamp<uint32_t>(cfg_.window, 1, 64);
  if (cfg_.first_handle == 0) cfg_.first_handle = 1;
  next_handle_ = cfg_.first_handle;
  const uint32_t body = net.max_body();
  // Segments carry a multiple of 64 bytes (any element size up to 64 that
  // divides it stays whole), unless the ports are smaller than that.
  const uint32_t room = body > kMsgHeaders ? body - kMsgHeaders : 0;
  seg_payload_ = room >= 128 ? room / 64 * 64 : room;
  // Room for the usual in-flight state up front, so steady traffic does not
  // allocate: sends, credits owed, gated messages, message records.
  active_.reserve(16);
  credit_due_.reserve(16);
  gated_.reserve(16);
  msg_store_.reserve(kInitialMsgs);
  for (uint32_t i = 0; i < kInitialMsgs; ++i) {
    InMsg* m = new InMsg();
    msg_store_.push_back(m);
    m->next = free_msgs_;
    free_msgs_ = m;
  }
}

Messenger::~Messenger() {
  for (RecvReq* r = posted_head_; r; r = r->next_) r->posted_ = false;
  for (Peer* pr : peer_store_) {
    for (InMsg* m = pr->msgs; m; m = m->next) drop_held(m);
    delete pr;
  }
  for (InMsg* m : msg_store_) delete m;
}

Messenger::Peer* Messenger::find_peer(uint32_t rank) const {
  if (peer_slots_.empty()) return nullptr;
  const size_t mask = peer_slots_.size() - 1;
  for (size_t i = (rank * 0x9e3779b1u) >> peer_shift_;; i = (i + 1) & mask) {
    const PeerSlot& s = peer_slots_[i];
    if (!s.pr || s.rank == rank) return s.pr;
  }
}

void Messenger::index_peer(Peer* pr) {
  const size_t mask = peer_slots_.size() - 1;
  size_t i = (pr->rank * 0x9e3779b1u) >> peer_shift_;
  while (peer_slots_[i].pr) i = (i + 1) & mask;
  peer_slots_[i] = PeerSlot{pr->rank, pr};
}

// A peer's record as new: its rank, where it is, its first message number.
void Messenger::start_peer(Peer* pr, uint32_t rank) const {
  pr->rank = rank;
  pr->at = coord_of(rank, net_.dims());
  pr->next_seq = pr->contig = cfg_.first_seq;
}

Messenger::Peer& Messenger::peer(uint32_t rank) {
  if (Peer* pr = find_peer(rank)) return *pr;
  Peer* pr = new Peer();
  start_peer(pr, rank);
  peer_store_.push_back(pr);
  if (peer_store_.size() * 2 > peer_slots_.size()) {  // keep it at most half full: double, re-index
    const size_t size = peer_slots_.empty() ? 16 : peer_slots_.size() * 2;
    peer_slots_.assign(size, PeerSlot{});
    peer_shift_ = 32 - static_cast<uint32_t>(__builtin_ctzll(size));
    for (Peer* p : peer_store_) index_peer(p);
  } else {
    index_peer(pr);
  }
  return *pr;
}

void Messenger::on_packet(uint16_t port, Packet* p) {
  (void)port;
  if (p->len < kMsgHeaders) {
    ++ctr_.bad_segments;
    p->free();
    return;
  }
  const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
  const auto* mh = reinterpret_cast<const MsgHeader*>(p->data() + sizeof(TorusHeader));
  Coord src;
  for (int i = 0; i < kDims; ++i) src.c[i] = th->src[i];  // inside the partition (the router checked)
  const uint32_t rank = rank_of(src, net_.dims());
  switch (static_cast<MsgKind>(mh->kind)) {
    case MsgKind::kData:
      take_data(rank, p);
      return;
    case MsgKind::kCredit: {
      Peer& pr = peer(rank);
      const uint32_t c = mh->offset.get();
      // Cumulative: only forward, and never past what we have sent.
      const auto inc = static_cast<int32_t>(c - pr.peer_took);
      if (inc > 0 && static_cast<uint32_t>(inc) <= pr.segs_sent - pr.peer_took) pr.peer_took = c;
      else if (inc != 0) ++ctr_.bad_segments;
      p->free();
      return;
    }
    case MsgKind::kAbort:
      abort_msg(rank, th->tag.get());
      p->free();
      return;
    case MsgKind::kSyncAck:
      take_sync_ack(rank, th->tag.get());
      p->free();
      return;
    case MsgKind::kCancel:
      take_cancel(rank, th->tag.get());
      p->free();
      return;
    case MsgKind::kCancelReply:
      take_cancel_reply(rank, th->tag.get(), mh->offset.get() != 0);
      p->free();
      return;
  }
  ++ctr_.bad_segments;
  p->free();
}

void Messenger::on_link_down(uint16_t port, const Status& why) {
  (void)port;
  if (status_.is_ok()) status_ = why;
  active_.clear();  // their data can no longer be delivered reliably
  sync_wait_.clear();
  // Every posted receive fails; bound ones complete with the link's status.
  while (RecvReq* r = posted_head_) {
    unlink_posted(r);
    r->done_ = true;
    completed(r);
    r->status_ = why;
  }
  for (Peer* pr : peer_store_)
    for (InMsg* m = pr->msgs; m; m = m->next)
      if (m->req && !m->req->done_) {
        m->req->done_ = true;
        completed(m->req);
        m->req->status_ = why;
        m->req->msg_ = nullptr;
        m->req = nullptr;
      }
}

void Messenger::reset(const Status& why) {
  active_.clear();
  abort_due_.clear();
  cancels_.clear();
  cancel_due_.clear();
  cancel_reply_due_.clear();
  recent_.fill(RecentSend{});
  while (RecvReq* r = posted_head_) {
    unlink_posted(r);
    r->done_ = true;
    completed(r);
    r->status_ = why;
  }
  for (Peer* pr : peer_store_) {
    while (InMsg* m = pr->msgs) {
      if (m->req && !m->req->done_) {
        m->req->done_ = true;
        completed(m->req);
        m->req->status_ = why;
        m->req->msg_ = nullptr;
      }
      free_msg(m);
    }
  }
  // Whole messages waiting for a receive: sent before the reset, so their
  // senders' numbering no longer covers them.
  while (InMsg* m = unexpected_head_) free_msg(m);
  // Then every peer starts over (the table keeps indexing it by its rank).
  for (Peer* pr : peer_store_) {
    const uint32_t rank = pr->rank;
    *pr = Peer{};
    start_peer(pr, rank);
  }
  spill_check_ = false;
  stalled_head_ = nullptr;  // every peer's record was cleared above
  heavy_head_ = nullptr;
  credit_due_.clear();  // (dropping held frames queued credits for peers that start over)
  gated_.clear();
  held_frames_ = 0;
  ctr_.held_bytes = 0;
  status_ = Status::ok();
}

bool Messenger::poll() {
  bool moved = false;
  // Credits and aborts first: they unblock other nodes.
  while (!credit_due_.empty()) {
    Peer& pr = peer(credit_due_.back());
    if (pr.took != pr.took_reported && !send_credit(pr)) break;
    pr.credit_queued = false;
    credit_due_.pop_back();
    moved = true;
  }
  if (!ack_due_.empty()) moved |= send_acks();
  if (!cancel_due_.empty() || !cancel_reply_due_.empty()) moved |= send_cancels();
  while (abort_due_.size() >= 2) {
    const size_t k = abort_due_.size() - 2;
    if (!send_abort(abort_due_[k], abort_due_[k + 1])) break;
    abort_due_.resize(k);
    moved = true;
  }
  if (spill_check_) {
    spill_check_ = false;
    spill_blockers();
  }
  // One pass that drops the finished sends and keeps the others in order
  // (erasing each in place moved the rest: quadratic in an all-to-all).
  bool sent = false;
  size_t keep = 0;
  for (size_t i = 0; i < active_.size(); ++i) {
    SendOp& op = active_[i];
    // Every pending send has a segment to inject: with the injection queue
    // full none can move, so the rest stay as they are.
    if (!net_.can_inject()) {
      if (keep != i) std::move(active_.begin() + static_cast<ptrdiff_t>(i), active_.end(),
                               active_.begin() + static_cast<ptrdiff_t>(keep));
      keep += active_.size() - i;
      break;
    }
    if (op.dropped) {  // cancelled at the receiver (p2p_cancel.cc): nothing more leaves
      sent = true;
      continue;
    }
    const uint64_t before = op.offset;
    const bool started = op.started;
    const bool done = pump_send(op) && sent_out(op);
    sent |= op.offset != before || op.started != started || done;
    if (done) continue;
    if (keep != i) active_[keep] = op;
    ++keep;
  }
  active_.resize(keep);
  moved |= sent;
  // A gated message may land more frames only once one of our sends read
  // further, left or was cancelled: otherwise its gate has not moved.
  if (!gated_.empty() && (sent || gates_moved_)) moved |= flush_gated();
  gates_moved_ = false;
  return moved;
}

}  // namespace toroid
