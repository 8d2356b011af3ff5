// allgather `recursive-doubling`: recursive-doubling allgather (Thakur, Rabenseifner, Gropp 2005), non-powers
// of two folded; log2 p (+2) steps.
// A thin PlanAlgo over the pure schedule in collectives/schedule/recursive_doubling_allgather.cc
// (its header comment has the algorithm, source, cost and limits). Any
// communicator size.
#pragma once

#include "collectives/plan_runner.h"

namespace toroid {

class RecursiveDoublingAllgather final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

}  // namespace toroid
