// Shared by the files of drivers/dpdk only (includes DPDK headers): the
// Packet <-> rte_mbuf mapping and the process-wide device registry.
#pragma once
#include <rte_mbuf.h>

#include <cstdint>
#include <string>

#include "base/status.h"
#include "drivers/dpdk/dpdk_spec.h"
#include "drivers/packet.h"

namespace toroid {

class DpdkPort;

namespace dpdk {

// The Packet descriptor lives in the mbuf's private area, right after the
// rte_mbuf header; the buffer follows it. A cache line keeps the buffer
// (buf_addr = mbuf + 128 + 64) cache-aligned.
constexpr uint16_t kPacketPrivSize = (sizeof(Packet) + RTE_CACHE_LINE_SIZE - 1) & ~(RTE_CACHE_LINE_SIZE - 1);
static_assert(kPacketPrivSize % RTE_MBUF_PRIV_ALIGN == 0, "mbuf priv_size must be 8-aligned");
static_assert(RTE_PKTMBUF_HEADROOM >= tuning::kPacketHeadroom,
              "mbuf headroom must cover the netstack's headers (kPacketHeadroom)");

inline Packet* packet_of(rte_mbuf* m) { return static_cast<Packet*>(rte_mbuf_to_priv(m)); }
inline rte_mbuf* mbuf_of(Packet* p) { return reinterpret_cast<rte_mbuf*>(p) - 1; }

// The EAL device name for a spec: the vdev name eal_init gave it (then
// *probed is true: the device exists already), or a fresh unique one to
// hot-plug. PCI: the address.
std::string device_name_for(const DpdkPortSpec& s, bool* probed);
// The spec's device is gone (closed and removed from its bus).
void forget_device(const std::string& spec_text);
// A memif server that was closed stays probed ("parked"): DPDK 22.11's
// memif frees a listener socket while its interrupt callback is still
// registered (memif_socket_remove_device), and EAL's interrupt thread then
// reads freed memory, or panics on a garbage fd. So we never remove the last
// device of a listening socket; we stop it and unlink its file instead.
void park_device(const std::string& spec_text);
bool device_parked(const std::string& spec_text);

// A memif server is about to bind `path`: its directory must exist, and a
// socket file left by a dead process (connect refused) is removed. A live
// listener is an error (two servers for one link).
Status prepare_server_socket(const std::string& path);

// Runs fn(arg) on EAL's interrupt thread (a 1 us alarm) and waits for it:
// memif's control channel is handled there, so stopping or removing a memif
// device from that thread cannot race the PMD's own disconnect handling.
void run_on_intr_thread(void (*fn)(void*), void* arg);

// Open ports, so eal_cleanup can close what the caller left open.
void register_port(DpdkPort* p);
void unregister_port(DpdkPort* p);

}  // namespace dpdk
}  // namespace toroid
