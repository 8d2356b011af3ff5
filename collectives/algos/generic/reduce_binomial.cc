// reduce `binomial`: the plan of collectives/schedule/binomial_reduce.cc
// (algorithm, source, cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/reduce_binomial.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> BinomialReduce::build(const CommInfo& c, const CollArgs& a) {
  if (a.root >= c.size)
    return error(Code::kInvalid, "reduce `binomial`: root %u is not a rank of this communicator (size %u)", a.root,
                 c.size);
  if (a.in_place() && c.rank != a.root && a.count && !a.recv)
    return error(Code::kInvalid, "reduce `binomial`: no input at rank %u (in place, recv must hold it)", c.rank);
  return schedule::binomial_reduce_plan(c.size, c.rank, a.root, a.count, a.in_place());
}

}  // namespace toroid
