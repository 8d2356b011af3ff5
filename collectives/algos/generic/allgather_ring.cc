// allgather `ring`: the plan of collectives/schedule/ring_allgather.cc
// (algorithm, source, cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/allgather_ring.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> RingAllgather::build(const CommInfo& c, const CollArgs& a) {
  return schedule::ring_allgather_plan(c.size, c.rank, a.count, a.in_place());
}

}  // namespace toroid
