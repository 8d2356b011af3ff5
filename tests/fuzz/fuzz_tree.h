// The combine and barrier engines on one tree, registered with a FuzzNode
// as a node registers them (handlers, link-down listeners, pollers), and
// taken off its loop again before they go.
#pragma once
#include <cstdint>

#include "fuzz_node.h"
#include "netstack/classroute.h"
#include "netstack/tree/barrier.h"
#include "netstack/tree/combine.h"

namespace toroid::fuzz {

struct TreeEngines {
  TreeEngines(FuzzNode& node, const ClassRoute& tree, uint8_t tree_class, uint8_t barrier_class, uint64_t timeout_ns)
      : node_(node), combine(node.net(), node.loop(), timeout_ns), barrier(node.net(), node.loop(), timeout_ns) {
    NetStack& net = node.net();
    net.set_handler(wire::PacketType::kTree, &combine);
    net.set_handler(wire::PacketType::kBarrier, &barrier);
    net.add_link_down_listener(&combine);
    net.add_link_down_listener(&barrier);
    node.loop().add_poller(&combine);
    node.loop().add_poller(&barrier);
    if (!combine.add_tree(tree_class, tree).is_ok()) violated("add_tree refused a generated tree");
    if (!barrier.set_tree(barrier_class, tree).is_ok()) violated("set_tree refused a generated tree");
  }
  ~TreeEngines() {
    node_.loop().remove_poller(&combine);
    node_.loop().remove_poller(&barrier);
  }
  TreeEngines(const TreeEngines&) = delete;
  TreeEngines& operator=(const TreeEngines&) = delete;

  FuzzNode& node_;
  CombineEngine combine;
  BarrierNet barrier;
};

}  // namespace toroid::fuzz
