// The torus group's algorithms: they run on the world communicator's own
// torus links, exchanging kCollective packets with neighbours directly (one
// hop with send_dir, or deposit-bit line broadcasts), in the registry's order.
#include <memory>
#include <string>
#include <vector>

#include "collectives/algos/torus/allreduce_torus_fixed_order.h"
#include "collectives/algos/torus/allreduce_torus_ring.h"
#include "collectives/algos/torus/allreduce_torus_tree.h"
#include "collectives/algos/torus/barrier_torus_ring.h"
#include "collectives/algos/torus/bcast_line_multicast.h"
#include "collectives/algos/torus/torus_packets.h"
#include "collectives/coll.h"

namespace toroid {

namespace {

std::string world_only(const CommInfo& c, const CollArgs&) { return torus_coll::needs_world(c); }

std::string world_and_tree(const CommInfo& c, const CollArgs&) {
  std::string why = torus_coll::needs_world(c);
  if (why.empty() && !c.has_tree) why = "needs the combine network (no tree class spans this communicator)";
  return why;
}

}  // namespace

void register_torus_algos(std::vector<AlgoInfo>& out) {
  // Every node of a line adds the same n vectors in coordinate order.
  out.push_back(AlgoInfo{CollKind::kAllreduce, "torus-fixed-order",
                         "seed 004 A (fixed-order shift-and-add per dimension, both directions, deposit-bit line "
                         "broadcast)",
                         true, world_only,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<TorusFixedOrderAllreduce>(); }});
  // Each combination happens once, at one node, in an order fixed by the
  // partition; the tree broadcasts the same bits to everyone.
  out.push_back(AlgoInfo{CollKind::kAllreduce, "torus-tree",
                         "seed 004 C (torus reduce towards the line middles, combine-tree broadcast)", true,
                         world_and_tree,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<TorusTreeAllreduce>(); }});
  // Each node adds the ring's contributions in its own order: not fixed.
  out.push_back(AlgoInfo{CollKind::kAllreduce, "torus-ring", "dimension-ordered ring shift-and-add (reference)", false,
                         world_only,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<TorusRingAllreduce>(); }});
  // The ring allreduce of a one-element token.
  out.push_back(AlgoInfo{CollKind::kBarrier, "torus-ring", "the torus-ring allreduce of a one-element token", true,
                         world_only,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<TorusRingBarrier>(); }});
  // Moves bytes only.
  out.push_back(AlgoInfo{CollKind::kBcast, "line-multicast",
                         "seed 004 A.3 (deposit-bit line multicast per dimension: x line, y lines, z lines)", true,
                         world_only,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<LineMulticastBcast>(); }});
}

}  // namespace toroid
