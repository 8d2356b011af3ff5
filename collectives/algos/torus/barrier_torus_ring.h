// Barrier `torus-ring`: the torus-ring allreduce (allreduce_torus_ring.h) of
// a one-element token. A node finishes only once the rings of every
// dimension have brought it every other node's contribution, so no node
// leaves before all have entered.
//
// Cost: the allreduce's sum over dimensions of (n - 1) one-hop steps, with
// one 8-byte element per packet. On two nodes that is one packet each way,
// the fewest any barrier can send, and it travels as a kCollective packet
// straight to the neighbour's inbox: no point-to-point sequence numbers,
// credits or matching, which the dissemination barrier's messages pay for.
// On larger partitions its step count grows with the sides, so the selector
// takes it for two nodes only (collectives/select.cc). The world
// communicator only, as every torus algorithm.
#pragma once
#include <cstdint>
#include <string>

#include "collectives/algos/torus/allreduce_torus_ring.h"
#include "collectives/coll.h"

namespace toroid {

class TorusRingBarrier final : public CollAlgo {
 public:
  TorusRingBarrier() : ring_("barrier torus-ring") {}
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  void abort() override;
  std::string waiting_for() const override { return ring_.waiting_for(); }

 private:
  void mirror();  // done and status follow the ring's

  TorusRingAllreduce ring_;
  int64_t token_ = 0;
};

}  // namespace toroid
