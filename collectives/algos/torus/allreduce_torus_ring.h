// Allreduce `torus-ring`: dimension-ordered ring shift-and-add on the torus,
// the first end-to-end collective of the node runtime, for every datatype
// and op (CollArgs::red). Schedule: collectives/schedule/torus_ring.h.
//
// For each dimension longer than one node (x, y, z), n-1 ring steps: a node
// sends its running vector along the plus link, then forwards what it
// receives from the minus link (the same buffer, no copy) while the ring
// still needs it, and adds every received vector into its own. Each node
// adds the contributions in its own order (its own value, then the one 1
// place upstream, 2 places, ...): floats round differently on different
// nodes, so it is NOT fixed-order (AlgoInfo::fixed_order = false).
//
// Cost per dimension of n nodes: n-1 steps, (n-1)*count elements over each
// plus link (minus links idle), one hop per step; on a side of two nodes
// both use the one cable 0(+) - 1(-), both ways (schedule/torus_ring.h). Limits: the world
// communicator only; an element must fit one packet. The simplest reference;
// torus-fixed-order does the same job with both directions and one
// injection per direction.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/schedule/torus_ring.h"
#include "drivers/packet.h"

namespace toroid {

class TorusRingAllreduce final : public torus_coll::TorusAlgo {
 public:
  // what: the operation's name in messages (the barrier of the same name runs
  // this allreduce on a token).
  explicit TorusRingAllreduce(const char* what = "allreduce torus-ring")
      : TorusAlgo(what, wire::CollAlgo::kTorusRing) {}
  ~TorusRingAllreduce() override { drop_forwards(); }
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  void abort() override;
  // "dim y: sent 3/7, received 5/21 packets from y-, no forwards queued"
  std::string waiting_for() const override;

 private:
  bool send_own();
  bool flush_forwards();
  bool consume();
  void begin_phase();
  void drop_forwards();

  std::vector<schedule::RingPhase> phases_;
  size_t phase_ = 0;
  std::vector<uint8_t> own_;    // the running vector as the phase began (what step 0 sends)
  uint32_t own_sent_ = 0;       // step-0 packets of this phase sent
  uint32_t received_ = 0;       // packets of this phase received
  Packet* fwd_head_ = nullptr;  // forwards waiting for link credit (FIFO)
  Packet* fwd_tail_ = nullptr;
};

}  // namespace toroid
