// Link receive side: validate, act on the ack fields every frame carries,
// accept data into reorder slots (each one a receive buffer the peer paid a
// credit for) and deliver it to the client in sequence order, exactly once.
#include <algorithm>
#include <cstring>

#include "netstack/link.h"

namespace toroid {

using wire::FrameType;
using wire::LinkHeader;

bool Link::poll() {
  // Carrier, read now and then even when idle: a neighbour that closed its
  // end is noticed without waiting for unacknowledged data to time out.
  if (up_) {
    const uint64_t now = loop_.now();
    if (now >= next_carrier_check_) {
      next_carrier_check_ = now + tuning::kCarrierCheckNs;
      if (port_->link_state() == LinkState::kDown) {
        go_down(error(Code::kLinkDown, "%s: link down: carrier lost", name_.c_str()));
        return true;
      }
    }
  }
  Packet* burst[tuning::kBurst];
  const uint16_t n = port_->rx_burst(burst, tuning::kBurst);
  const uint64_t frames0 = ctr_.rx_frames, acks0 = ctr_.acks_received;
  for (uint16_t i = 0; i < n; ++i) rx_one(burst[i]);
  // Bare acks alone (an idle link's keepalive probe and its answer) are not
  // work: an idle node may still go to sleep (EventLoop::idle_step).
  bool busy = ctr_.rx_frames - frames0 > ctr_.acks_received - acks0;
  busy |= flush_tx();
  return busy;
}

void Link::rx_one(Packet* p) {
  if (p->shared()) {
    // The medium handed us a buffer its sender still references (the sim
    // does: the sender keeps data frames for retransmission). Validation
    // and delivery change it, so work on a private copy.
    Packet* c = clone_packet(*p, port_->tx_pool());
    if (c) c->port = p->port;
    p->free();
    if (!c) {
      ++ctr_.no_buffer;  // lost like a drop: the peer retransmits
      return;
    }
    p = c;
  }
  const uint32_t frame_len = p->len;
  FrameType type;
  if (!validate(p, &type)) {
    p->free();
    return;
  }
  ++ctr_.rx_frames;
  ctr_.rx_bytes += frame_len;
  p->next = nullptr;
  LinkHeader lh;
  std::memcpy(&lh, p->data() - sizeof lh, sizeof lh);
  const uint8_t* src = p->data() - sizeof lh - sizeof(wire::EthHeader) + 6;  // EthHeader::src
  const bool foreign_partition = lh.partition.get() != cfg_.partition;
  ctr_.rx_foreign_partition += foreign_partition;
  if (type == FrameType::kHello) {
    // A neighbour still training is alive: its hellos count as heard. (The
    // trainer checks the whole partition id and names a foreign one.)
    if (up_ && !foreign_partition) last_heard_ = loop_.now();
    client_->on_frame(index_, type, p);
    return;
  }
  if (!up_ || foreign_partition) {
    p->free();
    return;
  }
  if (has_peer_mac_ && std::memcmp(src, peer_mac_, sizeof peer_mac_) != 0) {
    ++ctr_.rx_foreign_node;
    p->free();
    return;
  }
  const uint64_t now = loop_.now();
  longest_silence_ns_ = std::max(longest_silence_ns_, now - last_heard_);
  last_heard_ = now;
  peer_heard_ = true;
  handle_ack_fields(lh);
  if (type == FrameType::kAck) {
    ++ctr_.acks_received;
    if (lh.flags & wire::kLinkAckReq) schedule_ack(true);
    p->free();
    return;
  }
  handle_data(lh, p);
}

// The peer's view of what we sent: cumulative ack, sack, credits.
void Link::handle_ack_fields(const LinkHeader& lh) {
  const uint64_t now = loop_.now();
  const uint32_t ack = lh.ack.get();
  const auto advance = static_cast<int32_t>(ack - peer_ack_);
  bool progress = false;
  if (advance > 0 && static_cast<uint32_t>(advance) <= unacked()) {
    // The newest frame this ack covers times the round trip, unless it was
    // sent more than once (then the ack may answer either copy).
    const TxSlot& newest = window_[(ack - 1) % kLinkWindow];
    if (newest.pkt && newest.seq == ack - 1 && !newest.resent && !newest.in_queue) sample_rtt(now - newest.sent_at);
    while (peer_ack_ != ack) {
      TxSlot& s = window_[peer_ack_ % kLinkWindow];
      if (s.pkt) s.pkt->free();
      s.pkt = nullptr;
      s.in_queue = false;
      s.sacked = false;
      ++peer_ack_;
    }
    last_progress_ = now;
    rto_cur_ = rto_base();
    progress = true;
  }

  // Credits are cumulative counts mod 2^16; the peer cannot have freed more
  // buffers than we have filled, so anything beyond that is stale or bogus.
  bool credit_progress = false;
  for (int vc = 0; vc < wire::kNumVcs; ++vc) {
    const uint16_t freed = lh.credits[vc].get();
    const auto inc = static_cast<uint16_t>(freed - peer_freed_[vc]);
    const auto out = static_cast<uint16_t>(credits_used_[vc] - peer_freed_[vc]);
    if (inc != 0 && inc <= out) {
      peer_freed_[vc] = freed;
      credit_progress = true;
    }
  }

  // Sack bit i: the peer holds seq ack + 1 + i. Sacks are never taken back.
  const uint32_t sack = lh.sack.get();
  for (uint32_t bits = sack; bits;) {
    const int i = __builtin_ctz(bits);
    bits &= bits - 1;
    const uint32_t seq = ack + 1 + static_cast<uint32_t>(i);
    if (static_cast<int32_t>(seq - peer_ack_) < 0 || seq - peer_ack_ >= unacked()) continue;
    TxSlot& s = window_[seq % kLinkWindow];
    if (s.pkt && s.seq == seq) s.sacked = true;
  }
  // Holes below a sacked seq are lost (or late): resend them. Only from a
  // current ack; an older one describes holes that may have been filled.
  if (ack == peer_ack_ && (sack != 0 || (lh.flags & wire::kLinkNak))) retransmit_holes(sack);

  if (progress) {
    arm_rto();
  } else if (credit_progress && unacked() == 0) {
    rto_cur_ = rto_base();  // the probe was answered
    arm_rto();
  }
}

void Link::handle_data(const LinkHeader& lh, Packet* p) {
  const uint32_t seq = lh.seq.get();
  const uint8_t vc = lh.vc;
  const auto d = static_cast<int32_t>(seq - rx_next_);
  if (d < 0 || (d < static_cast<int32_t>(kLinkWindow) && reorder_[seq % kLinkWindow])) {
    ++ctr_.duplicates;
    p->free();
    schedule_ack(true);  // the peer resends because it missed our ack
    return;
  }
  if (d >= static_cast<int32_t>(kLinkWindow)) {
    ++ctr_.out_of_window;
    p->free();
    return;
  }
  if (vc >= wire::kNumVcs || held_[vc] >= cfg_.rx_credits[vc]) {
    // The peer sent without a credit: never from a correct peer. Not acked,
    // so the frame is not lost to a peer that later gets a credit back.
    ++ctr_.credit_violations;
    p->free();
    return;
  }
  ++held_[vc];
  ++rx_unreported_;
  p->vc = vc;
  reorder_[seq % kLinkWindow] = p;
  rx_bits_ |= 1u << d;
  bump_ack_state();
  if (d > 0) {
    ++ctr_.reordered;
    // A new gap [rx_high_, seq) just appeared: tell the sender at once. A
    // frame that fills or extends behind an old gap does not repeat it.
    if (static_cast<int32_t>(seq - rx_high_) > 0) send_bare_ack(wire::kLinkNak);
  }
  if (static_cast<int32_t>(seq + 1 - rx_high_) > 0) rx_high_ = seq + 1;
  schedule_ack((lh.flags & wire::kLinkAckReq) != 0);
  deliver_in_order();
}

void Link::deliver_in_order() {
  while (rx_bits_ & 1u) {
    Packet* p = reorder_[rx_next_ % kLinkWindow];
    reorder_[rx_next_ % kLinkWindow] = nullptr;
    rx_bits_ >>= 1;
    ++rx_next_;
    bump_ack_state();
    ++ctr_.data_delivered;
    client_->on_data(index_, p);  // may release() or send() from here
  }
}

void Link::release(uint8_t vc) {
  if (vc >= wire::kNumVcs || held_[vc] == 0) return;  // nothing of vc is held: a client bug
  --held_[vc];
  ++freed_[vc];
  bump_ack_state();
  schedule_ack(false);  // the credit goes back with the next ack
}

}  // namespace toroid
