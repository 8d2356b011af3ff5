#include "collectives/algos/torus/allreduce_torus_tree.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/comm.h"
#include "netstack/tree/combine.h"

namespace toroid {

namespace {
constexpr uint32_t kTreeWidth = 8;  // bytes per combine-network operand of the broadcast
}

Status TorusTreeAllreduce::start(Comm& comm, const CollArgs& args) {
  open(comm, args);
  tree_ = comm.tree();
  cls_ = comm.tree_class();
  const NetStack& net = comm.net();
  if (!schedule_holds(net.me(), net.dims())) roles_ = schedule::torus_middle_roles(net.me(), net.dims());
  holder_ = net.me() == schedule::torus_middle_root(net.dims());
  phase_ = 0;
  chunk_ = 0;
  chunk_ready_ = false;
  tree_started_ = false;
  max_incoming_ = 0;
  if (!tree_ || !tree_->has_tree(cls_))
    return error(Code::kUnsupported, "%s: no combine tree class %u on this node", what_, cls_);
  if (Status st = cut_chunks(true, !roles_.empty()); !st) return st;
  const uint64_t operands = (bytes() + kTreeWidth - 1) / kTreeWidth;
  if (operands > UINT32_MAX) return error(Code::kOutOfRange, "%s: %zu bytes are too many for the tree", what_, bytes());
  copy_input();
  stage_.resize(operands * kTreeWidth);
  return Status::ok();
}

// One chunk at a time: take the chunk from each incoming stream (in order on
// its link), combine it in, then pass the partial on towards the middle.
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
      const uint32_t n = chunk_size(chunk_);
      const size_t off = chunk_offset(chunk_);
      if (!chunk_ready_) {
        const Dir from[2] = {dir_of(r.dim, false), dir_of(r.dim, true)};
        const bool want[2] = {r.recv_minus, r.recv_plus};
        Packet* in[2] = {nullptr, nullptr};
        bool have_all = true;
        for (int k = 0; k < 2; ++k) {
          if (!want[k]) continue;
          const int port = net.port_of(from[k]);
          if (port >= 0) in[k] = torus_coll::op_head(*comm_, static_cast<uint16_t>(port), tag_, &moved);
          if (!in[k]) have_all = false;
        }
        if (!have_all) return moved;
        uint32_t incoming = 0;
        for (int k = 0; k < 2; ++k) {  // minus first, then plus: a fixed order
          if (!in[k]) continue;
          Parsed pk;
          Status st = torus_coll::parse(in[k], algo_, esize_, &pk);
          if (st && pk.total != count_) st = torus_coll::size_mismatch(what_, pk.src, pk.total, net.me(), count_);
          if (st && (pk.dim != r.dim || pk.chunk != chunk_ || pk.count != n))
            st = error(Code::kInvalid, "packet from %s does not match (dim %u chunk %u count %u, expected dim %d chunk "
                       "%u count %u)", dir_name(from[k]), pk.dim, pk.chunk, pk.count, r.dim, chunk_, n);
          if (!st) {
            fail_with(st);
            return true;
          }
          if (n) args_.red.apply(buf_ + off, pk.payload, n);
          comm_->inbox_pop(static_cast<uint16_t>(net.port_of(from[k])));
          in[k]->free();
          ++incoming;
          ++comm_->counters().rx_packets;
        }
        max_incoming_ = std::max(max_incoming_, incoming);
        CollCounters& cc = comm_->counters();
        cc.max_incoming_per_step = std::max<uint64_t>(cc.max_incoming_per_step, incoming);
        chunk_ready_ = true;
        moved = true;
      }
      if (r.sends) {
        if (!net.can_send_dir(r.send_dir)) {
          ++comm_->counters().tx_blocked;
          return moved;
        }
        Packet* p = chunk_packet(r.dim, 0, chunk_, buf_);
        if (!p) return moved;
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
    std::fill(stage_.begin(), stage_.end(), 0);
    if (holder_ && bytes()) std::memcpy(stage_.data(), buf_, bytes());
    Status st = tree_->start(cls_, AluOp::kOr, AluType::kUnsigned, kTreeWidth, stage_.data(), stage_.data(),
                             static_cast<uint32_t>(stage_.size() / kTreeWidth), CombineEngine::op_id(tag_, 0));
    if (!st) {
      if (st.code() == Code::kBusy) return false;  // the class is still busy: try again
      fail(error(st.code(), "%s broadcast: %s", what_, st.message().c_str()));
      return true;
    }
    tree_started_ = true;
    return true;
  }
  Status st;
  if (!tree_->test(cls_, &st)) return false;
  if (!st) {
    fail(error(st.code(), "%s broadcast: %s", what_, st.message().c_str()));
    return true;
  }
  if (bytes()) std::memcpy(buf_, stage_.data(), bytes());
  finish(Status::ok());
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

void TorusTreeAllreduce::abort() {
  if (!done_ && tree_started_ && tree_) tree_->cancel(cls_, error(Code::kAborted, "torus-tree: abandoned"));
  CollAlgo::abort();
}

}  // namespace toroid
