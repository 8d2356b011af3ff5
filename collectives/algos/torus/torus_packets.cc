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

size_t furthest_behind(const uint32_t* sent, size_t n, uint32_t limit) {
  size_t k = n;
  for (size_t i = 0; i < n; ++i)
    if (sent[i] < limit && (k == n || sent[i] < sent[k])) k = i;
  return k;
}

// ---- TorusAlgo ----

void TorusAlgo::open(Comm& comm, const CollArgs& args) {
  reset();
  comm_ = &comm;
  args_ = args;
  tag_ = comm.tag();
  buf_ = static_cast<uint8_t*>(args.recv);
  count_ = args.count;
  esize_ = args.esize;
}

Status TorusAlgo::cut_chunks(bool input, bool uses_links) {
  if (count_ > 0 && (!buf_ || (input && !args_.input()))) return error(Code::kInvalid, "%s: null buffer", what_);
  const NetStack& net = comm_->net();
  // Two divisions, the same for every repetition of an operation: kept.
  if (net.max_body() != cut_body_ || esize_ != cut_esize_) {
    cut_body_ = net.max_body();
    cut_esize_ = esize_;
    cut_per_packet_ = elems_per_packet(net, esize_);
    cut_valid_ = false;
  }
  per_packet_ = cut_per_packet_;
  if (per_packet_ == 0 && count_ > 0 && uses_links)
    return error(Code::kInvalid, "%s: ports carry %u-byte bodies, too small for one %zu-byte element", what_,
                 net.max_body(), esize_);
  if (!cut_valid_ || count_ != cut_count_) {
    cut_valid_ = true;
    cut_count_ = count_;
    cut_chunks_ = chunks_for(count_, per_packet_);
  }
  chunks_ = cut_chunks_;
  return Status::ok();
}

void TorusAlgo::copy_input() const {
  if (!args_.in_place() && bytes()) std::memmove(buf_, args_.send, bytes());
}

Packet* TorusAlgo::chunk_packet(int dim, uint16_t step, uint32_t c, const uint8_t* base) const {
  return make_packet(*comm_, tag_, algo_, static_cast<uint8_t>(dim), step, c, base + chunk_offset(c), chunk_size(c),
                     esize_, count_);
}

bool TorusAlgo::inject_chunk(int dim, uint16_t step, uint32_t c, const uint8_t* base, const schedule::LineSend& s) {
  NetStack& net = comm_->net();
  if (net.inject_queued() >= kInjectWindow) {
    ++comm_->counters().tx_blocked;
    return false;
  }
  Packet* p = chunk_packet(dim, step, c, base);
  if (!p) return false;  // pool empty: try again on the next poll
  Coord dst = net.me();
  dst.c[dim] = s.dst;
  set_dst(p, dst);
  SendOptions opt;
  opt.deposit = true;
  opt.hints = static_cast<uint8_t>(1u << static_cast<int>(s.dir));
  if (!net.send(p, opt)) {
    p->free();
    ++comm_->counters().tx_blocked;
    return false;
  }
  return true;
}

Packet* TorusAlgo::take(uint16_t port, Parsed* pk, bool* moved) {
  Packet* p = op_head(*comm_, port, tag_, moved);
  if (!p) return nullptr;
  comm_->inbox_pop(port);
  *moved = true;
  Status st = parse(p, algo_, esize_, pk);
  if (!st) {
    p->free();
    fail_with(st);
    return nullptr;
  }
  return p;
}

void TorusAlgo::drop_malformed(Packet* p) {
  ++comm_->counters().rx_malformed;
  p->free();
}

bool TorusAlgo::sizes_agree(Packet* p, const Parsed& pk, const char* from_dir) {
  if (pk.total != count_) {
    p->free();
    fail(size_mismatch(what_, pk.src, pk.total, comm_->net().me(), count_));
    return false;
  }
  const uint32_t want = chunk_size(pk.chunk);
  if (pk.count != want) {  // same totals but another packet size: ports differ
    p->free();
    fail(error(Code::kInvalid, "%s: packet %u from %s%s carries %u elements, expected %u (count %llu)", what_,
               pk.chunk, from_dir ? "" : "node ", from_dir ? from_dir : pk.src.to_string().c_str(), pk.count, want,
               static_cast<unsigned long long>(count_)));
    return false;
  }
  return true;
}

bool TorusAlgo::next_phase(size_t* phase, size_t phases) {
  if (++*phase < phases) return true;
  finish(Status::ok());
  return false;
}

void TorusAlgo::fail_with(const Status& st) { fail(error(st.code(), "%s: %s", what_, st.message().c_str())); }

Status TorusAlgo::no_port(Dir dir) const { return error(Code::kInternal, "%s: no port for %s", what_, dir_name(dir)); }

}  // namespace toroid::torus_coll
