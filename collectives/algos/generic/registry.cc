// The generic group's algorithms: the standard point-to-point schedules,
// each runnable on any communicator size, in the registry's order.
//
// fixed_order: every reducing algorithm here reduces each element along one
// chain or tree fixed by (n, root) and then only copies the result, or has
// both partners of an exchange compute the same operation on the same two
// operands (commutative bit for bit), so results are bit-identical on every
// rank and every run (the unit tests check this with doubles). The
// data-movement algorithms combine nothing: their results are exact copies,
// so fixed_order holds for them trivially.
#include <memory>
#include <string>
#include <vector>

#include "collectives/algos/generic/allgather_recursive_doubling.h"
#include "collectives/algos/generic/allgather_ring.h"
#include "collectives/algos/generic/allreduce_rabenseifner.h"
#include "collectives/algos/generic/allreduce_recursive_doubling.h"
#include "collectives/algos/generic/allreduce_ring.h"
#include "collectives/algos/generic/alltoall_bruck.h"
#include "collectives/algos/generic/alltoall_pairwise.h"
#include "collectives/algos/generic/barrier_dissemination.h"
#include "collectives/algos/generic/bcast_binomial.h"
#include "collectives/algos/generic/gather_binomial.h"
#include "collectives/algos/generic/reduce_binomial.h"
#include "collectives/algos/generic/reduce_scatter_recursive_halving.h"
#include "collectives/algos/generic/reduce_scatter_ring.h"
#include "collectives/algos/generic/scatter_binomial.h"
#include "collectives/coll.h"

namespace toroid {

namespace {

// Every generic schedule handles any n >= 1 and any count.
std::string any_size(const CommInfo&, const CollArgs&) { return ""; }

template <typename T>
std::unique_ptr<CollAlgo> make() {
  return std::make_unique<T>();
}

constexpr const char* kThakur = "Thakur, Rabenseifner, Gropp 2005";

}  // namespace

void register_generic_algos(std::vector<AlgoInfo>& out) {
  const CollKind ar = CollKind::kAllreduce;
  out.push_back(AlgoInfo{ar, "ring", "Patarasuk & Yuan 2009 (bidirectional)", true, any_size, make<RingAllreduce>});
  out.push_back(AlgoInfo{ar, "recursive-doubling", kThakur, true, any_size, make<RecursiveDoublingAllreduce>});
  out.push_back(AlgoInfo{ar, "rabenseifner", "Rabenseifner 2004; Thakur, Rabenseifner, Gropp 2005", true, any_size,
                         make<RabenseifnerAllreduce>});
  out.push_back(AlgoInfo{ar, "exact-share", "seed 004 B.3 at each share's owner: alltoall, exact local sum, allgather",
                         true, exact_share_applicable, make_exact_share});
  const CollKind rs = CollKind::kReduceScatter;
  out.push_back(AlgoInfo{rs, "ring", "Patarasuk & Yuan 2009 (bidirectional)", true, any_size, make<RingReduceScatter>});
  out.push_back(AlgoInfo{rs, "recursive-halving", kThakur, true, any_size, make<RecursiveHalvingReduceScatter>});
  const CollKind ag = CollKind::kAllgather;
  out.push_back(AlgoInfo{ag, "ring", "Patarasuk & Yuan 2009 (bidirectional)", true, any_size, make<RingAllgather>});
  out.push_back(AlgoInfo{ag, "recursive-doubling", kThakur, true, any_size, make<RecursiveDoublingAllgather>});
  out.push_back(AlgoInfo{CollKind::kBcast, "binomial", kThakur, true, any_size, make<BinomialBcast>});
  out.push_back(AlgoInfo{CollKind::kReduce, "binomial", kThakur, true, any_size, make<BinomialReduce>});
  out.push_back(AlgoInfo{CollKind::kGather, "binomial", kThakur, true, any_size, make<BinomialGather>});
  out.push_back(AlgoInfo{CollKind::kScatter, "binomial", kThakur, true, any_size, make<BinomialScatter>});
  out.push_back(AlgoInfo{CollKind::kBarrier, "dissemination", "Hensgen, Finkel, Manber 1988", true, any_size,
                         make<DisseminationBarrier>});
  out.push_back(AlgoInfo{CollKind::kAlltoall, "pairwise", kThakur, true, any_size, make<PairwiseAlltoall>});
  out.push_back(AlgoInfo{CollKind::kAlltoall, "bruck", "Bruck, Ho, Kipnis, Upfal, Weathersby 1997", true, any_size,
                         make<BruckAlltoall>});
}

}  // namespace toroid
