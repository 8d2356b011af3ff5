// Helpers shared by the host driver tests: frame patterns and the DPDK test
// environment that main() sets up before any test runs (EAL once per process).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

#include "drivers/packet.h"

namespace host_test {

// Deterministic bytes for frame `seq` of length `len`; the first 8 bytes
// carry seq and len so a misordered or resized frame is caught at once.
inline uint8_t pattern_byte(uint32_t seq, uint32_t i) {
  uint32_t x = seq * 2654435761u + i * 40503u;
  x ^= x >> 13;
  return static_cast<uint8_t>(x);
}

inline void fill_frame(toroid::Packet* p, uint32_t seq, uint32_t len) {
  uint8_t* d = p->append(len);
  for (uint32_t i = 0; i < len; ++i) d[i] = pattern_byte(seq, i);
  if (len >= 8) {
    std::memcpy(d, &seq, 4);
    std::memcpy(d + 4, &len, 4);
  }
}

// True if p is frame `seq` of length `len`, byte for byte.
inline bool frame_ok(const toroid::Packet* p, uint32_t seq, uint32_t len) {
  if (p->len != len) return false;
  const uint8_t* d = p->data();
  uint32_t i = 0;
  if (len >= 8) {
    uint32_t s, l;
    std::memcpy(&s, d, 4);
    std::memcpy(&l, d + 4, 4);
    if (s != seq || l != len) return false;
    i = 8;
  }
  for (; i < len; ++i)
    if (d[i] != pattern_byte(seq, i)) return false;
  return true;
}

// Set up by main() for the DPDK group: a private directory for memif
// sockets and the spec pair EAL probed at init.
struct DpdkEnv {
  bool ready = false;
  std::string dir;         // /tmp/toroid-test-<pid>
  std::string std_server;  // memif specs given to eal_init (--vdev)
  std::string std_client;
  std::string std_socket;
};
DpdkEnv& dpdk_env();

}  // namespace host_test
