// DPDK port specs: the strings a personality or the rig uses to name a port,
// parsed once into what EAL (--vdev / -a) and DpdkPort::open need.
//
//   memif:role=server|client,socket=/path,id=N[,bsize=9216][,rsize=10]
//   af_xdp:iface=NAME[,queue=N][,fallback=af_packet|none]
//   af_packet:iface=NAME
//   pci:0000:00:04.0
//
// af_xdp is a kernel NIC (or veth) through an AF_XDP socket on one of its
// queues (DPDK's net_af_xdp); af_packet the same interface through a packet
// socket (net_af_packet), the fallback where AF_XDP cannot be set up.
//
// No DPDK headers here: the netstack and the rig include this freely.
#pragma once
#include <cstdint>
#include <string>

#include "base/status.h"

namespace toroid {

enum class DpdkPortKind : uint8_t { kMemif, kAfPacket, kPci, kAfXdp };
enum class MemifRole : uint8_t { kServer, kClient };

// net_memif's default packet buffer size (ETH_MEMIF_DEFAULT_PKT_BUFFER_SIZE).
constexpr uint32_t kMemifDefaultBsize = 2048;
// A memif socket path must fit sockaddr_un (MEMIF_SOCKET_UN_SIZE = 108).
constexpr uint32_t kMemifSocketMax = 107;

struct DpdkPortSpec {
  DpdkPortKind kind = DpdkPortKind::kMemif;
  std::string text;  // the spec exactly as given (the key EAL and open() agree on)
  // memif
  MemifRole role = MemifRole::kServer;
  std::string socket;
  uint32_t id = 0;
  uint32_t bsize = 0;       // 0: the PMD default (2048)
  uint32_t rsize_log2 = 0;  // 0: the PMD default (10, 1024 slots)
  // af_packet, af_xdp
  std::string iface;
  // af_xdp: the NIC queue the socket binds to, and whether a port that
  // cannot be opened with AF_XDP may fall back to af_packet on the same
  // interface (the frames on the wire are the same).
  uint32_t queue = 0;
  bool fallback = true;
  // pci
  std::string pci_addr;

  // "memif" / "af_packet" / "pci" / "af_xdp" (PortInfo::driver).
  const char* driver_name() const;
  // The vdev driver ("net_memif", "net_af_packet", "net_af_xdp"); nullptr for PCI.
  const char* vdev_driver() const;
  // Device arguments for the vdev, e.g. "id=0,role=server,socket=/x,socket-abstract=no".
  std::string devargs() const;
  uint32_t memif_bsize() const { return bsize ? bsize : kMemifDefaultBsize; }
};

Result<DpdkPortSpec> parse_dpdk_port_spec(const std::string& spec);

}  // namespace toroid
