// Link setup, teardown, counters and frame validation. The protocol itself
// is split by concern: link_tx.cc (framing, the tx queue, acks we send),
// link_rx.cc (receive path, reorder and in-order delivery, acks we get),
// link_retransmit.cc (retransmission timer, backoff, link-down).
#include "netstack/link.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "netstack/crc32c.h"

namespace toroid {

using wire::EthHeader;
using wire::FrameType;
using wire::LinkHeader;

// The sack bitmap and the receiver's reorder bitmap are one uint32_t each.
static_assert(kLinkWindow == 32, "sack and rx_bits_ are 32-bit maps of the window");

const CounterField kLinkCountersFields[] = {
    TOROID_COUNTER(LinkCounters, tx_frames),        TOROID_COUNTER(LinkCounters, tx_bytes),
    TOROID_COUNTER(LinkCounters, tx_queue_full),    TOROID_COUNTER(LinkCounters, rx_frames),
    TOROID_COUNTER(LinkCounters, rx_bytes),         TOROID_COUNTER(LinkCounters, rx_short),
    TOROID_COUNTER(LinkCounters, rx_bad_ethertype), TOROID_COUNTER(LinkCounters, rx_bad_version),
    TOROID_COUNTER(LinkCounters, rx_bad_type),      TOROID_COUNTER(LinkCounters, rx_bad_length),
    TOROID_COUNTER(LinkCounters, rx_crc_errors),    TOROID_COUNTER(LinkCounters, data_sent),
    TOROID_COUNTER(LinkCounters, data_delivered),   TOROID_COUNTER(LinkCounters, retransmits),
    TOROID_COUNTER(LinkCounters, timeouts),         TOROID_COUNTER(LinkCounters, naks_sent),
    TOROID_COUNTER(LinkCounters, duplicates),       TOROID_COUNTER(LinkCounters, out_of_window),
    TOROID_COUNTER(LinkCounters, reordered),        TOROID_COUNTER(LinkCounters, acks_sent),
    TOROID_COUNTER(LinkCounters, acks_received),    TOROID_COUNTER(LinkCounters, credit_stalls),
    TOROID_COUNTER(LinkCounters, window_stalls),    TOROID_COUNTER(LinkCounters, no_buffer),
    TOROID_COUNTER(LinkCounters, credit_violations), TOROID_COUNTER(LinkCounters, rx_no_crc_refused),
    TOROID_COUNTER(LinkCounters, rx_foreign_partition), TOROID_COUNTER(LinkCounters, rx_foreign_node),
    TOROID_COUNTER(LinkCounters, keepalives),       TOROID_COUNTER(LinkCounters, trainings),
    TOROID_COUNTER(LinkCounters, rx_oversize),      TOROID_COUNTER(LinkCounters, self_stalls),
};
const int kLinkCountersFieldCount = sizeof(kLinkCountersFields) / sizeof(kLinkCountersFields[0]);
static_assert(sizeof(LinkCounters) == 32 * sizeof(uint64_t), "add the new LinkCounters field to kLinkCountersFields");

Link::Link(uint16_t index, Port* port, const uint8_t mac[6], LinkClient* client, EventLoop& loop,
           const LinkConfig& cfg, std::string name)
    : index_(index),
      port_(port),
      client_(client),
      loop_(loop),
      cfg_(cfg),
      name_(std::move(name)),
      no_crc_(port->info().medium_integrity),
      max_frame_(port->info().max_frame),
      rto_timer_(&Link::on_rto, this),
      ack_timer_(&Link::on_ack_timer, this) {
  std::memcpy(mac_, mac, 6);
  idle_timer_.set_callback(&Link::on_idle, this);
  idle_timer_.set_background(true);  // keepalives alone do not keep an idle node awake
  for (int vc = 0; vc < wire::kNumVcs; ++vc) peer_credits_[vc] = cfg_.rx_credits[vc];  // until a hello says
  clear_state();
  if (cfg_.start_up) {
    next_seq_ = peer_ack_ = cfg_.isn;
    rx_next_ = rx_high_ = cfg_.isn;
    for (int vc = 0; vc < wire::kNumVcs; ++vc)
      credits_used_[vc] = peer_freed_[vc] = freed_[vc] = freed_reported_[vc] = cfg_.credit_base;
    arm_idle();
  } else {
    up_ = false;
  }
}

Link::~Link() { drop_frames(); }

// Timers stop; the tx queue's references go first (a data frame not yet
// sent is in both the queue and its window slot), then the window's, then
// the frames held out of order (their receive buffers are free again).
void Link::drop_frames() {
  loop_.timers().cancel(rto_timer_);
  loop_.timers().cancel(ack_timer_);
  loop_.timers().cancel(idle_timer_);
  while (tx_head_) {
    Packet* p = tx_head_;
    tx_head_ = p->next;
    p->free();
  }
  tx_tail_ = nullptr;
  tx_count_ = 0;
  ack_pkt_ = nullptr;
  for (TxSlot& s : window_) {
    if (s.pkt) s.pkt->free();
    s = TxSlot{};
  }
  for (Packet*& p : reorder_) {
    if (!p) continue;
    --held_[p->vc];
    p->free();
    p = nullptr;
  }
}

void Link::clear_state() {
  next_seq_ = peer_ack_ = 0;
  rx_next_ = rx_high_ = 0;
  rx_bits_ = 0;
  for (int vc = 0; vc < wire::kNumVcs; ++vc) {
    credits_used_[vc] = peer_freed_[vc] = freed_[vc] = freed_reported_[vc] = 0;
    held_[vc] = 0;
  }
  ack_pending_ = false;
  rx_unreported_ = 0;
  rto_cur_ = cfg_.rto_ns;
  rto_due_ = kNever;
  const uint64_t now = loop_.now();
  last_progress_ = last_heard_ = now;
  next_carrier_check_ = 0;
}

// Everything the link holds goes, as at link-down, then its state starts
// over.
void Link::reset(Status why) {
  drop_frames();
  clear_state();
  up_ = false;
  has_peer_mac_ = false;
  if (!why.is_ok()) down_ = std::move(why);
}

void Link::bring_up(uint32_t tx_isn, uint32_t rx_isn, const uint8_t peer[3], uint8_t peer_credits) {
  if (up_ || disabled_) return;
  clear_state();
  // The peer may keep fewer or more buffers than we keep for it.
  for (int vc = 0; vc < wire::kNumVcs; ++vc) peer_credits_[vc] = peer_credits ? peer_credits : cfg_.rx_credits[vc];
  next_seq_ = peer_ack_ = tx_isn;
  rx_next_ = rx_high_ = rx_isn;
  // The port byte is left out: the hello names the peer's coordinates, not
  // its port index (two cables between one pair of nodes differ only there).
  uint8_t mac[6];
  wire::node_mac(mac, peer[0], peer[1], peer[2], 0);
  std::memcpy(peer_mac_, mac, sizeof peer_mac_);
  has_peer_mac_ = true;
  peer_heard_ = false;
  up_ = true;
  down_ = Status::ok();
  ++ctr_.trainings;
  arm_idle();
}

uint8_t Link::advertised_credits() const {
  uint16_t fewest = cfg_.rx_credits[0];
  bool all_default = true;
  for (int vc = 0; vc < wire::kNumVcs; ++vc) {
    fewest = std::min(fewest, cfg_.rx_credits[vc]);
    all_default &= cfg_.rx_credits[vc] == tuning::kVcCredits;
  }
  return all_default ? 0 : static_cast<uint8_t>(std::min<uint16_t>(std::max<uint16_t>(fewest, 1), 255));
}

void Link::disable(Status why) {
  if (disabled_) return;
  reset(std::move(why));
  disabled_ = true;
}

uint64_t Link::keepalive_period() const {
  // At least four probes before the down deadline, whatever was configured.
  return std::min(cfg_.keepalive_ns, std::max<uint64_t>(cfg_.down_after_ns / 4, 1));
}

// A liveness timer on a real clock that fires a stall_grace or more past
// its deadline means this node itself was not running (descheduled, or a
// step that held its loop): the neighbour's silence over that time proves
// nothing, as its answers may be waiting unread. The link asks once more
// (kLinkAckReq) and decides a stall_grace later. Virtual time is never late.
uint64_t Link::stall_grace() const { return std::max<uint64_t>(cfg_.down_after_ns / 4, 1); }

bool Link::stalled_self(uint64_t due, uint64_t now) const {
  return !loop_.clock().is_virtual() && now > due && now - due >= stall_grace();
}

void Link::arm_idle() {
  if (!up_ || cfg_.keepalive_ns == 0) return;
  loop_.timers().arm(idle_timer_, std::max(last_heard_ + keepalive_period(), loop_.now() + 1));
}

// Silent for keepalive_ns: probe (a bare ack asking for one at once); silent
// for down_after_ns: the peer is gone or hung. Traffic only moves
// last_heard_, so a busy link costs one timer event per keepalive_ns.
void Link::on_idle(void* self) {
  auto* l = static_cast<Link*>(self);
  if (!l->up_) return;
  const uint64_t now = l->loop_.now();
  const uint64_t silent = now - l->last_heard_;
  if (silent >= l->cfg_.down_after_ns && l->stalled_self(l->idle_timer_.deadline(), now)) {
    ++l->ctr_.self_stalls;
    l->send_bare_ack(wire::kLinkAckReq);
    l->flush_tx();
    l->loop_.timers().arm(l->idle_timer_, now + l->stall_grace());
    return;
  }
  if (silent >= l->cfg_.down_after_ns) {
    char dur[32];
    format_duration(silent, dur, sizeof dur);
    l->go_down(error(Code::kLinkDown, "%s: link down: nothing heard from the neighbour for %s (keepalives unanswered)",
                     l->name_.c_str(), dur));
    return;
  }
  const uint64_t period = l->keepalive_period();
  if (silent >= period) {
    ++l->ctr_.keepalives;
    l->send_bare_ack(wire::kLinkAckReq);
    l->flush_tx();
    // Probe again each period, and check at the down deadline.
    l->loop_.timers().arm(l->idle_timer_, std::min(now + period, l->last_heard_ + l->cfg_.down_after_ns));
    return;
  }
  l->arm_idle();
}

bool Link::validate(Packet* p, FrameType* type) {
  if (p->len < sizeof(EthHeader) + sizeof(LinkHeader)) { ++ctr_.rx_short; return false; }
  if (p->len > max_frame_) { ++ctr_.rx_oversize; return false; }
  const auto* eh = reinterpret_cast<const EthHeader*>(p->data());
  if (eh->ethertype.get() != wire::kEtherType) { ++ctr_.rx_bad_ethertype; return false; }
  LinkHeader* lh = header_of(p);
  if (lh->version != wire::kWireVersion) { ++ctr_.rx_bad_version; return false; }
  const uint32_t avail = p->len - sizeof(EthHeader) - sizeof(LinkHeader);
  const uint32_t body = lh->length.get();
  // A NIC pads frames shorter than the Ethernet minimum; only then may the
  // frame be longer than its length field says.
  if (body > avail || (body < avail && p->len > kMinEthFrame)) { ++ctr_.rx_bad_length; return false; }
  if (lh->flags & wire::kLinkNoCrc) {
    // Both conditions, so that a bit flipped on a wire that can flip bits
    // never turns the check off: our own medium guarantees integrity (the
    // peer's claim alone proves nothing), and it is not a hello.
    if (!no_crc_ || lh->type == static_cast<uint8_t>(FrameType::kHello)) { ++ctr_.rx_no_crc_refused; return false; }
  } else {
    const uint32_t want = lh->crc.get();
    lh->crc.set(0);
    if (crc32c(lh, sizeof(LinkHeader) + body) != want) { ++ctr_.rx_crc_errors; return false; }
  }
  p->trim(avail - body);
  if (lh->type == 0 || lh->type > wire::kMaxFrameType) { ++ctr_.rx_bad_type; return false; }
  *type = static_cast<FrameType>(lh->type);
  p->adj(sizeof(EthHeader) + sizeof(LinkHeader));
  return true;
}

}  // namespace toroid
