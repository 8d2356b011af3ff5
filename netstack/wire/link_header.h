// Link header: the per-hop part of every frame, right after Ethernet.
// seq/ack/sack/credits serve the reliable link layer (netstack/link.h);
// `length` counts the bytes after this header; `crc` is CRC32C over this
// header (with crc = 0), the network header and the payload, or 0 with
// kLinkNoCrc set (data and ack frames on a medium that guarantees frame
// integrity, PortInfo::medium_integrity). All fields big-endian.
#pragma once
#include <cstdint>

#include "base/endian.h"

namespace toroid::wire {

constexpr uint8_t kWireVersion = 1;

enum class FrameType : uint8_t {
  kData = 1,   // reliable: carries a network (torus) header and payload
  kAck = 2,    // link control only: ack, sack, credits (no body)
  kHello = 3,  // link training: HelloBody follows (unsequenced)
};
constexpr uint8_t kMaxFrameType = 3;

// Virtual channels. 0/1 are the dateline pair of deterministic routing
// (also the escape channels of adaptive routing), 2 is the adaptive channel,
// 3 the high-priority channel for control traffic and barriers.
constexpr int kNumVcs = 4;
enum Vc : uint8_t { kVcLow = 0, kVcHigh = 1, kVcAdaptive = 2, kVcPriority = 3 };

enum LinkFlags : uint8_t {
  kLinkNak = 1,        // the receiver saw a gap: resend what the sack lacks
  kLinkAckReq = 2,     // please answer with an ack at once (probe)
  kLinkNoCrc = 4,      // no CRC computed (crc = 0): valid only where both ports
                       // declare medium integrity, and never on a hello
};

struct __attribute__((packed)) LinkHeader {
  uint8_t version;   // kWireVersion
  uint8_t type;      // FrameType
  uint8_t flags;     // LinkFlags
  uint8_t vc;        // virtual channel of a data frame
  Be32 seq;          // data frames: sequence number (per link, all VCs)
  Be32 ack;          // cumulative: every seq < ack has been received
  Be32 sack;         // bit i set: seq ack+1+i has been received too
  Be16 credits[kNumVcs];  // per VC: receive buffers freed so far (mod 2^16)
  Be16 length;       // bytes after the link header
  Be16 reserved;
  Be32 crc;          // CRC32C, computed with this field zero
};
static_assert(sizeof(LinkHeader) == 32);

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
