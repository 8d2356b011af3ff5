#include "collectives/tree_float_sum.h"

#include "netstack/tree/combine.h"

namespace toroid {

template <typename F>
Status TreeFloatSum<F>::start(CombineEngine* engine, uint8_t cls, uint32_t tag, const F* in, F* out, uint32_t n,
                              uint64_t nodes) {
  engine_ = engine;
  tag_ = tag;
  cls_ = cls;
  in_ = in;
  out_ = out;
  n_ = n;
  nodes_ = nodes;
  status_ = Status::ok();
  const arith::TreePass p1 = arith::float_sum_pass1(n);
  p1_.resize(p1.bytes());
  arith::float_sum_pass1_encode<F>(in, n, p1_.data());
  Status st =
      engine_->start(cls_, p1.op, p1.type, p1.width, p1_.data(), p1_.data(), p1.operands, CombineEngine::op_id(tag_, 0));
  if (!st) return st;
  stage_ = Stage::kPass1;
  return Status::ok();
}

template <typename F>
void TreeFloatSum<F>::finish(Status st) {
  status_ = std::move(st);
  stage_ = Stage::kDone;
}

template <typename F>
bool TreeFloatSum<F>::progress() {
  if (stage_ == Stage::kDone) return false;
  Status st;
  if (!engine_->test(cls_, &st)) return false;
  if (!st) {
    finish(st);
    return true;
  }
  if (stage_ == Stage::kPass1) {
    auto plan = arith::float_sum_plan<F>(p1_.data(), n_, nodes_);
    if (!plan) {
      finish(plan.status());
      return true;
    }
    plan_ = *plan;
    if (plan_.operands == 0) {  // every value fixed by pass 1 (+0 inputs only)
      arith::float_sum_decode<F>(plan_, p1_.data(), nullptr, n_, out_);
      finish(Status::ok());
      return true;
    }
    const arith::TreePass p2 = arith::float_sum_pass2(plan_);
    p2_.resize(p2.bytes());
    arith::float_sum_pass2_encode<F>(plan_, p1_.data(), in_, n_, p2_.data());
    st = engine_->start(cls_, p2.op, p2.type, p2.width, p2_.data(), p2_.data(), p2.operands,
                        CombineEngine::op_id(tag_, 1));
    if (!st) {
      finish(st);
      return true;
    }
    stage_ = Stage::kPass2;
    return true;
  }
  arith::float_sum_decode<F>(plan_, p1_.data(), p2_.data(), n_, out_);
  finish(Status::ok());
  return true;
}

template class TreeFloatSum<double>;
template class TreeFloatSum<float>;

}  // namespace toroid
