#include "collectives/algos/tree/bcast_tree.h"

#include <cstring>

#include "collectives/comm.h"

namespace toroid {

std::string tree_bcast_applicable(const CommInfo& comm, const CollArgs& args) {
  if (const char* why = tree_missing(comm)) return why;
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
  return launch(comm, *codec, args.recv, args.recv, "bcast tree");
}

}  // namespace toroid
