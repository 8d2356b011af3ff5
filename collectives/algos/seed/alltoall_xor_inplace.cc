#include "collectives/algos/seed/alltoall_xor_inplace.h"

#include "collectives/schedule/alltoall_xor_inplace.h"

namespace toroid {

Result<schedule::Plan> XorInplaceAlltoall::build(const CommInfo& comm, const CollArgs& args) {
  return schedule::alltoall_xor_inplace_plan(comm.size, comm.rank, args.count, args.buffer_blocks, args.in_place());
}

std::string xor_inplace_applicable(const CommInfo& comm, const CollArgs& args) {
  (void)comm;
  (void)args;
  return "";
}

}  // namespace toroid
