// Barrier, broadcast and the reductions (MPI 3.1 sections 5.3, 5.4, 5.9-5.11,
// 5.12): on the library's algorithms through its selector whenever the
// library has the datatype and operation (so the tree, torus and seed
// algorithms serve MPI programs, sub-communicators included), on this
// library's plans otherwise. Reproducible floats: TOROID_REPRO or the
// communicator's info key toroid_repro (exact SUM of MPI_Reduce and
// MPI_Reduce_scatter runs as an exact allreduce, then keeps its part).
#include <cstring>
#include <memory>

#include "mpi/coll_reduce.h"
#include "mpi/datatype.h"
#include "mpi/intercomm_coll.h"

namespace toroid::mpi {

Status LibStagedOp::done(MPI_Comm c, const Status& st) {
  (void)c;
  if (st && active_unpack) unpack(out.data() + unpack_from, unpack_count * unpack_type->size, unpack_to, unpack_count, unpack_type);
  return st;
}

int run_call(MPI_Comm comm, CallOp* call, MPI_Request* request) {
  if (request) {
    *request = run_nonblocking(comm, call);
    return MPI_SUCCESS;
  }
  Status st = run_blocking(comm, *call);
  return st ? MPI_SUCCESS : raise_status(comm, st);
}

namespace {

// The plan path of a reduction: elements are the library's values (packed)
// when the library has a kernel for them, else the datatype's own elements
// in place (the kernel reads them at extent steps).
struct PlanData {
  uint8_t* in = nullptr;   // nullptr: in place (input in `out`)
  uint8_t* out = nullptr;
  uint64_t elems_per = 1;  // plan elements per MPI element
};

int plan_reduction(MPI_Comm c, CallOp& call, Reduction red, const void* send, void* recv, MPI_Count in_count,
                   MPI_Count out_count, MPI_Datatype t, bool out_here, PlanData* pd) {
  PlanOp& op = call.plan();
  op.reduction = red;
  if (red.library) {
    op.args.red = make_reducer(red.dtype, red.rop);
    op.args.esize = op.args.red.esize;
    pd->elems_per = red.scale;
    const bool in_place = send == MPI_IN_PLACE;
    if (t->contig) {
      pd->in = in_place ? nullptr : contig_base(send, t);
      pd->out = out_here ? contig_base(recv, t) : nullptr;
    } else {
      op.in.resize(static_cast<size_t>(in_count * t->size));
      pack(in_place ? recv : send, in_count, t, op.in.data());
      pd->in = op.in.data();
      if (out_here) {
        op.out.resize(static_cast<size_t>(in_count * t->size));
        pd->out = op.out.data();
        op.unpacks.push_back(PlanOp::Unpack{0, recv, out_count, t});
      }
    }
  } else {
    op.args.red = red.red;
    op.args.red.ctx = &op.reduction;
    op.args.esize = red.esize;
    pd->in = send == MPI_IN_PLACE ? nullptr : static_cast<uint8_t*>(const_cast<void*>(send)) + t->lb;
    pd->out = out_here ? static_cast<uint8_t*>(recv) + t->lb : nullptr;
  }
  static uint8_t nothing;
  // kIn is the input (kOut in place); kOut where the result goes (unused off the root).
  op.args.recv = pd->out ? pd->out : (pd->in ? pd->in : &nothing);
  op.args.send = pd->in;
  if (!pd->in && !pd->out) return raise(c, MPI_ERR_BUFFER, "no buffer for the input");
  call.chosen = &op;
  return MPI_SUCCESS;
}

enum class RKind { kAllreduce, kReduce, kReduceScatterBlock, kReduceScatter, kScan, kExscan };

int setup_reduction(MPI_Comm c, RKind kind, const void* send, void* recv, int count, const int* counts,
                    MPI_Datatype t, MPI_Op op, int root, CallOp& call) {
  if (int e = check_op(c, op)) return e;
  if (int e = check_count(c, count)) return e;
  if (int e = check_type(c, t)) return e;
  Reduction red;
  if (int e = resolve_reduction(c, op, t, &red)) return e;
  const auto n = static_cast<uint32_t>(c->size), me = static_cast<uint32_t>(c->rank);
  const bool in_place = send == MPI_IN_PLACE;
  const bool root_here = kind != RKind::kReduce || c->rank == root;
  if (in_place && kind == RKind::kReduce && c->rank != root)
    return raise(c, MPI_ERR_BUFFER, "MPI_IN_PLACE is the root's (rank %d), not rank %d's", root, c->rank);
  // Vector counts of MPI_Reduce_scatter: equal ones are the block form.
  MPI_Count total = count, mine = count;
  bool equal = true;
  if (kind == RKind::kReduceScatter) {
    total = 0;
    for (uint32_t r = 0; r < n; ++r) {
      if (counts[r] < 0) return raise(c, MPI_ERR_COUNT, "recvcounts[%u] = %d is negative", r, counts[r]);
      total += counts[r];
      equal &= counts[r] == counts[0];
    }
    mine = counts[me];
    if (equal) kind = RKind::kReduceScatterBlock;
  } else if (kind == RKind::kReduceScatterBlock) {
    total = static_cast<MPI_Count>(count) * n;
  }
  const bool float_sum = red.library && dtype_is_float(red.dtype) && red.rop == ROp::kSum;
  const bool exact = c->repro == Repro::kExact && float_sum;
  // Exact float sums of reduce-scatter with unequal blocks: an exact
  // allreduce too (below), each rank keeping its block.
  const bool exact_rs = exact && kind == RKind::kReduceScatter;
  if (!in_place && root_here)
    if (int e = check_no_alias(c, span_of(send, total, t), span_of(recv, mine, t))) return e;
  MPI_Count first = static_cast<MPI_Count>(me) * count;  // this rank's first element of the whole vector
  if (kind == RKind::kReduceScatter) {
    first = 0;
    for (uint32_t r = 0; r < me; ++r) first += counts[r];
  }
  if (red.library &&
      (kind == RKind::kAllreduce || kind == RKind::kReduce || kind == RKind::kReduceScatterBlock || exact_rs)) {
    LibStagedOp& l = call.lib;
    CollArgs& a = l.args;
    a.dtype = red.dtype;
    a.op = red.rop;
    // Exact mode rounds float sums once (MIN and MAX are exact in any
    // order). A float product has no exact algorithm here: it runs in
    // fixed order (the same bits on every rank and run of the partition)
    // instead of failing a program that asked for exact sums.
    a.repro = c->repro == Repro::kExact && dtype_is_float(red.dtype) && red.rop == ROp::kProd ? Repro::kFixedOrder
                                                                                           : c->repro;
    a.root = static_cast<uint32_t>(root);
    const bool scatter = kind == RKind::kReduceScatterBlock || kind == RKind::kReduceScatter;
    const MPI_Count in_count = scatter ? total : count;
    // Exact float sums of reduce and reduce-scatter: an exact allreduce of
    // the whole vector, each rank keeping its part.
    const bool via_allreduce = exact && kind != RKind::kAllreduce;
    a.kind = kind == RKind::kAllreduce || via_allreduce ? CollKind::kAllreduce
             : kind == RKind::kReduce                   ? CollKind::kReduce
                                                        : CollKind::kReduceScatter;
    a.count = static_cast<uint64_t>(kind == RKind::kReduceScatterBlock && !via_allreduce ? count : in_count) * red.scale;
    const void* input = in_place ? recv : send;
    if (t->contig && !via_allreduce) {
      a.send = in_place ? nullptr : contig_base(send, t);
      a.recv = root_here ? contig_base(recv, t) : nullptr;
    } else {
      l.in.resize(static_cast<size_t>(in_count * t->size));
      pack(input, in_count, t, l.in.data());
      l.out.resize(l.in.size());
      a.send = l.in.data();
      a.recv = l.out.data();
      if (root_here) {
        l.active_unpack = true;
        l.unpack_to = recv;
        l.unpack_count = scatter ? mine : count;
        l.unpack_type = t;
        l.unpack_from = scatter && via_allreduce ? static_cast<uint64_t>(first * t->size) : 0;
      }
    }
    call.chosen = &l;
    return MPI_SUCCESS;
  }
  // This library's plans.
  PlanData pd;
  const bool out_here = kind != RKind::kReduce || c->rank == root;
  if (int e = plan_reduction(c, call, red, send, recv, kind == RKind::kReduceScatterBlock || kind == RKind::kReduceScatter ? total : count,
                             kind == RKind::kReduceScatterBlock || kind == RKind::kReduceScatter ? mine : count, t,
                             out_here, &pd))
    return e;
  PlanOp& p = call.plan();
  const uint64_t k = pd.elems_per;
  switch (kind) {
    case RKind::kAllreduce:
      p.args.kind = CollKind::kAllreduce;
      p.algo.plan = ordered_allreduce_plan(n, me, static_cast<uint64_t>(count) * k);
      break;
    case RKind::kReduce:
      p.args.kind = CollKind::kReduce;
      p.algo.plan = ordered_reduce_plan(n, me, static_cast<uint32_t>(root), static_cast<uint64_t>(count) * k);
      break;
    case RKind::kReduceScatterBlock:
    case RKind::kReduceScatter: {
      p.args.kind = CollKind::kReduceScatter;
      std::vector<uint64_t> cs(n);
      for (uint32_t r = 0; r < n; ++r) cs[r] = static_cast<uint64_t>(counts ? counts[r] : count) * k;
      if (in_place && !pd.in) {
        // The input is the whole receive buffer; the result its first block:
        // read the input from a copy so the result may overwrite it.
        p.in.assign(pd.out, pd.out + static_cast<size_t>(total) * k * p.args.esize);
        p.args.send = p.in.data();
      }
      p.algo.plan = ordered_reduce_scatter_plan(n, me, cs);
      break;
    }
    case RKind::kScan:
      p.args.kind = CollKind::kAllreduce;
      p.algo.plan = scan_plan(n, me, static_cast<uint64_t>(count) * k);
      break;
    case RKind::kExscan:
      p.args.kind = CollKind::kAllreduce;
      p.algo.plan = exscan_plan(n, me, static_cast<uint64_t>(count) * k);
      break;
  }
  p.args.count = static_cast<uint64_t>(count) * k;
  return MPI_SUCCESS;
}

int reduction(const char* name, RKind kind, const void* send, void* recv, int count, const int* counts,
              MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  if (int e = check_comm(comm)) return e;
  if (comm->inter && kind != RKind::kScan && kind != RKind::kExscan) {
    const InterReduce k = kind == RKind::kReduce      ? InterReduce::kReduce
                          : kind == RKind::kAllreduce ? InterReduce::kAllreduce
                          : kind == RKind::kReduceScatter ? InterReduce::kReduceScatter
                                                          : InterReduce::kReduceScatterBlock;
    return inter_reduce(name, k, send, recv, count, counts, t, op, root, comm, request);
  }
  if (int e = check_intra(comm)) return e;
  if (kind == RKind::kReduce)
    if (int e = check_root(comm, root)) return e;
  if (request) {
    auto call = std::make_unique<CallOp>();
    call->name = name;
    if (int e = setup_reduction(comm, kind, send, recv, count, counts, t, op, root, *call)) return e;
    return run_call(comm, call.release(), request);
  }
  CallOp call;
  call.name = name;
  if (int e = setup_reduction(comm, kind, send, recv, count, counts, t, op, root, call)) return e;
  return run_call(comm, &call, nullptr);
}

int setup_bcast(MPI_Comm c, void* buf, int count, MPI_Datatype t, int root, CallOp& call) {
  if (int e = check_root(c, root)) return e;
  if (int e = check_buf(c, buf, count, t)) return e;
  LibStagedOp& l = call.lib;
  l.args.kind = CollKind::kBcast;
  l.args.dtype = DType::kUint8;
  l.args.root = static_cast<uint32_t>(root);
  l.args.count = static_cast<uint64_t>(count * t->size);
  if (t->contig) {
    l.args.recv = contig_base(buf, t);
  } else {
    l.out.resize(static_cast<size_t>(count * t->size));
    if (c->rank == root) pack(buf, count, t, l.out.data());
    else {
      l.active_unpack = true;
      l.unpack_to = buf;
      l.unpack_count = count;
      l.unpack_type = t;
    }
    l.args.recv = l.out.data();
  }
  call.chosen = &l;
  return MPI_SUCCESS;
}

int bcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request* request, const char* name) {
  if (int e = check_comm(comm)) return e;
  if (comm->inter) return inter_bcast(name, buf, count, t, root, comm, request);
  if (request) {
    auto call = std::make_unique<CallOp>();
    call->name = name;
    if (int e = setup_bcast(comm, buf, count, t, root, *call)) return e;
    return run_call(comm, call.release(), request);
  }
  CallOp call;
  call.name = name;
  if (int e = setup_bcast(comm, buf, count, t, root, call)) return e;
  return run_call(comm, &call, nullptr);
}

int barrier(MPI_Comm comm, MPI_Request* request, const char* name) {
  // On an intercommunicator too: a barrier over both groups is one that no
  // member leaves before every member of the other group entered it.
  if (int e = check_comm(comm)) return e;
  auto setup = [](CallOp& call) {
    call.lib.args.kind = CollKind::kBarrier;
    call.chosen = &call.lib;
  };
  if (request) {
    auto call = std::make_unique<CallOp>();
    call->name = name;
    setup(*call);
    return run_call(comm, call.release(), request);
  }
  CallOp call;
  call.name = name;
  setup(call);
  return run_call(comm, &call, nullptr);
}

int need_request(MPI_Comm comm, MPI_Request* request) {
  return request ? 0 : raise(comm, MPI_ERR_ARG, "request is NULL");
}

}  // namespace

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Barrier, (MPI_Comm comm)) {
  MPI_ENTER("MPI_Barrier");
  return barrier(comm, nullptr, "MPI_Barrier");
}

TOROID_MPI_API(int, Ibarrier, (MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Ibarrier");
  if (int e = need_request(comm, request)) return e;
  return barrier(comm, request, "MPI_Ibarrier");
}

TOROID_MPI_API(int, Bcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)) {
  MPI_ENTER("MPI_Bcast");
  return bcast(buffer, count, datatype, root, comm, nullptr, "MPI_Bcast");
}

TOROID_MPI_API(int, Ibcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                             MPI_Request* request)) {
  MPI_ENTER("MPI_Ibcast");
  if (int e = need_request(comm, request)) return e;
  return bcast(buffer, count, datatype, root, comm, request, "MPI_Ibcast");
}

TOROID_MPI_API(int, Allreduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm)) {
  MPI_ENTER("MPI_Allreduce");
  return reduction("MPI_Allreduce", RKind::kAllreduce, sendbuf, recvbuf, count, nullptr, datatype, op, 0, comm, nullptr);
}

TOROID_MPI_API(int, Iallreduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Iallreduce");
  if (int e = need_request(comm, request)) return e;
  return reduction("MPI_Iallreduce", RKind::kAllreduce, sendbuf, recvbuf, count, nullptr, datatype, op, 0, comm, request);
}

TOROID_MPI_API(int, Reduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                             MPI_Comm comm)) {
  MPI_ENTER("MPI_Reduce");
  return reduction("MPI_Reduce", RKind::kReduce, sendbuf, recvbuf, count, nullptr, datatype, op, root, comm, nullptr);
}

TOROID_MPI_API(int, Ireduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                              MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Ireduce");
  if (int e = need_request(comm, request)) return e;
  return reduction("MPI_Ireduce", RKind::kReduce, sendbuf, recvbuf, count, nullptr, datatype, op, root, comm, request);
}

TOROID_MPI_API(int, Reduce_scatter_block, (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                           MPI_Op op, MPI_Comm comm)) {
  MPI_ENTER("MPI_Reduce_scatter_block");
  return reduction("MPI_Reduce_scatter_block", RKind::kReduceScatterBlock, sendbuf, recvbuf, recvcount, nullptr,
                   datatype, op, 0, comm, nullptr);
}

TOROID_MPI_API(int, Ireduce_scatter_block, (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                            MPI_Op op, MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Ireduce_scatter_block");
  if (int e = need_request(comm, request)) return e;
  return reduction("MPI_Ireduce_scatter_block", RKind::kReduceScatterBlock, sendbuf, recvbuf, recvcount, nullptr,
                   datatype, op, 0, comm, request);
}

TOROID_MPI_API(int, Reduce_scatter, (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm)) {
  MPI_ENTER("MPI_Reduce_scatter");
  if (int e = check_comm(comm)) return e;
  if (!recvcounts) return raise(comm, MPI_ERR_ARG, "recvcounts is NULL");
  return reduction("MPI_Reduce_scatter", RKind::kReduceScatter, sendbuf, recvbuf, recvcounts[comm->rank], recvcounts,
                   datatype, op, 0, comm, nullptr);
}

TOROID_MPI_API(int, Ireduce_scatter, (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Ireduce_scatter");
  if (int e = check_comm(comm)) return e;
  if (int e = need_request(comm, request)) return e;
  if (!recvcounts) return raise(comm, MPI_ERR_ARG, "recvcounts is NULL");
  return reduction("MPI_Ireduce_scatter", RKind::kReduceScatter, sendbuf, recvbuf, recvcounts[comm->rank], recvcounts,
                   datatype, op, 0, comm, request);
}

TOROID_MPI_API(int, Scan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm)) {
  MPI_ENTER("MPI_Scan");
  return reduction("MPI_Scan", RKind::kScan, sendbuf, recvbuf, count, nullptr, datatype, op, 0, comm, nullptr);
}

TOROID_MPI_API(int, Iscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Iscan");
  if (int e = need_request(comm, request)) return e;
  return reduction("MPI_Iscan", RKind::kScan, sendbuf, recvbuf, count, nullptr, datatype, op, 0, comm, request);
}

TOROID_MPI_API(int, Exscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm)) {
  MPI_ENTER("MPI_Exscan");
  return reduction("MPI_Exscan", RKind::kExscan, sendbuf, recvbuf, count, nullptr, datatype, op, 0, comm, nullptr);
}

TOROID_MPI_API(int, Iexscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Iexscan");
  if (int e = need_request(comm, request)) return e;
  return reduction("MPI_Iexscan", RKind::kExscan, sendbuf, recvbuf, count, nullptr, datatype, op, 0, comm, request);
}
