// allreduce `rabenseifner`: Rabenseifner's allreduce: reduce-scatter by recursive halving, allgather by
// recursive doubling (Rabenseifner 2004); 2 log2 p (+2) steps.
// A thin PlanAlgo over the pure schedule in collectives/schedule/rabenseifner_allreduce.cc
// (its header comment has the algorithm, source, cost and limits). Any
// communicator size.
#pragma once

#include "collectives/plan_runner.h"

namespace toroid {

class RabenseifnerAllreduce final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

}  // namespace toroid
