// bcast `tree` (seed 004 B: the combine network as a broadcast): the root
// contributes its bytes, every other node zeros, and the network ORs them
// (x | 0 = x), so every node receives the root's bytes exactly, whatever
// the datatype. The root need not be the tree's root: its data goes up to
// the tree's root and down again, combined with zeros on the way.
//
// Cost: one pass of the message rounded up to 4- or 8-byte operands,
// 2 x depth hops (depth = the torus radius), pipelined; each node sends its
// bytes (zeros but at the root) up once and receives the result once. Runs
// on the caller's buffer directly when its length is a multiple of 4 bytes,
// else through a zero-padded copy.
// Limits: needs a combine-network class spanning the communicator; fewer
// than 2^32 operands.
#pragma once
#include <string>

#include "collectives/algos/tree/tree_runner.h"
#include "collectives/coll.h"

namespace toroid {

std::string tree_bcast_applicable(const CommInfo& comm, const CollArgs& args);

class TreeBcast final : public TreeAlgo {
 public:
  Status start(Comm& comm, const CollArgs& args) override;

};

}  // namespace toroid
