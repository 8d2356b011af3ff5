// Messenger synchronous sends: the receiver acknowledges a flagged message
// when a receive takes it (MPI_Ssend's completion rule); the sender holds
// the send open until then.
#include "netstack/p2p.h"
#include "netstack/p2p_internal.h"

namespace toroid {

using wire::MsgKind;

// op's data has all left: a plain send is done; a synchronous one now
// waits for its acknowledgement (an empty message has its seq once its one
// segment left), unless it came already: a receive posted before the
// message arrives takes it at its first segment, and its ack can be back
// before the last segment of a long message has left.
bool Messenger::sent_out(SendOp& op) {
  if (op.sync && !op.acked) sync_wait_.push_back(SyncWait{op.handle, op.dst, op.seq});
  // Known for a while yet to a cancel request (p2p_cancel.cc).
  recent_[recent_next_] = RecentSend{op.handle, op.dst, op.seq};
  recent_next_ = (recent_next_ + 1) % kRecentSends;
  return true;
}

void Messenger::ack_match(const InMsg* m) {
  ack_due_.push_back(m->src());
  ack_due_.push_back(m->seq);
}

void Messenger::take_sync_ack(uint32_t rank, uint32_t seq) {
  for (size_t i = 0; i < sync_wait_.size(); ++i) {
    if (sync_wait_[i].dst != rank || sync_wait_[i].seq != seq) continue;
    sync_wait_[i] = sync_wait_.back();
    sync_wait_.pop_back();
    return;
  }
  for (SendOp& op : active_) {
    if (op.sync && op.started && !op.acked && op.dst == rank && op.seq == seq) {
      op.acked = true;  // still sending: done once its last segment has left
      return;
    }
  }
  ++ctr_.bad_segments;  // an acknowledgement of nothing we wait for
}

bool Messenger::send_acks() {
  bool moved = false;
  while (ack_due_.size() >= 2) {
    const size_t k = ack_due_.size() - 2;
    if (!net_.can_inject()) break;
    Packet* p = make_segment(peer(ack_due_[k]), 0, 0, ack_due_[k + 1], MsgKind::kSyncAck);
    if (!p) break;
    if (!net_.send(p)) {
      p->free();
      break;
    }
    ack_due_.resize(k);
    moved = true;
  }
  return moved;
}

}  // namespace toroid
