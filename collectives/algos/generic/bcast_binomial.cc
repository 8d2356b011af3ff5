// bcast `binomial`: the plan of collectives/schedule/binomial_bcast.cc
// (algorithm, source, cost and limits there), run by the generic plan runner.
#include "collectives/algos/generic/bcast_binomial.h"

#include "collectives/schedule/generic.h"

namespace toroid {

Result<schedule::Plan> BinomialBcast::build(const CommInfo& c, const CollArgs& a) {
  if (a.root >= c.size)
    return error(Code::kInvalid, "bcast `binomial`: root %u is not a rank of this communicator (size %u)", a.root,
                 c.size);
  return schedule::binomial_bcast_plan(c.size, c.rank, a.root, a.count);
}

}  // namespace toroid
