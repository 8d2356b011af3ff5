// gather `binomial`: binomial-tree gather to the root; ceil(log2 n) steps.
// A thin PlanAlgo over the pure schedule in collectives/schedule/binomial_gather.cc
// (its header comment has the algorithm, source, cost and limits). Any
// communicator size.
#pragma once

#include "collectives/plan_runner.h"

namespace toroid {

class BinomialGather final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

}  // namespace toroid
