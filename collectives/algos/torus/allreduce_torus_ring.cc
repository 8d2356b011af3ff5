#include "collectives/algos/torus/allreduce_torus_ring.h"

#include <cstdio>
#include <cstring>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/comm.h"

namespace toroid {

using torus_coll::Parsed;

namespace {
constexpr const char* kWhat = "allreduce torus-ring";
}

Status TorusRingAllreduce::start(Comm& comm, const CollArgs& args) {
  drop_forwards();
  reset();
  comm_ = &comm;
  args_ = args;
  tag_ = comm.tag();
  out_ = static_cast<uint8_t*>(args.recv);
  count_ = args.count;
  esize_ = args.esize;
  phases_ = schedule::torus_ring_phases(comm.net().dims());
  phase_ = 0;
  if (count_ > 0 && (!out_ || !args.input())) return error(Code::kInvalid, "%s: null buffer", kWhat);
  per_packet_ = torus_coll::elems_per_packet(comm.net(), esize_);
  if (per_packet_ == 0 && count_ > 0 && !phases_.empty())
    return error(Code::kInvalid, "%s: ports carry %u-byte bodies, too small for one %zu-byte element", kWhat,
                 comm.net().max_body(), esize_);
  chunks_ = torus_coll::chunks_for(count_, per_packet_);
  const size_t bytes = static_cast<size_t>(count_) * esize_;
  if (!args.in_place() && bytes) std::memmove(out_, args.send, bytes);
  own_.resize(bytes);
  if (phases_.empty()) {
    finish(Status::ok());
    return Status::ok();
  }
  begin_phase();
  return Status::ok();
}

void TorusRingAllreduce::begin_phase() {
  own_sent_ = 0;
  received_ = 0;
  if (!own_.empty()) std::memcpy(own_.data(), out_, own_.size());
}

void TorusRingAllreduce::drop_forwards() {
  while (fwd_head_) {
    Packet* p = fwd_head_;
    fwd_head_ = p->next;
    p->free();
  }
  fwd_tail_ = nullptr;
}

void TorusRingAllreduce::abort() {
  drop_forwards();
  done_ = true;
}

bool TorusRingAllreduce::send_own() {
  const auto& ph = phases_[phase_];
  NetStack& net = comm_->net();
  bool moved = false;
  while (own_sent_ < chunks_) {
    if (net.tx_space(ph.send_dir) == 0) {
      ++comm_->counters().tx_blocked;
      break;
    }
    const uint32_t n = torus_coll::chunk_elems(count_, per_packet_, own_sent_);
    Packet* p = torus_coll::make_packet(*comm_, tag_, wire::CollAlgo::kTorusRing, static_cast<uint8_t>(ph.dim), 0,
                                        own_sent_, own_.data() + static_cast<size_t>(own_sent_) * per_packet_ * esize_,
                                        n, esize_, count_);
    if (!p) break;
    if (!net.send_dir(ph.send_dir, p)) {
      p->free();
      break;
    }
    ++own_sent_;
    moved = true;
  }
  return moved;
}

bool TorusRingAllreduce::flush_forwards() {
  const auto& ph = phases_[phase_];
  bool moved = false;
  while (fwd_head_) {
    Packet* p = fwd_head_;
    Packet* next = p->next;
    if (!comm_->net().send_dir(ph.send_dir, p)) {
      ++comm_->counters().tx_blocked;
      break;
    }
    fwd_head_ = next;
    moved = true;
  }
  if (!fwd_head_) fwd_tail_ = nullptr;
  return moved;
}

bool TorusRingAllreduce::consume() {
  const auto& ph = phases_[phase_];
  const int port = comm_->net().port_of(ph.recv_dir);
  if (port < 0) {
    fail(error(Code::kInternal, "%s: no port for %s", kWhat, dir_name(ph.recv_dir)));
    return true;
  }
  bool moved = false;
  const uint32_t expected = ph.steps * chunks_;
  while (received_ < expected) {
    Packet* p = torus_coll::op_head(*comm_, static_cast<uint16_t>(port), tag_, &moved);
    if (!p) break;
    comm_->inbox_pop(static_cast<uint16_t>(port));
    moved = true;
    Parsed pk;
    Status st = torus_coll::parse(p, wire::CollAlgo::kTorusRing, esize_, &pk);
    if (!st) {
      p->free();
      fail(error(st.code(), "%s: %s", kWhat, st.message().c_str()));
      return true;
    }
    if (pk.dim != ph.dim || pk.step >= ph.steps || pk.chunk >= chunks_) {
      ++comm_->counters().rx_malformed;
      p->free();
      continue;
    }
    if (pk.total != count_) {
      p->free();
      fail(torus_coll::size_mismatch(kWhat, pk.src, pk.total, comm_->net().me(), count_));
      return true;
    }
    const uint32_t want = torus_coll::chunk_elems(count_, per_packet_, pk.chunk);
    if (pk.count != want) {
      p->free();
      fail(error(Code::kInvalid, "%s: packet %u from %s carries %u elements, expected %u (count %llu)", kWhat,
                 pk.chunk, dir_name(ph.recv_dir), pk.count, want, static_cast<unsigned long long>(count_)));
      return true;
    }
    ++comm_->counters().rx_packets;
    if (want) args_.red.apply(out_ + static_cast<size_t>(pk.chunk) * per_packet_ * esize_, pk.payload, want);
    ++received_;
    if (pk.step + 1u < ph.steps) {
      pk.ch->step.set(static_cast<uint16_t>(pk.step + 1));  // forward the same buffer
      p->next = nullptr;
      if (fwd_tail_) fwd_tail_->next = p;
      else fwd_head_ = p;
      fwd_tail_ = p;
    } else {
      p->free();
    }
  }
  return moved;
}

bool TorusRingAllreduce::progress() {
  bool moved = false;
  while (!done_) {
    moved |= send_own();
    moved |= consume();
    if (done_) return true;
    moved |= flush_forwards();
    if (own_sent_ < chunks_ || received_ < phases_[phase_].steps * chunks_ || fwd_head_) return moved;
    if (++phase_ == phases_.size()) {
      finish(Status::ok());
      return true;
    }
    begin_phase();
    moved = true;
  }
  return moved;
}

std::string TorusRingAllreduce::waiting_for() const {
  if (done_ || phase_ >= phases_.size()) return "nothing";
  const auto& ph = phases_[phase_];
  char buf[160];
  snprintf(buf, sizeof buf, "dim %c: sent %u/%u, received %u/%u packets from %s, %s forwards queued", "xyz"[ph.dim],
           own_sent_, chunks_, received_, ph.steps * chunks_, dir_name(ph.recv_dir), fwd_head_ ? "some" : "no");
  return buf;
}

}  // namespace toroid
