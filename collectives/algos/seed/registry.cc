// The seed group's algorithms (seeds 000, 001, 003), in the registry's order.
#include <memory>
#include <vector>

#include "collectives/algos/seed/allreduce_cube.h"
#include "collectives/algos/seed/alltoall_random_order.h"
#include "collectives/algos/seed/alltoall_xor_inplace.h"
#include "collectives/coll.h"

namespace toroid {

void register_seed_algos(std::vector<AlgoInfo>& out) {
  // Both cube methods compute every part's sum from the same two operands on
  // both sides of each opposite pair (commutative bit for bit) and only copy
  // afterwards: every rank ends bit-identical, in a partition-fixed order.
  out.push_back(AlgoInfo{CollKind::kAllreduce, "cube300", "seed 001 method 300", true, cube_allreduce_applicable,
                         []() -> std::unique_ptr<CollAlgo> {
                           return std::make_unique<CubeAllreduce>(schedule::CubeMethod::k300);
                         }});
  out.push_back(AlgoInfo{CollKind::kAllreduce, "cube400", "seed 001 method 400", true, cube_allreduce_applicable,
                         []() -> std::unique_ptr<CollAlgo> {
                           return std::make_unique<CubeAllreduce>(schedule::CubeMethod::k400);
                         }});
  // The alltoalls move data and combine nothing: every result is an exact
  // copy of its input, the same whatever the timing, so fixed_order holds.
  out.push_back(AlgoInfo{CollKind::kAlltoall, "xor-inplace", "seed 000", true, xor_inplace_applicable,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<XorInplaceAlltoall>(); }});
  out.push_back(AlgoInfo{CollKind::kAlltoall, "random-order", "seed 003", true, random_order_applicable,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<RandomOrderAlltoall>(); }});
}

}  // namespace toroid
