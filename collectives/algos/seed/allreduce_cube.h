// allreduce `cube300` and `cube400` (seed 001, methods 300 and 400): on a
// 2x2x2 communicator, reduce-scatter in all six face rings at once (all turning
// the same way, so both directions of every link carry data), combine with the
// opposite face in two steps, allgather in the faces; 8 or 6 steps, 2q/(3b)
// pure transfer time, bit-identical results on every rank. One class for the
// two methods of the one algorithm (they share everything but phases 2 and 3).
// Schedule, cost, limits and how it (does not) generalise:
// collectives/schedule/cube_allreduce.h. Runs on the generic plan runner.
#pragma once
#include <string>

#include "collectives/plan_runner.h"
#include "collectives/schedule/cube_allreduce.h"

namespace toroid {

class CubeAllreduce final : public PlanAlgo {
 public:
  explicit CubeAllreduce(schedule::CubeMethod method) : method_(method) {}

 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;

 private:
  schedule::CubeMethod method_;
};

// "" on a 2x2x2 communicator, else "needs a 2x2x2 communicator (this one is 4x2x1)".
std::string cube_allreduce_applicable(const CommInfo& comm, const CollArgs& args);

}  // namespace toroid
