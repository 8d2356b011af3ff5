// Link header: the per-hop part of every frame, right after Ethernet.
// seq/ack/sack/credits serve the reliable link layer (netstack/link.h);
// `length` counts the bytes after this header; `crc` is CRC32C over this
// header (with crc = 0), the network header and the payload, or 0 with
// kLinkNoCrc set (data and ack frames on a medium that guarantees frame
// integrity, PortInfo::medium_integrity). All fields big-endian.
#pragma once
#include <cstddef>
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
  Be16 partition;    // partition_tag() of the sender's partition id
  Be32 crc;          // CRC32C, computed with this field zero
};
static_assert(sizeof(LinkHeader) == 32);

// The 16-bit tag of a partition id carried by every frame (FNV-1a folded to
// 16 bits; 0 for a rig that names no partition, and never 0 for one that
// does). A receiver drops data and acks whose tag is not its own. Two ids
// may share a tag (1 in 65536); the hello carries the whole id, so link
// training still tells them apart.
inline uint16_t partition_tag(const char* id, size_t len) {
  if (len == 0) return 0;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; ++i) h = (h ^ static_cast<uint8_t>(id[i])) * 16777619u;
  const auto tag = static_cast<uint16_t>(h ^ (h >> 16));
  return tag ? tag : 1;
}

// Link training hello: who I am and which of my ports this is.
enum HelloFlags : uint8_t {
  kHelloHeard = 1,  // I have received a valid hello from you on this port
  kHelloDone = 2,   // I have seen you hear me: this port is trained on my side
};
// The partition id as the hello carries it: NUL-padded, not terminated
// when it is exactly this long (personality.h: kPartitionIdMax).
constexpr size_t kHelloPartitionBytes = 32;
struct __attribute__((packed)) HelloBody {
  uint8_t coord[3];  // sender's coordinates
  uint8_t dir;       // sender's direction for this port (Dir)
  uint8_t dims[3];   // sender's partition dims
  uint8_t flags;     // HelloFlags
  Be64 boot_id;      // sender's boot nonce: random per boot (tells a rebooted peer apart)
  Be64 peer_boot;    // the boot id this port heard from its peer (0: none yet); HEARD
                     // counts only when it is the receiver's own boot id
  Be32 generation;   // the sender's communication generation (docs/netstack.md)
  Be32 isn;          // the first data seq the sender uses on this link in this generation
  uint8_t origin[3];   // the node that started this generation (any node: all 0 in generation 0)
  uint8_t origin_dir;  // the direction of its port the cause was seen on; 0xff: none
  uint8_t cause;       // ResetCause: why the generation started
  uint8_t rx_credits;  // receive buffers the sender keeps per VC for this link, at least
                       // (0: tuning::kVcCredits, as before this field); its peer sends no more
  uint8_t pad[2];      // 0
  char partition[kHelloPartitionBytes];  // the sender's partition id
};
static_assert(sizeof(HelloBody) == 72);

// Why a generation started (HelloBody::cause), so every node that adopts it
// can name the failure in the error its operations end with.
enum class ResetCause : uint8_t {
  kNone = 0,         // generation 0: the first boot
  kLinkDown = 1,     // a link went down (no progress, silence, carrier)
  kRebooted = 2,     // a neighbour came back with a new boot id
  kRequested = 3,    // a job asked after an operation failed (e.g. a timeout)
  kMiswired = 4,     // a cable changed under a running node
};
constexpr uint8_t kMaxResetCause = 4;

}  // namespace toroid::wire
