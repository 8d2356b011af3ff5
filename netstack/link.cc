#include "netstack/link.h"

#include <cstring>

#include "netstack/crc32c.h"

namespace toroid {

using wire::EthHeader;
using wire::FrameType;
using wire::LinkHeader;

const CounterField kLinkCountersFields[] = {
    TOROID_COUNTER(LinkCounters, tx_frames),        TOROID_COUNTER(LinkCounters, tx_bytes),
    TOROID_COUNTER(LinkCounters, tx_queue_full),    TOROID_COUNTER(LinkCounters, rx_frames),
    TOROID_COUNTER(LinkCounters, rx_bytes),         TOROID_COUNTER(LinkCounters, rx_short),
    TOROID_COUNTER(LinkCounters, rx_bad_ethertype), TOROID_COUNTER(LinkCounters, rx_bad_version),
    TOROID_COUNTER(LinkCounters, rx_bad_type),      TOROID_COUNTER(LinkCounters, rx_bad_length),
    TOROID_COUNTER(LinkCounters, rx_crc_errors),
};
const int kLinkCountersFieldCount = sizeof(kLinkCountersFields) / sizeof(kLinkCountersFields[0]);

Link::Link(uint16_t index, Port* port, const uint8_t mac[6], LinkClient* client, uint32_t tx_cap)
    : index_(index), port_(port), client_(client), tx_cap_(tx_cap) {
  std::memcpy(mac_, mac, 6);
}

Link::~Link() {
  while (tx_head_) {
    Packet* p = tx_head_;
    tx_head_ = p->next;
    p->free();
  }
}

bool Link::send(FrameType type, Packet* p) {
  if (tx_count_ >= tx_cap_) {
    ++ctr_.tx_queue_full;
    return false;
  }
  const uint32_t body = p->len;
  if (body > 0xffff || p->headroom() < sizeof(LinkHeader) + sizeof(EthHeader)) return false;  // p untouched
  auto* lh = reinterpret_cast<LinkHeader*>(p->prepend(sizeof(LinkHeader)));
  auto* eh = reinterpret_cast<EthHeader*>(p->prepend(sizeof(EthHeader)));
  std::memset(eh->dst, 0xff, 6);  // point-to-point: the peer takes every frame
  std::memcpy(eh->src, mac_, 6);
  eh->ethertype.set(wire::kEtherType);
  std::memset(lh, 0, sizeof *lh);
  lh->version = wire::kWireVersion;
  lh->type = static_cast<uint8_t>(type);
  lh->length.set(static_cast<uint16_t>(body));
  lh->crc.set(crc32c(lh, sizeof(LinkHeader) + body));
  p->next = nullptr;
  if (tx_tail_) tx_tail_->next = p;
  else tx_head_ = p;
  tx_tail_ = p;
  ++tx_count_;
  return true;
}

bool Link::validate(Packet* p, FrameType* type) {
  if (p->len < sizeof(EthHeader) + sizeof(LinkHeader)) { ++ctr_.rx_short; return false; }
  const auto* eh = reinterpret_cast<const EthHeader*>(p->data());
  if (eh->ethertype.get() != wire::kEtherType) { ++ctr_.rx_bad_ethertype; return false; }
  auto* lh = reinterpret_cast<LinkHeader*>(p->data() + sizeof(EthHeader));
  if (lh->version != wire::kWireVersion) { ++ctr_.rx_bad_version; return false; }
  const uint32_t avail = p->len - sizeof(EthHeader) - sizeof(LinkHeader);
  const uint32_t body = lh->length.get();
  // A NIC pads frames shorter than the Ethernet minimum; only then may the
  // frame be longer than its length field says.
  if (body > avail || (body < avail && p->len > kMinEthFrame)) { ++ctr_.rx_bad_length; return false; }
  const uint32_t want = lh->crc.get();
  lh->crc.set(0);
  if (crc32c(lh, sizeof(LinkHeader) + body) != want) { ++ctr_.rx_crc_errors; return false; }
  p->trim(avail - body);
  if (lh->type == 0 || lh->type > wire::kMaxFrameType) { ++ctr_.rx_bad_type; return false; }
  *type = static_cast<FrameType>(lh->type);
  p->adj(sizeof(EthHeader) + sizeof(LinkHeader));
  return true;
}

bool Link::flush_tx() {
  if (!tx_head_) return false;
  Packet* burst[tuning::kBurst];
  uint16_t n = 0;
  uint32_t lens[tuning::kBurst];
  for (Packet* p = tx_head_; p && n < tuning::kBurst; p = p->next) {
    lens[n] = p->len;
    burst[n++] = p;
  }
  Packet* rest = burst[n - 1]->next;
  // Packets the port takes are its own from here (it may free them at once).
  const uint16_t sent = port_->tx_burst(burst, n);
  if (sent == 0) return false;
  for (uint16_t i = 0; i < sent; ++i) ctr_.tx_bytes += lens[i];
  ctr_.tx_frames += sent;
  tx_head_ = sent == n ? rest : burst[sent];
  if (!tx_head_) tx_tail_ = nullptr;
  tx_count_ -= sent;
  return true;
}

bool Link::poll() {
  bool busy = false;
  Packet* burst[tuning::kBurst];
  const uint16_t n = port_->rx_burst(burst, tuning::kBurst);
  for (uint16_t i = 0; i < n; ++i) {
    Packet* p = burst[i];
    FrameType type;
    const uint32_t frame_len = p->len;
    if (!validate(p, &type)) { p->free(); continue; }
    ++ctr_.rx_frames;
    ctr_.rx_bytes += frame_len;
    client_->on_frame(index_, type, p);
  }
  busy = n > 0;
  busy |= flush_tx();
  return busy;
}

}  // namespace toroid
