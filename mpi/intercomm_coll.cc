// Collectives on intercommunicators. Every member of both groups takes part
// in each one on the library communicator over both groups, so they keep
// the order the program started them in and share the queue, deadlines and
// non-blocking forms of every other collective. Each is one or two rounds
// of this library's exchange plans (coll_ops.h), a message per pair:
// - bcast, gather, scatter, allgather, alltoall (and v, w): one round, each
//   block straight between the member that has it and the one that wants it;
// - reduce: the root receives every remote input and combines them in the
//   remote group's rank order (any operation, commutative or not);
// - allreduce, reduce_scatter(_block): the same at local rank 0 (each
//   group's combiner gets the other group's inputs), then a second round
//   hands the result (or each member's block of it) to its group.
// The combiner holds one input per remote member: memory grows with the
// remote group's size, which suits the group sizes intercommunicators are
// made for here (the library's tree and torus algorithms serve the
// intracommunicators).
#include "mpi/intercomm_coll.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "mpi/coll_ops.h"
#include "mpi/datatype.h"
#include "mpi/op.h"

namespace toroid::mpi {

namespace {

int lib_local(MPI_Comm c, int r) { return static_cast<int>(c->local_base) + r; }
int lib_remote(MPI_Comm c, int r) { return static_cast<int>(c->remote_base) + r; }

const uint8_t* at(const void* buf, MPI_Aint bytes) { return static_cast<const uint8_t*>(buf) + bytes; }

// One allocation holding `copies` buffers of `count` elements of t laid
// out as t says: buf(i) is what the i-th (buf, count, t) triple names.
struct Scratch {
  std::vector<uint8_t> mem;
  MPI_Aint lo = 0, span = 1;
  void make(MPI_Count count, MPI_Datatype t, int copies = 1) {
    MPI_Aint hi = 0;
    lo = 0;
    if (count > 0) {
      const MPI_Aint last = (count - 1) * t->extent();
      lo = std::min(t->true_lb, last + t->true_lb);
      hi = std::max(t->true_ub, last + t->true_ub);
    }
    span = hi - lo + 1;
    mem.assign(static_cast<size_t>(span) * static_cast<size_t>(copies), 0);
  }
  void* buf(int i = 0) { return mem.data() + static_cast<MPI_Aint>(i) * span - lo; }
};

// Copies count elements of t from one buffer to another of the same layout.
void copy_elems(const void* from, void* to, MPI_Count count, MPI_Datatype t) {
  std::vector<uint8_t> packed(static_cast<size_t>(count * t->size));
  pack(from, count, t, packed.data());
  unpack(packed.data(), count * t->size, to, count, t);
}

// One collective: `rounds` exchange plans, each built by `fill` when it
// starts (the first when the call is made, so arguments are checked and
// send data read then), with `after` run locally when each one finishes.
struct InterOp : CollOp {
  CollKind kind = CollKind::kAlltoall;
  int rounds = 1;
  int round = 0;
  std::function<void(MPI_Comm, int, Exchange&)> fill;
  std::function<void(MPI_Comm, int)> after;
  std::unique_ptr<PlanOp> cur;

  int prepare(MPI_Comm c) {
    cur = std::make_unique<PlanOp>();
    Exchange x(c);
    fill(c, round, x);
    return x.build(cur.get(), kind);
  }
  Status start(MPI_Comm c) override {
    cur->name = name;
    return cur->start(c);
  }
  Status done(MPI_Comm c, const Status& st) override {
    Status s = cur->done(c, st);
    if (!s) return s;
    if (after) after(c, round);
    if (++round == rounds) return s;
    if (prepare(c) != MPI_SUCCESS) return error(Code::kInternal, "%s: round %d could not be built", name, round);
    if (Status b = start(c); !b) return b;
    return Status(Code::kBusy, "another round started");
  }
};

int run(MPI_Comm c, std::unique_ptr<InterOp> op, MPI_Request* request) {
  if (int e = op->prepare(c)) return e;
  if (request) {
    *request = run_nonblocking(c, op.release());
    return MPI_SUCCESS;
  }
  Status st = run_blocking(c, *op);
  return st ? MPI_SUCCESS : raise_status(c, st);
}

std::unique_ptr<InterOp> make_op(const char* name, CollKind kind) {
  auto op = std::make_unique<InterOp>();
  op->name = name;
  op->kind = kind;
  return op;
}

int check_inter_root(MPI_Comm c, int root) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL) return 0;
  if (root < 0 || root >= c->remote->size())
    return raise(c, MPI_ERR_ROOT,
                 "root %d: on an intercommunicator the root passes MPI_ROOT, its group MPI_PROC_NULL and the "
                 "other group the root's rank there (%d ranks)",
                 root, c->remote->size());
  return 0;
}

int no_in_place(MPI_Comm c, const void* buf) {
  if (buf == MPI_IN_PLACE) return raise(c, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator");
  return 0;
}

// SideBlock r of one side of an exchange.
struct SideBlock {
  const void* buf;
  int count;
  MPI_Datatype type;
};
SideBlock block_of(const InterSide& s, int r) {
  MPI_Datatype t = s.types ? s.types[r] : s.type;
  const int n = s.counts ? s.counts[r] : s.count;
  const MPI_Aint off = s.displs ? (s.bytes ? s.displs[r] : s.displs[r] * t->extent()) : MPI_Aint{r} * n * t->extent();
  return SideBlock{at(s.buf, off), n, t};
}

// The indexed side (a block per remote rank) or the single block of a side.
int check_side(MPI_Comm c, const InterSide& s, bool indexed) {
  if (int e = no_in_place(c, s.buf)) return e;
  if (!indexed) return check_buf(c, s.buf, s.count, s.type);
  if (s.counts == nullptr && s.displs != nullptr) return raise(c, MPI_ERR_ARG, "counts is NULL");
  if (s.counts != nullptr && s.displs == nullptr) return raise(c, MPI_ERR_ARG, "displacements are NULL");
  for (int r = 0; r < c->remote->size(); ++r) {
    if (!s.types && r > 0) break;  // one count and type: the first block checks them
    const SideBlock b = block_of(s, r);
    if (int e = check_buf(c, s.buf, b.count, b.type)) return e;
  }
  if (s.counts)
    for (int r = 0; r < c->remote->size(); ++r)
      if (s.counts[r] < 0) return raise(c, MPI_ERR_COUNT, "counts[%d] = %d is negative", r, s.counts[r]);
  return 0;
}

}  // namespace

int inter_bcast(const char* name, void* buf, int count, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* request) {
  if (int e = check_inter_root(c, root)) return e;
  if (root != MPI_PROC_NULL)
    if (int e = check_buf(c, buf, count, t)) return e;
  auto op = make_op(name, CollKind::kBcast);
  op->fill = [=](MPI_Comm k, int, Exchange& x) {
    if (root == MPI_ROOT) {
      for (int r = 0; r < k->remote->size(); ++r) x.send(lib_remote(k, r), buf, count, t);
    } else if (root != MPI_PROC_NULL) {
      x.recv(lib_remote(k, root), buf, count, t);
    }
  };
  return run(c, std::move(op), request);
}

int inter_data(const char* name, InterData kind, const InterSide& send, const InterSide& recv, int root, MPI_Comm c,
               MPI_Request* request) {
  const bool rooted = kind == InterData::kGather || kind == InterData::kScatter;
  if (rooted)
    if (int e = check_inter_root(c, root)) return e;
  // Which sides this member uses, and which of them hold a block per remote rank.
  bool uses_send = true, uses_recv = true;
  const bool send_indexed = kind == InterData::kScatter || kind == InterData::kAlltoall;
  const bool recv_indexed = kind != InterData::kScatter;
  if (kind == InterData::kGather) {
    uses_send = root >= 0;
    uses_recv = root == MPI_ROOT;
  } else if (kind == InterData::kScatter) {
    uses_send = root == MPI_ROOT;
    uses_recv = root >= 0;
  }
  if (uses_send)
    if (int e = check_side(c, send, send_indexed)) return e;
  if (uses_recv)
    if (int e = check_side(c, recv, recv_indexed)) return e;
  static const CollKind kinds[] = {CollKind::kGather, CollKind::kScatter, CollKind::kAllgather, CollKind::kAlltoall};
  auto op = make_op(name, kinds[static_cast<int>(kind)]);
  op->fill = [=](MPI_Comm k, int, Exchange& x) {
    const int nr = k->remote->size();
    if (uses_send) {
      if (!send_indexed) {
        if (rooted) x.send(lib_remote(k, root), send.buf, send.count, send.type);
        else
          for (int r = 0; r < nr; ++r) x.send(lib_remote(k, r), send.buf, send.count, send.type);
      } else {
        for (int r = 0; r < nr; ++r) {
          const SideBlock b = block_of(send, r);
          x.send(lib_remote(k, r), b.buf, b.count, b.type);
        }
      }
    }
    if (uses_recv) {
      if (!recv_indexed) {
        x.recv(lib_remote(k, root), const_cast<void*>(recv.buf), recv.count, recv.type);
      } else {
        for (int r = 0; r < nr; ++r) {
          const SideBlock b = block_of(recv, r);
          x.recv(lib_remote(k, r), const_cast<void*>(b.buf), b.count, b.type);
        }
      }
    }
  };
  return run(c, std::move(op), request);
}

namespace {

struct ReduceState {
  Reduction red;
  Scratch inputs;               // the combiner: one per remote member
  Scratch whole;                // the combiner of the scatter forms: the whole result
};

}  // namespace

int inter_reduce(const char* name, InterReduce kind, const void* send, void* recv, int count, const int* counts,
                 MPI_Datatype t, MPI_Op op, int root, MPI_Comm c, MPI_Request* request) {
  if (int e = check_op(c, op)) return e;
  if (int e = check_count(c, count)) return e;
  if (int e = check_type(c, t)) return e;
  auto state = std::make_shared<ReduceState>();
  if (int e = resolve_reduction(c, op, t, &state->red)) return e;
  if (kind == InterReduce::kReduce)
    if (int e = check_inter_root(c, root)) return e;
  const int nl = c->size, me = c->rank;
  // Each group's blocks (its own recvcounts); every input vector is
  // `total` elements, the same in both groups (MPI 3.1 5.10).
  std::vector<int> blocks;
  MPI_Count total = count;
  if (kind == InterReduce::kReduceScatterBlock) {
    blocks.assign(static_cast<size_t>(nl), count);
    total = MPI_Count{count} * nl;
  } else if (kind == InterReduce::kReduceScatter) {
    if (!counts) return raise(c, MPI_ERR_ARG, "recvcounts is NULL");
    total = 0;
    for (int r = 0; r < nl; ++r) {
      if (counts[r] < 0) return raise(c, MPI_ERR_COUNT, "recvcounts[%d] = %d is negative", r, counts[r]);
      blocks.push_back(counts[r]);
      total += counts[r];
    }
  }
  const bool scatter = !blocks.empty();
  const bool contributes = kind != InterReduce::kReduce || root >= 0;
  const bool gets = kind == InterReduce::kReduce ? root == MPI_ROOT : true;
  const bool combiner = kind == InterReduce::kReduce ? root == MPI_ROOT : me == 0;
  const int mine = scatter ? blocks[static_cast<size_t>(me)] : count;
  if (contributes) {
    if (int e = no_in_place(c, send)) return e;
    if (int e = check_buf(c, send, static_cast<int>(std::min<MPI_Count>(total, INT32_MAX)), t)) return e;
  }
  if (gets) {
    if (int e = no_in_place(c, recv)) return e;
    if (int e = check_buf(c, recv, mine, t)) return e;
  }
  auto iop = make_op(name, kind == InterReduce::kReduce      ? CollKind::kReduce
                           : kind == InterReduce::kAllreduce ? CollKind::kAllreduce
                                                             : CollKind::kReduceScatter);
  iop->rounds = kind == InterReduce::kReduce ? 1 : 2;
  const int to = kind == InterReduce::kReduce ? root : 0;  // the remote combiner
  iop->fill = [=](MPI_Comm k, int round, Exchange& x) {
    const int nr = k->remote->size();
    if (round == 0) {
      // Every input to the other group's combiner.
      if (contributes) x.send(lib_remote(k, to), send, total, t);
      if (combiner) {
        state->inputs.make(total, t, nr);
        for (int r = 0; r < nr; ++r) x.recv(lib_remote(k, r), state->inputs.buf(r), total, t);
      }
      return;
    }
    // The result (or each member's block of it) to the combiner's group.
    if (combiner) {
      MPI_Aint off = blocks.empty() ? 0 : blocks[0];
      for (int r = 1; r < k->size; ++r) {
        if (!scatter) {
          x.send(lib_local(k, r), recv, count, t);
          continue;
        }
        x.send(lib_local(k, r), at(state->whole.buf(), off * t->extent()), blocks[static_cast<size_t>(r)], t);
        off += blocks[static_cast<size_t>(r)];
      }
    } else {
      x.recv(lib_local(k, 0), recv, mine, t);
    }
  };
  iop->after = [=](MPI_Comm k, int round) {
    if (round != 0 || !combiner) return;
    // In the remote group's rank order: in_0 OP (in_1 OP (... OP in_last)).
    const int nr = k->remote->size();
    void* into = recv;
    if (scatter) {
      state->whole.make(total, t);
      into = state->whole.buf();
    }
    copy_elems(state->inputs.buf(nr - 1), into, total, t);
    for (int r = nr - 2; r >= 0; --r) reduce_local(state->red, state->inputs.buf(r), into, total);
    state->inputs.mem = {};
    if (scatter) copy_elems(state->whole.buf(), recv, blocks[0], t);
  };
  return run(c, std::move(iop), request);
}

}  // namespace toroid::mpi
