// Shared plumbing of the torus group's algorithms (collectives/algos/torus/):
// the packets they exchange on the world communicator's torus links
// (TorusHeader + wire::CollHeader + count elements of CollArgs::esize bytes),
// reading the communicator's per-port inboxes, and TorusAlgo, the base that
// holds an operation's chunks and the packet steps every algorithm takes.
//
// Inboxes hold kCollective packets in arrival order. A packet of a later
// operation can arrive before the last packets of the running one on the
// same port (deposit-bit packets of different sources share the last links,
// and packets on different virtual channels may pass each other), so a
// reader never waits behind one: op_head() moves packets of later operations
// behind this operation's (keeping their order) and drops stale ones.
#pragma once
#include <cstdint>
#include <string>

#include "base/status.h"
#include "base/torus.h"
#include "collectives/coll.h"
#include "collectives/coll_wire.h"
#include "collectives/schedule/line_bcast.h"
#include "drivers/packet.h"
#include "netstack/wire/torus_header.h"

namespace toroid {

class Comm;
class NetStack;

namespace torus_coll {

constexpr uint32_t kHeaders = sizeof(wire::TorusHeader) + sizeof(wire::CollHeader);
// Deposit-bit packets an algorithm lets wait in the node's injection queue
// (NetStack::send): enough to keep the links busy, few enough that transit
// and other traffic still get through.
constexpr uint32_t kInjectWindow = 16;

// Elements of esize bytes per packet on this node's ports (0: not even one).
uint32_t elems_per_packet(const NetStack& net, size_t esize);
// Packets for count elements (at least one: an empty operation still sends
// a token, which synchronises), and the elements of packet `chunk`.
uint32_t chunks_for(uint64_t count, uint32_t per_packet);
inline uint32_t chunk_elems(uint64_t count, uint32_t per_packet, uint32_t chunk) {
  const uint64_t first = static_cast<uint64_t>(chunk) * per_packet;
  return first >= count ? 0 : static_cast<uint32_t>(count - first < per_packet ? count - first : per_packet);
}

// A packet with both headers and n elements copied from data (n*esize
// bytes); the TorusHeader's type, context, tag and dst are set (dst = me:
// send_dir overwrites it, send() callers set it). nullptr if the pool is empty.
Packet* make_packet(Comm& comm, uint32_t tag, wire::CollAlgo algo, uint8_t dim, uint16_t step, uint32_t chunk,
                    const void* data, uint32_t n, size_t esize, uint64_t total);
void set_dst(Packet* p, const Coord& dst);

// The headers of a received packet, checked for shape: long enough, the
// expected algorithm, and exactly kHeaders + count*esize bytes.
struct Parsed {
  const wire::TorusHeader* th;
  wire::CollHeader* ch;
  Coord src;
  uint32_t chunk, count;
  uint16_t step;
  uint8_t dim;
  uint64_t total;
  uint8_t* payload;
};
// ok, or why not (for the error or the malformed counter).
Status parse(Packet* p, wire::CollAlgo algo, size_t esize, Parsed* out);

// The oldest packet of the operation `tag` on `port`, left in the inbox, or
// nullptr when none is there. Drops stale packets (earlier operations, other
// contexts, too short for a TorusHeader; counted) and moves packets of later
// operations behind this operation's; *moved is set when it changed the inbox.
Packet* op_head(Comm& comm, uint16_t port, uint32_t tag, bool* moved);

// "mismatched sizes across nodes: node 1,0,0 has 100 elements, node 2,0,0 (this one) has 99 elements"
Status size_mismatch(const char* what, const Coord& them, uint64_t their_count, const Coord& me, uint64_t my_count);

// The world-communicator requirement every algorithm of the group shares.
std::string needs_world(const CommInfo& c);

// Of sends that have injected sent[0..n-1] chunks, the one furthest behind
// among those below `limit` (the first of equals); n when none is.
size_t furthest_behind(const uint32_t* sent, size_t n, uint32_t limit);

// An algorithm of the group: one operation at a time on buf_ (args.recv),
// count_ elements cut into chunks_ packets of per_packet_ elements (chunk c
// starts at element c * per_packet_), and the steps that are the same in
// every algorithm, its errors named "<what>: ...". Each algorithm keeps its
// schedule, which packets it expects where, and what it does with them.
class TorusAlgo : public CollAlgo {
 protected:
  using Parsed = torus_coll::Parsed;

  // what: the algorithm in error messages ("allreduce torus-ring"); algo:
  // CollHeader::algo of its packets.
  TorusAlgo(const char* what, wire::CollAlgo algo) : what_(what), algo_(algo) {}

  // The opening of start(): reset() and the operation's comm_, args_, tag_,
  // buf_, count_ and esize_.
  void open(Comm& comm, const CollArgs& args);
  // The rest of start()'s checks, then the chunks: an error if buf_ (or,
  // with `input`, args_.input()) is null while count_ > 0, or if an element
  // does not fit one packet while there are elements and `uses_links`.
  Status cut_chunks(bool input, bool uses_links);
  // Allreduce: the input into buf_, which then holds the running value
  // (nothing to do in place).
  void copy_input() const;

  size_t bytes() const { return static_cast<size_t>(count_) * esize_; }
  size_t chunk_offset(uint32_t c) const { return static_cast<size_t>(c) * per_packet_ * esize_; }
  uint32_t chunk_size(uint32_t c) const { return chunk_elems(count_, per_packet_, c); }

  // Chunk c of `base` (a vector of count_ elements) in a packet of this
  // algorithm (make_packet); nullptr if the pool is empty.
  Packet* chunk_packet(int dim, uint16_t step, uint32_t c, const uint8_t* base) const;
  // Injects chunk c of `base` as a deposit-bit packet along dimension dim:
  // to the node at s.dst on this node's line, forced in direction s.dir.
  // False if it cannot now: kInjectWindow packets queued already or the
  // queue refused (both counted in tx_blocked), or the pool is empty.
  bool inject_chunk(int dim, uint16_t step, uint32_t c, const uint8_t* base, const schedule::LineSend& s);

  // The next packet of this operation on `port` (op_head), taken from the
  // inbox (*moved set) and parsed into *pk; nullptr when none waits, or when
  // it does not parse: then the operation has failed (done_).
  Packet* take(uint16_t port, Parsed* pk, bool* moved);
  // Frees a packet that has no place in this operation (rx_malformed).
  void drop_malformed(Packet* p);
  // Whether a taken packet's sizes agree with this operation's: the same
  // total count, and the elements of its chunk. If not, frees it and fails
  // the operation, naming the sender by from_dir when given, else by node.
  bool sizes_agree(Packet* p, const Parsed& pk, const char* from_dir = nullptr);
  // For an algorithm that runs phases in turn, when phase *phase of `phases`
  // is complete: false after the last one (the operation has finished), else
  // true with *phase on to the next one, which the caller then begins.
  bool next_phase(size_t* phase, size_t phases);
  // fail() with st's code and "<what>: <st's message>".
  void fail_with(const Status& st);
  // True when the schedule of the last operation still holds (same node,
  // partition and root); else remembers these and returns false, and the
  // caller rebuilds it. Schedules are vectors: steady state must not
  // rebuild them per operation.
  bool schedule_holds(const Coord& me, const Dims& dims, uint32_t root = 0) {
    if (sched_valid_ && sched_me_ == me && sched_dims_ == dims && sched_root_ == root) return true;
    sched_valid_ = true;
    sched_me_ = me;
    sched_dims_ = dims;
    sched_root_ = root;
    return false;
  }
  Status no_port(Dir dir) const;  // "<what>: no port for x+" (kInternal)

  const char* const what_;
  const wire::CollAlgo algo_;
  Comm* comm_ = nullptr;
  CollArgs args_;
  uint32_t tag_ = 0;
  uint8_t* buf_ = nullptr;      // args.recv: the result (a bcast root's data)
  uint64_t count_ = 0;
  size_t esize_ = 0;
  uint32_t per_packet_ = 0;     // elements per packet
  uint32_t chunks_ = 0;         // packets per vector (at least one)

 private:
  // cut_chunks' last answers: per_packet_ for (max body, esize), chunks_
  // for (count, per_packet_).
  uint32_t cut_body_ = 0;
  size_t cut_esize_ = 0;
  uint32_t cut_per_packet_ = 0;
  bool cut_valid_ = false;
  uint64_t cut_count_ = 0;
  uint32_t cut_chunks_ = 0;
  bool sched_valid_ = false;
  Coord sched_me_;
  Dims sched_dims_;
  uint32_t sched_root_ = 0;
};

}  // namespace torus_coll
}  // namespace toroid
