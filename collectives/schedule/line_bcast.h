// Deposit-bit line broadcasts on the torus (seed 004 A.2 and A.3), pure: no
// network. A node injects its value once per direction as a unicast packet
// with the deposit flag towards the far end of its half of the ring; every
// router on the way leaves a copy for its node and forwards the packet (no
// software per hop), the last node receives the packet itself.
//
// On a ring of n nodes the two directions cover the ring's two halves: plus
// reaches the ceil((n-1)/2) nodes after the sender, minus the floor((n-1)/2)
// nodes before it, so every other node of the ring receives the value exactly
// once and never twice (n = 2: the plus packet alone; n = 1: nothing). A
// value that went plus arrives on the receiver's minus port, one that went
// minus on its plus port.
//
// Users: the fixed-order allreduce (torus_fixed_order.h: every node of a line
// broadcasts) and the line-multicast broadcast below (one line per phase from
// the root outwards: its x line, then every y line through it, then every z
// line through the root's xy plane; a node receives once, in the phase of the
// highest dimension in which it differs from the root, and injects in every
// later dimension). Cost of the multicast: one injection per direction per
// dimension at each sender, at most sum_d ceil((n_d-1)/2) hops of latency;
// every link of the lines used carries each packet once.
#pragma once
#include <cstdint>
#include <vector>

#include "base/torus.h"

namespace toroid::schedule {

// Hops the plus and minus packets travel on a ring of n nodes (0: not sent).
inline uint32_t line_hops_plus(uint32_t n) { return n / 2; }         // ceil((n-1)/2)
inline uint32_t line_hops_minus(uint32_t n) { return n ? (n - 1) / 2 : 0; }  // floor((n-1)/2)

// One injection: direction, hops, and the coordinate (along the dimension)
// of the node it is addressed to (the last one it deposits at).
struct LineSend {
  Dir dir;
  uint32_t hops;
  uint32_t dst;
};
// A node's injections along dimension dim of a ring of n at coordinate pos:
// plus first, then minus; directions with 0 hops are left out.
std::vector<LineSend> line_sends(int dim, uint32_t n, uint32_t pos);

// Where the value injected at coordinate src reaches the node at pos: the
// direction of the port it arrives on and after how many hops (hops 0 for
// src == pos, which receives nothing).
struct LineArrival {
  Dir port;
  uint32_t hops;
};
LineArrival line_arrival(int dim, uint32_t n, uint32_t src, uint32_t pos);

// The node whose value travelled `hops` hops to pos arriving on port `port`
// (the inverse of line_arrival): its coordinate along the dimension.
uint32_t line_source(uint32_t n, uint32_t pos, Dir port, uint32_t hops);

// ---- line multicast (broadcast from a root, one dimension at a time) ----
struct McastSend {
  int dim;
  LineSend send;
};
struct McastRole {
  bool root = false;
  int recv_dim = -1;     // the phase in which this node receives (-1 at the root)
  Coord src;             // the node it receives from (in recv_dim's line)
  LineArrival arrival{Dir::kXp, 0};  // its port and distance
  std::vector<McastSend> sends;      // its injections, in dimension order
};
// This node's role in a broadcast from root (dimensions of size 1 skipped).
McastRole line_multicast_role(const Coord& me, const Coord& root, const Dims& dims);
// Phases of the multicast: the dimensions longer than one node, in order.
std::vector<int> line_multicast_phases(const Dims& dims);

}  // namespace toroid::schedule
