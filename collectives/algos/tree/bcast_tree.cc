#include "collectives/algos/tree/bcast_tree.h"

#include <cstring>

#include "collectives/comm.h"

namespace toroid {

std::string tree_bcast_applicable(const CommInfo& comm, const CollArgs& args) {
  if (!comm.has_tree) return "needs the combine network (no tree class spans this communicator)";
  auto codec = schedule::plan_tree_bytes(AluOp::kOr, args.count * args.esize, comm.size);
  return codec ? std::string() : codec.status().message();
}

Status TreeBcast::start(Comm& comm, const CollArgs& args) {
  reset();
  const uint64_t bytes = args.count * args.esize;
  auto codec = schedule::plan_tree_bytes(AluOp::kOr, bytes, comm.size());
  if (!codec) return error(codec.status().code(), "bcast tree: %s", codec.status().message().c_str());
  if (bytes > 0 && !args.recv) return error(Code::kInvalid, "bcast tree: no buffer");
  if (comm.rank() != args.root && bytes > 0) std::memset(args.recv, 0, bytes);
  Status st = run_.start(comm.tree(), comm.tree_class(), *codec, args.recv, args.recv, "bcast tree");
  if (!st) return st;
  if (run_.done()) finish(run_.status());
  return Status::ok();
}

bool TreeBcast::progress() {
  if (done_) return false;
  const bool moved = run_.progress();
  if (run_.done()) finish(run_.status());
  return moved;
}

std::string TreeBcast::waiting_for() const { return run_.waiting_for(); }

}  // namespace toroid
