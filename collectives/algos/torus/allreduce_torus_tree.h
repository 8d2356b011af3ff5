// Allreduce `torus-tree` (seed 004 C: torus and tree together), for every
// datatype and op (CollArgs::red). Schedule: collectives/schedule/torus_middle.h.
//
// 1. Reduce on the torus towards the middle of each line: x lines, then the
//    y line of the x middles, then the z line of the xy middles. Chunk by
//    chunk, a node combines its own partial with at most two incoming
//    packets, always in the same order (acc = own; acc = acc OP from-minus;
//    acc = acc OP from-plus), and sends the result one hop on towards the
//    middle; so no node combines more than two incoming packets for one
//    chunk (seed 004 C), counted in CollCounters::max_incoming_per_step.
// 2. Broadcast the total from node (m_x, m_y, m_z) on the combine tree: the
//    holder contributes the total's bytes, every other node zeros, the tree
//    ORs them (8-byte operands; the buffer is staged, padded to 8 bytes).
//
// Every combination happens once, at one node, in an order fixed by the
// partition, and the tree delivers the same bits everywhere: the result is
// bit-identical on every node and run (AlgoInfo::fixed_order = true), though
// its grouping differs from torus-fixed-order's.
// Cost: sum_d max(m_d, n_d-1-m_d) hops of pipelined chunks on the torus
// (count elements over each link used, only towards the middles), then the
// tree's up and down passes (2 * depth hops, pipelined). Memory: the staged
// buffer, count*esize rounded up to 8 bytes. Limits: the world communicator
// and its combine tree (CommInfo::has_tree); an element must fit one packet.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/schedule/torus_middle.h"

namespace toroid {

class CombineEngine;

class TorusTreeAllreduce final : public torus_coll::TorusAlgo {
 public:
  TorusTreeAllreduce() : TorusAlgo("allreduce torus-tree", wire::CollAlgo::kTorusTree) {}
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  std::string waiting_for() const override;
  // Stops a running tree broadcast at once: the engine no longer writes the stage buffer.
  void abort() override;
  // Most incoming packets this node combined for one chunk in the last
  // operation (the property seed 004 C asks for: never more than two).
  uint32_t max_incoming() const { return max_incoming_; }

 private:
  bool torus_phase();
  bool tree_phase();

  CombineEngine* tree_ = nullptr;
  uint8_t cls_ = 0;
  std::vector<schedule::MiddleRole> roles_;
  bool holder_ = false;
  size_t phase_ = 0;
  uint32_t chunk_ = 0;          // next chunk to complete in this phase
  bool chunk_ready_ = false;    // inputs of chunk_ combined, not yet sent
  bool tree_started_ = false;
  std::vector<uint8_t> stage_;  // the tree operands: the total (holder) or zeros
  uint32_t max_incoming_ = 0;
};

}  // namespace toroid
