#include "collectives/algos/torus/torus_packets.h"

#include <cstring>

#include "collectives/comm.h"
#include "netstack/netstack.h"

namespace toroid::torus_coll {

using wire::CollHeader;
using wire::TorusHeader;

uint32_t elems_per_packet(const NetStack& net, size_t esize) {
  const uint32_t body = net.max_body();
  if (esize == 0 || body <= kHeaders) return 0;
  return static_cast<uint32_t>((body - kHeaders) / esize);
}

uint32_t chunks_for(uint64_t count, uint32_t per_packet) {
  if (count == 0 || per_packet == 0) return 1;
  const uint64_t c = (count + per_packet - 1) / per_packet;
  return c > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(c);
}

Packet* make_packet(Comm& comm, uint32_t tag, wire::CollAlgo algo, uint8_t dim, uint16_t step, uint32_t chunk,
                    const void* data, uint32_t n, size_t esize, uint64_t total) {
  NetStack& net = comm.net();
  Packet* p = net.alloc();
  if (!p) return nullptr;
  const size_t bytes = static_cast<size_t>(n) * esize;
  uint8_t* base = p->append(static_cast<uint32_t>(kHeaders + bytes));
  auto* th = reinterpret_cast<TorusHeader*>(base);
  std::memset(th, 0, sizeof *th);
  th->type = static_cast<uint8_t>(wire::PacketType::kCollective);
  th->context.set(comm.context());
  th->tag.set(tag);
  for (int i = 0; i < kDims; ++i) th->dst[i] = static_cast<uint8_t>(net.me().c[i]);
  auto* ch = reinterpret_cast<CollHeader*>(base + sizeof(TorusHeader));
  ch->algo = static_cast<uint8_t>(algo);
  ch->dim = dim;
  ch->step.set(step);
  ch->chunk.set(chunk);
  ch->count.set(n);
  ch->total.set(total);
  if (bytes) std::memcpy(base + kHeaders, data, bytes);
  return p;
}

void set_dst(Packet* p, const Coord& dst) {
  auto* th = reinterpret_cast<TorusHeader*>(p->data());
  for (int i = 0; i < kDims; ++i) th->dst[i] = static_cast<uint8_t>(dst.c[i]);
}

Status parse(Packet* p, wire::CollAlgo algo, size_t esize, Parsed* out) {
  if (p->len < kHeaders) return error(Code::kInvalid, "a %u-byte packet, shorter than its headers", p->len);
  out->th = reinterpret_cast<const TorusHeader*>(p->data());
  out->ch = reinterpret_cast<CollHeader*>(p->data() + sizeof(TorusHeader));
  for (int i = 0; i < kDims; ++i) out->src.c[i] = out->th->src[i];
  out->chunk = out->ch->chunk.get();
  out->count = out->ch->count.get();
  out->step = out->ch->step.get();
  out->dim = out->ch->dim;
  out->total = out->ch->total.get();
  out->payload = p->data() + kHeaders;
  if (out->ch->algo != static_cast<uint8_t>(algo))
    return error(Code::kInvalid, "a packet of algorithm %u from node %s during algorithm %u", out->ch->algo,
                 out->src.to_string().c_str(), static_cast<unsigned>(algo));
  if (static_cast<uint64_t>(p->len) != kHeaders + static_cast<uint64_t>(out->count) * esize)
    return error(Code::kInvalid,
                 "packet %u from node %s has %u payload bytes for %u elements of %zu bytes: mismatched datatypes "
                 "across nodes?",
                 out->chunk, out->src.to_string().c_str(), p->len - kHeaders, out->count, esize);
  return Status::ok();
}

namespace {

enum class Kind : uint8_t { kStale, kShort, kCurrent, kLater };

Kind classify(const Comm& comm, const Packet* p, uint32_t tag) {
  if (p->len < sizeof(TorusHeader)) return Kind::kShort;
  const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
  if (th->context.get() != comm.context()) return Kind::kStale;
  const auto delta = static_cast<int32_t>(th->tag.get() - tag);
  return delta < 0 ? Kind::kStale : delta > 0 ? Kind::kLater : Kind::kCurrent;
}

void drop(Comm& comm, Packet* p, Kind k) {
  ++(k == Kind::kShort ? comm.counters().rx_malformed : comm.counters().rx_stale);
  p->free();
}

}  // namespace

Packet* op_head(Comm& comm, uint16_t port, uint32_t tag, bool* moved) {
  for (;;) {
    Packet* p = comm.inbox_head(port);
    if (!p) return nullptr;
    const Kind k = classify(comm, p, tag);
    if (k == Kind::kCurrent) return p;
    if (k != Kind::kLater) {
      drop(comm, comm.inbox_pop(port), k);
      *moved = true;
      continue;
    }
    // A later operation's packet is first. Nothing to do unless one of this
    // operation's (or a stale one) waits behind it: look without taking.
    bool behind = false;
    for (const Packet* q = p->next; q && !behind; q = q->next) behind = classify(comm, q, tag) != Kind::kLater;
    if (!behind) return nullptr;
    // Take the whole inbox once and put this operation's packets back first,
    // then the later ones, each in their arrival order (appending goes
    // behind what is not taken yet).
    const uint32_t n = comm.inbox_size(port);
    Packet* later_head = nullptr;
    Packet* later_tail = nullptr;
    bool current = false;
    for (uint32_t i = 0; i < n; ++i) {
      Packet* q = comm.inbox_pop(port);
      const Kind kq = classify(comm, q, tag);
      if (kq == Kind::kCurrent) {
        comm.on_packet(port, q);
        current = true;
      } else if (kq == Kind::kLater) {
        q->next = nullptr;
        if (later_tail) later_tail->next = q;
        else later_head = q;
        later_tail = q;
      } else {
        drop(comm, q, kq);
        *moved = true;
      }
    }
    while (later_head) {
      Packet* q = later_head;
      later_head = q->next;
      comm.on_packet(port, q);
    }
    if (!current) return nullptr;
    *moved = true;
  }
}

Status size_mismatch(const char* what, const Coord& them, uint64_t their_count, const Coord& me, uint64_t my_count) {
  return error(Code::kInvalid,
               "%s: mismatched sizes across nodes: node %s has %llu elements, node %s (this one) has %llu elements",
               what, them.to_string().c_str(), static_cast<unsigned long long>(their_count), me.to_string().c_str(),
               static_cast<unsigned long long>(my_count));
}

std::string needs_world(const CommInfo& c) {
  return c.world ? "" : "needs the world communicator (uses its torus links)";
}

}  // namespace toroid::torus_coll
