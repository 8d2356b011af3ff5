// Exact mode (Repro::kExact) for allreduce float/double SUM: the correctly
// rounded sum, bit-identical for every algorithm, partition shape and node
// count holding the same data. Seed 004 B.3's two-pass method, run over ANY
// allreduce algorithm: the data never travels as floats, only as integers,
// whose addition is associative, so the algorithm's combining order cannot
// matter.
//
//   pass 1  the inner allreduce over DType::kAluWord operands, reducer
//           make_alu_reducer(MAX, unsigned, 4): float_sum_pass1_encode's
//           three 4-byte words per block of 64 values (largest and smallest
//           exponent, a flag for -0 and for Inf/NaN).
//   plan    float_sum_plan, from the pass-1 result alone: identical on every
//           node.
//   pass 2  comm.advance_tag(), then the inner allreduce again (a second
//           object of the same algorithm) over float_sum_pass2_encode's
//           operands with
//           make_alu_reducer(ADD, unsigned, plan.width): exact integer sums
//           of each value's fixed-point window. Skipped when every input is
//           +0.
//   decode  float_sum_decode: one rounding, to nearest even.
//
// Slices: a large operation runs as consecutive slices of
// tuning::kExactSliceValues values (a whole number of 64-value blocks), each
// through both passes, pass 1 of a slice after comm.advance_tag() too. Every
// block's plan depends on that block alone, so the result is the same bit
// for bit; what changes is where the data lives: a slice's input, operands
// and result stay in the CPU's cache from the pass-1 encoding to the
// decoding, where a whole 4 MiB operation went out to memory between each
// two of its five passes over the data (in place on the 2-node memif rig,
// the kernels ran 2 to 4.5 times slower than their micro-benchmarks).
// Both passes sum in place in this object's buffers, each with its own
// inner algorithm object (so each keeps its plan for its own shape), all
// kept between operations (the communicator parks this object while others
// run): steady state allocates nothing.
// Cost: the inner algorithm's cost for 0.19 bytes per value, then for about
// (block exponent spread + 54 + log2 N) / 8 bytes per value (for doubles
// within 40 binades of each other on 8 nodes 12 bytes; the model is in
// collectives/arith/tree_arith.h section 3), plus the encoding and decoding,
// vectorised on CPUs with AVX-512; two operations' latency per slice.
// Memory: the two passes' operand buffers for one slice, grown when a
// larger operation needs more.
// Limits: count < 2^32; at most 2^32 nodes; the inner algorithm must accept
// kAluWord operands of up to 256 bytes (every algorithm that reduces with
// CollArgs::red does).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/arith/tree_arith.h"
#include "collectives/coll.h"

namespace toroid {

class ExactSum final : public CollAlgo {
 public:
  explicit ExactSum(const AlgoInfo& inner);
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  void abort() override;
  std::string waiting_for() const override;

  // For tests: the pass running or last run (1 or 2; 0 before any), the
  // plan pass 1 gave, and the arguments of each pass's inner operation
  // (the slice running or last run).
  int pass() const { return pass_; }
  uint32_t slices() const { return slices_; }
  // Tests: slices of `values` values (a positive multiple of 64) from the
  // next operation on.
  void set_slice_values(uint32_t values) { slice_values_ = values; }
  const arith::FloatSumPlan& plan() const { return plan_; }
  const CollArgs& pass_args(int pass) const { return pass == 1 ? a1_ : a2_; }
  const CollAlgo* inner() const { return inner_; }

 private:
  template <typename F>
  Status start_slice();
  template <typename F>
  Status after_pass1();
  template <typename F>
  Status next_slice();
  template <typename F>
  Status step();
  void end(Status st);

  const AlgoInfo& inner_info_;
  std::unique_ptr<CollAlgo> passes_[2];  // one inner object per pass: each keeps its own plan
  CollAlgo* inner_ = nullptr;            // the running pass's
  Comm* comm_ = nullptr;
  CollArgs args_, a1_, a2_;
  uint32_t n_ = 0;
  uint64_t nodes_ = 0;
  int pass_ = 0;
  uint32_t slice_values_;
  uint32_t slices_ = 0;
  uint32_t slice_ = 0;   // the slice running
  uint32_t at_ = 0;      // its first value
  uint32_t len_ = 0;     // its values
  arith::FloatSumPlan plan_;
  std::vector<uint8_t> p1_, p2_;  // each pass's operands, summed in place
};

}  // namespace toroid
