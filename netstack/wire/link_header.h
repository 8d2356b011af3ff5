// Link header: the per-hop part of every frame, right after Ethernet.
// seq/ack/sack/credits serve the reliable link layer; `length` counts the
// bytes after this header; `crc` is CRC32C over this header (with crc = 0),
// the network header and the payload. All fields big-endian.
#pragma once
#include <cstdint>

#include "base/endian.h"

namespace toroid::wire {

constexpr uint8_t kWireVersion = 1;

enum class FrameType : uint8_t {
  kData = 1,   // carries a network (torus) header and payload
  kAck = 2,    // link-level acknowledgement only
  kHello = 3,  // link training: HelloBody follows
};
constexpr uint8_t kMaxFrameType = 3;

struct __attribute__((packed)) LinkHeader {
  uint8_t version;   // kWireVersion
  uint8_t type;      // FrameType
  uint8_t flags;
  uint8_t vc;        // virtual channel
  Be32 seq;
  Be32 ack;
  Be32 sack;         // selective ack bitmap: bit i = seq ack+1+i received
  Be16 credits;
  Be16 length;       // bytes after the link header
  Be32 crc;          // CRC32C, computed with this field zero
};
static_assert(sizeof(LinkHeader) == 24);

// Link training hello: who I am and which of my ports this is.
enum HelloFlags : uint8_t {
  kHelloHeard = 1,  // I have received a valid hello from you on this port
  kHelloDone = 2,   // I have seen you hear me: this port is trained on my side
};
struct __attribute__((packed)) HelloBody {
  uint8_t coord[3];  // sender's coordinates
  uint8_t dir;       // sender's direction for this port (Dir)
  uint8_t dims[3];   // sender's partition dims
  uint8_t flags;     // HelloFlags
  Be64 boot_id;      // sender's boot nonce (tells a rebooted peer apart)
};
static_assert(sizeof(HelloBody) == 16);

}  // namespace toroid::wire
