// allreduce `rabenseifner`: the plan of
// collectives/schedule/rabenseifner_allreduce.cc (algorithm, source, cost and
// limits there), run by the generic plan runner.
#include "collectives/algos/generic/allreduce_rabenseifner.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> RabenseifnerAllreduce::build(const CommInfo& c, const CollArgs& a) {
  return schedule::rabenseifner_allreduce_plan(c.size, c.rank, a.count, a.in_place());
}

}  // namespace toroid
