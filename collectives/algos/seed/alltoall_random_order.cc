#include "collectives/algos/seed/alltoall_random_order.h"

#include "collectives/schedule/alltoall_random_order.h"

namespace toroid {

Result<schedule::Plan> RandomOrderAlltoall::build(const CommInfo& comm, const CollArgs& args) {
  if (comm.rank >= comm.size) return error(Code::kInvalid, "random-order: rank %u of %u", comm.rank, comm.size);
  return schedule::alltoall_random_order_plan(comm.size, comm.rank, args.count, args.seed, args.in_place());
}

std::string random_order_applicable(const CommInfo& comm, const CollArgs& args) {
  (void)comm;
  (void)args;
  return "";
}

}  // namespace toroid
