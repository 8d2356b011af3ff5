// Shared plumbing of the torus group's algorithms (collectives/algos/torus/):
// the packets they exchange on the world communicator's torus links
// (TorusHeader + wire::CollHeader + count elements of CollArgs::esize bytes),
// and reading the communicator's per-port inboxes.
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

}  // namespace torus_coll
}  // namespace toroid
