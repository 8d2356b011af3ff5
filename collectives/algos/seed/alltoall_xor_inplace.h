// alltoall `xor-inplace` (seed 000): the buffer-limited, in-place, blocked
// all-to-all. Rounds of at most m = CollArgs::buffer_blocks pairwise block
// swaps (peer p XOR i on a power-of-two communicator; offsets k and n-k
// together, or the reflection pairing for m = 1, on others), each followed
// by a dissemination barrier of zero-length messages, so the message layer
// never holds more than m blocks of this operation. Schedule, cost and limits:
// collectives/schedule/alltoall_xor_inplace.h. Runs on the generic plan runner.
#pragma once
#include <string>

#include "collectives/plan_runner.h"

namespace toroid {

class XorInplaceAlltoall final : public PlanAlgo {
 protected:
  Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) override;
};

// "" when it can run (any node count; a bad buffer_blocks is an error of
// start(), not a reason to pick another algorithm).
std::string xor_inplace_applicable(const CommInfo& comm, const CollArgs& args);

}  // namespace toroid
