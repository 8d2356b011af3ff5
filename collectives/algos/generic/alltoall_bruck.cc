// alltoall `bruck`: the plan of collectives/schedule/bruck_alltoall.cc
// (algorithm, source, cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/alltoall_bruck.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> BruckAlltoall::build(const CommInfo& c, const CollArgs& a) {
  return schedule::bruck_alltoall_plan(c.size, c.rank, a.count, a.in_place());
}

}  // namespace toroid
