#include "collectives/algos/tree/reduce_tree.h"

#include "collectives/algos/tree/allreduce_tree.h"
#include <cstring>

#include "collectives/comm.h"

namespace toroid {

std::string tree_reduce_applicable(const CommInfo& comm, const CollArgs& args) {
  return tree_allreduce_applicable(comm, args);
}

Status TreeReduce::start(Comm& comm, const CollArgs& args) {
  reset();
  if (comm.size() == 1) {  // nothing to combine: the input is the result (as on every other algorithm)
    if ((args.kind == CollKind::kAllreduce || comm.rank() == args.root) && args.send && args.count)
      std::memmove(args.recv, args.send, args.count * args.esize);
    finish(Status::ok());
    return Status::ok();
  }
  auto codec = schedule::plan_tree_reduce(args.dtype, args.op, args.red, args.count, comm.size());
  if (!codec) return error(codec.status().code(), "reduce tree: %s", codec.status().message().c_str());
  void* out = args.recv;
  if (comm.rank() != args.root) {
    scratch_.resize(codec->bytes());
    out = scratch_.data();
  }
  const void* in = args.input();
  if (args.count > 0 && !in) return error(Code::kInvalid, "reduce tree: no input buffer");
  return launch(comm, *codec, in, out, "reduce tree");
}

}  // namespace toroid
