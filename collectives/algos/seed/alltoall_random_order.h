// alltoall `random-order` (seed 003): every rank sends its n-1 blocks with
// non-blocking sends in its own random order, drawn from (CollArgs::seed,
// rank), and takes the n-1 incoming blocks first come, first served. One
// `first_come` step on the generic plan runner (PlanAlgo::arrivals() records
// the order the receives completed in). Schedule, cost and limits:
// collectives/schedule/alltoall_random_order.h.
#pragma once
#include <string>

#include "collectives/plan_runner.h"

namespace toroid {

class RandomOrderAlltoall final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

std::string random_order_applicable(const CommInfo& comm, const CollArgs& args);  // always ""

}  // namespace toroid
