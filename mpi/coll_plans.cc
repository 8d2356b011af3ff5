// The MPI layer's plans: the one-step exchange of the vector collectives,
// and reductions that combine in rank order (non-commutative user
// operations, types the library has no kernel for), with scans.
#include <algorithm>
#include <atomic>

#include "collectives/schedule/generic.h"
#include "mpi/coll_ops.h"
#include "mpi/datatype.h"

namespace toroid::mpi {

using schedule::Act;
using schedule::Buf;
using schedule::Copy;
using schedule::Plan;
using schedule::Recv;
using schedule::Send;
using schedule::Step;

namespace {
uint64_t g_plan_serial = 0;  // every plan is new to the runner's plan cache
}

PlanOp::PlanOp() { args.seed = ++g_plan_serial | (uint64_t{1} << 63); }

Status PlanOp::start(MPI_Comm c) { return c->coll->start_custom(args, &algo, name); }

Status PlanOp::done(MPI_Comm c, const Status& st) {
  (void)c;
  if (!st) return st;
  for (const Unpack& u : unpacks)
    unpack(out.data() + u.off, u.count * u.type->size, u.buf, u.count, u.type);
  return st;
}

// ---- the exchange ----

void Exchange::send(int peer, const void* buf, MPI_Count count, MPI_Datatype t) {
  sends_.push_back(Blk{peer, const_cast<uint8_t*>(static_cast<const uint8_t*>(buf)), count, t});
}

void Exchange::recv(int peer, void* buf, MPI_Count count, MPI_Datatype t) {
  recvs_.push_back(Blk{peer, static_cast<uint8_t*>(buf), count, t});
}

int Exchange::build(PlanOp* op, CollKind kind) {
  op->args.kind = kind;
  op->args.esize = 1;
  op->args.count = 0;
  bool stage_in = force_stage_in_, stage_out = false;
  for (const Blk& b : sends_) stage_in |= !b.type->contig && b.count > 0;
  for (const Blk& b : recvs_) stage_out |= !b.type->contig && b.count > 0;
  // Offsets of each block in kIn / kOut: packed one after another, or in
  // place relative to the lowest byte any block touches.
  auto place = [](std::vector<Blk>& blks, bool staged, std::vector<int64_t>* off, uint8_t** base) {
    off->assign(blks.size(), 0);
    if (staged) {
      int64_t at = 0;
      for (size_t i = 0; i < blks.size(); ++i) {
        (*off)[i] = at;
        at += blks[i].count * blks[i].type->size;
      }
      *base = nullptr;
      return;
    }
    uint8_t* lo = nullptr;
    for (const Blk& b : blks)
      if (b.count > 0 && b.type->size > 0) {
        uint8_t* p = contig_base(b.buf, b.type);
        if (!lo || p < lo) lo = p;
      }
    for (size_t i = 0; i < blks.size(); ++i)
      if (blks[i].count > 0 && blks[i].type->size > 0) (*off)[i] = contig_base(blks[i].buf, blks[i].type) - lo;
    *base = lo;
  };
  std::vector<int64_t> soff, roff;
  uint8_t *sbase = nullptr, *rbase = nullptr;
  place(sends_, stage_in, &soff, &sbase);
  place(recvs_, stage_out, &roff, &rbase);
  if (stage_in) {
    int64_t total = 0;
    for (const Blk& b : sends_) total += b.count * b.type->size;
    op->in.resize(static_cast<size_t>(total));
    for (size_t i = 0; i < sends_.size(); ++i)
      pack(sends_[i].buf, sends_[i].count, sends_[i].type, op->in.data() + soff[i]);
    sbase = op->in.data();
  }
  if (stage_out) {
    int64_t total = 0;
    for (const Blk& b : recvs_) total += b.count * b.type->size;
    op->out.resize(static_cast<size_t>(total));
    for (size_t i = 0; i < recvs_.size(); ++i)
      op->unpacks.push_back(PlanOp::Unpack{static_cast<uint64_t>(roff[i]), recvs_[i].buf, recvs_[i].count, recvs_[i].type});
    rbase = op->out.data();
  }
  // kIn must never alias kOut by accident: a plan with no sends reads nothing.
  static uint8_t nothing;
  op->args.send = sbase ? sbase : &nothing;
  op->args.recv = rbase ? rbase : &nothing;
  Step st;
  const int me = comm_->rank;
  for (size_t i = 0; i < sends_.size(); ++i) {
    const Blk& b = sends_[i];
    if (b.peer == MPI_PROC_NULL) continue;
    const auto bytes = static_cast<uint64_t>(b.count * b.type->size);
    if (b.peer == me && !comm_->inter) {
      // The matching receive of oneself: copied locally.
      for (size_t k = 0; k < recvs_.size(); ++k) {
        const Blk& r = recvs_[k];
        if (r.peer != me || r.buf == nullptr) continue;
        const auto rbytes = static_cast<uint64_t>(r.count * r.type->size);
        if (rbytes != bytes)
          return raise(comm_, MPI_ERR_TRUNCATE, "this rank sends itself %llu bytes but receives %llu",
                       static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(rbytes));
        st.before.push_back(Copy{Buf::kIn, static_cast<uint64_t>(soff[i]), Buf::kOut, static_cast<uint64_t>(roff[k]), bytes});
        recvs_[k].buf = nullptr;  // used
        break;
      }
      continue;
    }
    st.sends.push_back(Send{static_cast<uint32_t>(b.peer), Buf::kIn, static_cast<uint64_t>(soff[i]), bytes});
  }
  for (size_t i = 0; i < recvs_.size(); ++i) {
    const Blk& b = recvs_[i];
    if (b.peer == MPI_PROC_NULL || (b.peer == me && !comm_->inter && b.buf == nullptr)) continue;
    if (b.peer == me && !comm_->inter)
      return raise(comm_, MPI_ERR_INTERN, "a receive from oneself without a matching send");
    st.recvs.push_back(Recv{static_cast<uint32_t>(b.peer), Buf::kOut, static_cast<uint64_t>(roff[i]),
                            static_cast<uint64_t>(b.count * b.type->size), Act::kCopy});
  }
  op->algo.plan = Plan{};
  if (!st.sends.empty() || !st.recvs.empty()) op->algo.plan.steps.push_back(std::move(st));
  else op->algo.plan.finish = std::move(st.before);
  return MPI_SUCCESS;
}

// ---- ordered reductions ----

namespace {

void reduce_to_last(Plan& p, uint32_t n, uint32_t rank, uint64_t count) {
  // Every rank starts from its input in the accumulator; then a binomial
  // tree towards rank n-1 over j = n-1-rank: at step m, j with lowest bit m
  // sends its partial (ranks below and at it) to rank + m, which puts it in
  // front of its own (kernel: dst = src OP dst).
  p.tmp_elems = std::max<uint64_t>(p.tmp_elems, count);
  Step first;
  first.before.push_back(Copy{Buf::kIn, 0, Buf::kTmp, 0, count});
  p.steps.push_back(std::move(first));
  const uint32_t j = n - 1 - rank;
  for (uint32_t m = 1; m < n; m <<= 1) {
    Step st;
    if ((j & m) && !(j & (m - 1))) {
      st.sends.push_back(Send{rank + m, Buf::kTmp, 0, count});
      p.steps.push_back(std::move(st));
      return;
    }
    if (!(j & (2 * m - 1)) && j + m < n) {
      st.recvs.push_back(Recv{rank - m, Buf::kTmp, 0, count, Act::kReduce});
      p.steps.push_back(std::move(st));
    }
  }
}

}  // namespace

Plan ordered_reduce_plan(uint32_t n, uint32_t rank, uint32_t root, uint64_t count) {
  Plan p;
  reduce_to_last(p, n, rank, count);
  const uint32_t last = n - 1;
  if (root == last) {
    if (rank == last) p.finish.push_back(Copy{Buf::kTmp, 0, Buf::kOut, 0, count});
    return p;
  }
  Step st;
  if (rank == last) st.sends.push_back(Send{root, Buf::kTmp, 0, count});
  if (rank == root) st.recvs.push_back(Recv{last, Buf::kOut, 0, count, Act::kCopy});
  if (!st.sends.empty() || !st.recvs.empty()) p.steps.push_back(std::move(st));
  return p;
}

Plan ordered_allreduce_plan(uint32_t n, uint32_t rank, uint64_t count) {
  Plan p;
  reduce_to_last(p, n, rank, count);
  Plan b = schedule::binomial_bcast_plan(n, rank, n - 1, count);
  if (rank == n - 1) {
    Step st;
    st.before.push_back(Copy{Buf::kTmp, 0, Buf::kOut, 0, count});
    p.steps.push_back(std::move(st));
  }
  for (auto& s : b.steps) p.steps.push_back(std::move(s));
  return p;
}

Plan ordered_reduce_scatter_plan(uint32_t n, uint32_t rank, const std::vector<uint64_t>& counts) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  Plan p;
  reduce_to_last(p, n, rank, total);
  const uint32_t last = n - 1;
  Step st;
  uint64_t at = 0;
  for (uint32_t r = 0; r < n; ++r) {
    if (rank == last) {
      if (r == last) st.before.push_back(Copy{Buf::kTmp, at, Buf::kOut, 0, counts[r]});
      else st.sends.push_back(Send{r, Buf::kTmp, at, counts[r]});
    } else if (r == rank) {
      st.recvs.push_back(Recv{last, Buf::kOut, 0, counts[r], Act::kCopy});
    }
    at += counts[r];
  }
  p.steps.push_back(std::move(st));
  return p;
}

Plan scan_plan(uint32_t n, uint32_t rank, uint64_t count) {
  // A pipeline: rank i puts rank i-1's prefix in front of its own value and
  // passes the result on (rank order for any operation).
  Plan p;
  Step a;
  a.before.push_back(Copy{Buf::kIn, 0, Buf::kOut, 0, count});
  if (rank > 0) a.recvs.push_back(Recv{rank - 1, Buf::kOut, 0, count, Act::kReduce});
  p.steps.push_back(std::move(a));
  if (rank + 1 < n) {
    Step b;
    b.sends.push_back(Send{rank + 1, Buf::kOut, 0, count});
    p.steps.push_back(std::move(b));
  }
  return p;
}

Plan exscan_plan(uint32_t n, uint32_t rank, uint64_t count) {
  // Rank i receives rank i-1's inclusive prefix twice: once as its result,
  // once folded into its own value for rank i+1. Rank 0's result is left
  // as it was (undefined by MPI).
  Plan p;
  p.tmp_elems = count;
  Step a;
  a.before.push_back(Copy{Buf::kIn, 0, Buf::kTmp, 0, count});
  if (rank > 0) {
    a.recvs.push_back(Recv{rank - 1, Buf::kOut, 0, count, Act::kCopy});
    a.recvs.push_back(Recv{rank - 1, Buf::kTmp, 0, count, Act::kReduce});
  }
  p.steps.push_back(std::move(a));
  if (rank + 1 < n) {
    Step b;
    b.sends.push_back(Send{rank + 1, Buf::kTmp, 0, count});
    b.sends.push_back(Send{rank + 1, Buf::kTmp, 0, count});
    p.steps.push_back(std::move(b));
  }
  return p;
}

}  // namespace toroid::mpi
