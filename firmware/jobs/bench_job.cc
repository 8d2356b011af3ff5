#include "firmware/jobs/bench_job.h"

#include <algorithm>
#include <cstdio>

#include "collectives/select.h"
#include "netstack/netstack.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"

namespace toroid {

namespace {

// Output elements the whole check takes per round of the event loop: a few
// milliseconds of expected values at most (an exact float sum's cost about a
// microsecond each), so that the node keeps answering its links.
constexpr uint64_t kCheckSlice = 4096;

BenchSink& sink() {
  static BenchSink s;
  return s;
}

void emit_line(const std::string& line) {
  if (sink()) {
    sink()(line);
    return;
  }
  const std::string l = line + "\n";
  std::fwrite(l.data(), 1, l.size(), stdout);
  std::fflush(stdout);
}

// The name Comm reports for an operation, without the mode it ran in
// ("ring (exact)" -> "ring").
std::string base_name(const std::string& algo) {
  const size_t sp = algo.find(' ');
  return sp == std::string::npos ? algo : algo.substr(0, sp);
}

}  // namespace

void set_bench_sink(BenchSink s) { sink() = std::move(s); }

BenchJob::BenchJob(const JobContext& ctx, const BenchSpec& spec) : ctx_(ctx), spec_(spec) {
  deadline_.set_callback(&BenchJob::on_timeout, this);
}

void BenchJob::plan() {
  for (const auto& c : spec_.colls) {
    const CollKind kind = bench_coll_kind(c).value();  // parse_bench_args checked the names
    if (kind == CollKind::kBarrier) {
      plan_variant(kind, c, DType::kInt64, ROp::kSum, Repro::kNone);
      continue;
    }
    for (DType t : spec_.dtypes) {
      if (!coll_reduces(kind)) {
        plan_variant(kind, c, t, ROp::kSum, Repro::kNone);
        continue;
      }
      // Integers reduce exactly in any order: one run, repro none.
      const std::vector<Repro> repros = dtype_is_float(t) ? spec_.repros : std::vector<Repro>{Repro::kNone};
      for (ROp op : spec_.ops)
        for (Repro r : repros) plan_variant(kind, c, t, op, r);
    }
  }
}

// Entries of one (collective, datatype, op, repro): per --algos item, per
// size. The selector's pick is looked up per size as Comm::start will make
// it; where it is an algorithm listed anyway, that entry is marked and the
// `auto` item adds nothing.
void BenchJob::plan_variant(CollKind kind, const std::string& coll, DType t, ROp op, Repro r) {
  const auto it = spec_.algos.find(coll);
  const std::vector<std::string> list = it == spec_.algos.end() ? std::vector<std::string>{kBenchAuto} : it->second;
  const bool reduces = coll_reduces(kind);
  const bool barrier = kind == CollKind::kBarrier;
  const Status rop = reduces ? check_rop(t, op) : Status::ok();
  const size_t esize = reduces ? elem_size(t, op) : dtype_size(t);
  const uint64_t blocks =
      kind == CollKind::kAllgather || kind == CollKind::kAlltoall || kind == CollKind::kReduceScatter ? n_ : 1;
  const std::vector<uint64_t> sizes = barrier ? std::vector<uint64_t>{0} : spec_.sizes;

  struct PerSize {
    Entry base;
    CollArgs probe;
    std::string pick, pick_error;
  };
  std::vector<PerSize> per(sizes.size());
  static const uint8_t kProbe = 0;  // a non-null buffer: the selector reads only whether one is given
  for (size_t i = 0; i < sizes.size(); ++i) {
    Entry& e = per[i].base;
    e.kind = kind;
    e.coll = coll;
    e.dtype = t;
    e.op = op;
    e.repro = r;
    e.bytes = sizes[i];
    // A barrier moves no data: as many repetitions as the smallest
    // messages (a median of 20 cold ones measured wake-ups, not barriers).
    e.reps = bench_reps_for(spec_, barrier ? 0 : e.bytes);
    e.warmup = bench_warmup_for(spec_, barrier ? 0 : e.bytes);
    if (!rop) {
      e.skip = rop.message();
    } else if (!barrier && e.bytes % (blocks * esize) != 0) {
      // The loc ops' elements are (value, index) pairs: name them so.
      const std::string elem = std::string(dtype_name(t)) + (reduces && rop_is_loc(op) ? std::string(" ") + rop_name(op) : "");
      char b[200];
      if (blocks > 1)
        snprintf(b, sizeof b, "%lu B is not %lu equal blocks (one per node) of whole %zu-byte %s elements",
                 static_cast<unsigned long>(e.bytes), static_cast<unsigned long>(blocks), esize, elem.c_str());
      else
        snprintf(b, sizeof b, "%lu B is not a whole number of %zu-byte %s elements",
                 static_cast<unsigned long>(e.bytes), esize, elem.c_str());
      e.skip = b;
    }
    if (!e.skip.empty()) continue;
    e.count = barrier ? 0 : e.bytes / (blocks * esize);
    CollArgs& a = per[i].probe;
    a.kind = kind;
    a.dtype = t;
    a.op = op;
    a.repro = r;
    a.count = e.count;
    a.send = &kProbe;
    a.recv = const_cast<uint8_t*>(&kProbe);
    a.esize = esize;
    if (reduces) a.red = make_reducer(t, op);
    auto pick = select_algo(ctx_.comm.info(), a);
    if (pick) per[i].pick = (*pick)->name;
    else per[i].pick_error = pick.status().message();
  }

  for (const std::string& item : list) {
    const uint32_t series = plan_.empty() ? 0 : plan_.back().series + 1;
    for (PerSize& p : per) {
      Entry e = p.base;
      e.series = series;
      if (item == kBenchAuto) {
        if (!e.skip.empty() || !p.pick_error.empty()) {
          e.algo = kBenchAuto;  // nothing was picked
          if (e.skip.empty()) e.skip = p.pick_error;
        } else if (std::find(list.begin(), list.end(), p.pick) != list.end()) {
          continue;  // the listed entry of that algorithm is the selector's choice
        } else {
          e.algo = p.pick;
          e.want = "";
          e.selected = true;
        }
      } else {
        e.algo = e.want = item;
        if (e.skip.empty()) {
          e.skip = algo_unusable(*find_algo(kind, item), ctx_.comm.info(), p.probe);
          e.selected = p.pick == item;
        }
      }
      plan_.push_back(std::move(e));
    }
  }
}

std::string BenchJob::variant(const Entry& e) {
  if (e.kind == CollKind::kBarrier) return "";
  std::string s = dtype_name(e.dtype);
  if (coll_reduces(e.kind)) s += std::string(" ") + rop_name(e.op);
  if (e.repro != Repro::kNone) s += std::string(" ") + repro_name(e.repro);
  return s;
}

std::string BenchJob::describe(const Entry& e) {
  if (e.kind == CollKind::kBarrier) return e.coll + " " + e.algo;
  return e.coll + " " + e.algo + " " + variant(e) + " " + std::to_string(e.bytes) + " B";
}

void BenchJob::start() {
  n_ = ctx_.personality.dims.nodes();
  me_ = rank_of(ctx_.personality.coord, ctx_.personality.dims);
  plan();
  start_ns_ = ctx_.loop.now();
  ctx_.loop.timers().arm(deadline_, start_ns_ + ctx_.timeout_ns);
  next_ = 0;
  begin_entry();
}

namespace {
constexpr uint64_t kWarmBytes = 16ull << 20;
constexpr uint32_t kMaxWarmup = 200;
}  // namespace

void BenchJob::begin_entry() {
  while (next_ < plan_.size() && !plan_[next_].skip.empty()) ++next_;
  if (next_ >= plan_.size()) {
    finish();
    return;
  }
  Entry& e = plan_[next_];
  // The first operations after link training run slow until enough data
  // has crossed the links (measured on 2x1x1 memif: a 128 KiB alltoall from
  // 45-65 us down to 15 us over its first 50-60 repetitions, whether it is
  // the sweep's first row or follows a row of small messages): until the
  // sweep has moved kWarmBytes per node, a row warms up (up to
  // kMaxWarmup repetitions) until it has, unless warmup=N says how long.
  if (!spec_.warmup_given && moved_ < kWarmBytes) {
    const uint64_t per = std::max<uint64_t>(e.bytes, 1);
    const uint64_t need = (kWarmBytes - moved_ + per - 1) / per;
    e.warmup = std::max(e.warmup, static_cast<uint32_t>(std::min<uint64_t>(need, kMaxWarmup)));
  }
  rep_ = 0;
  whole_rep_ = false;
  e.rep_ns.clear();
  e.rep_ns.reserve(e.reps);
  entry_start_ = ctx_.loop.now();
  data_.prepare(e.kind, e.dtype, e.op, e.repro, e.count, me_, n_, ctx_.personality.seed);
  args_ = data_.args();
  start_align();
}

void BenchJob::start_align() {
  phase_ = Phase::kAlign;
  if (Status st = ctx_.comm.start_barrier(); !st) fail(st);
}

void BenchJob::start_rep() {
  Entry& e = plan_[next_];
  phase_ = Phase::kOp;
  if (whole_rep_) data_.poison_whole();
  else data_.poison();
  t0_ = ctx_.loop.clock().now_ns();  // timing: a fresh read, not the round's
  Status st = ctx_.comm.start(args_, e.want);
  if (st) return;
  // The library turns an operation down before it sends anything, the same
  // way on every node (e.g. exact float sums other than allreduce): a row
  // with its reason, and the sweep goes on.
  if (rep_ == 0 && st.code() == Code::kUnsupported) {
    skip_entry(st);
    return;
  }
  fail(st);
}

void BenchJob::skip_entry(const Status& why) {
  Entry& e = plan_[next_];
  e.skip = why.message();
  e.rep_ns.clear();
  data_.release();
  ++next_;
  begin_entry();
}

bool BenchJob::poll() {
  if (done_) return false;
  Status st;
  switch (phase_) {
    case Phase::kAlign:
      if (!ctx_.comm.test(&st)) return spin();
      if (!st) {
        fail(st);
        return true;
      }
      start_rep();
      return true;
    case Phase::kOp: {
      if (!ctx_.comm.test(&st)) return spin();
      const uint64_t t = ctx_.loop.clock().now_ns() - t0_;
      if (!st) {
        fail(st);
        return true;
      }
      Entry& e = plan_[next_];
      if (rep_ >= e.warmup && !whole_rep_) e.rep_ns.push_back(t);
      moved_ += e.bytes;
      ++rep_;
      // The operation is done here, but frames of it may still wait in
      // this node's transmit queues (a ring's last sends, out of credits):
      // they leave before the check (or the next row's data) holds the
      // loop, or a neighbour still in the same repetition would wait for
      // them (measured: 7.7 ms in one of five 4 MiB repetitions).
      if (!ctx_.comm.net().tx_drained()) {
        phase_ = Phase::kDrain;
        drain_until_ = ctx_.loop.now() + tuning::kTxDrainNs;
        return true;
      }
      end_rep();
      return true;
    }
    case Phase::kDrain:
      // Bounded: a neighbour that stopped taking frames fails the next
      // barrier on its own deadline.
      if (!ctx_.comm.net().tx_drained() && ctx_.loop.now() < drain_until_) return spin();
      end_rep();
      return true;
    case Phase::kCheck: {
      // The whole output, a slice per round: the rounds between keep this
      // node's links answered.
      const uint64_t to = checked_to_ + kCheckSlice;
      if (Status st = data_.check_whole(checked_to_, to); !st) {
        fail(error(Code::kInternal, "the repetition checked whole, after the timed ones: %s", st.message().c_str()));
        return true;
      }
      checked_to_ = to;
      if (checked_to_ >= data_.whole_elements()) end_entry();
      return true;
    }
    default:
      return false;
  }
}

void BenchJob::end_rep() {
  Entry& e = plan_[next_];
  // The selector's entries carry the name of what actually ran (an
  // environment override, TOROID_ALGO_<KIND>, can change the pick).
  if (rep_ == 1 && e.want.empty()) e.algo = base_name(ctx_.comm.algo());
  if (whole_rep_) {
    // The untimed repetition after the timed ones: its whole output, in
    // slices (Phase::kCheck).
    whole_rep_ = false;
    phase_ = Phase::kCheck;
    checked_to_ = 0;
    return;
  }
  if (Status st = data_.check(); !st) {
    fail(error(Code::kInternal, "repetition %u: %s", rep_, st.message().c_str()));
    return;
  }
  if (rep_ >= e.warmup + e.reps) {
    if (e.kind == CollKind::kBarrier) {
      end_entry();
      return;
    }
    whole_rep_ = true;
  }
  // The next repetition starts after a barrier, so every node starts it
  // within about one barrier's skew of the others. A barrier is its own
  // alignment.
  if (e.kind == CollKind::kBarrier) start_rep();
  else start_align();
}

void BenchJob::end_entry() {
  plan_[next_].elapsed_ns = ctx_.loop.now() - entry_start_;
  data_.release();
  ++next_;
  begin_entry();
}

void BenchJob::fail(Status st) {
  if (done_) return;
  const bool in_entry = next_ < plan_.size();
  const std::string what = in_entry ? describe(plan_[next_]) : "sweep";
  st = error(st.code(), "bench %s: %s", what.c_str(), st.message().c_str());
  CaseResult r;
  if (in_entry) {
    r.coll = plan_[next_].coll;
    r.algo = plan_[next_].algo;
    r.name = plan_[next_].kind == CollKind::kBarrier ? "barrier" : variant(plan_[next_]) + " " +
                                                                      std::to_string(plan_[next_].bytes) + " B";
  } else {
    r.coll = "bench";
  }
  r.verdict = CaseVerdict::kFail;
  r.detail = st.message();
  r.elapsed_ns = ctx_.loop.now() - entry_start_;
  cases_.push_back(r);
  ctx_.log.error("%s", st.message().c_str());
  status_ = st;
  // The communicator may hold a half-finished exchange: stop here.
  ctx_.msgr.cancel_sends();
  finish();
}

void BenchJob::finish() {
  if (done_) return;
  done_ = true;
  phase_ = Phase::kDone;
  ctx_.loop.timers().cancel(deadline_);
  data_.release();
  report_cases();
  emit_results();
}

// One case per series (collective, variant, --algos item): passed when it
// timed at least one size, skipped (with the first reason) when no size
// could run; nothing for a series the sweep did not reach.
void BenchJob::report_cases() {
  for (size_t i = 0; i < plan_.size();) {
    size_t end = i;
    while (end < plan_.size() && plan_[end].series == plan_[i].series) ++end;
    const Entry& first = plan_[i];
    CaseResult r;
    r.coll = first.coll;
    uint32_t timed = 0, skipped = 0;
    // The selector's series may pick different algorithms per size: all it
    // ran ("tree/cube400"), or what the rows say when none ran.
    auto add_algo = [&r](const std::string& a) {
      if (("/" + r.algo + "/").find("/" + a + "/") == std::string::npos) r.algo += (r.algo.empty() ? "" : "/") + a;
    };
    for (size_t k = i; k < end; ++k)
      if (plan_[k].skip.empty()) add_algo(plan_[k].algo);
    for (size_t k = i; k < end && r.algo.empty(); ++k) add_algo(plan_[k].algo);
    for (size_t k = i; k < end; ++k) {
      const Entry& e = plan_[k];
      if (!e.skip.empty()) {
        if (skipped++ == 0) r.detail = e.skip;
      } else if (e.rep_ns.size() == e.reps) {
        ++timed;
        r.elapsed_ns += e.elapsed_ns;
      }
    }
    const std::string v = variant(first);
    if (timed > 0) {
      r.detail.clear();
      r.name = first.kind == CollKind::kBarrier ? std::to_string(first.reps) + " reps"
                                                : "sweep, " + v + ", " + std::to_string(timed) + (timed == 1 ? " size" : " sizes");
      cases_.push_back(r);
    } else if (skipped == end - i) {
      r.name = first.kind == CollKind::kBarrier ? "barrier" : "sweep, " + v;
      r.verdict = CaseVerdict::kSkip;
      cases_.push_back(r);
    }
    i = end;
  }
}

void BenchJob::emit_results() {
  const std::string node = ctx_.personality.coord.to_string();
  for (const auto& e : plan_) {
    std::string l = "bench node=" + node + " coll=" + e.coll + " algo=" + e.algo;
    if (e.kind != CollKind::kBarrier) l += std::string(" dtype=") + dtype_name(e.dtype);
    if (coll_reduces(e.kind)) l += std::string(" op=") + rop_name(e.op) + " repro=" + repro_name(e.repro);
    if (e.selected) l += " sel=1";
    l += " bytes=" + std::to_string(e.bytes);
    if (!e.skip.empty()) {
      std::string why = e.skip;
      std::replace(why.begin(), why.end(), '"', '\'');  // the value is quoted
      emit_line(l + " skip=\"" + why + "\"");
      continue;
    }
    if (e.rep_ns.size() != e.reps) continue;  // not reached, or failed part way
    l += " reps=" + std::to_string(e.reps) + " warmup=" + std::to_string(e.warmup) + " rep_ns=";
    for (size_t i = 0; i < e.rep_ns.size(); ++i) {
      if (i) l += ',';
      l += std::to_string(e.rep_ns[i]);
    }
    emit_line(l);
  }
  // What the sweep ran on: the frame size, and every nonzero counter of the
  // links (summed over the ports), the ports, the messenger and the
  // communicator (prefixed port_, p2p_, coll_).
  LinkCounters links;
  PortStats ports;
  for (uint16_t i = 0; i < ctx_.net.port_count(); ++i) {
    add_counters(&links, &ctx_.net.link(i).counters(), kLinkCountersFields, kLinkCountersFieldCount);
    add_counters(&ports, &ctx_.net.link(i).port()->stats(), kPortStatsFields, kPortStatsFieldCount);
  }
  auto prefixed = [](const std::string& kv, const char* prefix) {
    std::string out;
    size_t pos = 0;
    while (pos < kv.size()) {
      size_t end = kv.find(' ', pos);
      if (end == std::string::npos) end = kv.size();
      if (end > pos) out += std::string(" ") + prefix + kv.substr(pos, end - pos);
      pos = end + 1;
    }
    return out;
  };
  char b[160];
  snprintf(b, sizeof b, "bench node=%s coll=info wait=%s frame=%u max_body=%u ports=%u ms=%.1f", node.c_str(),
           spin() ? "spin" : "idle",
           ctx_.net.max_body() + static_cast<uint32_t>(sizeof(wire::EthHeader) + sizeof(wire::LinkHeader)),
           ctx_.net.max_body(), ctx_.net.port_count(), static_cast<double>(ctx_.loop.now() - start_ns_) / 1e6);
  std::string l = b;
  l += prefixed(format_counters(&links, kLinkCountersFields, kLinkCountersFieldCount), "");
  l += prefixed(format_counters(&ports, kPortStatsFields, kPortStatsFieldCount), "port_");
  l += prefixed(format_counters(&ctx_.msgr.counters(), kP2pCountersFields, kP2pCountersFieldCount), "p2p_");
  l += prefixed(format_counters(&ctx_.comm.counters(), kCollCountersFields, kCollCountersFieldCount), "coll_");
  emit_line(l);
}

void BenchJob::on_timeout(void* self) {
  auto* j = static_cast<BenchJob*>(self);
  char dur[32];
  j->fail(error(Code::kTimeout, "not finished within %s", format_duration(j->ctx_.timeout_ns, dur, sizeof dur)));
}

}  // namespace toroid
