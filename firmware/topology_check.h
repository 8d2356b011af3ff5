// Whole-topology checks and the cabling plan (toroid-topo, and every
// toroid-node started with --topology, which refuses a topology with any
// problem before it opens a port).
//
// Checked: the nodes' ranks are 0..N-1 once each and their coordinates
// cover the dims once each (a duplicate is named with both lines); every
// node is a valid personality (a port for each direction that has a link,
// known drivers, well-formed addresses); every cable's two ends agree (the
// same medium; memif and unix-socket cables on one host, one socket, one
// server and one client; cable labels and MTUs equal at both ends); no two
// ports on one host use the same interface queue, PCI address or socket.
#pragma once
#include <string>
#include <vector>

#include "firmware/topology.h"

namespace toroid {

// Every problem, one line each ("" problems: the topology is good).
std::vector<std::string> check_topology(const Topology& t);

// The cabling plan: the ranks on each host, then every cable with both of
// its ends (node, direction, host, driver, interface or socket, label).
std::string cabling_plan(const Topology& t);

}  // namespace toroid
