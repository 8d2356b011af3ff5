// The Port burst interface: the one boundary between the netstack and every
// link driver (sim, DPDK, io_uring). Modelled on rte_eth_rx_burst/tx_burst:
// both return how many packets were taken; tx_burst takes ownership of the
// first `returned` packets and the caller keeps the rest (never a silent drop).
// Control calls (open, start, stop) live with each backend, not here.
#pragma once
#include <cstdint>
#include <string>

#include "base/stats.h"
#include "drivers/packet.h"

namespace toroid {

enum class LinkState : uint8_t { kDown = 0, kUp = 1 };

struct PortInfo {
  std::string name;        // "port0", "memif:/run/toroid/n0-x+.sock", ...
  std::string driver;      // "sim", "memif", "uring", ...
  uint32_t max_frame = 0;  // largest frame, Ethernet header included
  // The medium delivers every frame bit for bit or not at all: shared
  // memory (memif) or a unix socket between processes on one host. Not a
  // NIC, af_packet, a QEMU guest's virtio, nor the sim fabric (it corrupts
  // on purpose). Where both ends say so the link skips its CRC.
  bool medium_integrity = false;
};

struct PortStats {
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_full = 0;     // packets offered to tx_burst but not taken
  uint64_t rx_dropped = 0;  // dropped by the medium before rx (queue overflow, no buffer)
};
extern const CounterField kPortStatsFields[];
extern const int kPortStatsFieldCount;

class Port {
 public:
  virtual ~Port() = default;
  virtual uint16_t rx_burst(Packet** pkts, uint16_t n) = 0;
  virtual uint16_t tx_burst(Packet** pkts, uint16_t n) = 0;
  virtual const PortInfo& info() const = 0;
  virtual LinkState link_state() const = 0;
  // Pool to allocate frames that will be sent on this port.
  virtual PacketPool& tx_pool() = 0;
  // An fd that becomes readable when rx has work, for idle sleep; -1 if none.
  virtual int wait_fd() const { return -1; }
  // Try once, without waiting, to get the medium back after the peer went
  // away and came back (a memif client dials its server again). A control
  // call: the node makes it now and then while link_state() reads down,
  // never on the data path. False when there is nothing to try.
  virtual bool reconnect() { return false; }
  const PortStats& stats() const { return stats_; }

 protected:
  PortStats stats_;
};

}  // namespace toroid
