// The tree group's algorithms (seed 004 B on the emulated combine and
// barrier networks), in the registry's order.
#include <memory>
#include <vector>

#include "collectives/algos/tree/allgather_tree.h"
#include "collectives/algos/tree/allreduce_tree.h"
#include "collectives/algos/tree/barrier_network.h"
#include "collectives/algos/tree/bcast_tree.h"
#include "collectives/algos/tree/reduce_tree.h"
#include "collectives/coll.h"

namespace toroid {

void register_tree_algos(std::vector<AlgoInfo>& out) {
  // Integer ALU ops are associative and commutative and the float SUM is
  // exact (then rounded once), so every node gets the same bits whatever the
  // tree's shape: fixed_order holds for every reduction here.
  out.push_back(AlgoInfo{CollKind::kAllreduce, "tree",
                         "seed 004 B (combine-network ALU; float sum in two exact passes)", true,
                         tree_allreduce_applicable,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<TreeAllreduce>(); }});
  out.push_back(AlgoInfo{CollKind::kReduce, "tree", "seed 004 B (the tree allreduce, kept at the root)", true,
                         tree_reduce_applicable,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<TreeReduce>(); }});
  // Byte movements combine nothing (OR / ADD over zeros is exact).
  out.push_back(AlgoInfo{CollKind::kBcast, "tree", "seed 004 B (OR over zeros on the combine network)", true,
                         tree_bcast_applicable,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<TreeBcast>(); }});
  out.push_back(AlgoInfo{CollKind::kAllgather, "tree", "seed 004 B.5 (integer sum over zeros)", true,
                         tree_allgather_applicable,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<TreeAllgather>(); }});
  out.push_back(AlgoInfo{CollKind::kBarrier, "barrier-network", "seed 004 B.8 (global AND on the barrier network)",
                         true, barrier_network_applicable,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<BarrierNetworkBarrier>(); }});
}

}  // namespace toroid
