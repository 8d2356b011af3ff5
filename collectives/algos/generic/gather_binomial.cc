// gather `binomial`: the plan of collectives/schedule/binomial_gather.cc
// (algorithm, source, cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/gather_binomial.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> BinomialGather::build(const CommInfo& c, const CollArgs& a) {
  if (a.root >= c.size)
    return error(Code::kInvalid, "gather `binomial`: root %u is not a rank of this communicator (size %u)", a.root,
                 c.size);
  if (a.in_place() && c.rank != a.root && a.count && !a.recv)
    return error(Code::kInvalid, "gather `binomial`: no input at rank %u (in place, recv must hold it)", c.rank);
  return schedule::binomial_gather_plan(c.size, c.rank, a.root, a.count, a.in_place());
}

}  // namespace toroid
