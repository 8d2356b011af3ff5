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
// is all ones when no member withheld an id of that window. Agreements may
// run at once on a node (MPI_Comm_idup of several communicators, in any
// order on each member): an id offered to one agreement's round in flight is
// withheld from every other agreement's offers until that round settles, so
// two agreements can never hand one node the same id, and neither waits for
// the other. An agreement walks the windows in order from one picked by its
// key (the id of the communicator it runs over), so agreements over
// different communicators seldom meet in a window. When every window came
// up empty and a member had withheld ids, the walk starts over (a retry)
// from a window picked by the key and the number of walks, so two
// agreements that met in every window of one walk (offers made in opposite
// orders on two members) do not meet again in the next.
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
  static constexpr uint32_t kRoundWords = kWindowWords + 1;  // the window, then "nothing withheld"
  static constexpr uint32_t kWindows = kIds / kWindowIds;
  static_assert(kIds % kWindowIds == 0 && kWindowIds % 64 == 0);

  ContextTable();
  bool in_use(uint16_t id) const { return id >= kIds || (used_[id / 64] >> (id % 64)) & 1; }
  // Marks id used; false if it already is.
  bool reserve(uint16_t id);
  void release(uint16_t id);
  uint32_t used() const { return used_count_; }
  // Ids offered to rounds in flight here (withheld from other agreements).
  uint32_t pending() const { return pending_count_; }

  enum class Round : uint8_t {
    kPicked,      // *id is agreed and reserved here
    kNextWindow,  // the window has no id free on every member: try the next
    kRetry,       // every window came up empty and a member withheld ids: walk again
    kExhausted,   // no window has an id free on every member
  };
  // One agreement's state on this node. Every member walks the same windows:
  // each step follows from the round's result, the same on all of them.
  struct Walk {
    uint16_t key = 0;
    uint32_t walks = 0;   // walks done (retries)
    uint32_t first = 0;   // this walk's first window
    uint32_t steps = 0;   // windows done in this walk
    bool withheld = false;  // a member withheld ids in a window of this walk
    bool in_flight = false;  // `mine` is offered to a round not settled yet
    uint64_t mine[kWindowWords] = {};
    // The window of the next (or current) round.
    uint32_t window() const { return (first + steps) % kWindows; }
  };
  // Starts an agreement over the communicator whose id is `key` (the same
  // on every member).
  static void begin(Walk* w, uint16_t key);
  // This node's offer for the walk's round: its ids free there and offered
  // to no other round in flight, then the all-ones word if it withheld none.
  // The ids stay withheld from other agreements until settle() or drop().
  void offer(Walk* w, uint64_t* out);
  // The round's result (the AND of every member's offer, the same on all).
  // kNextWindow and kRetry leave the walk at the next round's window.
  Round settle(Walk* w, const uint64_t* all, uint16_t* id);
  // A round that will never settle (the operation failed): its offer is
  // given back.
  void drop(Walk* w);

 private:
  static void start_walk(Walk* w);
  uint64_t used_[kIds / 64] = {};
  uint64_t pending_[kIds / 64] = {};
  uint32_t used_count_ = 0;
  uint32_t pending_count_ = 0;
};

}  // namespace toroid
