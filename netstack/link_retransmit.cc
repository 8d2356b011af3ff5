// Link loss recovery: the retransmission timer with exponential backoff,
// sack/NAK-driven retransmission, credit probes and link-down.
//
// Policy:
// - One timer per link. With data unacknowledged it fires rto_cur_ after
//   the last progress (or the first send into an empty window), capped at
//   the link-down deadline. On expiry it resends only the OLDEST unacked
//   frame, flagged kLinkAckReq so the peer answers at once, and doubles
//   rto_cur_ up to rto_max_ns. One frame per expiry keeps a spurious
//   timeout (a slow port, a late ack) cheap: the peer's reply carries a
//   cumulative ack and a sack, and the sack repairs every other hole.
// - Holes (unsacked seqs below the highest sacked one, whether or not the
//   ack carries kLinkNak) are resent when the ack is current, each at most
//   once per rto_cur_ / 2, so a frame merely overtaken by a reordered one is
//   not resent at once and a NAK followed by sacks does not resend twice.
// - With nothing unacked but credits the peer has not returned, the timer
//   probes instead (a bare ack with kLinkAckReq), with the same backoff: a
//   lost credit update is repaired even when no data is waiting to go.
// - A timer that fires a stall_grace late on a real clock (this node was
//   not running) asks the peer once more before anything is declared dead.
// - Link-down, for good: data unacknowledged with no progress for
//   down_after_ns; probes unanswered (no frame heard) for down_after_ns; or
//   the port's carrier down at an expiry while we wait on the peer (data
//   unacknowledged or buffers not returned). A link with nothing owed either
//   way has nothing to lose and keeps no timer.
#include <algorithm>
#include <cstdint>

#include "netstack/link.h"

namespace toroid {

bool Link::peer_holds_credits() const {
  for (int vc = 0; vc < wire::kNumVcs; ++vc)
    if (credits_used_[vc] != peer_freed_[vc]) return true;
  return false;
}

void Link::arm_rto() {
  if (!up_) {
    rto_due_ = kNever;
    loop_.timers().cancel(rto_timer_);
    return;
  }
  const uint64_t now = loop_.now();
  uint64_t due = kNever;
  if (unacked() > 0) {
    due = std::min(now + rto_cur_, std::max(last_progress_ + cfg_.down_after_ns, now));
  } else if (peer_holds_credits()) {
    due = std::min(now + rto_cur_, std::max(last_heard_ + cfg_.down_after_ns, now));
  }
  rto_due_ = due;
  // Lazy: the wheel moves only when the deadline comes earlier than the
  // armed one. A later deadline (the usual case: progress) is picked up
  // when the armed timer fires; nothing to wait for leaves it to fire idle.
  if (due != kNever && (!rto_timer_.armed() || rto_timer_.deadline() > due)) loop_.timers().arm(rto_timer_, due);
}

// Under virtual time nothing is ever descheduled: the configured timeout is
// exact there (and the sim's tests rely on it). On a real rig a peer whose
// vCPU or process sleeps answers late: the timeout follows the measured
// round trip so that such a stall does not read as a loss.
uint64_t Link::rto_base() const {
  if (srtt_ == 0 || loop_.clock().is_virtual()) return cfg_.rto_ns;
  return std::clamp(srtt_ + 4 * rttvar_, cfg_.rto_ns, std::max(cfg_.rto_ns, cfg_.rto_max_ns));
}

// Jacobson/Karels, in ns: srtt += (r - srtt)/8, rttvar += (|r - srtt| - rttvar)/4.
void Link::sample_rtt(uint64_t r) {
  if (srtt_ == 0) {
    srtt_ = std::max<uint64_t>(r, 1);
    rttvar_ = r / 2;
    return;
  }
  const uint64_t dev = r > srtt_ ? r - srtt_ : srtt_ - r;
  rttvar_ = (3 * rttvar_ + dev) / 4;
  srtt_ = std::max<uint64_t>((7 * srtt_ + r) / 8, 1);
}

void Link::on_rto(void* self) { static_cast<Link*>(self)->rto_expired(); }

void Link::rto_expired() {
  if (!up_ || rto_due_ == kNever) return;
  const uint64_t now = loop_.now();
  if (now < rto_due_) {  // progress moved the deadline on since the timer was armed
    loop_.timers().arm(rto_timer_, rto_due_);
    return;
  }
  const bool owed = unacked() > 0 || peer_holds_credits();
  if (owed && port_->link_state() != LinkState::kDown && stalled_self(rto_due_, now)) {
    ++ctr_.self_stalls;  // see stalled_self (link.cc): ask, decide a grace later
    if (unacked() > 0) retransmit(peer_ack_, wire::kLinkAckReq);
    else send_bare_ack(wire::kLinkAckReq);
    rto_due_ = now + stall_grace();
    loop_.timers().arm(rto_timer_, rto_due_);
    flush_tx();
    return;
  }
  if (unacked() > 0) {
    ++ctr_.timeouts;
    if (port_->link_state() == LinkState::kDown) {
      go_down(error(Code::kLinkDown, "%s: link down: carrier lost (%u frames unacknowledged)", name_.c_str(),
                    unacked()));
      return;
    }
    if (now - last_progress_ >= cfg_.down_after_ns) {
      char dur[32];
      format_duration(now - last_progress_, dur, sizeof dur);
      go_down(error(Code::kLinkDown, "%s: link down: no progress for %s (%u frames unacknowledged)", name_.c_str(),
                    dur, unacked()));
      return;
    }
    retransmit(peer_ack_, wire::kLinkAckReq);
  } else if (peer_holds_credits()) {
    uint32_t owed = 0;
    for (int vc = 0; vc < wire::kNumVcs; ++vc) owed += static_cast<uint16_t>(credits_used_[vc] - peer_freed_[vc]);
    if (port_->link_state() == LinkState::kDown) {
      go_down(error(Code::kLinkDown, "%s: link down: carrier lost (%u receive buffers not returned)", name_.c_str(),
                    owed));
      return;
    }
    if (now - last_heard_ >= cfg_.down_after_ns) {
      char dur[32];
      format_duration(now - last_heard_, dur, sizeof dur);
      go_down(error(Code::kLinkDown, "%s: link down: no answer for %s (%u receive buffers not returned)",
                    name_.c_str(), dur, owed));
      return;
    }
    send_bare_ack(wire::kLinkAckReq);
  } else {
    return;
  }
  rto_cur_ = std::min(rto_cur_ * 2, std::max(cfg_.rto_max_ns, cfg_.rto_ns));
  arm_rto();
  flush_tx();
}

void Link::retransmit_holes(uint32_t sack) {
  if (sack == 0) return;  // a NAK whose gap has been filled since
  const uint64_t now = loop_.now();
  const uint64_t min_gap = rto_cur_ / 2;
  // Highest sacked seq; everything from peer_ack_ below it that is not
  // sacked is a hole. Push copies to the queue front highest first, so they
  // leave lowest first.
  const uint32_t top = peer_ack_ + 1 + static_cast<uint32_t>(31 - __builtin_clz(sack));
  const uint32_t end = std::min(top - peer_ack_, unacked());
  for (uint32_t k = end; k-- > 0;) {
    const uint32_t seq = peer_ack_ + k;
    const TxSlot& s = window_[seq % kLinkWindow];
    if (!s.pkt || s.seq != seq || s.sacked || s.in_queue) continue;
    if (now - s.sent_at < min_gap) continue;
    retransmit(seq, 0);
  }
}

// Queue a copy of seq's frame at the front: the original may still be on
// the wire (or held by the medium), and a shared packet is read-only. The
// copy's ack fields and CRC are rewritten when it leaves.
bool Link::retransmit(uint32_t seq, uint8_t flags) {
  TxSlot& s = window_[seq % kLinkWindow];
  if (!s.pkt || s.seq != seq || s.in_queue) return false;  // gone, or still waiting to leave
  Packet* c = clone_packet(*s.pkt, port_->tx_pool());
  if (!c) {
    ++ctr_.no_buffer;  // the timer tries again
    return false;
  }
  c->user = 0;
  header_of(c)->flags = flags;
  s.in_queue = true;
  s.resent = true;
  s.sent_at = loop_.now();
  ++ctr_.retransmits;
  push_front(c);
  return true;
}

void Link::go_down(Status why) {
  if (!up_) return;
  up_ = false;
  down_ = std::move(why);
  ack_pending_ = false;
  peer_ack_ = next_seq_;
  drop_frames();
  rx_bits_ = 0;
  client_->on_link_down(index_, down_);
}

}  // namespace toroid
