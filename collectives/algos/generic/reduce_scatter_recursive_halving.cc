// reduce-scatter `recursive-halving`: the plan of
// collectives/schedule/recursive_halving_reduce_scatter.cc (algorithm, source,
// cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/reduce_scatter_recursive_halving.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> RecursiveHalvingReduceScatter::build(const CommInfo& c, const CollArgs& a) {
  return schedule::recursive_halving_reduce_scatter_plan(c.size, c.rank, a.count, a.in_place());
}

}  // namespace toroid
