// Writing a topology for a regular placement instead of by hand: every rank
// on its own host (or all on one), every host with the same NIC per
// direction, or, on one host, memif / unix-socket cables or the veth pairs
// of the deploy-like rig (`toroid-rig --driver af_xdp`), which are named
// after their cable. `toroid-topo gen` prints one; the rig writes one.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/torus.h"
#include "firmware/topology.h"

namespace toroid {

// The cable that leaves node c along plus direction d is "tX.Y.Zd"
// ("t1.0.1x"); its two ends in a veth rig are "t1.0.1x+" (node c's d+ port)
// and "t1.0.1x-" (the neighbour's d- port). At most 14 characters for dims
// up to 256 (an interface name holds 15).
std::string cable_label(const Coord& c, Dir plus);
std::string cable_iface(const Coord& c, Dir plus, bool plus_end);
// The socket file of that cable for memif and unix-socket links:
// SOCKDIR/X-Y-Zd.sock (e.g. 1-0-1x.sock).
std::string cable_socket_file(const std::string& socket_dir, const Coord& c, Dir plus);

struct TopoGenOptions {
  Dims dims;
  std::string partition = "p0";
  // memif | uring (one host, sockets under socket_dir) | af_xdp | af_packet
  // | pci (Ethernet: nics gives each direction's interface or PCI address on
  // every host; without nics, af_xdp/af_packet use the veth rig's names).
  std::string driver = "af_xdp";
  std::vector<std::string> hosts;  // one for every rank, or one for all
  std::string socket_dir;
  std::map<Dir, std::string> nics;
  uint32_t queue = 0;        // af_xdp
  uint32_t mtu = 0;          // every port, when > 0
  uint32_t memif_bsize = 0;  // memif slots (9216 for 9000-byte frames)
  std::string job;
  uint64_t seed = 1;
  std::map<std::string, std::string> job_args;
};

Result<Topology> generate_topology(const TopoGenOptions& o);

}  // namespace toroid
