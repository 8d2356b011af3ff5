// Exact mode (Repro::kExact) for allreduce float/double SUM: the correctly
// rounded sum, bit-identical for every algorithm, partition shape and node
// count holding the same data. Seed 004 B.3's two-pass method, run over ANY
// allreduce algorithm: the data never travels as floats, only as integers,
// whose addition is associative, so the algorithm's combining order cannot
// matter.
//
//   pass 1  the inner allreduce over DType::kAluWord operands, reducer
//           make_alu_reducer(MAX, unsigned, 4): float_sum_pass1_encode's six
//           4-byte words per value (largest and smallest exponent, special
//           flags).
//   plan    float_sum_plan, from the pass-1 result alone: identical on every
//           node.
//   pass 2  comm.advance_tag(), then the inner allreduce again (the same
//           object restarted) over float_sum_pass2_encode's operands with
//           make_alu_reducer(ADD, signed, plan.width): exact integer sums.
//           Skipped when pass 1 settles every value (NaN, Inf, zeros).
//   decode  float_sum_decode: one rounding, to nearest even.
//
// Cost: the inner algorithm's cost for 24 bytes per value, then for 16..512
// bytes per value (8..40 for floats: depends on the exponent spread, see
// collectives/arith/tree_arith.h); two operations' latency. Memory: the two
// passes' operand buffers (allocated in start() and, for pass 2, once when
// pass 1 ends).
// Limits: count < 2^32 / 6 values; at most 2^32 nodes; the inner algorithm
// must accept kAluWord operands of up to 256 bytes (every algorithm that
// reduces with CollArgs::red does).
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
  explicit ExactSum(const AlgoInfo& inner) : inner_info_(inner) {}
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  void abort() override;
  std::string waiting_for() const override;

  // For tests: the pass running or last run (1 or 2; 0 before any), the
  // plan pass 1 gave, and the arguments of each pass's inner operation.
  int pass() const { return pass_; }
  const arith::FloatSumPlan& plan() const { return plan_; }
  const CollArgs& pass_args(int pass) const { return pass == 1 ? a1_ : a2_; }
  const CollAlgo* inner() const { return inner_.get(); }

 private:
  template <typename F>
  Status after_pass1();
  template <typename F>
  void decode();
  void end(Status st);

  const AlgoInfo& inner_info_;
  std::unique_ptr<CollAlgo> inner_;
  Comm* comm_ = nullptr;
  CollArgs args_, a1_, a2_;
  uint32_t n_ = 0;
  uint64_t nodes_ = 0;
  int pass_ = 0;
  arith::FloatSumPlan plan_;
  std::vector<uint8_t> p1_in_, p1_out_, p2_in_, p2_out_;
};

}  // namespace toroid
