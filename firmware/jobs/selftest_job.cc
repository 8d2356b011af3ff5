#include "firmware/jobs/selftest_job.h"

#include <algorithm>
#include <cstring>

#include "base/rng.h"
#include "collectives/select.h"

namespace toroid {

namespace {

constexpr uint64_t kKiB = 1024, kMiB = 1024 * 1024;
const CollKind kKinds[] = {CollKind::kBarrier, CollKind::kAllreduce, CollKind::kReduce,
                           CollKind::kReduceScatter, CollKind::kBcast, CollKind::kGather,
                           CollKind::kScatter, CollKind::kAllgather, CollKind::kAlltoall};

bool rooted(CollKind k) {
  return k == CollKind::kReduce || k == CollKind::kBcast || k == CollKind::kGather || k == CollKind::kScatter;
}
bool blocked(CollKind k) {  // count is per block of n blocks
  return k == CollKind::kGather || k == CollKind::kScatter || k == CollKind::kAllgather ||
         k == CollKind::kReduceScatter || k == CollKind::kAlltoall;
}

uint64_t fingerprint(const uint8_t* p, size_t n) {
  uint64_t h = 0x243f6a8885a308d3ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = mix64(h ^ w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  return mix64(h ^ tail);
}

}  // namespace

Result<SelftestSpec> parse_selftest_args(const std::map<std::string, std::string>& args) {
  SelftestSpec s;
  for (const auto& [k, v] : args) {
    if (k == "only") {
      size_t at = 0;
      while (at <= v.size()) {
        const size_t comma = std::min(v.find(',', at), v.size());
        const std::string item = v.substr(at, comma - at);
        at = comma + 1;
        const size_t colon = item.find(':');
        auto kind = parse_coll_kind(item.substr(0, colon));
        if (!kind) return error(Code::kInvalid, "--only '%s': %s", item.c_str(), kind.status().message().c_str());
        SelftestSpec::Only o{*kind, colon == std::string::npos ? "" : item.substr(colon + 1)};
        if (!o.algo.empty() && !find_algo(o.kind, o.algo))
          return error(Code::kInvalid, "--only '%s': %s has no algorithm '%s' (%s)", item.c_str(),
                       coll_kind_name(o.kind), o.algo.c_str(), algo_names(o.kind).c_str());
        s.only.push_back(o);
      }
      continue;
    }
    if (k != "level")
      return error(Code::kInvalid, "--%s is not an option of --job selftest (level, only)", k.c_str());
    if (v == "quick") s.quick = true;
    else if (v != "full") return error(Code::kInvalid, "--level '%s': use full or quick", v.c_str());
  }
  return s;
}

SelftestJob::SelftestJob(const JobContext& ctx, SelftestSpec spec) : ctx_(ctx), opt_(spec) {
  case_.serve_loop_while_checking(ctx_.loop);
}

void SelftestJob::add_kind(CollKind kind, const std::string& algo) {
  const uint32_t n = ctx_.comm.size();
  auto add = [&](DType t, ROp op, uint64_t count, bool in_place = false, Repro repro = Repro::kNone,
                 uint32_t root = 0, uint32_t m = 0) {
    Planned p;
    p.spec.kind = kind;
    p.spec.algo = algo;
    p.spec.dtype = t;
    p.spec.op = op;
    p.spec.count = count;
    p.spec.in_place = in_place;
    p.spec.repro = repro;
    p.spec.root = root;
    p.spec.buffer_blocks = m;
    p.spec.seed = ctx_.personality.seed * 1000 + plan_.size();
    plan_.push_back(p);
  };
  if (kind == CollKind::kBarrier) {
    add(DType::kInt64, ROp::kSum, 0);
    add(DType::kInt64, ROp::kSum, 0);
    plan_.back().rounds = 16;
    return;
  }
  const bool reduces = coll_reduces(kind);
  // Size classes, as bytes of one node's buffer: 0, 1 element, odd, 1 KiB, 1 MiB.
  auto count_for = [&](uint64_t bytes, size_t esize) {
    uint64_t c = bytes / esize;
    if (blocked(kind)) c /= n;
    return c ? c : 1;
  };
  const ROp sum = ROp::kSum;
  add(DType::kInt32, reduces ? sum : sum, 0);
  add(reduces ? DType::kDouble : DType::kInt64, reduces ? ROp::kMax : sum, 1);
  add(reduces ? DType::kUint16 : DType::kUint8, reduces ? ROp::kBxor : sum, 1001);
  add(DType::kFloat, sum, count_for(kKiB, 4));
  if (!opt_.quick) add(DType::kInt64, sum, count_for(kMiB, 8));
  if (has_in_place(kind)) add(DType::kInt64, sum, 1001, true);
  if (rooted(kind)) add(DType::kInt32, reduces ? ROp::kMin : sum, 1001, false, Repro::kNone, n - 1);
  if (kind == CollKind::kAlltoall && n > 1) {
    // xor-inplace's buffer sizes: 1, 2 and n-1 blocks (others ignore m).
    for (uint32_t m : {1u, 2u, n - 1})
      if (m <= n - 1 && (m != n - 1 || m > 2)) add(DType::kInt64, sum, 33, true, Repro::kNone, 0, m);
  }
  if (reduces) {
    add(DType::kDouble, sum, 1001, false, Repro::kFixedOrder);
    if (kind == CollKind::kAllreduce) {
      add(DType::kDouble, sum, 77, false, Repro::kExact);
      add(DType::kFloat, sum, 77, true, Repro::kExact);
    }
    if (!opt_.quick) {
      for (int t = 0; t < kUserDTypes; ++t)
        for (int o = 0; o < kROps; ++o)
          if (check_rop(static_cast<DType>(t), static_cast<ROp>(o))) add(static_cast<DType>(t), static_cast<ROp>(o), 7);
    }
  } else if (!opt_.quick) {
    for (int t = 0; t < kUserDTypes; ++t) add(static_cast<DType>(t), sum, 7);
  }
}

void SelftestJob::build_plan() {
  plan_.clear();
  auto wanted = [&](const AlgoInfo& a) {
    if (opt_.only.empty()) return true;
    for (const auto& o : opt_.only)
      if (o.kind == a.kind && (o.algo.empty() || o.algo == a.name)) return true;
    return false;
  };
  for (CollKind kind : kKinds)
    for (const AlgoInfo& a : algorithms())
      if (a.kind == kind && wanted(a)) add_kind(kind, a.name);
}

void SelftestJob::start() {
  build_plan();
  next_ = 0;
  if (!plan_.empty()) begin_case();
}

void SelftestJob::begin_case() {
  const Planned& c = plan_[next_];
  if (round_ == 0) case_start_ = ctx_.loop.now();
  src_ = colldata::Source(c.spec.dtype, c.spec.op, c.spec.seed);
  case_.prepare(c.spec, ctx_.comm.rank(), ctx_.comm.size(), src_);
  // Not applicable here: skipped with the algorithm's reason.
  if (const AlgoInfo* a = find_algo(c.spec.kind, c.spec.algo)) {
    CollArgs args = case_.args();
    args.esize = coll_reduces(args.kind) ? elem_size(args.dtype, args.op) : dtype_size(args.dtype);
    const std::string why = algo_unusable(*a, ctx_.comm.info(), args);
    if (!why.empty()) {
      end_case(Status::ok(), why);
      return;
    }
  }
  phase_ = Phase::kOp;
  Status st = ctx_.comm.start(case_.args(), c.spec.algo);
  if (!st) {
    if (st.code() == Code::kUnsupported) end_case(Status::ok(), st.message());
    else end_case(st);
  }
}

Status SelftestJob::start_ident(ROp op) {
  CollArgs a;
  a.kind = CollKind::kAllreduce;
  a.dtype = DType::kUint64;
  a.op = op;
  a.count = 1;
  a.send = &fp_;
  a.recv = op == ROp::kMin ? &fp_min_ : &fp_max_;
  phase_ = op == ROp::kMin ? Phase::kIdentMin : Phase::kIdentMax;
  return ctx_.comm.start(a);
}

void SelftestJob::end_case(Status st, const std::string& skip) {
  const Planned& c = plan_[next_];
  phase_ = Phase::kIdle;
  if (st && skip.empty() && ++round_ < c.rounds) {
    begin_case();
    return;
  }
  CaseResult r;
  r.coll = coll_kind_name(c.spec.kind);
  r.algo = c.spec.algo;
  r.name = c.rounds == 1 ? c.spec.label() : std::to_string(c.rounds) + " rounds";
  if (c.spec.kind == CollKind::kBarrier && c.rounds == 1) r.name = "1 round";
  r.elapsed_ns = ctx_.loop.now() - case_start_;
  r.verdict = !skip.empty() ? CaseVerdict::kSkip : st ? CaseVerdict::kPass : CaseVerdict::kFail;
  if (!skip.empty()) r.detail = "not applicable: " + skip;
  if (!st) {
    r.detail = st.to_string();
    if (status_.is_ok()) status_ = st;
    ctx_.log.error("selftest: %s %s %s failed: %s", r.coll.c_str(), r.algo.c_str(), r.name.c_str(),
                   r.detail.c_str());
  }
  cases_.push_back(std::move(r));
  round_ = 0;
  ++next_;
  // A failed operation (timeout, link down) may leave messages of the
  // partners in flight that later cases would trip over: stop there. A
  // wrong result is recorded and the run goes on.
  if (!st && st.code() != Code::kInternal) next_ = plan_.size();
  if (next_ < plan_.size()) begin_case();
}

std::string SelftestJob::current_case() const {
  if (next_ >= plan_.size()) return {};
  const CaseSpec& c = plan_[next_].spec;
  return std::string(coll_kind_name(c.kind)) + " " + c.algo + " " + c.label();
}

bool SelftestJob::poll() {
  if (phase_ == Phase::kIdle) return false;
  Status st;
  if (!ctx_.comm.test(&st)) return false;
  const Planned& c = plan_[next_];
  if (phase_ == Phase::kOp) {
    if (st) st = case_.verify();
    // Fixed-order and exact float results must be the same bits everywhere.
    const bool identical = c.spec.repro != Repro::kNone && c.spec.kind == CollKind::kAllreduce &&
                           dtype_is_float(c.spec.dtype);
    if (st && identical) {
      fp_ = fingerprint(case_.output(), case_.output_bytes());
      if (Status s2 = start_ident(ROp::kMin); !s2) end_case(s2);
      return true;
    }
    end_case(st);
    return true;
  }
  if (!st) {
    end_case(st);
    return true;
  }
  if (phase_ == Phase::kIdentMin) {
    if (Status s2 = start_ident(ROp::kMax); !s2) end_case(s2);
    return true;
  }
  if (fp_min_ != fp_max_)
    st = error(Code::kInternal, "%s results differ between nodes (fingerprints %016llx .. %016llx)",
               repro_name(c.spec.repro), static_cast<unsigned long long>(fp_min_),
               static_cast<unsigned long long>(fp_max_));
  end_case(st);
  return true;
}

}  // namespace toroid
