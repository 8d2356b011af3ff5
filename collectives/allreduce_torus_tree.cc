#include "collectives/allreduce_torus_tree.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "collectives/coll_wire.h"
#include "collectives/comm.h"
#include "collectives/schedule/torus_ring.h"
#include "netstack/tree/combine.h"
#include "netstack/wire/torus_header.h"

namespace toroid {

using wire::CollHeader;
using wire::TorusHeader;

namespace {
constexpr uint32_t kHeaders = sizeof(TorusHeader) + sizeof(CollHeader);
}

void TorusTreeAllreduce::start(Comm* comm, CombineEngine* tree, uint8_t tree_class, int64_t* data, uint32_t count) {
  comm_ = comm;
  tree_ = tree;
  cls_ = tree_class;
  data_ = data;
  count_ = count;
  const uint32_t body = comm->net().max_body();
  per_packet_ = schedule::elems_per_packet(body > kHeaders ? body - kHeaders : 0, sizeof(int64_t));
  chunks_ = schedule::packets_per_step(count, per_packet_);
  roles_ = schedule::torus_middle_roles(comm->net().me(), comm->net().dims());
  phase_ = 0;
  chunk_ = 0;
  chunk_ready_ = false;
  tree_started_ = false;
  max_incoming_ = 0;
  done_ = false;
  status_ = Status::ok();
  if (!tree_ || !tree_->has_tree(cls_)) {
    fail(error(Code::kUnsupported, "allreduce torus-tree: no combine tree class %u on this node", cls_));
    return;
  }
  if (per_packet_ == 0 && count > 0 && !roles_.empty()) {
    fail(error(Code::kInvalid, "allreduce torus-tree: ports carry %u-byte bodies, too small for one element", body));
    return;
  }
  const bool holder = comm->net().me() == schedule::torus_middle_root(comm->net().dims());
  zeros_.assign(holder ? 0 : count, 0);
}

void TorusTreeAllreduce::fail(Status st) {
  abort();
  status_ = std::move(st);
  done_ = true;
}

void TorusTreeAllreduce::abort() { done_ = true; }

// One chunk at a time: take the chunk from each incoming stream (in order on
// its link), add it in, then pass the partial on towards the middle.
bool TorusTreeAllreduce::torus_phase() {
  bool moved = false;
  NetStack& net = comm_->net();
  while (phase_ < roles_.size()) {
    const schedule::MiddleRole& r = roles_[phase_];
    if (!r.active) {  // this node's share is in its line's middle already
      phase_ = roles_.size();
      break;
    }
    while (chunk_ < chunks_) {
      if (!chunk_ready_) {
        Packet* in[2] = {nullptr, nullptr};
        const Dir from[2] = {dir_of(r.dim, false), dir_of(r.dim, true)};
        const bool want[2] = {r.recv_minus, r.recv_plus};
        bool have_all = true;
        for (int k = 0; k < 2; ++k) {
          if (!want[k]) continue;
          const int port = net.port_of(from[k]);
          Packet* p = port < 0 ? nullptr : comm_->inbox_head(static_cast<uint16_t>(port));
          if (!p) { have_all = false; continue; }
          const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
          const auto delta = static_cast<int32_t>(th->tag.get() - comm_->tag());
          if (delta > 0) { have_all = false; continue; }  // a later operation's packet
          if (delta < 0 || p->len < kHeaders) {           // stale or short: drop, look again
            comm_->inbox_pop(static_cast<uint16_t>(port));
            ++(delta < 0 ? comm_->counters().rx_stale : comm_->counters().rx_malformed);
            p->free();
            return true;
          }
          in[k] = p;
        }
        if (!have_all) return moved;
        uint32_t incoming = 0;
        const uint32_t first = chunk_ * per_packet_;
        const uint32_t n = count_ == 0 ? 0 : std::min(per_packet_, count_ - first);
        for (int k = 0; k < 2; ++k) {
          if (!in[k]) continue;
          const auto* ch = reinterpret_cast<const CollHeader*>(in[k]->data() + sizeof(TorusHeader));
          if (ch->algo != static_cast<uint8_t>(wire::CollAlgo::kTorusTree) || ch->dim != r.dim ||
              ch->chunk.get() != chunk_ || ch->count.get() != n || in[k]->len != kHeaders + n * sizeof(int64_t)) {
            fail(error(Code::kInvalid,
                       "allreduce torus-tree: packet from %s does not match (dim %u chunk %u count %u, expected dim "
                       "%d chunk %u count %u): mismatched sizes across nodes?",
                       dir_name(from[k]), ch->dim, ch->chunk.get(), ch->count.get(), r.dim, chunk_, n));
            return true;
          }
          const uint8_t* src = in[k]->data() + kHeaders;
          for (uint32_t i = 0; i < n; ++i) {
            int64_t v;
            std::memcpy(&v, src + i * sizeof v, sizeof v);
            data_[first + i] = static_cast<int64_t>(static_cast<uint64_t>(data_[first + i]) + static_cast<uint64_t>(v));
          }
          comm_->inbox_pop(static_cast<uint16_t>(net.port_of(from[k])));
          in[k]->free();
          ++incoming;
          ++comm_->counters().rx_packets;
        }
        max_incoming_ = std::max(max_incoming_, incoming);
        chunk_ready_ = true;
        moved = true;
      }
      if (r.sends) {
        if (!net.can_send_dir(r.send_dir)) {
          ++comm_->counters().tx_blocked;
          return moved;
        }
        Packet* p = net.alloc();
        if (!p) return moved;
        const uint32_t first = chunk_ * per_packet_;
        const uint32_t n = count_ == 0 ? 0 : std::min(per_packet_, count_ - first);
        uint8_t* base = p->append(kHeaders + n * sizeof(int64_t));
        auto* th = reinterpret_cast<TorusHeader*>(base);
        std::memset(th, 0, sizeof *th);
        th->type = static_cast<uint8_t>(wire::PacketType::kCollective);
        th->context.set(comm_->context());
        th->tag.set(comm_->tag());
        auto* ch = reinterpret_cast<CollHeader*>(base + sizeof(TorusHeader));
        ch->algo = static_cast<uint8_t>(wire::CollAlgo::kTorusTree);
        ch->dim = static_cast<uint8_t>(r.dim);
        ch->step.set(0);
        ch->chunk.set(chunk_);
        ch->count.set(n);
        if (n) std::memcpy(base + kHeaders, data_ + first, n * sizeof(int64_t));
        if (!net.send_dir(r.send_dir, p)) {
          p->free();
          return moved;
        }
      }
      chunk_ready_ = false;
      ++chunk_;
      moved = true;
    }
    // A node that sent its partial on is done with the torus: the total
    // gathers at the middles, and the tree brings it back.
    if (r.sends) phase_ = roles_.size();
    else ++phase_;
    chunk_ = 0;
  }
  return moved;
}

bool TorusTreeAllreduce::tree_phase() {
  if (!tree_started_) {
    const void* in = zeros_.empty() ? static_cast<const void*>(data_) : zeros_.data();
    Status st = tree_->start(cls_, AluOp::kOr, AluType::kUnsigned, sizeof(int64_t), in, data_, count_);
    if (!st) {
      if (st.code() == Code::kBusy) return false;  // the class is still busy: try again
      fail(st);
      return true;
    }
    tree_started_ = true;
    return true;
  }
  Status st;
  if (!tree_->test(cls_, &st)) return false;
  if (!st) fail(error(st.code(), "allreduce torus-tree broadcast: %s", st.message().c_str()));
  done_ = true;
  return true;
}

bool TorusTreeAllreduce::progress() {
  if (done_) return false;
  bool moved = false;
  if (phase_ < roles_.size()) moved |= torus_phase();
  if (done_) return true;
  if (phase_ >= roles_.size()) moved |= tree_phase();
  return moved;
}

std::string TorusTreeAllreduce::waiting_for() const {
  char buf[160];
  if (phase_ < roles_.size())
    snprintf(buf, sizeof buf, "torus phase dim %c, chunk %u/%u", "xyz"[roles_[phase_].dim], chunk_, chunks_);
  else
    snprintf(buf, sizeof buf, "the tree broadcast on class %u", cls_);
  return buf;
}

}  // namespace toroid
