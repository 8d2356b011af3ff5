#include "collectives/repro_exact.h"

#include <algorithm>
#include <string>

#include "base/tuning.h"
#include "collectives/comm.h"

namespace toroid {

static_assert(tuning::kExactSliceValues % arith::kFloatSumBlock == 0, "slices of whole blocks");

std::unique_ptr<CollAlgo> make_exact_sum(const AlgoInfo& inner) {
  if (inner.kind != CollKind::kAllreduce || !inner.make) return nullptr;
  return std::make_unique<ExactSum>(inner);
}

ExactSum::ExactSum(const AlgoInfo& inner) : inner_info_(inner), slice_values_(tuning::kExactSliceValues) {}

Status ExactSum::start(Comm& comm, const CollArgs& args) {
  reset();
  pass_ = 0;
  plan_ = arith::FloatSumPlan{};
  if (args.kind != CollKind::kAllreduce || args.op != ROp::kSum || !dtype_is_float(args.dtype)) {
    return error(Code::kUnsupported, "exact mode covers allreduce float and double sum, not %s %s on %s",
                 coll_kind_name(args.kind), rop_name(args.op), dtype_name(args.dtype));
  }
  if (args.count > UINT32_MAX) {
    return error(Code::kOutOfRange, "allreduce %s (exact): %llu values exceed the exact sum's 2^32 - 1",
                 inner_info_.name, static_cast<unsigned long long>(args.count));
  }
  if (slice_values_ == 0 || slice_values_ % arith::kFloatSumBlock != 0)
    return error(Code::kInvalid, "allreduce %s (exact): slices of %u values are not whole blocks of %u",
                 inner_info_.name, slice_values_, arith::kFloatSumBlock);
  comm_ = &comm;
  args_ = args;
  n_ = static_cast<uint32_t>(args.count);
  nodes_ = comm.size();
  if (n_ == 0) {  // every node skips both passes alike
    finish(Status::ok());
    return Status::ok();
  }
  if (!args.input() || !args.recv) return error(Code::kInvalid, "allreduce %s (exact): null buffer", inner_info_.name);
  for (auto& p : passes_) {
    if (!p) p = inner_info_.make();
    if (!p) return error(Code::kInternal, "allreduce %s (exact): no algorithm object", inner_info_.name);
  }
  slices_ = (n_ - 1) / slice_values_ + 1;
  slice_ = 0;
  Status st = args.dtype == DType::kDouble ? start_slice<double>() : start_slice<float>();
  if (!st) return error(st.code(), "allreduce %s (exact) pass 1: %s", inner_info_.name, st.message().c_str());
  progress();
  return Status::ok();
}

// Pass 1 of slice slice_: the operation's own tag for the first, a fresh one
// for each later slice (every node cuts the same slices from the same count).
template <typename F>
Status ExactSum::start_slice() {
  at_ = slice_ * slice_values_;
  len_ = std::min(slice_values_, n_ - at_);
  if (slice_ > 0) comm_->advance_tag();
  inner_ = passes_[0].get();
  const arith::TreePass p1 = arith::float_sum_pass1(len_);
  p1_.resize(p1.bytes());
  arith::float_sum_pass1_encode<F>(static_cast<const F*>(args_.input()) + at_, len_, p1_.data());
  a1_ = args_;
  a1_.dtype = DType::kAluWord;
  a1_.op = ROp::kMax;
  a1_.repro = Repro::kNone;
  a1_.red = make_alu_reducer(p1.op, p1.type, p1.width);
  a1_.esize = p1.width;
  a1_.count = p1.operands;
  a1_.send = nullptr;  // in place
  a1_.recv = p1_.data();
  pass_ = 1;
  return inner_->start(*comm_, a1_);
}

template <typename F>
Status ExactSum::after_pass1() {
  auto plan = arith::float_sum_plan<F>(p1_.data(), len_, nodes_);
  if (!plan) return plan.status();
  plan_ = *plan;
  if (plan_.operands == 0) return next_slice<F>();  // settled by pass 1
  const arith::TreePass p2 = arith::float_sum_pass2(plan_);
  p2_.resize(p2.bytes());
  arith::float_sum_pass2_encode<F>(plan_, p1_.data(), static_cast<const F*>(args_.input()) + at_, len_, p2_.data());
  a2_ = a1_;
  a2_.op = ROp::kSum;
  a2_.red = make_alu_reducer(p2.op, p2.type, p2.width);
  a2_.esize = p2.width;
  a2_.count = p2.operands;
  a2_.send = nullptr;  // in place
  a2_.recv = p2_.data();
  comm_->advance_tag();
  pass_ = 2;
  inner_ = passes_[1].get();
  return inner_->start(*comm_, a2_);
}

// The slice's result (in place: over its own input, already encoded), then
// the next slice or the end.
template <typename F>
Status ExactSum::next_slice() {
  arith::float_sum_decode<F>(plan_, p1_.data(), plan_.operands ? p2_.data() : nullptr, len_,
                             static_cast<F*>(args_.recv) + at_);
  if (++slice_ == slices_) {
    finish(Status::ok());
    return Status::ok();
  }
  return start_slice<F>();
}

// The inner operation of pass_ finished well: what comes next.
template <typename F>
Status ExactSum::step() {
  return pass_ == 1 ? after_pass1<F>() : next_slice<F>();
}

void ExactSum::end(Status st) {
  if (!st) {
    std::string slice;
    if (slices_ > 1) slice = " (slice " + std::to_string(slice_ + 1) + "/" + std::to_string(slices_) + ")";
    st = error(st.code(), "allreduce %s (exact) pass %d%s: %s", inner_info_.name, pass_, slice.c_str(),
               st.message().c_str());
  }
  finish(std::move(st));
}

bool ExactSum::progress() {
  if (done_ || !inner_) return false;
  bool moved = false;
  // An inner operation that finishes at once (one node, nothing to send)
  // lets the next one start in the same call.
  while (!done_) {
    moved |= inner_->progress();
    if (!inner_->done()) return moved;
    moved = true;
    if (!inner_->status()) {
      end(inner_->status());
      return true;
    }
    Status st = args_.dtype == DType::kDouble ? step<double>() : step<float>();
    if (!st) {
      end(st);
      return true;
    }
  }
  return moved;
}

void ExactSum::abort() {
  if (inner_ && !inner_->done()) inner_->abort();
  done_ = true;
}

std::string ExactSum::waiting_for() const {
  std::string w = "exact sum pass " + std::to_string(pass_);
  w += pass_ == 1 ? " (exponents and flags, max)" : " (integer sums)";
  if (slices_ > 1) w += ", slice " + std::to_string(slice_ + 1) + "/" + std::to_string(slices_);
  if (inner_ && !inner_->done()) w += ": " + inner_->waiting_for();
  return w;
}

}  // namespace toroid
