// A Port over one DPDK ethdev: net_memif (host rig), net_af_xdp or
// net_af_packet on a kernel interface, or a PCI NIC (virtio-net under uio in
// the qemu rig, real NICs in deployment).
// One rx and one tx queue, polled by the node's thread only.
//
// Control path here and in dpdk_port.cc: open (probe or find the device,
// configure, queue setup), start, link state, stop/close, stats merge.
// Data path in dpdk_port_rx_tx.cc: rx_burst/tx_burst over rte_eth_*_burst,
// converting rte_mbuf* <-> Packet* in place (see dpdk_pool.h).
//
// tx_burst and references: tx_burst takes exactly one of the packet's
// references. A packet with refcnt 1 passes to the PMD outright. A packet
// with refcnt k > 1 (a link keeps it for retransmission) leaves with
// refcnt k-1 and one more mbuf reference (rte_mbuf_refcnt_update +1), so
// the buffer lives until both the PMD and our last owner have freed it,
// unless it is small (tuning::kTxCopyMaxBytes): then the PMD gets a copy
// (tx_small_copies) and the packet leaves with refcnt k-1, so that the
// PMD's free is not an atomic refcount drop (dpdk_port_rx_tx.cc says why).
// A packet from a pool that is not a DpdkPacketPool is copied into an mbuf
// (counted in tx_copies); the original's reference is dropped once the copy
// is taken.
//
// Idle: ethdev offers no rx interrupt for memif (its rings run in polling
// mode with interrupts masked), af_xdp or af_packet, so wait_fd() is -1 and the
// node's idle policy falls back to short timed sleeps (EventLoop: spin,
// pause, then 20 us .. 1 ms sleeps).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "drivers/dpdk/dpdk_pool.h"
#include "drivers/dpdk/dpdk_spec.h"
#include "drivers/port.h"

namespace toroid {

// Descriptors per queue for PCI NICs (memif sizes its rings with rsize).
constexpr uint16_t kDpdkRxDesc = 1024;
constexpr uint16_t kDpdkTxDesc = 1024;
// Largest frame we configure a port for (Ethernet header included, no FCS).
constexpr uint32_t kDpdkMaxFrame = 9000;
constexpr uint32_t kDpdkStdFrame = 1518;  // memif's and af_packet's max_rx_pktlen
static_assert(kDpdkStdFrame <= kDpdkMaxFrame);

struct DpdkPortConfig {
  std::string spec;                // memif:..., af_packet:..., pci:...
  uint16_t index = 0;              // the node's port number, set in Packet::port on rx
  DpdkPacketPool* pool = nullptr;  // rx mbufs come from it; tx_pool() returns it
  uint16_t rx_desc = kDpdkRxDesc;
  uint16_t tx_desc = kDpdkTxDesc;
  // The link's MTU from a deployment's topology (0: the device's own):
  // max_frame is mtu + 14; a PCI NIC is set to it; a port that cannot carry
  // it (a kernel interface with a smaller MTU, the PMD's or the pool's
  // limit) is refused.
  uint32_t mtu = 0;
};

// Counters beyond PortStats (plain, data path).
struct DpdkPortCounters {
  uint64_t rx_multiseg = 0;  // frames larger than one mbuf: dropped (also in rx_dropped)
  uint64_t tx_copies = 0;    // packets from a foreign pool copied into mbufs
  uint64_t tx_shared = 0;    // packets sent with refcnt > 1 (mbuf ref taken)
  uint64_t tx_small_copies = 0;  // small packets with refcnt > 1 sent as a copy
  uint64_t hw_imissed = 0;   // from rte_eth_stats at the last refresh_stats()
  uint64_t hw_ierrors = 0;
  uint64_t hw_oerrors = 0;
  uint64_t hw_rx_nombuf = 0;
};

class DpdkPort final : public Port {
 public:
  // Probes the device (or finds the one eal_init probed from the same spec),
  // configures one rx + one tx queue over cfg.pool. Does not start it.
  // A memif server's stale socket file (nobody listening) is removed first.
  static Result<std::unique_ptr<DpdkPort>> open(const DpdkPortConfig& cfg);
  ~DpdkPort() override;
  DpdkPort(const DpdkPort&) = delete;
  DpdkPort& operator=(const DpdkPort&) = delete;

  // rte_eth_dev_start. A memif client retries until its server's socket
  // accepts, up to timeout_ns; the link comes up asynchronously afterwards
  // (memif's handshake runs in EAL's interrupt thread): see wait_link_up.
  Status start(uint64_t timeout_ns);
  // Polls link_state() (sleeping 1 ms between) until up or timeout.
  Status wait_link_up(uint64_t timeout_ns) const;
  // Stops the device (memif: disconnects; the peer's link goes down).
  void stop();
  // Stop, close, and remove the device from its bus. A memif server's
  // socket file is removed (by the PMD once no port of this process uses
  // the socket, else here). Idempotent; the destructor calls it.
  void close();

  uint16_t rx_burst(Packet** pkts, uint16_t n) override;
  uint16_t tx_burst(Packet** pkts, uint16_t n) override;
  const PortInfo& info() const override { return info_; }
  LinkState link_state() const override;
  // A memif client whose server went away dials it again (stop, then one
  // start attempt); the PMD never does so itself. A memif server needs
  // nothing: it takes the next client that dials.
  bool reconnect() override;
  PacketPool& tx_pool() override { return *pool_; }
  int wait_fd() const override { return -1; }

  // Reads rte_eth_stats and folds the device's drops (imissed, rx_nombuf,
  // ierrors) into PortStats::rx_dropped. Control path (not every poll).
  void refresh_stats();
  const DpdkPortCounters& counters() const { return ctr_; }
  uint16_t port_id() const { return port_id_; }
  const DpdkPortSpec& spec() const { return spec_; }
  const std::string& device_name() const { return dev_name_; }
  bool started() const { return started_; }

 private:
  DpdkPort() = default;

  DpdkPortSpec spec_;
  std::string dev_name_;
  DpdkPacketPool* pool_ = nullptr;
  PortInfo info_;
  DpdkPortCounters ctr_;
  uint64_t hw_dropped_seen_ = 0;  // device drops already folded into stats_
  uint16_t port_id_ = 0;
  uint16_t index_ = 0;
  int burst_slot_ = -1;  // dpdk::BurstSlot of this port's bursts (burst_guard.h)
  bool open_ = false;
  bool started_ = false;
};

}  // namespace toroid
