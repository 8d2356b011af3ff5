// The algorithm selector: the default algorithm for an operation, chosen by
// collective, message size, datatype/op and the communicator's shape, from
// the preference table in select.cc (documented in docs/collectives.md).
// The first entry that is registered, applicable and honours the requested
// reproducibility wins; if none does, the first applicable algorithm of the
// kind in registry order.
#pragma once
#include <string>

#include "collectives/coll.h"

namespace toroid {

// Why an algorithm cannot run an operation: "" when it can. Adds the
// reproducibility rule to AlgoInfo::applicable (fixed-order float reductions
// need an algorithm whose combining order is fixed).
std::string algo_unusable(const AlgoInfo& a, const CommInfo& c, const CollArgs& args);

// The chosen algorithm, or an error naming the collective when no
// registered algorithm can run it.
Result<const AlgoInfo*> select_algo(const CommInfo& c, const CollArgs& args);

}  // namespace toroid
