// alltoall `pairwise`: the plan of collectives/schedule/pairwise_alltoall.cc
// (algorithm, source, cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/alltoall_pairwise.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> PairwiseAlltoall::build(const CommInfo& c, const CollArgs& a) {
  return schedule::pairwise_alltoall_plan(c.size, c.rank, a.count, a.in_place());
}

}  // namespace toroid
