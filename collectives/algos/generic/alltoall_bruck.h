// alltoall `bruck`: Bruck's alltoall (Bruck et al. 1997); ceil(log2 n) steps, for short messages.
// A thin PlanAlgo over the pure schedule in collectives/schedule/bruck_alltoall.cc
// (its header comment has the algorithm, source, cost and limits). Any
// communicator size.
#pragma once

#include "collectives/plan_runner.h"

namespace toroid {

class BruckAlltoall final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

}  // namespace toroid
