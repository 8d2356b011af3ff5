#include "collectives/allreduce_torus_ring.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "collectives/coll_wire.h"
#include "collectives/comm.h"
#include "netstack/wire/torus_header.h"

namespace toroid {

using wire::CollHeader;
using wire::TorusHeader;

namespace {
constexpr uint32_t kHeaders = sizeof(TorusHeader) + sizeof(CollHeader);
}

void TorusRingAllreduce::start(Comm* comm, int64_t* data, uint32_t count) {
  comm_ = comm;
  data_ = data;
  count_ = count;
  const uint32_t body = comm->net().max_body();
  per_packet_ = schedule::elems_per_packet(body > kHeaders ? body - kHeaders : 0, sizeof(int64_t));
  chunks_ = schedule::packets_per_step(count, per_packet_);
  phases_ = schedule::torus_ring_phases(comm->net().dims());
  phase_ = 0;
  done_ = false;
  status_ = Status::ok();
  if (per_packet_ == 0 && count > 0 && !phases_.empty()) {
    fail(error(Code::kInvalid, "allreduce: ports carry %u-byte bodies, too small for one element", body));
    return;
  }
  begin_phase();
}

void TorusRingAllreduce::begin_phase() {
  own_sent_ = 0;
  received_ = 0;
  if (phase_ >= phases_.size()) done_ = true;
}

void TorusRingAllreduce::fail(Status st) {
  abort();
  status_ = std::move(st);
  done_ = true;
}

void TorusRingAllreduce::abort() {
  while (fwd_head_) {
    Packet* p = fwd_head_;
    fwd_head_ = p->next;
    p->free();
  }
  fwd_tail_ = nullptr;
  done_ = true;
}

bool TorusRingAllreduce::send_own() {
  const auto& ph = phases_[phase_];
  NetStack& net = comm_->net();
  bool moved = false;
  while (own_sent_ < chunks_) {
    if (net.tx_space(ph.send_dir) == 0) { ++comm_->counters().tx_blocked; break; }
    Packet* p = net.alloc();
    if (!p) break;
    const uint32_t first = own_sent_ * per_packet_;
    const uint32_t n = count_ == 0 ? 0 : std::min(per_packet_, count_ - first);
    auto* th = reinterpret_cast<TorusHeader*>(p->append(sizeof(TorusHeader)));
    std::memset(th, 0, sizeof *th);
    th->type = static_cast<uint8_t>(wire::PacketType::kCollective);
    th->context.set(comm_->context());
    th->tag.set(comm_->tag());
    auto* ch = reinterpret_cast<CollHeader*>(p->append(sizeof(CollHeader)));
    ch->algo = static_cast<uint8_t>(wire::CollAlgo::kTorusRing);
    ch->dim = static_cast<uint8_t>(ph.dim);
    ch->step.set(0);
    ch->chunk.set(own_sent_);
    ch->count.set(n);
    std::memcpy(p->append(n * sizeof(int64_t)), data_ + first, n * sizeof(int64_t));
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
    if (!comm_->net().send_dir(ph.send_dir, p)) { ++comm_->counters().tx_blocked; break; }
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
    fail(error(Code::kInternal, "allreduce: no port for %s", dir_name(ph.recv_dir)));
    return false;
  }
  bool moved = false;
  const uint32_t expected = ph.steps * chunks_;
  while (received_ < expected) {
    Packet* p = comm_->inbox_head(static_cast<uint16_t>(port));
    if (!p) break;
    const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
    const auto delta = static_cast<int32_t>(th->tag.get() - comm_->tag());
    if (delta > 0) break;  // a later operation: it waits its turn
    comm_->inbox_pop(static_cast<uint16_t>(port));
    moved = true;
    if (delta < 0 || th->context.get() != comm_->context()) {
      ++comm_->counters().rx_stale;
      p->free();
      continue;
    }
    if (p->len < kHeaders) {
      ++comm_->counters().rx_malformed;
      p->free();
      continue;
    }
    auto* ch = reinterpret_cast<CollHeader*>(p->data() + sizeof(TorusHeader));
    const uint32_t chunk = ch->chunk.get();
    const uint32_t step = ch->step.get();
    const uint32_t n = ch->count.get();
    const uint32_t want = count_ == 0 ? 0 : std::min(per_packet_, count_ - std::min(count_, chunk * per_packet_));
    if (ch->algo != static_cast<uint8_t>(wire::CollAlgo::kTorusRing) ||
        ch->dim != ph.dim || step >= ph.steps || chunk >= chunks_ || p->len != kHeaders + n * sizeof(int64_t)) {
      ++comm_->counters().rx_malformed;
      p->free();
      continue;
    }
    if (n != want) {
      p->free();
      fail(error(Code::kInvalid,
                 "allreduce: mismatched sizes across nodes: packet %u from %s carries %u elements, expected %u "
                 "(count %u here)",
                 chunk, dir_name(ph.recv_dir), n, want, count_));
      return true;
    }
    ++comm_->counters().rx_packets;
    const auto* src = p->data() + kHeaders;
    int64_t* dst = data_ + static_cast<size_t>(chunk) * per_packet_;
    for (uint32_t i = 0; i < n; ++i) {
      int64_t v;
      std::memcpy(&v, src + i * sizeof v, sizeof v);
      dst[i] = static_cast<int64_t>(static_cast<uint64_t>(dst[i]) + static_cast<uint64_t>(v));
    }
    ++received_;
    if (step + 1 < ph.steps) {
      ch->step.set(static_cast<uint16_t>(step + 1));  // forward the same buffer
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
    bool step_moved = send_own();
    if (own_sent_ < chunks_) return moved | step_moved;  // the phase's data is not all out yet
    step_moved |= consume();
    if (done_) return true;
    step_moved |= flush_forwards();
    moved |= step_moved;
    if (received_ < phases_[phase_].steps * chunks_ || fwd_head_) return moved;
    ++phase_;
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
