// Context ids of one node's communicators. An id separates a communicator's
// messages from every other communicator's on each of its members, so the
// members agree on it: each offers its mask of free ids, an allreduce ANDs
// the masks, and the lowest id free on every member wins and is reserved
// there (as MPI libraries do). Ids are never derived from a counter or a
// hash, so two communicators that share a node never share an id, however
// many are made and freed. Disjoint communicators made by one agreement
// (the lines of a split) may share an id: no node belongs to two of them.
//
// Ids: 0 is never used, 1 is the world communicator's, 2..kIds-1 are
// agreed; the 0x8000 bit of a message's context marks a communicator's
// point-to-point messages and is not part of the id.
//
// One agreement round covers one window of kWindowIds ids plus a word that
// is all ones when every member offered its mask. A node offers its mask to
// one agreement at a time: a second agreement in flight on the same node
// offers zeros, its round finds nothing and is repeated (retry), so two
// agreements can never hand one node the same id.
#pragma once
#include <cstdint>

#include "base/status.h"

namespace toroid {

class ContextTable {
 public:
  static constexpr uint32_t kIds = 0x8000;
  static constexpr uint16_t kWorld = 1;
  static constexpr uint16_t kFirstAgreed = 2;
  static constexpr uint32_t kWindowIds = 1024;
  static constexpr uint32_t kWindowWords = kWindowIds / 64;
  static constexpr uint32_t kRoundWords = kWindowWords + 1;  // the window, then "every member offered"
  static constexpr uint32_t kWindows = kIds / kWindowIds;
  static_assert(kIds % kWindowIds == 0 && kWindowIds % 64 == 0);

  ContextTable();
  bool in_use(uint16_t id) const { return id >= kIds || (used_[id / 64] >> (id % 64)) & 1; }
  // Marks id used; false if it already is.
  bool reserve(uint16_t id);
  void release(uint16_t id);
  uint32_t used() const { return used_count_; }

  enum class Round : uint8_t {
    kPicked,      // *id is agreed and reserved here
    kNextWindow,  // every member offered, the window has no common free id: try the next
    kRetry,       // a member offered nothing (another agreement in flight there): repeat
    kExhausted,   // no window has an id free on every member
  };
  // This node's offer for a round over `window`: its free ids there and the
  // all-ones word, or all zeros while another of its agreements is in
  // flight. *offered says which; pass it to settle().
  void offer(uint32_t window, uint64_t* out, bool* offered);
  // The round's result (the AND of every member's offer, the same on all).
  Round settle(uint32_t window, const uint64_t* all, bool offered, uint16_t* id);

 private:
  uint64_t used_[kIds / 64] = {};
  uint32_t used_count_ = 0;
  bool busy_ = false;  // this node's mask is offered to an agreement in flight
};

}  // namespace toroid
