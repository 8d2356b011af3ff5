// CombineEngine's per-class state, shared by combine.cc (control: trees,
// start/test, timeouts, failures) and combine_datapath.cc (receive, combine,
// fan-out, send). Not for callers: they use combine.h.
//
// Sequence numbers are per class and continue across operations (uint32,
// compared by signed difference). For a node X and each child c:
//   next_combine  the next sequence X folds (own data + one packet per child)
//   results       sequences whose final result X has (non-root: down packets
//                 received; root: == next_combine)
// A non-root folds s only while s < results + kTreeWindow. Since a child's
// results never exceed what X has forwarded down to it, X holds at most
// kTreeWindow packets of a child plus copies owed to it, and at most
// kTreeWindow of its own up packets: kTreeWindow * (children + 1) in all.
#pragma once
#include <array>
#include <cstdint>

#include "netstack/tree/combine.h"

namespace toroid {

struct CombineEngine::ClassState {
  CombineEngine* eng = nullptr;
  uint8_t cls = 0;
  // Place in the tree.
  bool has_up = false;
  Dir up = Dir::kXp;
  uint8_t nchild = 0;
  std::array<Dir, kNumDirs> down{};
  // Child index by the direction a packet arrives from (-1: not a child).
  std::array<int8_t, kNumDirs> child_of_dir{};
  uint8_t all_children = 0;  // bit i: child i

  // Up packets received from each child, in sequence order, not folded yet:
  // a ring of kTreeWindow slots per child (the window bounds it).
  std::array<std::array<Packet*, tuning::kTreeWindow>, kNumDirs> held{};
  std::array<uint32_t, kNumDirs> held_head{};
  std::array<uint32_t, kNumDirs> held_n{};
  std::array<uint32_t, kNumDirs> child_next{};  // sequence expected next from each child

  uint32_t next_combine = 0;
  uint32_t results = 0;
  // Result packets still to be copied to children (Packet::user: bit i set
  // while child i still needs its copy), FIFO through Packet::next.
  Packet* fan_head = nullptr;
  Packet* fan_tail = nullptr;
  uint32_t pending = 0;  // this class's packets in fan-out or tx queues

  // The operation (one at a time).
  bool active = false;
  bool finished = false;
  Status result;
  Status broken;  // after a failure the class's streams are out of step: refuse more
  AluOp op = AluOp::kAdd;
  AluType type = AluType::kUnsigned;
  uint32_t width = 0;
  uint32_t total = 0;    // operands
  uint32_t per_pkt = 0;  // operands per packet
  uint32_t npk = 0;      // packets
  uint32_t base = 0;     // sequence of the first packet
  const uint8_t* in = nullptr;
  uint8_t* out = nullptr;
  Timer timer;

  // Operands in the packet of sequence s of the current operation.
  uint32_t count_of(uint32_t s) const {
    const uint32_t first = (s - base) * per_pkt;
    return total - first < per_pkt ? total - first : per_pkt;
  }
  bool in_op(uint32_t s) const { return active && s - base < npk; }
};

inline const char* combine_type_name(AluType t) { return t == AluType::kSigned ? "signed" : "unsigned"; }

// Signed distance a - b between sequence numbers.
inline int32_t seq_diff(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b); }

}  // namespace toroid
