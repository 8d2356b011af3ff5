// Schedule of the fixed-order torus allreduce (seed 004 A: A.1 reproducible
// order, A.2 both directions of every ring, A.3 deposit-bit line broadcast),
// pure: no network.
//
// For each dimension longer than one node, in order x, y, z: every node
// injects its current vector once in each direction as a deposit-bit line
// broadcast (line_bcast.h: ceil((n-1)/2) hops plus, floor((n-1)/2) hops
// minus), keeps the n-1 vectors it receives, and combines all n of the line
// in the fixed order of their coordinate along the dimension,
//   acc = S0; acc = acc OP S1; ...; acc = acc OP S(n-1),
// which is the same expression on every node of the line. After the phase
// every node of a line holds the same bits; the next phase combines those.
//
// So the result on every node is, with v(x,y,z) the input of node (x,y,z)
// and each sum a left-to-right fold in increasing coordinate:
//   R = sum_{z=0..nz-1} ( sum_{y=0..ny-1} ( sum_{x=0..nx-1} v(x,y,z) ) ).
// For a line (nx x 1 x 1) that is exactly the serial sum over ranks 0..n-1
// left to right (rank = x + nx*(y + ny*z)); for other shapes it is the
// nested sum above, bit for bit the same on every node and every run.
// Cost per dimension of n nodes: 2 injections per node (1 when n = 2), one
// software step, ceil((n-1)/2) hops of latency, (n-1)*count elements received
// per node; each plus-direction link of the line carries ceil((n-1)/2)*count
// elements (the senders whose plus half crosses it), each minus-direction
// link floor((n-1)/2)*count. No other link is used in the phase. Memory: n
// vectors per node (its own and the n-1 it keeps).
#pragma once
#include <cstdint>
#include <vector>

#include "base/torus.h"
#include "collectives/schedule/line_bcast.h"

namespace toroid::schedule {

struct FixedOrderPhase {
  int dim = 0;
  uint32_t n = 0;      // ring length
  uint32_t pos = 0;    // this node's coordinate along dim
  std::vector<LineSend> sends;     // one per direction with hops > 0
  std::vector<LineArrival> from;   // indexed by source coordinate; from[pos].hops == 0
};

// Phases in execution order; empty for a 1x1x1 partition.
std::vector<FixedOrderPhase> torus_fixed_order_phases(const Coord& me, const Dims& dims);

// The order in which a phase combines the line's vectors: source
// coordinates 0, 1, ..., n-1 (the same on every node of the line).
std::vector<uint32_t> fixed_order_combine_order(uint32_t n);

}  // namespace toroid::schedule
