// barrier `dissemination`: dissemination barrier (Hensgen, Finkel, Manber 1988); ceil(log2 n) steps of
// zero-length messages.
// A thin PlanAlgo over the pure schedule in collectives/schedule/dissemination_barrier.cc
// (its header comment has the algorithm, source, cost and limits). Any
// communicator size.
#pragma once

#include "collectives/plan_runner.h"

namespace toroid {

class DisseminationBarrier final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

}  // namespace toroid
