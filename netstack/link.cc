// Link setup, teardown, counters and frame validation. The protocol itself
// is split by concern: link_tx.cc (framing, the tx queue, acks we send),
// link_rx.cc (receive path, reorder and in-order delivery, acks we get),
// link_retransmit.cc (retransmission timer, backoff, link-down).
#include "netstack/link.h"

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
};
const int kLinkCountersFieldCount = sizeof(kLinkCountersFields) / sizeof(kLinkCountersFields[0]);
static_assert(sizeof(LinkCounters) == 26 * sizeof(uint64_t), "add the new LinkCounters field to kLinkCountersFields");

Link::Link(uint16_t index, Port* port, const uint8_t mac[6], LinkClient* client, EventLoop& loop,
           const LinkConfig& cfg, std::string name)
    : index_(index),
      port_(port),
      client_(client),
      loop_(loop),
      cfg_(cfg),
      name_(std::move(name)),
      no_crc_(port->info().medium_integrity),
      rto_timer_(&Link::on_rto, this),
      ack_timer_(&Link::on_ack_timer, this) {
  std::memcpy(mac_, mac, 6);
  rto_cur_ = cfg_.rto_ns;
}

Link::~Link() {
  loop_.timers().cancel(rto_timer_);
  loop_.timers().cancel(ack_timer_);
  // The queue's references first (a data frame not yet sent is in both the
  // queue and its window slot), then the window's, then the reorder slots.
  while (tx_head_) {
    Packet* p = tx_head_;
    tx_head_ = p->next;
    p->free();
  }
  for (TxSlot& s : window_) {
    if (s.pkt) s.pkt->free();
    s.pkt = nullptr;
  }
  for (Packet*& p : reorder_) {
    if (p) p->free();
    p = nullptr;
  }
}

bool Link::validate(Packet* p, FrameType* type) {
  if (p->len < sizeof(EthHeader) + sizeof(LinkHeader)) { ++ctr_.rx_short; return false; }
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
