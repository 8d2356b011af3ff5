// allreduce `ring`: the plan of collectives/schedule/ring_allreduce.cc
// (algorithm, source, cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/allreduce_ring.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> RingAllreduce::build(const CommInfo& c, const CollArgs& a) {
  return schedule::ring_allreduce_plan(c.size, c.rank, a.count, a.in_place());
}

}  // namespace toroid
