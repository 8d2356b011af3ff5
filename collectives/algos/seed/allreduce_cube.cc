#include "collectives/algos/seed/allreduce_cube.h"

namespace toroid {

Result<schedule::Plan> CubeAllreduce::build(const CommInfo& comm, const CollArgs& args) {
  return schedule::cube_allreduce_plan(comm.shape, comm.rank, args.count, method_, args.in_place());
}

std::string cube_allreduce_applicable(const CommInfo& comm, const CollArgs& args) {
  (void)args;
  return schedule::cube_applicable(comm.shape);
}

}  // namespace toroid
