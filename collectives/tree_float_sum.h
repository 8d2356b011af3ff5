// Exact, reproducible floating-point SUM on the combine network (seed 004 B
// method 3, collectives/arith/tree_arith.h): pass 1 is an unsigned MAX over
// each block of 64 values' largest and smallest exponent and a flag for
// -0 / Inf / NaN, pass 2 an ADD of every value as a fixed-point integer over
// its block's exponent window, in biased fields wide enough that no sum
// carries out (long precision operands); every node decodes the same
// integers with the same code and rounds once, so the result is the
// correctly rounded sum, bit-identical on every node, for every tree shape
// and root, and for any order of contributions. A non-blocking state
// machine over CombineEngine.
#pragma once
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "collectives/arith/tree_arith.h"

namespace toroid {

class CombineEngine;

template <typename F>
class TreeFloatSum {
 public:
  // in and out may alias; both stay owned by the caller until done().
  // tag: the operation's number; its passes take CombineEngine::op_id(tag, 0 and 1).
  Status start(CombineEngine* engine, uint8_t cls, uint32_t tag, const F* in, F* out, uint32_t n, uint64_t nodes);
  bool progress();  // true if it moved
  bool done() const { return stage_ == Stage::kDone; }
  const Status& status() const { return status_; }

 private:
  enum class Stage : uint8_t { kPass1, kPass2, kDone };
  void finish(Status st);
  CombineEngine* engine_ = nullptr;
  uint32_t tag_ = 0;
  uint8_t cls_ = 0;
  const F* in_ = nullptr;
  F* out_ = nullptr;
  uint32_t n_ = 0;
  uint64_t nodes_ = 0;
  Stage stage_ = Stage::kDone;
  arith::FloatSumPlan plan_;
  std::vector<uint8_t> p1_, p2_;  // each pass's operands, combined in place
  Status status_;
};

extern template class TreeFloatSum<double>;
extern template class TreeFloatSum<float>;

}  // namespace toroid
