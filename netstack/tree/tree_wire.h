// Wire formats of the emulated collective networks, after a TorusHeader of
// type kTree (combine) or kBarrier. Both travel one hop at a time between
// tree neighbours and are consumed by the engine of the next node.
#pragma once
#include <cstdint>

#include "base/endian.h"

namespace toroid::wire {

enum TreeFlags : uint8_t {
  kTreeUp = 1,    // child -> parent: a partial result
  kTreeDown = 2,  // parent -> child: the final result, broadcast
};

struct __attribute__((packed)) TreeHeader {
  uint8_t cls;    // tree class id
  uint8_t op;     // AluOp
  uint8_t type;   // AluType
  uint8_t flags;  // TreeFlags
  Be16 width;     // operand bytes
  Be16 count;     // operands in this packet
  Be32 seq;       // stream sequence number within the class
  Be32 total;     // operands in the whole operation (a consistency check)
};
static_assert(sizeof(TreeHeader) == 16);

enum BarrierFlags : uint8_t {
  kBarrierUp = 1,    // my subtree has arrived (AND) / raised (OR)
  kBarrierDown = 2,  // the root's verdict for the epoch: released / raised
};

struct __attribute__((packed)) BarrierHeader {
  uint8_t cls;      // tree class id
  uint8_t channel;  // 0 .. kBarrierChannels-1
  uint8_t mode;     // 0 = AND (barrier), 1 = OR (interrupt)
  uint8_t flags;    // BarrierFlags
  Be32 epoch;       // re-arm count of the channel
};
static_assert(sizeof(BarrierHeader) == 8);

}  // namespace toroid::wire
