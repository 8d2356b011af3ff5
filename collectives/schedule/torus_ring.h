// Schedule of the dimension-ordered ring allreduce on a torus (pure: no
// network). For each dimension longer than one node, in order x, y, z, every
// node runs n-1 ring steps: in step 0 it sends its running sum along the plus
// direction; in step k>0 it forwards what it received in step k-1; it always
// receives from the minus direction and adds what it receives. After the
// dimension every node on the line holds the line's sum, so after all three
// every node holds the global sum.
//
// A side of two nodes is the exception: the neighbour is both plus and minus,
// over two cables. Both nodes send and receive on the one cable 0(+) - 1(-),
// so it carries data both ways and each node's link acknowledgements ride on
// its data; with plus/minus each cable would carry data one way and its acks
// as separate frames (2x1x1 memif, 8-byte allreduce: 1.01-1.05 us against
// 1.37-1.38 us, two alternating runs).
#pragma once
#include <cstdint>
#include <vector>

#include "base/torus.h"

namespace toroid::schedule {

struct RingPhase {
  int dim;          // 0, 1, 2
  uint32_t steps;   // n - 1
  Dir send_dir;     // plus direction of dim (a side of two: see above)
  Dir recv_dir;     // minus direction (the port we receive on is cabled there)
};

// Phases in execution order for the node at `me`; empty for a 1x1x1
// partition.
std::vector<RingPhase> torus_ring_phases(const Dims& dims, const Coord& me);

// Elements per packet for a payload of `payload_bytes` and elements of
// `elem_bytes`, and the packets one step needs for `count` elements (at
// least one: a zero-length step still carries the token that synchronises).
uint32_t elems_per_packet(uint32_t payload_bytes, uint32_t elem_bytes);
uint32_t packets_per_step(uint32_t count, uint32_t per_packet);

// Which rank's original contribution node `pos` on a ring of n receives in
// step k (0-based): the one k+1 places upstream. Used by tests to check that
// every contribution is added exactly once.
inline uint32_t ring_source(uint32_t pos, uint32_t n, uint32_t k) { return (pos + n - (k + 1) % n) % n; }

}  // namespace toroid::schedule
