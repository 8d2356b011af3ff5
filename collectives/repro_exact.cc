#include "collectives/repro_exact.h"

#include "collectives/comm.h"

namespace toroid {

std::unique_ptr<CollAlgo> make_exact_sum(const AlgoInfo& inner) {
  if (inner.kind != CollKind::kAllreduce || !inner.make) return nullptr;
  return std::make_unique<ExactSum>(inner);
}

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
  inner_ = passes_[0].get();
  const arith::TreePass p1 = arith::float_sum_pass1(n_);
  p1_.resize(p1.bytes());
  if (args.dtype == DType::kDouble) {
    arith::float_sum_pass1_encode<double>(static_cast<const double*>(args.input()), n_, p1_.data());
  } else {
    arith::float_sum_pass1_encode<float>(static_cast<const float*>(args.input()), n_, p1_.data());
  }
  a1_ = args;
  a1_.dtype = DType::kAluWord;
  a1_.op = ROp::kMax;
  a1_.repro = Repro::kNone;
  a1_.red = make_alu_reducer(p1.op, p1.type, p1.width);
  a1_.esize = p1.width;
  a1_.count = p1.operands;
  a1_.send = nullptr;  // in place
  a1_.recv = p1_.data();
  pass_ = 1;
  Status st = inner_->start(comm, a1_);
  if (!st) {
    return error(st.code(), "allreduce %s (exact) pass 1: %s", inner_info_.name, st.message().c_str());
  }
  progress();
  return Status::ok();
}

template <typename F>
Status ExactSum::after_pass1() {
  auto plan = arith::float_sum_plan<F>(p1_.data(), n_, nodes_);
  if (!plan) return plan.status();
  plan_ = *plan;
  if (plan_.operands == 0) return Status::ok();  // settled by pass 1
  const arith::TreePass p2 = arith::float_sum_pass2(plan_);
  p2_.resize(p2.bytes());
  arith::float_sum_pass2_encode<F>(plan_, p1_.data(), static_cast<const F*>(args_.input()), n_, p2_.data());
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

template <typename F>
void ExactSum::decode() {
  arith::float_sum_decode<F>(plan_, p1_.data(), plan_.operands ? p2_.data() : nullptr, n_,
                             static_cast<F*>(args_.recv));
}

void ExactSum::end(Status st) {
  if (!st) st = error(st.code(), "allreduce %s (exact) pass %d: %s", inner_info_.name, pass_, st.message().c_str());
  finish(std::move(st));
}

bool ExactSum::progress() {
  if (done_ || !inner_) return false;
  bool moved = inner_->progress();
  if (!inner_->done()) return moved;
  if (!inner_->status()) {
    end(inner_->status());
    return true;
  }
  const bool dbl = args_.dtype == DType::kDouble;
  if (pass_ == 1) {
    Status st = dbl ? after_pass1<double>() : after_pass1<float>();
    if (!st) {
      end(st);
      return true;
    }
    if (pass_ == 2) {
      if (!inner_->done()) return true;
      return progress();  // pass 2 finished at once (one node, or nothing to send)
    }
  }
  if (dbl) decode<double>();
  else decode<float>();
  finish(Status::ok());
  return true;
}

void ExactSum::abort() {
  if (inner_ && !inner_->done()) inner_->abort();
  done_ = true;
}

std::string ExactSum::waiting_for() const {
  std::string w = "exact sum pass " + std::to_string(pass_);
  w += pass_ == 1 ? " (exponents and flags, max)" : " (integer sums)";
  if (inner_ && !inner_->done()) w += ": " + inner_->waiting_for();
  return w;
}

}  // namespace toroid
