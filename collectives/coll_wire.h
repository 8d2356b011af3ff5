// Collective packet header of the algorithms that run on the world
// communicator's own torus links (collectives/algos/torus/), after the
// TorusHeader (whose context and tag carry the communicator and its
// operation sequence number: seed 002's source-based matching, no user
// tags). Payload elements follow in the host's little-endian order; counts
// are elements of the operation's element size (CollArgs::esize), so one
// header serves every datatype and op.
#pragma once
#include <cstdint>

#include "base/endian.h"

namespace toroid::wire {

enum class CollAlgo : uint8_t {
  kTorusRing = 1,        // allreduce torus-ring
  kTorusTree = 2,        // allreduce torus-tree (torus part)
  kTorusFixedOrder = 3,  // allreduce torus-fixed-order (deposit-bit line broadcasts)
  kLineMulticast = 4,    // bcast line-multicast (deposit-bit line broadcasts)
};

struct __attribute__((packed)) CollHeader {
  uint8_t algo;   // CollAlgo
  uint8_t dim;    // phase dimension
  Be16 step;      // ring step within the phase
  Be32 chunk;     // packet index within the step
  Be32 count;     // elements in this packet
  Be64 total;     // elements of the whole operation at the sender (size checks across nodes)
};
static_assert(sizeof(CollHeader) == 20);

}  // namespace toroid::wire
