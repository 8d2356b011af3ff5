// allgather `tree` (seed 004 B.5, allgather through an integer SUM): every
// node writes its block into its own slot of a zeroed n x count array, the
// combine network ADDs the arrays as 8-byte (or 4-byte) words, and since in
// every byte at most one node is non-zero no addition ever carries: every
// node receives the gathered array, exact for any datatype and block size.
//
// Cost: one pass of n x the block (rounded up to a whole operand), 2 x depth
// hops (depth = the torus radius), pipelined; every node sends the whole
// n-block array up (mostly zeros) and receives it once: n times the bytes of
// a ring allgather's per-link traffic, so it wins for small blocks (latency
// 2 x depth hops against n - 1 steps). In place on the receive buffer (no
// copy) when n x block is a multiple of 4 bytes.
// Limits: needs a combine-network class spanning the communicator; fewer
// than 2^32 operands for the whole array.
#pragma once
#include <string>

#include "collectives/algos/tree/tree_runner.h"
#include "collectives/coll.h"

namespace toroid {

std::string tree_allgather_applicable(const CommInfo& comm, const CollArgs& args);

class TreeAllgather final : public TreeAlgo {
 public:
  Status start(Comm& comm, const CollArgs& args) override;

};

}  // namespace toroid
