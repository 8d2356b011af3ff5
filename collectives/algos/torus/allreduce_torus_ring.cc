#include "collectives/algos/torus/allreduce_torus_ring.h"

#include <cstdio>
#include <cstring>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/comm.h"

namespace toroid {

Status TorusRingAllreduce::start(Comm& comm, const CollArgs& args) {
  drop_forwards();
  open(comm, args);
  if (!schedule_holds(comm.net().me(), comm.net().dims())) phases_ = schedule::torus_ring_phases(comm.net().dims(), comm.net().me());
  phase_ = 0;
  if (Status st = cut_chunks(true, !phases_.empty()); !st) return st;
  copy_input();
  own_.resize(bytes());
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
  if (!own_.empty()) std::memcpy(own_.data(), buf_, own_.size());
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
    Packet* p = chunk_packet(ph.dim, 0, own_sent_, own_.data());
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
    fail(no_port(ph.recv_dir));
    return true;
  }
  bool moved = false;
  const uint32_t expected = ph.steps * chunks_;
  while (received_ < expected) {
    Parsed pk;
    Packet* p = take(static_cast<uint16_t>(port), &pk, &moved);
    if (!p) return moved;  // (true when it failed the operation)
    if (pk.dim != ph.dim || pk.step >= ph.steps || pk.chunk >= chunks_) {
      drop_malformed(p);
      continue;
    }
    if (!sizes_agree(p, pk, dir_name(ph.recv_dir))) return true;
    ++comm_->counters().rx_packets;
    if (pk.count) args_.red.apply(buf_ + chunk_offset(pk.chunk), pk.payload, pk.count);
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
    if (!next_phase(&phase_, phases_.size())) return true;
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
