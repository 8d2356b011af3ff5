// alltoall `pairwise`: pairwise-exchange alltoall (XOR pairs for powers of two, else shifts);
// n-1 steps, for long messages.
// A thin PlanAlgo over the pure schedule in collectives/schedule/pairwise_alltoall.cc
// (its header comment has the algorithm, source, cost and limits). Any
// communicator size.
#pragma once

#include "collectives/plan_runner.h"

namespace toroid {

class PairwiseAlltoall final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

}  // namespace toroid
