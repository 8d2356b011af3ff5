// allreduce `ring`: bidirectional ring allreduce: reduce-scatter then allgather, one half of the
// vector clockwise, the other counter-clockwise (Patarasuk & Yuan 2009);
// 2(n-1) steps, 2(n-1)/n * count elements sent per rank.
// A thin PlanAlgo over the pure schedule in collectives/schedule/ring_allreduce.cc
// (its header comment has the algorithm, source, cost and limits). Any
// communicator size.
#pragma once

#include "collectives/plan_runner.h"

namespace toroid {

class RingAllreduce final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

}  // namespace toroid
