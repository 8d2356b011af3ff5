// Messenger internals shared by p2p.cc (setup, dispatch, poll),
// p2p_send.cc (segments out), p2p_recv.cc (matching, delivery) and
// p2p_spill.cc (spills).
#pragma once
#include <cstdint>
#include <memory>

#include "netstack/p2p.h"
#include "netstack/wire/torus_header.h"

namespace toroid {

constexpr uint32_t kMsgHeaders = sizeof(wire::TorusHeader) + sizeof(wire::MsgHeader);

// A segment's place in its message and its payload, from a checked frame.
struct Seg {
  uint64_t off;
  uint32_t n;
  const uint8_t* data;
};
inline Seg seg_of(Packet* p) {
  const auto* mh = reinterpret_cast<const wire::MsgHeader*>(p->data() + sizeof(wire::TorusHeader));
  return Seg{mh->offset.get(), p->len - kMsgHeaders, p->data() + kMsgHeaders};
}

// A message of one source that has begun to arrive: bound to a posted
// receive (its segments are written straight into the receive's buffer), or
// unexpected (its frames held as they arrived, or spilled into a store buffer).
struct InMsg {
  Messenger::Peer* pr = nullptr;  // its source's record (records live as long as the Messenger)
  uint32_t src() const;      // the source's partition rank (pr->rank)
  uint32_t seq = 0;          // per (source, destination) pair
  uint16_t ctx = 0;
  uint32_t tag = 0;
  uint64_t total = 0;        // bytes
  uint64_t got = 0;          // payload bytes consumed (written, spilled or discarded)
  RecvReq* req = nullptr;    // the bound receive
  Status error;              // a segment that did not fit the receive (reported at completion)
  Packet* held_head = nullptr;  // held frames, arrival order (through Packet::next)
  Packet* held_tail = nullptr;
  uint32_t held = 0;
  std::unique_ptr<uint8_t[]> spill;  // spilled: the message's bytes so far
  uint64_t spill_cap = 0;
  bool spilled = false;
  bool on_unexpected = false;
  bool gated = false;        // on the gated list: bound, with frames behind its gate
  bool sync = false;         // the sender waits for our acknowledgement of the match
  InMsg* next = nullptr;     // the source's in-progress messages, by seq
  InMsg* unx_prev = nullptr; // unexpected list, arrival order
  InMsg* unx_next = nullptr;
};

struct Messenger::Peer {
  uint32_t rank = 0;          // its partition rank
  Coord at;                   // and its coordinates (a frame's destination, without divisions)
  // ---- as a destination of our sends ----
  uint32_t next_seq = 0;      // the seq of our next message to it
  uint32_t segs_sent = 0;     // segments sent to it (mod 2^32)
  uint32_t peer_took = 0;     // its cumulative credit
  // ---- as a source of messages to us ----
  uint32_t contig = 0;        // every seq below this has begun to arrive
  uint64_t seen = 0;          // bit i: seq contig + 1 + i has begun to arrive
  uint32_t took = 0;          // segments consumed (cumulative)
  uint32_t took_reported = 0; // as our last credit message said
  bool credit_queued = false;
  uint32_t held = 0;          // frames held for its messages (unexpected, or behind a gate)
  bool stalled = false;       // our send to it waited for credit since we last looked
  Peer* next_stalled = nullptr;  // the Messenger's list of stalled peers
  bool heavy = false;         // on the heavy list: held reached half the window since we last looked
  Peer* next_heavy = nullptr;
  InMsg* msgs = nullptr;      // in-progress messages, by seq
  RecvBucket posted;          // posted receives naming it as the source
};

inline uint32_t InMsg::src() const { return pr->rank; }

}  // namespace toroid
