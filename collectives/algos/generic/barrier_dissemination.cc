// barrier `dissemination`: the plan of
// collectives/schedule/dissemination_barrier.cc (algorithm, source, cost and
// limits there), run by the generic plan runner.
#include "collectives/algos/generic/barrier_dissemination.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> DisseminationBarrier::build(const CommInfo& c, const CollArgs&) {
  return schedule::dissemination_barrier_plan(c.size, c.rank);
}

}  // namespace toroid
