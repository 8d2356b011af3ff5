// Ethernet II header. Toroid frames use EtherType 0x88B5 (IEEE 802
// "local experimental"), so real NICs, pcap and Wireshark carry them as-is.
#pragma once
#include <cstdint>

#include "base/endian.h"

namespace toroid::wire {

constexpr uint16_t kEtherType = 0x88B5;

struct __attribute__((packed)) EthHeader {
  uint8_t dst[6];
  uint8_t src[6];
  Be16 ethertype;
};
static_assert(sizeof(EthHeader) == 14);

// Locally administered unicast MAC for a node port: 02:'T':x:y:z:port.
inline void node_mac(uint8_t out[6], uint8_t x, uint8_t y, uint8_t z, uint8_t port) {
  out[0] = 0x02; out[1] = 'T'; out[2] = x; out[3] = y; out[4] = z; out[5] = port;
}

}  // namespace toroid::wire
