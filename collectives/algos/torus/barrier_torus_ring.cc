#include "collectives/algos/torus/barrier_torus_ring.h"

#include "collectives/comm.h"
#include "collectives/dtype.h"

namespace toroid {

Status TorusRingBarrier::start(Comm& comm, const CollArgs& args) {
  reset();
  CollArgs a = args;
  a.kind = CollKind::kAllreduce;
  a.dtype = DType::kInt64;
  a.op = ROp::kSum;
  a.repro = Repro::kNone;
  a.send = nullptr;  // in place on the token
  token_ = 0;
  a.recv = &token_;
  a.count = 1;
  a.red = make_reducer(a.dtype, a.op);
  a.esize = sizeof token_;
  Status st = ring_.start(comm, a);
  mirror();
  return st;
}

bool TorusRingBarrier::progress() {
  const bool moved = ring_.progress();
  mirror();
  return moved;
}

void TorusRingBarrier::abort() {
  ring_.abort();
  mirror();
}

void TorusRingBarrier::mirror() {
  if (ring_.done() && !done()) finish(ring_.status());
}

}  // namespace toroid
