// allreduce "exact-share": exact mode (Repro::kExact) for float and double
// SUM where every rank rounds only its own share of the vector.
//
//   alltoall   the vector in N shares of S values (whole 64-value blocks;
//              the last share zero-padded): share j of every rank's input
//              goes to rank j, as the raw floats.
//   local      rank j holds the N contributions to its share and computes
//              their exact, correctly rounded sum there: seed 004 B.3's
//              blockwise method with the N contributions as its N nodes
//              (pass-1 words combined by MAX, pass-2 fields by ADD, one
//              rounding; the AVX-512 kernels read the N contributions of a
//              block together and pack their summed fields once), in
//              slices of tuning::kExactSliceValues / N values, one slice
//              per progress() call. Two contributions need no encoding:
//              IEEE 754 addition rounds a + b once, to nearest, so it is
//              the correctly rounded sum; the result's NaNs take the
//              default quiet NaN as the encoded path's do. That shortcut
//              runs only while the FPU rounds to nearest with subnormals
//              kept (no FTZ/DAZ); otherwise the encoded path.
//   allgather  the rounded shares, as floats.
//
// The result is the correctly rounded sum, so it is the same bit for bit
// as ExactSum's (repro_exact.h) over any algorithm, shape or node count.
// Cost against ExactSum: the wire carries the floats (8 bytes per double
// per alltoall and allgather, as a reduce-scatter and allgather would)
// instead of 0.19 + 8..19 bytes per value of integer fields twice; each
// value is encoded once and decoded once in the whole partition, at its
// share's owner, where ExactSum decodes every value on every node. Two
// collective latencies plus the local sum, and shares of whole blocks: the
// selector (select.cc) takes it above 2 KiB where every share holds a block,
// ExactSum over the tree or a ring below.
// Memory: the padded staging buffers (input when count is not N*S, output
// likewise), the N*S received values, and the encoder's scratch for one
// slice; kept between operations.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/arith/tree_arith.h"
#include "collectives/coll.h"

namespace toroid {

class ExactShare final : public CollAlgo {
 public:
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  void abort() override;
  std::string waiting_for() const override;

  // For tests: values per share, values this rank rounded in the last
  // operation (its own share only), and whether it used the two-operand
  // IEEE addition.
  uint64_t share() const { return share_; }
  uint64_t rounded() const { return rounded_; }
  bool pair_add() const { return pair_add_; }
  // Tests: never take the two-operand shortcut (the encoded path for N = 2).
  void set_encode_pairs(bool on) { encode_pairs_ = on; }

 private:
  enum class Phase : uint8_t { kIdle, kAlltoall, kLocal, kAllgather };
  Status start_sub(CollKind kind, void* send, void* recv);
  template <typename F>
  Status local_slice();
  template <typename F>
  void encode_each(const arith::FloatSumPlan& plan, const arith::TreePass& p2, uint32_t n);
  Status after_local();
  uint64_t slice_values() const;
  void end(Status st);

  Comm* comm_ = nullptr;
  CollArgs args_, sub_;
  uint32_t nodes_ = 0, rank_ = 0;
  uint64_t share_ = 0;
  uint64_t at_ = 0;  // next value of the own share to sum
  uint64_t rounded_ = 0;
  bool pair_add_ = false, encode_pairs_ = false;
  Phase phase_ = Phase::kIdle;
  uint8_t* out_ = nullptr;  // where the allgather runs: recv, or out_stage_
  struct Sub {
    const AlgoInfo* info = nullptr;
    std::unique_ptr<CollAlgo> algo;
    uint64_t count = 0;  // the shape info was chosen for
    DType dtype = DType::kDouble;
  };
  Sub subs_[2];  // alltoall, allgather
  CollAlgo* running_ = nullptr;
  std::vector<uint8_t> in_stage_, out_stage_, parts_;
  std::vector<uint8_t> p1_, p2_, p2tmp_;
  // The slice's contributions, one per rank (the vector of the operation's type).
  std::vector<const double*> dptrs_;
  std::vector<const float*> fptrs_;
  template <typename F>
  std::vector<const F*>& ptrs();
};

}  // namespace toroid
