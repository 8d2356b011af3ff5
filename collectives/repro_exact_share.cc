#include "collectives/repro_exact_share.h"

#include <algorithm>
#include <cfenv>
#include <cstring>
#include <string>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "base/tuning.h"
#include "collectives/arith/arith_util.h"
#include "collectives/arith/tree_arith.h"
#include "collectives/comm.h"
#include "collectives/select.h"

namespace toroid {

namespace {

// IEEE addition is the correctly rounded sum only while the FPU rounds to
// nearest and keeps subnormals (a program built with -ffast-math sets FTZ
// and DAZ at start-up).
bool fpu_rounds_plainly() {
#if defined(__x86_64__)
  constexpr unsigned kFtz = 0x8000, kDaz = 0x0040, kRoundingControl = 0x6000;
  return (_mm_getcsr() & (kFtz | kDaz | kRoundingControl)) == 0;
#else
  return std::fegetround() == FE_TONEAREST;
#endif
}

// a + b, rounded once; any NaN as the default quiet NaN.
template <typename F>
void pair_sum(const F* a, const F* b, uint64_t n, F* out) {
  const F nan = arith::detail::quiet_nan<F>();
  for (uint64_t i = 0; i < n; ++i) {
    const F s = a[i] + b[i];
    out[i] = s == s ? s : nan;
  }
}

}  // namespace

std::unique_ptr<CollAlgo> make_exact_share() { return std::make_unique<ExactShare>(); }

std::string exact_share_applicable(const CommInfo&, const CollArgs& a) {
  if (a.kind != CollKind::kAllreduce || a.repro != Repro::kExact || a.op != ROp::kSum || !dtype_is_float(a.dtype))
    return "sums floats exactly only (float or double sum in exact mode)";
  return "";
}

Status ExactShare::start(Comm& comm, const CollArgs& args) {
  reset();
  phase_ = Phase::kIdle;
  running_ = nullptr;
  at_ = rounded_ = 0;
  if (std::string why = exact_share_applicable(comm.info(), args); !why.empty())
    return error(Code::kUnsupported, "allreduce exact-share: %s, not %s %s on %s", why.c_str(),
                 coll_kind_name(args.kind), rop_name(args.op), dtype_name(args.dtype));
  comm_ = &comm;
  args_ = args;
  nodes_ = comm.size();
  rank_ = comm.rank();
  if (args.count == 0) {
    finish(Status::ok());
    return Status::ok();
  }
  if (!args.input() || !args.recv) return error(Code::kInvalid, "allreduce exact-share: null buffer");
  const size_t esize = dtype_size(args.dtype);
  const uint64_t blocks = (args.count - 1) / arith::kFloatSumBlock + 1;
  share_ = ((blocks - 1) / nodes_ + 1) * arith::kFloatSumBlock;
  const uint64_t total = share_ * nodes_;
  parts_.resize(total * esize);
  if (args.dtype == DType::kDouble) {
    dptrs_.resize(nodes_);
  } else {
    fptrs_.resize(nodes_);
  }
  const void* src = args.input();
  if (total == args.count) {
    out_ = static_cast<uint8_t*>(args.recv);
  } else {  // the last share padded with +0, which changes no other value's sum
    in_stage_.resize(total * esize);
    std::memcpy(in_stage_.data(), src, args.count * esize);
    std::memset(in_stage_.data() + args.count * esize, 0, (total - args.count) * esize);
    src = in_stage_.data();
    out_stage_.resize(total * esize);
    out_ = out_stage_.data();
  }
  pair_add_ = nodes_ == 2 && !encode_pairs_ && fpu_rounds_plainly();
  phase_ = Phase::kAlltoall;
  if (Status st = start_sub(CollKind::kAlltoall, const_cast<void*>(src), parts_.data()); !st) {
    phase_ = Phase::kIdle;
    return error(st.code(), "allreduce exact-share alltoall: %s", st.message().c_str());
  }
  progress();
  return Status::ok();
}

// One sub-operation on share_ values per rank: its algorithm is the
// selector's, asked again only when the shape changes (as Comm keeps its
// choice), and its object is kept while the choice stays the same.
Status ExactShare::start_sub(CollKind kind, void* send, void* recv) {
  sub_ = CollArgs{};
  sub_.kind = kind;
  sub_.dtype = args_.dtype;
  sub_.send = send;
  sub_.recv = recv;
  sub_.count = share_;
  sub_.esize = dtype_size(args_.dtype);
  Sub& s = subs_[kind == CollKind::kAlltoall ? 0 : 1];
  if (!s.algo || s.count != share_ || s.dtype != args_.dtype) {  // the communicator owns this object
    auto info = select_algo(comm_->info(), sub_);
    if (!info) return info.status();
    if (s.info != *info || !s.algo) s.algo = (*info)->make();
    s.info = *info;
    s.count = share_;
    s.dtype = args_.dtype;
  }
  running_ = s.algo.get();
  return running_->start(*comm_, sub_);
}

template <typename F>
std::vector<const F*>& ExactShare::ptrs() {
  if constexpr (std::is_same_v<F, double>) {
    return dptrs_;
  } else {
    return fptrs_;
  }
}

// Values of the own share summed per progress() call: a slice's encoding
// work over all N contributions about ExactSum's per slice, so the event
// loop (the router forwarding other nodes' alltoall) runs between slices
// and the data stays in cache (whole blocks, at least one).
uint64_t ExactShare::slice_values() const {
  const uint64_t v = tuning::kExactSliceValues / nodes_ / arith::kFloatSumBlock * arith::kFloatSumBlock;
  return std::max<uint64_t>(v, arith::kFloatSumBlock);
}

// The next slice of this rank's share: parts_ holds rank j's contribution to
// it at j * share_.
template <typename F>
Status ExactShare::local_slice() {
  const uint64_t len = std::min(slice_values(), share_ - at_);
  const F* part = reinterpret_cast<const F*>(parts_.data()) + at_;
  F* out = reinterpret_cast<F*>(out_) + rank_ * share_ + at_;
  at_ += len;
  rounded_ += len;
  if (pair_add_) {
    pair_sum(part, part + share_, len, out);
    return Status::ok();
  }
  const auto n = static_cast<uint32_t>(len);
  const F** xs = ptrs<F>().data();
  for (uint32_t j = 0; j < nodes_; ++j) xs[j] = part + j * share_;
  p1_.resize(arith::float_sum_pass1(n).bytes());
  arith::float_sum_pass1_encode_parts<F>(xs, nodes_, n, p1_.data());
  auto plan = arith::float_sum_plan<F>(p1_.data(), n, nodes_);
  if (!plan) return plan.status();
  if (plan->operands != 0) {  // else settled by pass 1 (zeros, infinities, NaNs)
    const arith::TreePass p2 = arith::float_sum_pass2(*plan);
    p2_.resize(p2.bytes());
    if (!arith::float_sum_pass2_encode_sum<F>(*plan, p1_.data(), xs, nodes_, n, p2_.data()))
      encode_each<F>(*plan, p2, n);
  }
  arith::float_sum_decode<F>(*plan, p1_.data(), plan->operands ? p2_.data() : nullptr, n, out);
  return Status::ok();
}

// Each contribution's pass-2 operands, added by the ALU: the layouts the
// vector kernels do not take.
template <typename F>
void ExactShare::encode_each(const arith::FloatSumPlan& plan, const arith::TreePass& p2, uint32_t n) {
  const F* const* xs = ptrs<F>().data();
  p2tmp_.resize(p2.bytes());
  arith::float_sum_pass2_encode<F>(plan, p1_.data(), xs[0], n, p2_.data());
  const Reducer add = make_alu_reducer(p2.op, p2.type, p2.width);
  for (uint32_t j = 1; j < nodes_; ++j) {
    arith::float_sum_pass2_encode<F>(plan, p1_.data(), xs[j], n, p2tmp_.data());
    add.apply(p2_.data(), p2tmp_.data(), p2.operands);
  }
}

Status ExactShare::after_local() {
  comm_->advance_tag();
  phase_ = Phase::kAllgather;
  return start_sub(CollKind::kAllgather, nullptr, out_);  // in place: own share at rank_ * share_
}

void ExactShare::end(Status st) {
  const char* what = phase_ == Phase::kAlltoall ? "alltoall" : phase_ == Phase::kLocal ? "local sum" : "allgather";
  finish(error(st.code(), "allreduce exact-share %s: %s", what, st.message().c_str()));
}

bool ExactShare::progress() {
  if (done_ || phase_ == Phase::kIdle) return false;
  bool moved = false;
  while (!done_) {
    if (phase_ == Phase::kLocal) {
      Status st = args_.dtype == DType::kDouble ? local_slice<double>() : local_slice<float>();
      if (st && at_ == share_) st = after_local();
      if (!st) end(st);
      return true;  // one slice per call: the event loop runs between
    }
    moved |= running_->progress();
    if (!running_->done()) return moved;
    moved = true;
    if (!running_->status()) {
      end(running_->status());
      return true;
    }
    if (phase_ == Phase::kAlltoall) {
      phase_ = Phase::kLocal;
      continue;
    }
    if (out_ != args_.recv) std::memcpy(args_.recv, out_, args_.count * dtype_size(args_.dtype));
    finish(Status::ok());
  }
  return moved;
}

void ExactShare::abort() {
  if (running_ && !running_->done()) running_->abort();
  done_ = true;
}

std::string ExactShare::waiting_for() const {
  switch (phase_) {
    case Phase::kIdle: return "nothing";
    case Phase::kLocal:
      return "exact-share: summing its share (" + std::to_string(at_) + "/" + std::to_string(share_) + " values)";
    case Phase::kAlltoall:
    case Phase::kAllgather:
      break;
  }
  std::string w = phase_ == Phase::kAlltoall ? "exact-share alltoall" : "exact-share allgather";
  if (running_ && !running_->done()) w += ": " + running_->waiting_for();
  return w;
}

}  // namespace toroid
