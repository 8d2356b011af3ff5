// barrier `barrier-network` (seed 004 B.8 on Blue Gene/L's global barrier
// network): the global AND on the communicator's BarrierNet channel. Each
// node enters the channel's current epoch; an AND tree of one-hop messages
// on the priority VC carries "my subtree arrived" up and the root's release
// down, so no node is released before the last one arrived.
//
// Cost: 2 x depth hops of 70-byte messages (depth = the torus radius; 135 ns
// a hop on the sim rig), no data, no allocation.
// Limits: needs a barrier-network channel spanning the communicator (the
// world; sub-communicators have none). A barrier abandoned by the
// communicator (timeout) is drained at the next start if it completed since;
// if not, that start fails with kBusy naming the channel.
#pragma once
#include <cstdint>
#include <string>

#include "collectives/coll.h"

namespace toroid {

class BarrierNet;

std::string barrier_network_applicable(const CommInfo& comm, const CollArgs& args);

class BarrierNetworkBarrier final : public CollAlgo {
 public:
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  void abort() override;
  std::string waiting_for() const override;

 private:
  BarrierNet* net_ = nullptr;
  int channel_ = 0;
  uint32_t epoch_ = 0;
  bool entered_ = false;  // entered and not yet tested complete (survives abort)
};

}  // namespace toroid
