// Schedule of seed 004 C's torus reduction: in each dimension in turn (x,
// then y, then z), along every line that still takes part, partial results
// stream towards the middle of the line, m = n / 2: nodes before the middle
// send plus, nodes after it send minus, every node adds its own value to what
// it receives from its outer neighbour, and the middle node adds the two
// streams that meet there. So no node ever combines more than two incoming
// packets for one chunk. Only the middle nodes of a phase take part in the
// next one; after the last phase node (m_x, m_y, m_z) holds the total, which
// the combine tree then broadcasts (it is faster than a torus broadcast).
// Pure: unit-tested without a network.
#pragma once
#include <cstdint>
#include <vector>

#include "base/torus.h"

namespace toroid::schedule {

struct MiddleRole {
  int dim = 0;            // this phase's dimension
  bool active = false;    // does this node take part in this phase?
  int inputs = 0;         // incoming streams (0, 1 or 2)
  bool recv_minus = false;  // a stream arrives from the minus neighbour
  bool recv_plus = false;   // ... from the plus neighbour
  bool sends = false;       // forwards its partial result
  Dir send_dir = Dir::kXp;  // towards the middle
};

// The middle coordinate of a line of n nodes.
inline uint32_t line_middle(uint32_t n) { return n / 2; }

// This node's role in each phase (dimensions of size 1 are skipped).
std::vector<MiddleRole> torus_middle_roles(const Coord& me, const Dims& dims);

// The node that holds the total after the last phase.
Coord torus_middle_root(const Dims& dims);

}  // namespace toroid::schedule
