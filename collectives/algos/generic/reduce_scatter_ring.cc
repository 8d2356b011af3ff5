// reduce-scatter `ring`: the plan of
// collectives/schedule/ring_reduce_scatter.cc (algorithm, source, cost and
// limits there), run by the generic plan runner.
#include "collectives/algos/generic/reduce_scatter_ring.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> RingReduceScatter::build(const CommInfo& c, const CollArgs& a) {
  return schedule::ring_reduce_scatter_plan(c.size, c.rank, a.count, a.in_place());
}

}  // namespace toroid
