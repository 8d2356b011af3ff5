// Collective operations of the MPI layer that the library has no kind for
// (vector and w-variants, scans, neighbourhood exchanges, reductions on
// this library's kernels), as point-to-point plans (collectives/schedule/
// plan.h) run by the library's plan runner through Comm::start_custom, so
// they share the communicator's tag, deadline and failure handling.
#pragma once
#include <vector>

#include "collectives/plan_runner.h"
#include "collectives/schedule/plan.h"
#include "mpi/coll_engine.h"
#include "mpi/op.h"

namespace toroid::mpi {

// Runs a prepared plan.
class FixedPlan final : public PlanAlgo {
 public:
  schedule::Plan plan;

 protected:
  Result<schedule::Plan> build(const CommInfo&, const CollArgs&) override { return plan; }
};

// A plan with its buffers: kIn and kOut point into the caller's buffers or
// into `in`/`out` staging; unpacks run when it finishes.
struct PlanOp : CollOp {
  FixedPlan algo;
  CollArgs args;                       // kind (for messages), esize, send (kIn), recv (kOut), red
  std::vector<uint8_t> in, out;        // staging
  Reduction reduction;                 // reductions on this library's kernels
  struct Unpack {
    uint64_t off;                      // into `out`
    void* buf;
    MPI_Count count;
    MPI_Datatype type;
  };
  std::vector<Unpack> unpacks;
  PlanOp();
  Status start(MPI_Comm c) override;
  Status done(MPI_Comm c, const Status& st) override;
};

// Builds the one-step exchange of the vector collectives: blocks sent from
// one send buffer and received into one receive buffer, each block with
// its own count and datatype; contiguous blocks move in place, others are
// packed (then every block of that side is staged). Blocks to oneself are
// local copies.
class Exchange {
 public:
  explicit Exchange(MPI_Comm c) : comm_(c) {}
  void send(int peer, const void* buf, MPI_Count count, MPI_Datatype t);
  void recv(int peer, void* buf, MPI_Count count, MPI_Datatype t);
  // Fills op (plan, args, staging). Errors: a self block whose sizes differ.
  int build(PlanOp* op, CollKind kind);
  // Pack every send block (the send data lives in the receive buffer: MPI_IN_PLACE).
  void stage_sends() { force_stage_in_ = true; }

 private:
  struct Blk {
    int peer;
    uint8_t* buf;
    MPI_Count count;
    MPI_Datatype type;
  };
  MPI_Comm comm_;
  std::vector<Blk> sends_, recvs_;
  bool force_stage_in_ = false;
};

// Ordered reduction plans (the kernel computes dst = src OP dst with src
// the lower ranks' partial): results in rank order for any operation.
// Elements of esize bytes; kIn the input, kOut the result, kTmp scratch.
schedule::Plan ordered_reduce_plan(uint32_t n, uint32_t rank, uint32_t root, uint64_t count);
schedule::Plan ordered_allreduce_plan(uint32_t n, uint32_t rank, uint64_t count);
// Reduce to rank n-1, then block i (counts[i] elements at displs[i] of the
// whole) to rank i's kOut.
schedule::Plan ordered_reduce_scatter_plan(uint32_t n, uint32_t rank, const std::vector<uint64_t>& counts);
schedule::Plan scan_plan(uint32_t n, uint32_t rank, uint64_t count);
schedule::Plan exscan_plan(uint32_t n, uint32_t rank, uint64_t count);

}  // namespace toroid::mpi
