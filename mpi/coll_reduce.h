// Reductions and the collectives that move one buffer (MPI_Bcast): the
// CollOp that carries either a library operation (with packing around it
// for non-contiguous layouts) or a plan of this library's (coll_ops.h).
#pragma once
#include <optional>
#include <vector>

#include "mpi/coll_ops.h"

namespace toroid::mpi {

// A library operation with staging: `in`/`out` hold packed data, and the
// finish step unpacks `out` into the user's buffer or copies a block of it.
struct LibStagedOp : LibraryOp {
  std::vector<uint8_t> in, out;
  void* unpack_to = nullptr;   // unpack `out` (unpack_count elements of unpack_type) here when done
  MPI_Count unpack_count = 0;
  MPI_Datatype unpack_type = nullptr;
  uint64_t unpack_from = 0;    // byte offset into `out`
  bool active_unpack = false;
  Status done(MPI_Comm c, const Status& st) override;
};

// One collective call that is either of the two.
struct CallOp : CollOp {
  LibStagedOp lib;
  // Built only for calls that take this library's plans: a PlanOp is some
  // 800 bytes to initialise, and most calls run the library's algorithms.
  std::optional<PlanOp> plan_op;
  PlanOp& plan() { return plan_op ? *plan_op : plan_op.emplace(); }
  CollOp* chosen = nullptr;
  // An error only this rank can see in its arguments (its own send and
  // receive sides disagree): the operation still takes its place in the
  // communicator's sequence, fails when it starts, and the failure report
  // tells the other members, which would otherwise wait for it.
  Status local;
  Status start(MPI_Comm c) override {
    if (!local) return local;
    chosen->name = name;
    return chosen->start(c);
  }
  Status done(MPI_Comm c, const Status& st) override { return chosen->done(c, st); }
};

// Runs call blocking, or queues a heap one and returns its request
// (request != nullptr). Raises errors on comm; returns the class.
int run_call(MPI_Comm comm, CallOp* call, MPI_Request* request);

}  // namespace toroid::mpi
