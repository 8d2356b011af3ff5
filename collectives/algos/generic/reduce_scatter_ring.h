// reduce-scatter `ring`: bidirectional ring reduce-scatter (Patarasuk & Yuan 2009); n-1 steps.
// A thin PlanAlgo over the pure schedule in collectives/schedule/ring_reduce_scatter.cc
// (its header comment has the algorithm, source, cost and limits). Any
// communicator size.
#pragma once

#include "collectives/plan_runner.h"

namespace toroid {

class RingReduceScatter final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

}  // namespace toroid
