// A partition's topology: the one file a deployment shares between its
// machines (docs/deploy.md). It names the partition, its dims, the job, and
// for every rank the host it runs on, its torus coordinates and its ports
// (driver, address, MTU, NUMA node, cable label). `toroid-node --topology
// FILE --rank R` builds its personality from it; `toroid-topo check FILE`
// checks it and prints the cabling plan.
//
//   partition = lab-a
//   dims = 2x2x2
//   job = selftest                  # optional: toroid-node --job overrides it
//   seed = 1
//   arg = level quick               # job arguments, as in a personality
//   node = 0 host=n01 coord=0,0,0   # then that node's ports:
//   port = x+ af_xdp iface=ens1f0,queue=0 mtu=1500 numa=0 cable=A1
//   port = x- pci 0000:3b:00.1 cable=A2
//   ...
//
// Parsing (here) checks syntax and each line on its own; the whole-file
// checks (every cable's two ends agree, coordinates cover the dims once)
// are check_topology (topology_check.h).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/torus.h"
#include "firmware/personality.h"

namespace toroid {

struct TopoNode {
  uint32_t rank = 0;
  std::string host;
  Coord coord;
  std::vector<PortSpec> ports;  // in file order until personality_for_rank sorts them
  int line = 0;                 // the node line, for messages
};

struct Topology {
  std::string source;  // the file name, for messages
  std::string partition;
  Dims dims;
  bool has_dims = false;
  std::string job;  // may be empty: the node's --job names it
  uint64_t seed = 1;
  std::map<std::string, std::string> job_args;
  std::vector<TopoNode> nodes;  // in file order

  const TopoNode* by_rank(uint32_t rank) const;
  const TopoNode* at(const Coord& c) const;
  // The port of the node at c along dir, or nullptr.
  const PortSpec* port_at(const Coord& c, Dir dir) const;
  // How many ranks the topology places on host.
  uint32_t ranks_on(const std::string& host) const;
  // Distinct hosts, in order of first appearance.
  std::vector<std::string> hosts() const;
};

Result<Topology> parse_topology_text(const std::string& text, const std::string& source);
Result<Topology> parse_topology_file(const std::string& path);
// The file form (parse_topology_text reads it back); `header` becomes its
// first comment line.
std::string topology_text(const Topology& t, const std::string& header);

// The personality of one rank: dims, coordinates, partition, job, seed and
// arguments, and its ports in direction order (x+ x- y+ y- z+ z-), named
// as default_ports names them unless the port line names them. The
// topology should have passed check_topology.
Result<Personality> personality_for_rank(const Topology& t, uint32_t rank);

// "host n01, af_xdp iface=t0.0.0x+, cable A1": where one end of a cable is,
// for messages that have to name both ends.
std::string describe_end(const Topology& t, const Coord& c, Dir dir);

// The value of key in a "k1=v1,k2=v2" port address ("" when absent).
std::string address_field(const std::string& address, const char* key);
// A label for a port address that fits a table: the interface (with its
// queue), the PCI address or the socket file.
std::string short_address(const PortSpec& ps);

}  // namespace toroid
