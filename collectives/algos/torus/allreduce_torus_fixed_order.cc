#include "collectives/algos/torus/allreduce_torus_fixed_order.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/comm.h"

namespace toroid {

Status TorusFixedOrderAllreduce::start(Comm& comm, const CollArgs& args) {
  open(comm, args);
  if (!schedule_holds(comm.net().me(), comm.net().dims()))
    phases_ = schedule::torus_fixed_order_phases(comm.net().me(), comm.net().dims());
  phase_ = 0;
  for (int d = 0; d < kDims; ++d) injected_[d] = received_[d] = 0;
  if (Status st = cut_chunks(true, !phases_.empty()); !st) return st;
  uint32_t nmax = 1;
  for (const auto& ph : phases_) nmax = std::max(nmax, ph.n);
  copy_input();
  if (phases_.empty()) {
    finish(Status::ok());
    return Status::ok();
  }
  tmp_.resize(static_cast<size_t>(nmax) * bytes());
  got_.assign(chunks_, 0);
  seen_.assign(static_cast<size_t>(nmax) * chunks_, 0);
  begin_phase();
  return Status::ok();
}

void TorusFixedOrderAllreduce::begin_phase() {
  const auto& ph = phases_[phase_];
  if (bytes()) std::memcpy(slot(ph.pos), buf_, bytes());
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
  bool moved = false;
  for (;;) {
    const size_t k = torus_coll::furthest_behind(sent_, ph.sends.size(), chunks_);
    if (k == ph.sends.size()) return moved;  // everything injected
    if (!inject_chunk(ph.dim, static_cast<uint16_t>(ph.pos), sent_[k], slot(ph.pos), ph.sends[k])) return moved;
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
    Parsed pk;
    Packet* p = take(port, &pk, &moved);
    if (!p) return moved;  // (true when it failed the operation)
    // The source must be on this node's line, in this phase, expected on this
    // port, with a chunk not seen yet; anything else is malformed.
    bool on_line = pk.dim == ph.dim;
    for (int d = 0; d < kDims; ++d)
      if (d != ph.dim && pk.src.c[d] != me.c[d]) on_line = false;
    const uint32_t s = pk.src.c[ph.dim];
    if (!on_line || s >= ph.n || s == ph.pos || ph.from[s].port != port_dir || pk.step != s || pk.chunk >= chunks_ ||
        seen_[static_cast<size_t>(s) * chunks_ + pk.chunk]) {
      drop_malformed(p);
      continue;
    }
    if (!sizes_agree(p, pk)) return true;
    if (pk.count) std::memcpy(slot(s) + chunk_offset(pk.chunk), pk.payload, pk.count * esize_);
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
    const uint32_t n = chunk_size(c);
    if (n) {
      const size_t off = chunk_offset(c);
      uint8_t* acc = buf_ + off;
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
        fail(no_port(dir));
        return true;
      }
      moved |= consume(static_cast<uint16_t>(port), dir);
      if (done_) return true;
    }
    moved |= combine();
    bool all_sent = true;
    for (size_t i = 0; i < ph.sends.size(); ++i) all_sent = all_sent && sent_[i] == chunks_;
    if (!all_sent || combined_ < chunks_) return moved;
    if (!next_phase(&phase_, phases_.size())) return true;
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
