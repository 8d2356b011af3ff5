// CombineEngine's per-class state, shared by combine.cc (control: trees,
// start/test, timeouts, failures) and combine_datapath.cc (receive, combine,
// fan-out, send). Not for callers: they use combine.h.
//
// Every packet names its operation (the torus header's tag: the operation
// id, equal on every node for the same operation) and its place in it (the
// tree header's seq: 0 .. npk-1). For a node X in its current operation and
// each child c:
//   next_combine  the next index X folds (own data + one packet per child)
//   results       indices whose final result X has (non-root: down packets
//                 received; root: == next_combine)
// A non-root folds s only while s < results + kTreeWindow. Since a child's
// results never exceed what X has forwarded down to it, X holds at most
// kTreeWindow packets of a child's current operation plus copies owed to it,
// and at most kTreeWindow of its own up packets: kTreeWindow * (children + 1)
// in all. A child that gave up an operation X still runs (a failure report,
// its timeout) may already send the next one's: up to kTreeWindow more, hence
// rings of twice the window. Packets of an operation that is over here
// (finished, failed or older than the current one) are stale: counted and
// dropped, so one failed operation leaves nothing behind for the next.
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

  // Up packets received from each child, in arrival order (operation, then
  // index), not folded yet: a ring of kHeldSlots per child.
  static constexpr uint32_t kHeldSlots = 2 * tuning::kTreeWindow;
  std::array<std::array<Packet*, kHeldSlots>, kNumDirs> held{};
  std::array<uint32_t, kNumDirs> held_head{};
  std::array<uint32_t, kNumDirs> held_n{};
  std::array<uint32_t, kNumDirs> child_op{};    // operation of the last packet from each child
  std::array<uint32_t, kNumDirs> child_next{};  // index expected next in it
  std::array<bool, kNumDirs> child_any{};       // anything received from the child since the reset

  uint32_t op_id = 0;      // the current (or last) operation's id
  bool started_any = false;  // an operation started since the reset
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
  AluOp op = AluOp::kAdd;
  AluType type = AluType::kUnsigned;
  uint32_t width = 0;
  uint32_t total = 0;    // operands
  uint32_t per_pkt = 0;  // operands per packet
  uint32_t npk = 0;      // packets
  const uint8_t* in = nullptr;
  uint8_t* out = nullptr;
  Timer timer;

  // Operands in the packet of index s of the current operation.
  uint32_t count_of(uint32_t s) const {
    const uint32_t first = s * per_pkt;
    return total - first < per_pkt ? total - first : per_pkt;
  }
  // Packet (id, s) belongs to the operation running here.
  bool in_op(uint32_t id, uint32_t s) const { return active && id == op_id && s < npk; }
  // Packets of operation id can no longer be used here: it is over, or older
  // than the current one.
  bool stale(uint32_t id) const;
};

inline const char* combine_type_name(AluType t) { return t == AluType::kSigned ? "signed" : "unsigned"; }

// The operation a tree packet belongs to: the torus header's tag.
inline uint32_t op_of(const Packet* p) { return reinterpret_cast<const wire::TorusHeader*>(p->data())->tag.get(); }

// Signed distance a - b between sequence numbers (and operation ids).
inline int32_t seq_diff(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b); }

inline bool CombineEngine::ClassState::stale(uint32_t id) const {
  if (!started_any) return false;
  const int32_t d = seq_diff(id, op_id);
  return d < 0 || (d == 0 && !active);
}

}  // namespace toroid
