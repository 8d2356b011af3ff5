// Messenger: cancelling a message whose data has (partly) left (MPI_Cancel
// of a send). The sender asks the receiver (kCancel, the message's seq in the
// torus header's tag); the receiver drops the message if no receive has taken
// it and answers (kCancelReply: offset 1 dropped, 0 a receive took it). A
// dropped message's later segments are stale at the receiver, as an aborted
// one's are, and the sender stops sending them.
#include "netstack/p2p.h"
#include "netstack/p2p_internal.h"

namespace toroid {

using wire::MsgHeader;
using wire::MsgKind;
using wire::TorusHeader;

bool Messenger::request_cancel(uint64_t handle) {
  if (handle == 0) return false;
  for (const CancelAsk& c : cancels_)
    if (c.handle == handle) return true;  // asked already
  uint32_t dst = 0, seq = 0;
  bool known = false;
  if (const SendOp* op = find_active(handle)) {
    if (!op->started) return false;  // nothing left yet: cancel_unsent
    dst = op->dst;
    seq = op->seq;
    known = true;
  }
  for (size_t i = 0; !known && i < sync_wait_.size(); ++i) {
    if (sync_wait_[i].handle != handle) continue;
    dst = sync_wait_[i].dst;
    seq = sync_wait_[i].seq;
    known = true;
  }
  for (size_t i = 0; !known && i < recent_.size(); ++i) {
    if (recent_[i].handle != handle) continue;
    dst = recent_[i].dst;
    seq = recent_[i].seq;
    known = true;
  }
  if (!known) return false;
  // Answers nobody read (their requests were freed) do not pile up.
  if (cancels_.size() >= kRecentSends) {
    size_t keep = 0;
    for (const CancelAsk& c : cancels_)
      if (c.state == CancelState::kPending) cancels_[keep++] = c;
    cancels_.resize(keep);
  }
  cancels_.push_back(CancelAsk{handle, dst, seq, CancelState::kPending});
  cancel_due_.push_back(dst);
  cancel_due_.push_back(seq);
  return true;
}

Messenger::CancelState Messenger::cancel_result(uint64_t handle) const {
  for (const CancelAsk& c : cancels_)
    if (c.handle == handle) return c.state;
  return CancelState::kNone;
}

void Messenger::forget_cancel(uint64_t handle) {
  for (size_t i = 0; i < cancels_.size(); ++i) {
    if (cancels_[i].handle != handle) continue;
    cancels_.erase(cancels_.begin() + static_cast<ptrdiff_t>(i));
    return;
  }
}

// The receiver: drop message seq of src unless a receive has taken it.
void Messenger::take_cancel(uint32_t src, uint32_t seq) {
  const bool dropped = drop_msg(src, seq, true);
  if (dropped) ++ctr_.cancelled;
  cancel_reply_due_.push_back(src);
  cancel_reply_due_.push_back(seq);
  cancel_reply_due_.push_back(dropped ? 1 : 0);
}

// The sender: the answer to our request for seq of rank.
void Messenger::take_cancel_reply(uint32_t rank, uint32_t seq, bool dropped) {
  for (CancelAsk& c : cancels_) {
    if (c.dst != rank || c.seq != seq || c.state != CancelState::kPending) continue;
    c.state = dropped ? CancelState::kCancelled : CancelState::kNotCancelled;
    if (dropped) {
      // No receive will take it: no acknowledgement comes, and what is left
      // of it need not leave (poll() drops the send).
      for (SendOp& op : active_)
        if (op.handle == c.handle) op.dropped = true;
      for (size_t i = 0; i < sync_wait_.size(); ++i) {
        if (sync_wait_[i].handle != c.handle) continue;
        sync_wait_[i] = sync_wait_.back();
        sync_wait_.pop_back();
        break;
      }
    }
    return;
  }
  ++ctr_.bad_segments;  // an answer to nothing we asked
}

bool Messenger::send_cancels() {
  bool moved = false;
  while (cancel_due_.size() >= 2) {
    const size_t k = cancel_due_.size() - 2;
    if (!net_.can_inject()) return moved;
    Packet* p = make_segment(peer(cancel_due_[k]), 0, 0, cancel_due_[k + 1], MsgKind::kCancel);
    if (!p) return moved;
    if (!net_.send(p)) {
      p->free();
      return moved;
    }
    cancel_due_.resize(k);
    moved = true;
  }
  while (cancel_reply_due_.size() >= 3) {
    const size_t k = cancel_reply_due_.size() - 3;
    if (!net_.can_inject()) return moved;
    Packet* p = make_segment(peer(cancel_reply_due_[k]), 0, 0, cancel_reply_due_[k + 1], MsgKind::kCancelReply);
    if (!p) return moved;
    reinterpret_cast<MsgHeader*>(p->data() + sizeof(TorusHeader))->offset.set(cancel_reply_due_[k + 2]);
    if (!net_.send(p)) {
      p->free();
      return moved;
    }
    cancel_reply_due_.resize(k);
    moved = true;
  }
  return moved;
}

}  // namespace toroid
