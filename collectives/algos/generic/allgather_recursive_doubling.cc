// allgather `recursive-doubling`: the plan of
// collectives/schedule/recursive_doubling_allgather.cc (algorithm, source, cost
// and limits there), run by the generic plan runner.
#include "collectives/algos/generic/allgather_recursive_doubling.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> RecursiveDoublingAllgather::build(const CommInfo& c, const CollArgs& a) {
  return schedule::recursive_doubling_allgather_plan(c.size, c.rank, a.count, a.in_place());
}

}  // namespace toroid
