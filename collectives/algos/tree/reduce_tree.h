// reduce `tree` (seed 004 B): the tree allreduce (allreduce_tree.h, every
// datatype x op the combine ALU can do), of which only the root keeps the
// result; the other nodes decode into scratch (allocated in start()) and
// drop it. The combine network always broadcasts its result down the whole
// tree, so a reduce costs exactly an allreduce: 2 x depth hops and
// pass.bytes() per node up and down. It is still the cheapest reduce for
// small messages: the torus alternatives need a hop per node on a line.
// Limits: as the tree allreduce.
#pragma once
#include <string>
#include <vector>

#include "collectives/algos/tree/tree_runner.h"
#include "collectives/coll.h"

namespace toroid {

std::string tree_reduce_applicable(const CommInfo& comm, const CollArgs& args);

class TreeReduce final : public TreeAlgo {
 public:
  Status start(Comm& comm, const CollArgs& args) override;

 private:
  std::vector<uint8_t> scratch_;  // the result on non-root nodes
};

}  // namespace toroid
