// Allreduce `torus-fixed-order` (seed 004 A: A.1 reproducible order, A.2
// both directions of every ring, A.3 class-function routing as deposit-bit
// line broadcasts). Schedule: collectives/schedule/torus_fixed_order.h.
//
// For each dimension longer than one node (x, y, z): every node injects its
// current vector ONCE per direction as deposit-bit packets (NetStack::send
// with SendOptions::deposit, the direction forced by the hint bits):
// ceil((n-1)/2) hops plus, floor((n-1)/2) hops minus, so every router on the
// way leaves a copy and no node receives a value twice. A node keeps the n-1
// vectors it receives (by the source's coordinate along the dimension) and,
// chunk by chunk as soon as a chunk is complete, combines all n in the fixed
// order acc = S0; acc = acc OP S1; ...; acc = acc OP S(n-1) with the
// operation's Reducer: the same expression on every node of the line, so
// every node ends bit-identical without a final broadcast. The result is
//   R = sum_z ( sum_y ( sum_x v(x,y,z) ) ),
// each sum a left-to-right fold in increasing coordinate; for n x 1 x 1 that
// is exactly the serial fold over ranks 0..n-1.
//
// Cost per dimension of n nodes: one software step, 2 injections per chunk
// (1 for n = 2), ceil((n-1)/2) hops of latency, (n-1)*count elements received;
// each plus-direction link of the line carries ceil((n-1)/2)*count elements,
// each minus-direction link floor((n-1)/2)*count. Memory: n * count elements
// of scratch (allocated in start()). Limits: the world communicator only;
// an element must fit one packet.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/schedule/torus_fixed_order.h"

namespace toroid {

class TorusFixedOrderAllreduce final : public torus_coll::TorusAlgo {
 public:
  TorusFixedOrderAllreduce() : TorusAlgo("allreduce torus-fixed-order", wire::CollAlgo::kTorusFixedOrder) {}
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  std::string waiting_for() const override;

  // For tests, of the last operation: packets this node injected per
  // dimension (all directions), and packets it received per dimension.
  uint64_t injected(int dim) const { return injected_[dim]; }
  uint64_t received(int dim) const { return received_[dim]; }
  uint32_t chunks() const { return chunks_; }

 private:
  void begin_phase();
  bool inject();
  bool consume(uint16_t port, Dir port_dir);
  bool combine();
  uint8_t* slot(uint32_t src) { return tmp_.data() + static_cast<size_t>(src) * count_ * esize_; }

  std::vector<schedule::FixedOrderPhase> phases_;
  size_t phase_ = 0;
  std::vector<uint8_t> tmp_;       // n vectors: slot s holds the value of line coordinate s
  std::vector<uint32_t> got_;      // per chunk: values received this phase
  std::vector<uint8_t> seen_;      // per (source, chunk): received already
  uint32_t sent_[2] = {0, 0};      // per send of the phase: chunks injected
  uint32_t combined_ = 0;          // chunks combined this phase (in order)
  uint64_t phase_received_ = 0;
  uint64_t injected_[kDims] = {0, 0, 0};
  uint64_t received_[kDims] = {0, 0, 0};
};

}  // namespace toroid
