#include "collectives/algos/tree/allgather_tree.h"

#include <cstring>

#include "collectives/comm.h"

namespace toroid {

std::string tree_allgather_applicable(const CommInfo& comm, const CollArgs& args) {
  if (const char* why = tree_missing(comm)) return why;
  auto codec = schedule::plan_tree_bytes(AluOp::kAdd, args.count * args.esize * comm.size, comm.size);
  return codec ? std::string() : codec.status().message();
}

Status TreeAllgather::start(Comm& comm, const CollArgs& args) {
  reset();
  const uint64_t block = args.count * args.esize;
  const uint64_t total = block * comm.size();
  auto codec = schedule::plan_tree_bytes(AluOp::kAdd, total, comm.size());
  if (!codec) return error(codec.status().code(), "allgather tree: %s", codec.status().message().c_str());
  if (total > 0 && !args.recv) return error(Code::kInvalid, "allgather tree: no receive buffer");
  auto* recv = static_cast<uint8_t*>(args.recv);
  const uint64_t slot = block * comm.rank();
  if (block > 0) {
    // Zeros everywhere but my slot, which holds my block (already there in place).
    std::memset(recv, 0, slot);
    if (!args.in_place()) std::memmove(recv + slot, args.send, block);
    std::memset(recv + slot + block, 0, total - slot - block);
  }
  return launch(comm, *codec, recv, recv, "allgather tree");
}

}  // namespace toroid
