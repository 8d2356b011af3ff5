#include "firmware/jobs/selftest_job.h"

#include "collectives/comm.h"
#include "firmware/jobs/selftest_data.h"
#include "netstack/netstack.h"

namespace toroid {

SelftestJob::SelftestJob(const JobContext& ctx) : ctx_(ctx) {
  // Sizes: nothing, one element, a few, odd and bigger than one packet, and
  // 64 KiB (many packets per ring step).
  using A = AllreduceAlgo;
  plan_ = {
      {"barrier", 0, 1},
      {"allreduce", 0, 1},
      {"allreduce", 1, 1},
      {"allreduce", 7, 1},
      {"allreduce", 1001, 1},
      {"allreduce", 8192, 1},
      {"allreduce", 1, 1, A::kTorusTree},
      {"allreduce", 1001, 1, A::kTorusTree},
      {"allreduce", 8192, 1, A::kTorusTree},
      {"barrier", 0, 16},
  };
}

void SelftestJob::start() {
  next_ = 0;
  if (!plan_.empty()) begin_case();
}

void SelftestJob::begin_case() {
  const Plan& c = plan_[next_];
  running_ = true;
  if (round_ == 0) case_start_ = ctx_.loop.now();
  Status st;
  if (std::string(c.coll) == "barrier") {
    st = ctx_.comm.start_barrier();
  } else {
    const uint64_t rank = rank_of(ctx_.personality.coord, ctx_.personality.dims);
    buf_.resize(c.count);
    for (uint32_t i = 0; i < c.count; ++i) buf_[i] = selftest::input(ctx_.personality.seed, rank, i);
    st = ctx_.comm.start_allreduce_sum_i64(buf_.data(), c.count, c.algo);
  }
  if (!st) end_case(st);
}

void SelftestJob::end_case(Status st) {
  const Plan& c = plan_[next_];
  running_ = false;
  if (st && ++round_ < c.rounds) {
    begin_case();
    return;
  }
  CaseResult r;
  r.coll = c.coll;
  r.algo = std::string(c.coll) == "barrier" ? "torus-ring" : allreduce_algo_name(c.algo);
  if (std::string(c.coll) == "barrier")
    r.name = c.rounds == 1 ? "1 round" : std::to_string(c.rounds) + " rounds";
  else
    r.name = "int64 sum n=" + std::to_string(c.count);
  r.elapsed_ns = ctx_.loop.now() - case_start_;
  r.verdict = st ? CaseVerdict::kPass : CaseVerdict::kFail;
  if (!st) {
    r.detail = st.to_string();
    if (status_.is_ok()) status_ = st;
    ctx_.log.error("selftest: %s %s %s failed: %s", r.coll.c_str(), r.algo.c_str(), r.name.c_str(),
                   r.detail.c_str());
  }
  cases_.push_back(std::move(r));
  round_ = 0;
  ++next_;
  // After a failure the communicator may hold a half-finished exchange with
  // its neighbours; later cases would fail for that reason only. Stop here.
  if (!st) next_ = plan_.size();
  if (next_ < plan_.size()) begin_case();
}

bool SelftestJob::poll() {
  if (!running_) return false;
  Status st;
  if (!ctx_.comm.test(&st)) return false;
  const Plan& c = plan_[next_];
  if (st && std::string(c.coll) == "allreduce") {
    for (uint32_t i = 0; i < c.count; ++i) {
      const int64_t want = selftest::expected_sum(ctx_.personality.seed, ctx_.personality.dims.nodes(), i);
      if (buf_[i] != want) {
        st = error(Code::kInternal, "element %u is %lld, expected %lld", i, static_cast<long long>(buf_[i]),
                   static_cast<long long>(want));
        break;
      }
    }
  }
  end_case(st);
  return true;
}

}  // namespace toroid
