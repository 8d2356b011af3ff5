// Collective packet header, after the TorusHeader (whose context and tag
// carry the communicator and its operation sequence number: seed 002's
// source-based matching, no user tags). Payload elements follow in the
// host's little-endian order.
#pragma once
#include <cstdint>

#include "base/endian.h"

namespace toroid::wire {

enum class CollAlgo : uint8_t {
  kTorusRing = 1,
  kTorusTree = 2,
};

struct __attribute__((packed)) CollHeader {
  uint8_t algo;   // CollAlgo
  uint8_t dim;    // phase dimension
  Be16 step;      // ring step within the phase
  Be32 chunk;     // packet index within the step
  Be32 count;     // elements in this packet
};
static_assert(sizeof(CollHeader) == 12);

}  // namespace toroid::wire
