#include "collectives/algos/tree/allreduce_tree.h"

#include <cstring>

#include "collectives/comm.h"

namespace toroid {

std::string tree_allreduce_applicable(const CommInfo& comm, const CollArgs& args) {
  if (const char* why = tree_missing(comm)) return why;
  return schedule::tree_reduce_unsupported(args.dtype, args.op, args.red, args.count, comm.size);
}

Status TreeAllreduce::start(Comm& comm, const CollArgs& args) {
  reset();
  if (comm.size() == 1) {  // nothing to combine: the input is the result (as on every other algorithm)
    if ((args.kind == CollKind::kAllreduce || comm.rank() == args.root) && args.send && args.count)
      std::memmove(args.recv, args.send, args.count * args.esize);
    finish(Status::ok());
    return Status::ok();
  }
  auto codec = schedule::plan_tree_reduce(args.dtype, args.op, args.red, args.count, comm.size());
  if (!codec) return error(codec.status().code(), "allreduce tree: %s", codec.status().message().c_str());
  return launch(comm, *codec, args.input(), args.recv, "allreduce tree");
}

}  // namespace toroid
