// Network header of a data frame: where a packet goes on the torus and what
// it is. Coordinates are one byte each (dims up to 256). All fields big-endian.
#pragma once
#include <cstdint>

#include "base/endian.h"

namespace toroid::wire {

enum class PacketType : uint8_t {
  kNeighbour = 1,   // one hop, consumed by the neighbour
  kCollective = 2,  // collectives traffic (CollHeader follows)
  kP2P = 3,         // point-to-point message segment
  kControl = 4,
  kTree = 5,       // combine network, one hop (TreeHeader follows)
  kBarrier = 6,    // barrier network, one hop on the priority VC (BarrierHeader)
};
constexpr uint8_t kMaxPacketType = 6;

enum TorusFlags : uint8_t {
  kTorusDeposit = 1,    // deposit a copy at every node passed (line broadcast)
  kTorusAdaptive = 2,   // may take any minimal direction (escape: dimension order)
  kTorusCrossedX = 4,   // has crossed the dateline of x (wrap link n-1 <-> 0)
  kTorusCrossedY = 8,
  kTorusCrossedZ = 16,
  kTorusPriority = 32,  // high-priority VC (one-hop control traffic only)
};
constexpr uint8_t kTorusCrossedAll = kTorusCrossedX | kTorusCrossedY | kTorusCrossedZ;
constexpr uint8_t crossed_flag(int dim) { return static_cast<uint8_t>(kTorusCrossedX << dim); }

struct __attribute__((packed)) TorusHeader {
  uint8_t dst[3];
  uint8_t src[3];
  uint8_t cls;      // class route id (0 = none)
  uint8_t hints;    // direction hint bits, bit i = Dir i
  uint8_t flags;    // TorusFlags
  uint8_t type;     // PacketType
  Be16 context;     // communicator context id
  Be32 tag;         // operation sequence number within the context
};
static_assert(sizeof(TorusHeader) == 16);

}  // namespace toroid::wire
