#include "collectives/algos/tree/allreduce_tree.h"

#include <cstring>

#include "collectives/comm.h"

namespace toroid {

std::string tree_allreduce_applicable(const CommInfo& comm, const CollArgs& args) {
  if (!comm.has_tree) return "needs the combine network (no tree class spans this communicator)";
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
  Status st = run_.start(comm.tree(), comm.tree_class(), *codec, args.input(), args.recv, "allreduce tree");
  if (!st) return st;
  if (run_.done()) finish(run_.status());
  return Status::ok();
}

bool TreeAllreduce::progress() {
  if (done_) return false;
  const bool moved = run_.progress();
  if (run_.done()) finish(run_.status());
  return moved;
}

std::string TreeAllreduce::waiting_for() const { return run_.waiting_for(); }

}  // namespace toroid
