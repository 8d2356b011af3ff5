// Link transmit side: framing, admission of data frames (credits, window),
// the tx queue to the port, and the bare acks the receiver sends.
//
// Ack fields (ack, sack, credits) and the CRC are written when a frame is
// handed to the port, not when it is queued, so every frame carries the
// newest receiver state even after waiting behind a busy port; a frame is
// restamped only if that state changed since it was last stamped.
#include <algorithm>
#include <cassert>
#include <cstring>

#include "netstack/crc32c.h"
#include "netstack/link.h"

namespace toroid {

using wire::EthHeader;
using wire::FrameType;
using wire::LinkHeader;

namespace {
constexpr uint32_t kFrameOverhead = sizeof(EthHeader) + sizeof(LinkHeader);
}  // namespace

bool Link::can_frame(const Packet* p) const {
  return p->len <= 0xffff && p->headroom() >= kFrameOverhead;
}

void Link::fill_header(LinkHeader* lh, FrameType type, uint8_t vc, uint32_t seq, uint16_t body_len) {
  std::memset(lh, 0, sizeof *lh);
  lh->version = wire::kWireVersion;
  lh->type = static_cast<uint8_t>(type);
  lh->vc = vc;
  lh->seq.set(seq);
  lh->length.set(body_len);
  lh->partition.set(cfg_.partition);
}

// Callers check can_frame() first.
void Link::frame(Packet* p, FrameType type, uint8_t vc, uint32_t seq) {
  const auto body = static_cast<uint16_t>(p->len);
  uint8_t* d = p->prepend(kFrameOverhead);
  if (!d) return;
  auto* eh = reinterpret_cast<EthHeader*>(d);
  auto* lh = reinterpret_cast<LinkHeader*>(d + sizeof(EthHeader));
  std::memset(eh->dst, 0xff, 6);  // point-to-point: the peer takes every frame
  std::memcpy(eh->src, mac_, 6);
  eh->ethertype.set(wire::kEtherType);
  fill_header(lh, type, vc, seq, body);
  p->user = 0;  // not stamped yet
  p->next = nullptr;
}

// Ack fields for data and ack frames; hellos are unsequenced and carry none
// (a rebooted peer's hello must not read as an ack). Then the CRC, except
// for data and acks on a medium that guarantees integrity: kLinkNoCrc.
// Hellos always have one: they train links whatever the medium.
void Link::stamp(Packet* p) {
  if (p->user == ack_gen_) return;
  LinkHeader* lh = header_of(p);
  const bool sequenced =
      lh->type == static_cast<uint8_t>(FrameType::kData) || lh->type == static_cast<uint8_t>(FrameType::kAck);
  if (sequenced) {
    lh->ack.set(rx_next_);
    lh->sack.set(rx_bits_ >> 1);
    for (int vc = 0; vc < wire::kNumVcs; ++vc) lh->credits[vc].set(freed_[vc]);
  }
  lh->crc.set(0);
  if (sequenced && no_crc_) {
    lh->flags |= wire::kLinkNoCrc;
  } else {
    lh->flags &= static_cast<uint8_t>(~wire::kLinkNoCrc);
    lh->crc.set(crc32c(lh, sizeof(LinkHeader) + lh->length.get()));
  }
  p->user = ack_gen_;
}

void Link::push_back(Packet* p) {
  p->next = nullptr;
  if (tx_tail_) tx_tail_->next = p;
  else tx_head_ = p;
  tx_tail_ = p;
  ++tx_count_;
}

void Link::push_front(Packet* p) {
  p->next = tx_head_;
  tx_head_ = p;
  if (!tx_tail_) tx_tail_ = p;
  ++tx_count_;
}

bool Link::send_raw(FrameType type, Packet* p) {
  // An unsequenced data frame would read as seq 0 at the peer.
  if (type == FrameType::kData) return false;
  if (tx_count_ >= cfg_.tx_cap) {
    ++ctr_.tx_queue_full;
    return false;
  }
  if (!can_frame(p)) return false;  // p untouched
  frame(p, type, 0, 0);
  push_back(p);
  return true;
}

uint32_t Link::credits(uint8_t vc) const {
  if (!up_ || vc >= wire::kNumVcs) return 0;
  const auto in_use = static_cast<uint16_t>(credits_used_[vc] - peer_freed_[vc]);
  return in_use >= peer_credits_[vc] ? 0 : peer_credits_[vc] - in_use;
}

bool Link::can_send(uint8_t vc) const { return credits(vc) > 0 && unacked() < kLinkWindow; }

bool Link::send(uint8_t vc, Packet* p) {
  if (!up_ || vc >= wire::kNumVcs) return false;
  if (credits(vc) == 0) {
    ++ctr_.credit_stalls;
    return false;
  }
  if (unacked() >= kLinkWindow) {
    ++ctr_.window_stalls;
    return false;
  }
  // The link writes headers into p's headroom: it must be the only owner.
  assert(!p->shared() && "Link::send: a shared packet cannot be framed");
  if (!can_frame(p) || p->shared()) return false;  // p untouched
  const uint64_t now = loop_.now();
  const bool was_empty = unacked() == 0;
  const uint32_t seq = next_seq_++;
  frame(p, FrameType::kData, vc, seq);
  TxSlot& s = window_[seq % kLinkWindow];
  s.pkt = p;
  s.sent_at = now;
  s.seq = seq;
  s.vc = vc;
  s.sacked = false;
  s.in_queue = true;
  p->ref();  // the window's reference; the queue's goes to the port
  ++credits_used_[vc];
  ++ctr_.data_sent;
  push_back(p);
  // Alone in the queue: hand it to the port now rather than at the next
  // poll, so a small message does not wait a round of the event loop.
  // (Frames queue behind it only while the port is full.)
  if (tx_count_ == 1) flush_tx();
  s.resent = false;
  if (was_empty) {
    // The no-progress clock starts with the first frame of an empty window.
    last_progress_ = now;
    rto_cur_ = rto_base();
    arm_rto();
  }
  return true;
}

void Link::send_bare_ack(uint8_t flags) {
  if (!up_) return;
  if (ack_pkt_) {
    // One bare ack in the queue is enough: it is stamped when it leaves.
    LinkHeader* lh = header_of(ack_pkt_);
    if ((lh->flags | flags) != lh->flags) {
      lh->flags |= flags;
      ack_pkt_->user = 0;
    }
    return;
  }
  Packet* p = port_->tx_pool().alloc();
  if (!p || p->headroom() < kFrameOverhead) {
    if (p) p->free();
    ++ctr_.no_buffer;
    // Try again later; ack_pending_ stays set.
    ack_pending_ = true;
    ack_due_ = loop_.now() + cfg_.ack_delay_ns;
    if (!ack_timer_.armed()) loop_.timers().arm(ack_timer_, ack_due_);
    return;
  }
  frame(p, FrameType::kAck, 0, 0);
  header_of(p)->flags = flags;
  push_front(p);
  ack_pkt_ = p;
}

bool Link::ack_owed_now() const {
  if (rx_unreported_ >= kLinkWindow / 4) return true;  // the peer's window is filling
  for (int vc = 0; vc < wire::kNumVcs; ++vc) {
    // Credits go back at a low-water mark: half the VC's buffers freed and
    // not yet reported, so a streaming sender never waits for the timer.
    const uint32_t owed = static_cast<uint16_t>(freed_[vc] - freed_reported_[vc]);
    if (owed > 0 && owed >= std::max<uint32_t>(1, cfg_.rx_credits[vc] / 2)) return true;
  }
  return false;
}

void Link::schedule_ack(bool now) {
  if (!up_) return;
  // The ack is due ack_delay after the first frame it answers.
  if (!ack_pending_) ack_due_ = loop_.now() + cfg_.ack_delay_ns;
  ack_pending_ = true;
  if (now || ack_owed_now()) {
    send_bare_ack(0);
    return;
  }
  // Coalesce: one timer for every reason to ack; a data frame that leaves
  // first carries the ack and disarms the timer (flush_tx).
  if (!ack_timer_.armed()) loop_.timers().arm(ack_timer_, ack_due_);
}

void Link::on_ack_timer(void* self) {
  auto* l = static_cast<Link*>(self);
  if (!l->up_ || !l->ack_pending_) return;
  // Armed before ack_due_ moved on (a bare ack that found no buffer): the
  // ack is due later, and a data frame may yet carry it.
  if (l->loop_.now() < l->ack_due_) {
    l->loop_.timers().arm(l->ack_timer_, l->ack_due_);
    return;
  }
  l->send_bare_ack(0);
  l->flush_tx();
}

// Hand queued frames to the port in bursts until it is empty or the port
// takes less than offered (it keeps nothing it did not take; we keep the
// rest, in order). Bounded: the queue holds at most tx_cap raw frames, one
// window of data frames, one window of retransmit copies and one ack.
bool Link::flush_tx() {
  bool moved = false;  // a frame other than a bare ack left
  while (tx_head_) {
    Packet* burst[tuning::kBurst];
    uint32_t lens[tuning::kBurst];
    uint32_t seqs[tuning::kBurst];
    uint8_t types[tuning::kBurst];
    uint8_t flags[tuning::kBurst];
    uint16_t n = 0;
    // Gather, dropping copies of frames acked while they waited.
    Packet* prev = nullptr;
    for (Packet* p = tx_head_; p && n < tuning::kBurst;) {
      LinkHeader* lh = header_of(p);
      const uint32_t seq = lh->seq.get();
      if (lh->type == static_cast<uint8_t>(FrameType::kData) && static_cast<int32_t>(seq - peer_ack_) < 0) {
        Packet* next = p->next;
        if (prev) prev->next = next;
        else tx_head_ = next;
        if (tx_tail_ == p) tx_tail_ = prev;
        --tx_count_;
        p->free();
        p = next;
        continue;
      }
      stamp(p);
      lens[n] = p->len;
      seqs[n] = seq;
      types[n] = lh->type;
      flags[n] = lh->flags;
      burst[n++] = p;
      prev = p;
      p = p->next;
    }
    if (n == 0) break;
    Packet* rest = burst[n - 1]->next;
    // Packets the port takes are its own from here (it may free them at once).
    const uint16_t sent = port_->tx_burst(burst, n);
    const uint64_t now = loop_.now();
    bool carried_ack = false;
    for (uint16_t i = 0; i < sent; ++i) {
      ctr_.tx_bytes += lens[i];
      if (types[i] == static_cast<uint8_t>(FrameType::kData)) {
        TxSlot& s = window_[seqs[i] % kLinkWindow];
        if (s.pkt && s.seq == seqs[i]) {
          s.in_queue = false;
          s.sent_at = now;
        }
        carried_ack = true;
      } else if (types[i] == static_cast<uint8_t>(FrameType::kAck)) {
        ++ctr_.acks_sent;
        if (flags[i] & wire::kLinkNak) ++ctr_.naks_sent;
        if (burst[i] == ack_pkt_) ack_pkt_ = nullptr;  // compared, not touched
        carried_ack = true;
      }
    }
    for (uint16_t i = 0; i < sent; ++i) moved |= types[i] != static_cast<uint8_t>(FrameType::kAck);
    ctr_.tx_frames += sent;
    if (carried_ack) {
      // Every frame that left was stamped in this flush: the peer now has
      // our receive state (ack, sack, credits) as it is.
      ack_pending_ = false;
      loop_.timers().cancel(ack_timer_);
      rx_unreported_ = 0;
      for (int vc = 0; vc < wire::kNumVcs; ++vc) freed_reported_[vc] = freed_[vc];
    }
    if (sent == 0) break;
    tx_head_ = sent == n ? rest : burst[sent];
    if (!tx_head_) tx_tail_ = nullptr;
    tx_count_ -= sent;
    if (sent < n) break;
  }
  return moved;
}

}  // namespace toroid
