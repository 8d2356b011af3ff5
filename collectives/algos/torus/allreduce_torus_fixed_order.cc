#include "collectives/algos/torus/allreduce_torus_fixed_order.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/comm.h"

namespace toroid {

using torus_coll::Parsed;

namespace {
constexpr const char* kWhat = "allreduce torus-fixed-order";
}

Status TorusFixedOrderAllreduce::start(Comm& comm, const CollArgs& args) {
  reset();
  comm_ = &comm;
  args_ = args;
  tag_ = comm.tag();
  out_ = static_cast<uint8_t*>(args.recv);
  count_ = args.count;
  esize_ = args.esize;
  const Coord me = comm.net().me();
  phases_ = schedule::torus_fixed_order_phases(me, comm.net().dims());
  phase_ = 0;
  for (int d = 0; d < kDims; ++d) injected_[d] = received_[d] = 0;
  if (count_ > 0 && (!out_ || !args.input())) return error(Code::kInvalid, "%s: null buffer", kWhat);
  per_packet_ = torus_coll::elems_per_packet(comm.net(), esize_);
  if (per_packet_ == 0 && count_ > 0 && !phases_.empty())
    return error(Code::kInvalid, "%s: ports carry %u-byte bodies, too small for one %zu-byte element", kWhat,
                 comm.net().max_body(), esize_);
  chunks_ = torus_coll::chunks_for(count_, per_packet_);
  uint32_t nmax = 1;
  for (const auto& ph : phases_) nmax = std::max(nmax, ph.n);
  const size_t bytes = static_cast<size_t>(count_) * esize_;
  if (!args.in_place() && bytes) std::memmove(out_, args.send, bytes);
  if (phases_.empty()) {
    finish(Status::ok());
    return Status::ok();
  }
  tmp_.resize(static_cast<size_t>(nmax) * bytes);
  got_.assign(chunks_, 0);
  seen_.assign(static_cast<size_t>(nmax) * chunks_, 0);
  begin_phase();
  return Status::ok();
}

void TorusFixedOrderAllreduce::begin_phase() {
  const auto& ph = phases_[phase_];
  const size_t bytes = static_cast<size_t>(count_) * esize_;
  if (bytes) std::memcpy(slot(ph.pos), out_, bytes);
  std::fill(got_.begin(), got_.end(), 0);
  std::fill(seen_.begin(), seen_.end(), 0);
  sent_[0] = sent_[1] = 0;
  combined_ = 0;
  phase_received_ = 0;
}

// Both directions advance chunk by chunk, plus then minus, while the
// injection queue has room (a window of our packets).
bool TorusFixedOrderAllreduce::inject() {
  const auto& ph = phases_[phase_];
  NetStack& net = comm_->net();
  bool moved = false;
  for (;;) {
    size_t k = ph.sends.size();
    for (size_t i = 0; i < ph.sends.size(); ++i)
      if (sent_[i] < chunks_ && (k == ph.sends.size() || sent_[i] < sent_[k])) k = i;
    if (k == ph.sends.size()) return moved;  // everything injected
    if (net.inject_queued() >= torus_coll::kInjectWindow) {
      ++comm_->counters().tx_blocked;
      return moved;
    }
    const schedule::LineSend& s = ph.sends[k];
    const uint32_t c = sent_[k];
    const uint32_t n = torus_coll::chunk_elems(count_, per_packet_, c);
    Packet* p = torus_coll::make_packet(*comm_, tag_, wire::CollAlgo::kTorusFixedOrder, static_cast<uint8_t>(ph.dim),
                                        static_cast<uint16_t>(ph.pos), c,
                                        slot(ph.pos) + static_cast<size_t>(c) * per_packet_ * esize_, n, esize_,
                                        count_);
    if (!p) return moved;  // pool empty: try again on the next poll
    Coord dst = net.me();
    dst.c[ph.dim] = s.dst;
    torus_coll::set_dst(p, dst);
    SendOptions opt;
    opt.deposit = true;
    opt.hints = static_cast<uint8_t>(1u << static_cast<int>(s.dir));
    if (!net.send(p, opt)) {
      p->free();
      ++comm_->counters().tx_blocked;
      return moved;
    }
    ++sent_[k];
    ++injected_[ph.dim];
    moved = true;
  }
}

bool TorusFixedOrderAllreduce::consume(uint16_t port, Dir port_dir) {
  const auto& ph = phases_[phase_];
  const Coord me = comm_->net().me();
  bool moved = false;
  for (;;) {
    Packet* p = torus_coll::op_head(*comm_, port, tag_, &moved);
    if (!p) return moved;
    comm_->inbox_pop(port);
    moved = true;
    Parsed pk;
    Status st = torus_coll::parse(p, wire::CollAlgo::kTorusFixedOrder, esize_, &pk);
    if (!st) {
      p->free();
      fail(error(st.code(), "%s: %s", kWhat, st.message().c_str()));
      return true;
    }
    // The source must be on this node's line, in this phase, expected on this
    // port, with a chunk not seen yet; anything else is malformed.
    bool on_line = pk.dim == ph.dim;
    for (int d = 0; d < kDims; ++d)
      if (d != ph.dim && pk.src.c[d] != me.c[d]) on_line = false;
    const uint32_t s = pk.src.c[ph.dim];
    if (!on_line || s >= ph.n || s == ph.pos || ph.from[s].port != port_dir || pk.step != s || pk.chunk >= chunks_ ||
        seen_[static_cast<size_t>(s) * chunks_ + pk.chunk]) {
      ++comm_->counters().rx_malformed;
      p->free();
      continue;
    }
    if (pk.total != count_) {
      p->free();
      fail(torus_coll::size_mismatch(kWhat, pk.src, pk.total, me, count_));
      return true;
    }
    const uint32_t want = torus_coll::chunk_elems(count_, per_packet_, pk.chunk);
    if (pk.count != want) {  // same totals but another packet size: ports differ
      p->free();
      fail(error(Code::kInvalid, "%s: packet %u from node %s carries %u elements, expected %u (count %llu)", kWhat,
                 pk.chunk, pk.src.to_string().c_str(), pk.count, want, static_cast<unsigned long long>(count_)));
      return true;
    }
    if (want) std::memcpy(slot(s) + static_cast<size_t>(pk.chunk) * per_packet_ * esize_, pk.payload, want * esize_);
    p->free();
    seen_[static_cast<size_t>(s) * chunks_ + pk.chunk] = 1;
    ++got_[pk.chunk];
    ++phase_received_;
    ++received_[ph.dim];
    ++comm_->counters().rx_packets;
  }
}

// acc = S0; acc = acc OP S1; ... in coordinate order, the same on every node.
bool TorusFixedOrderAllreduce::combine() {
  const auto& ph = phases_[phase_];
  bool moved = false;
  while (combined_ < chunks_ && got_[combined_] == ph.n - 1) {
    const uint32_t c = combined_;
    const uint32_t n = torus_coll::chunk_elems(count_, per_packet_, c);
    if (n) {
      const size_t off = static_cast<size_t>(c) * per_packet_ * esize_;
      uint8_t* acc = out_ + off;
      std::memcpy(acc, slot(0) + off, n * esize_);
      for (uint32_t s = 1; s < ph.n; ++s) args_.red.apply(acc, slot(s) + off, n);
    }
    ++combined_;
    moved = true;
  }
  return moved;
}

bool TorusFixedOrderAllreduce::progress() {
  bool moved = false;
  while (!done_) {
    const auto& ph = phases_[phase_];
    moved |= inject();
    for (bool plus : {false, true}) {
      const Dir dir = dir_of(ph.dim, plus);
      const int port = comm_->net().port_of(dir);
      if (port < 0) {
        fail(error(Code::kInternal, "%s: no port for %s", kWhat, dir_name(dir)));
        return true;
      }
      moved |= consume(static_cast<uint16_t>(port), dir);
      if (done_) return true;
    }
    moved |= combine();
    bool all_sent = true;
    for (size_t i = 0; i < ph.sends.size(); ++i) all_sent = all_sent && sent_[i] == chunks_;
    if (!all_sent || combined_ < chunks_) return moved;
    if (++phase_ == phases_.size()) {
      finish(Status::ok());
      return true;
    }
    begin_phase();
    moved = true;
  }
  return moved;
}

std::string TorusFixedOrderAllreduce::waiting_for() const {
  if (done_ || phase_ >= phases_.size()) return "nothing";
  const auto& ph = phases_[phase_];
  const uint64_t expected = static_cast<uint64_t>(ph.n - 1) * chunks_;
  char buf[200];
  int len = snprintf(buf, sizeof buf, "dim %c: injected", "xyz"[ph.dim]);
  for (size_t i = 0; i < ph.sends.size(); ++i)
    len += snprintf(buf + len, sizeof buf - len, " %u/%u %s", sent_[i], chunks_, dir_name(ph.sends[i].dir));
  snprintf(buf + len, sizeof buf - len, ", received %llu/%llu packets, combined %u/%u chunks",
           static_cast<unsigned long long>(phase_received_), static_cast<unsigned long long>(expected), combined_,
           chunks_);
  std::string w = buf;
  // Name the first source still missing for the next chunk to combine.
  if (combined_ < chunks_) {
    for (uint32_t s = 0; s < ph.n; ++s) {
      if (s == ph.pos || seen_[static_cast<size_t>(s) * chunks_ + combined_]) continue;
      Coord src = comm_->net().me();
      src.c[ph.dim] = s;
      w += " (chunk " + std::to_string(combined_) + " from node " + src.to_string() + " via " +
           dir_name(ph.from[s].port) + ")";
      break;
    }
  }
  return w;
}

}  // namespace toroid
