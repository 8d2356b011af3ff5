// Link: one per port. Frames a body (network header + payload) with the link
// and Ethernet headers, queues it for tx, and on rx validates every frame
// (length, EtherType, version, type, length field, CRC32C) before handing
// the body to its client. Bad frames are counted and dropped, never passed up.
//
// This is the framing half of the link layer; sequence/ack/retransmit and
// credit flow control build on it (see docs/wire.md).
#pragma once
#include <cstdint>

#include "base/stats.h"
#include "drivers/port.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"

namespace toroid {

// Ethernet's minimum frame without FCS: shorter frames arrive padded to it.
constexpr uint32_t kMinEthFrame = 60;

// Byte counters count whole frames (Ethernet header included), like the port's.
struct LinkCounters {
  uint64_t tx_frames = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_queue_full = 0;   // send() refused: queue at its cap
  uint64_t rx_frames = 0;       // valid frames passed up
  uint64_t rx_bytes = 0;
  uint64_t rx_short = 0;        // shorter than Ethernet + link header
  uint64_t rx_bad_ethertype = 0;
  uint64_t rx_bad_version = 0;
  uint64_t rx_bad_type = 0;
  uint64_t rx_bad_length = 0;   // length field disagrees with the frame (beyond padding)
  uint64_t rx_crc_errors = 0;
};
extern const CounterField kLinkCountersFields[];
extern const int kLinkCountersFieldCount;

class LinkClient {
 public:
  virtual ~LinkClient() = default;
  // A valid frame arrived on port `index`; p->data() is the body (after the
  // link header). The client owns p from here.
  virtual void on_frame(uint16_t index, wire::FrameType type, Packet* p) = 0;
};

class Link {
 public:
  // tx_cap: frames that may wait in the tx queue (flow control upstream of it).
  Link(uint16_t index, Port* port, const uint8_t mac[6], LinkClient* client, uint32_t tx_cap);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Frame and queue p (p->data() = body). On false the caller keeps p.
  bool send(wire::FrameType type, Packet* p);
  uint32_t tx_space() const { return tx_count_ < tx_cap_ ? tx_cap_ - tx_count_ : 0; }
  uint32_t tx_queued() const { return tx_count_; }

  // Receive a burst and flush the tx queue; true if anything moved.
  bool poll();

  uint16_t index() const { return index_; }
  Port* port() const { return port_; }
  const LinkCounters& counters() const { return ctr_; }

  // Validate a received frame in place; on success strip Ethernet + link
  // header and return true with *type set. Counts the reason on failure.
  bool validate(Packet* p, wire::FrameType* type);

 private:
  bool flush_tx();
  uint16_t index_;
  Port* port_;
  uint8_t mac_[6];
  LinkClient* client_;
  uint32_t tx_cap_;
  // Intrusive FIFO through Packet::next: costs no memory while empty.
  Packet* tx_head_ = nullptr;
  Packet* tx_tail_ = nullptr;
  uint32_t tx_count_ = 0;
  LinkCounters ctr_;
};

}  // namespace toroid
