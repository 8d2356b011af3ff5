// scatter `binomial`: the plan of collectives/schedule/binomial_scatter.cc
// (algorithm, source, cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/scatter_binomial.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> BinomialScatter::build(const CommInfo& c, const CollArgs& a) {
  if (a.root >= c.size)
    return error(Code::kInvalid, "scatter `binomial`: root %u is not a rank of this communicator (size %u)", a.root,
                 c.size);
  return schedule::binomial_scatter_plan(c.size, c.rank, a.root, a.count, a.in_place());
}

}  // namespace toroid
