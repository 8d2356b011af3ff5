#include "firmware/jobs/soak_job.h"

#include <algorithm>

#include "base/rng.h"
#include "base/text.h"
#include "collectives/select.h"

namespace toroid {

namespace {

const CollKind kKinds[] = {CollKind::kAllreduce, CollKind::kBcast,     CollKind::kBarrier,
                           CollKind::kAllgather, CollKind::kReduce,    CollKind::kAlltoall,
                           CollKind::kGather,    CollKind::kScatter,   CollKind::kReduceScatter};
const uint64_t kCounts[] = {1, 7, 64, 129, 1000, 4096};

bool blocked(CollKind k) {  // count is per block of n blocks
  return k == CollKind::kGather || k == CollKind::kScatter || k == CollKind::kAllgather ||
         k == CollKind::kReduceScatter || k == CollKind::kAlltoall;
}

}  // namespace

Result<SoakSpec> parse_soak_args(const std::map<std::string, std::string>& args) {
  SoakSpec s;
  for (const auto& [k, v] : args) {
    uint64_t n = 0;
    if (!parse_u64(v, &n)) return error(Code::kInvalid, "--%s '%s' is not a non-negative integer", k.c_str(), v.c_str());
    if (k == "seconds") {
      if (n == 0 || n > 7 * 24 * 3600) return error(Code::kInvalid, "--seconds %s: use 1 .. 604800", v.c_str());
      s.seconds = n;
    } else if (k == "until") {
      s.until_ns = n;
    } else if (k == "max_count") {
      if (n == 0 || n > (1u << 20)) return error(Code::kInvalid, "--max_count %s: use 1 .. 1048576", v.c_str());
      s.max_count = n;
    } else {
      return error(Code::kInvalid, "--%s is not an option of --job soak (seconds, until, max_count)", k.c_str());
    }
  }
  return s;
}

SoakJob::SoakJob(const JobContext& ctx, SoakSpec spec) : ctx_(ctx), spec_(spec) {
  case_.serve_loop_while_checking(ctx_.loop);
}

void SoakJob::start() {
  started_ = true;
  until_ = spec_.until_ns ? spec_.until_ns : ctx_.loop.now() + spec_.seconds * kSec;
  gen_ = ctx_.recovery ? ctx_.recovery->generation() : 0;
  round_ = 0;
  phase_ = Phase::kWait;
}

CaseSpec SoakJob::round_spec(uint64_t h) const {
  Rng rng(h);
  CaseSpec s;
  s.kind = kKinds[rng.below(std::size(kKinds))];
  s.dtype = DType::kInt64;
  s.op = ROp::kSum;
  if (coll_reduces(s.kind)) {
    // Now and then a float sum, or a MAX, so more of the reducers run.
    const uint64_t r = rng.below(4);
    if (r == 1) s.dtype = DType::kDouble;
    if (r == 2) s.op = ROp::kMax;
  }
  const uint32_t n = ctx_.comm.size();
  uint64_t count = kCounts[rng.below(std::size(kCounts))];
  count = std::min(count, spec_.max_count);
  if (blocked(s.kind)) count = std::max<uint64_t>(1, count / n);
  s.count = s.kind == CollKind::kBarrier ? 0 : count;
  s.root = static_cast<uint32_t>(rng.below(n));
  s.in_place = has_in_place(s.kind) && rng.chance(0.25);
  s.seed = h;
  // An algorithm of this kind that applies here, or the selector's choice.
  std::vector<const AlgoInfo*> fit;
  for (const AlgoInfo& a : algorithms()) {
    if (a.kind != s.kind) continue;
    CollArgs args;
    args.kind = s.kind;
    args.dtype = s.dtype;
    args.op = s.op;
    args.count = s.count;
    args.root = s.root;
    args.esize = coll_reduces(s.kind) ? elem_size(s.dtype, s.op) : dtype_size(s.dtype);
    if (algo_unusable(a, ctx_.comm.info(), args).empty()) fit.push_back(&a);
  }
  const uint64_t pick = rng.below(fit.size() + 1);
  s.algo = pick < fit.size() ? fit[pick]->name : "";
  return s;
}

void SoakJob::start_round() {
  const uint64_t h = mix64(ctx_.personality.seed ^ mix64(0x50a4 + gen_) ^ mix64(round_));
  spec_now_ = round_spec(h);
  src_ = colldata::Source(spec_now_.dtype, spec_now_.op, spec_now_.seed);
  case_.prepare(spec_now_, ctx_.comm.rank(), ctx_.comm.size(), src_);
  op_gen_ = gen_;
  op_round_ = round_;
  op_start_ = ctx_.loop.now();
  ++n_.ops;
  phase_ = Phase::kOp;
  Status st = ctx_.comm.start(case_.args(), spec_now_.algo);
  if (!st) end_round(st);
}

void SoakJob::end_round(Status st) {
  phase_ = Phase::kWait;
  const uint64_t took = ctx_.loop.now() - op_start_;
  n_.max_op_ns = std::max(n_.max_op_ns, took);
  const std::string what = std::string(coll_kind_name(spec_now_.kind)) + " " +
                           (spec_now_.algo.empty() ? "(auto)" : spec_now_.algo) + " " + spec_now_.label();
  if (st) {
    st = case_.verify();
    // (An operation that finished just before a reset counts, but the new
    // generation's rounds still start at 0 on every node.)
    if (op_gen_ == gen_) ++round_;
    if (st) {
      ++n_.ok;
      if (op_gen_ == gen_) ++n_.ok_last_gen;
      return;
    }
    // A wrong result: the one thing a soak must never see.
    ++n_.wrong;
    if (first_wrong_.empty()) first_wrong_ = what + ": " + st.message();
    ctx_.log.error("soak: generation %u round %lu %s: WRONG RESULT: %s", op_gen_, static_cast<unsigned long>(op_round_),
                   what.c_str(), st.message().c_str());
    return;
  }
  if (ctx_.loop.now() >= until_) {
    // Past the end, partners may have stopped before joining this round.
    ++n_.cut_off;
    return;
  }
  ++n_.failed;
  switch (st.code()) {
    case Code::kLinkDown: ++n_.failed_link_down; break;
    case Code::kReset: ++n_.failed_reset; break;
    case Code::kTimeout: ++n_.failed_timeout; break;
    default: ++n_.failed_other; break;
  }
  ctx_.log.warn("soak: generation %u round %lu %s failed: %s", op_gen_, static_cast<unsigned long>(op_round_),
                what.c_str(), st.to_string().c_str());
  // A failure that came without a reset (a timeout: a partner's state is
  // out of step) starts one, so that every node starts over together.
  if (ctx_.recovery && ctx_.recovery->generation() == op_gen_)
    ctx_.recovery->request_reset(error(Code::kReset, "soak: round %lu (%s) failed on node %s: %s",
                                       static_cast<unsigned long>(op_round_), what.c_str(),
                                       ctx_.personality.node_name().c_str(), st.to_string().c_str()));
}

void SoakJob::finish() {
  done_ = true;
  CaseResult r;
  r.coll = "soak";
  r.algo = "mixed";
  r.name = "verified collectives";
  r.elapsed_ns = n_.max_op_ns;
  char detail[256];
  snprintf(detail, sizeof detail,
           "ok=%lu failed=%lu (link down %lu, reset %lu, timeout %lu, other %lu) wrong=%lu hangs=%lu cut_off=%lu "
           "generations=%lu",
           static_cast<unsigned long>(n_.ok), static_cast<unsigned long>(n_.failed),
           static_cast<unsigned long>(n_.failed_link_down), static_cast<unsigned long>(n_.failed_reset),
           static_cast<unsigned long>(n_.failed_timeout), static_cast<unsigned long>(n_.failed_other),
           static_cast<unsigned long>(n_.wrong), static_cast<unsigned long>(n_.hangs),
           static_cast<unsigned long>(n_.cut_off), static_cast<unsigned long>(n_.generations));
  r.detail = detail;
  if (n_.wrong) status_ = error(Code::kInternal, "soak: %lu wrong results; first: %s", static_cast<unsigned long>(n_.wrong),
                                first_wrong_.c_str());
  else if (n_.hangs) status_ = error(Code::kTimeout, "soak: %lu operations hung", static_cast<unsigned long>(n_.hangs));
  else if (n_.ok == 0) status_ = error(Code::kTimeout, "soak: no operation completed (%s)", detail);
  r.verdict = status_ ? CaseVerdict::kPass : CaseVerdict::kFail;
  if (!status_) r.detail = status_.message();
  cases_.push_back(std::move(r));
  ctx_.log.info("soak: %s", detail);
}

bool SoakJob::poll() {
  if (!started_ || done_) return false;
  const uint64_t now = ctx_.loop.now();
  const uint32_t gen = ctx_.recovery ? ctx_.recovery->generation() : 0;
  if (gen != gen_) {
    // The partition reset: the rounds of the new generation count from 0.
    n_.generations += static_cast<uint32_t>(gen - gen_);
    gen_ = gen;
    round_ = 0;
    n_.ok_last_gen = 0;
  }
  if (phase_ == Phase::kOp) {
    Status st;
    if (ctx_.comm.test(&st)) {
      end_round(st);
      return true;
    }
    // Past the end, partners may have stopped before joining: wait a few
    // operation times, then give up on it (cut off, not failed).
    if (now >= until_ && now - until_ > std::min(ctx_.comm.timeout_ns(), 4 * n_.max_op_ns + kMs)) {
      ctx_.comm.cancel(error(Code::kAborted, "soak: the run ended"));
      Status st;
      (void)ctx_.comm.test(&st);
      ++n_.cut_off;
      phase_ = Phase::kWait;
      return true;
    }
    // The communicator ends every operation at its deadline; one that
    // outlives twice that is a hang (counted; the partition resets).
    const uint64_t limit = 2 * ctx_.comm.timeout_ns();
    if (now - op_start_ > limit) {
      ++n_.hangs;
      ctx_.log.error("soak: generation %u round %lu hung (in flight for more than %lu ms)", op_gen_,
                     static_cast<unsigned long>(op_round_), static_cast<unsigned long>(limit / kMs));
      if (ctx_.recovery) ctx_.recovery->request_reset(error(Code::kTimeout, "soak: an operation hung"));
      phase_ = Phase::kWait;
      return true;
    }
    return false;
  }
  if (now >= until_) {
    finish();
    return true;
  }
  if (ctx_.recovery && !ctx_.recovery->links_up()) return false;
  start_round();
  return true;
}

std::vector<std::pair<std::string, uint64_t>> SoakJob::totals() const {
  return {{"ops", n_.ops},
          {"ok", n_.ok},
          {"failed", n_.failed},
          {"wrong", n_.wrong},
          {"hangs", n_.hangs},
          {"cut_off", n_.cut_off},
          {"generations", n_.generations},
          {"failed_link_down", n_.failed_link_down},
          {"failed_reset", n_.failed_reset},
          {"failed_timeout", n_.failed_timeout},
          {"failed_other", n_.failed_other}};
}

}  // namespace toroid
