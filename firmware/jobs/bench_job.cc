#include "firmware/jobs/bench_job.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "netstack/netstack.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"

namespace toroid {

namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kMaxBytes = 64 * kMiB;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(sep, pos);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  *out = v;
  return true;
}

// "4096", "4k", "4K", "4KiB", "4m", "4MiB" -> bytes.
bool parse_size(std::string s, uint64_t* out) {
  uint64_t mult = 1;
  for (const char* suf : {"KiB", "kiB", "KB", "kB", "K", "k"}) {
    const size_t n = std::strlen(suf);
    if (s.size() > n && s.compare(s.size() - n, n, suf) == 0) {
      s.resize(s.size() - n);
      mult = 1024;
      break;
    }
  }
  if (mult == 1) {
    for (const char* suf : {"MiB", "MB", "M", "m"}) {
      const size_t n = std::strlen(suf);
      if (s.size() > n && s.compare(s.size() - n, n, suf) == 0) {
        s.resize(s.size() - n);
        mult = kMiB;
        break;
      }
    }
  }
  if (mult == 1 && s.size() > 1 && (s.back() == 'B' || s.back() == 'b')) s.pop_back();
  uint64_t v;
  if (!parse_u64(s, &v)) return false;
  *out = v * mult;
  return true;
}

// The byte a sender puts at offset i of its send buffer.
inline uint8_t pattern(uint32_t src, uint64_t i) { return static_cast<uint8_t>(src * 37u + i * 7u + 1u); }

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

}  // namespace

void set_bench_sink(BenchSink s) { sink() = std::move(s); }

std::vector<std::string> bench_colls() { return {"allreduce", "bcast", "allgather", "alltoall", "barrier"}; }

std::vector<uint64_t> bench_default_sizes() {
  std::vector<uint64_t> s;
  for (uint64_t b = 8; b <= 4 * kMiB; b *= 4) s.push_back(b);
  if (s.back() != 4 * kMiB) s.push_back(4 * kMiB);
  return s;
}

Result<BenchSpec> parse_bench_args(const std::map<std::string, std::string>& args) {
  BenchSpec s;
  s.colls = bench_colls();
  s.algos = {"torus-ring", "torus-tree"};
  s.sizes = bench_default_sizes();
  for (const auto& [k, v] : args) {
    if (k == "colls") {
      s.colls.clear();
      for (const auto& c : split(v, ',')) {
        const auto known = bench_colls();
        if (std::find(known.begin(), known.end(), c) == known.end())
          return error(Code::kInvalid, "bench: --colls: unknown collective '%s' (allreduce, bcast, allgather, "
                                       "alltoall, barrier)", c.c_str());
        if (std::find(s.colls.begin(), s.colls.end(), c) == s.colls.end()) s.colls.push_back(c);
      }
    } else if (k == "algos") {
      s.algos.clear();
      for (const auto& a : split(v, ',')) {
        if (!find_algo(CollKind::kAllreduce, a))
          return error(Code::kInvalid, "bench: --algos: unknown allreduce algorithm '%s' (%s)", a.c_str(),
                       algo_names(CollKind::kAllreduce).c_str());
        if (std::find(s.algos.begin(), s.algos.end(), a) == s.algos.end()) s.algos.push_back(a);
      }
    } else if (k == "sizes") {
      s.sizes.clear();
      for (const auto& x : split(v, ',')) {
        uint64_t b;
        if (!parse_size(x, &b) || b == 0 || b > kMaxBytes)
          return error(Code::kInvalid, "bench: --sizes: '%s' is not a size of 1 B .. 64 MiB (e.g. 8, 4096, 64k, 4M)",
                       x.c_str());
        s.sizes.push_back(b);
      }
    } else if (k == "reps") {
      uint64_t r;
      if (!parse_u64(v, &r) || r == 0 || r > 100000)
        return error(Code::kInvalid, "bench: --reps '%s' must be 1..100000", v.c_str());
      s.reps = static_cast<uint32_t>(r);
      s.reps_given = true;
    } else if (k == "warmup") {
      uint64_t r;
      if (!parse_u64(v, &r) || r > 1000) return error(Code::kInvalid, "bench: warmup '%s' must be 0..1000", v.c_str());
      s.warmup = static_cast<uint32_t>(r);
      s.warmup_given = true;
    } else if (k == "wait") {
      if (v != "spin" && v != "idle") return error(Code::kInvalid, "bench: --wait '%s' must be spin or idle", v.c_str());
      s.spin = v == "spin";
    } else {
      return error(Code::kInvalid, "bench: unknown argument '%s' (colls, algos, sizes, reps, warmup, wait)",
                   k.c_str());
    }
  }
  return s;
}

uint32_t bench_reps_for(const BenchSpec& s, uint64_t bytes) {
  if (bytes < kMiB) return s.reps;
  return std::min(s.reps, std::max<uint32_t>(5, s.reps / 4));
}

uint32_t bench_warmup_for(const BenchSpec& s, uint64_t bytes) {
  if (s.warmup_given || bytes < kMiB) return s.warmup;
  return std::min<uint32_t>(s.warmup, 1);
}

BenchJob::BenchJob(const JobContext& ctx, const BenchSpec& spec) : ctx_(ctx), spec_(spec) {
  deadline_.set_callback(&BenchJob::on_timeout, this);
}

void BenchJob::plan() {
  for (const auto& c : spec_.colls) {
    if (c == "barrier") {
      Entry e;
      e.coll = c;
      e.algo = "barrier-network";
      e.reps = spec_.reps;
      e.warmup = spec_.warmup;
      plan_.push_back(e);
      continue;
    }
    std::vector<std::pair<std::string, std::string>> algos;
    if (c == "allreduce") {
      for (const std::string& a : spec_.algos) algos.emplace_back(a, a);
    } else if (c == "bcast") {
      algos.emplace_back("p2p-flat", "");
    } else {
      algos.emplace_back("p2p-direct", "");
    }
    for (const auto& [name, a] : algos) {
      for (uint64_t b : spec_.sizes) {
        Entry e;
        e.coll = c;
        e.algo = name;
        e.ar = a;
        e.bytes = b;
        e.reps = bench_reps_for(spec_, b);
        e.warmup = bench_warmup_for(spec_, b);
        if (c == "allreduce" && b % 8 != 0) e.skip = "int64 allreduce: not a multiple of 8 bytes";
        if ((c == "allgather" || c == "alltoall") && b % n_ != 0)
          e.skip = std::to_string(b) + " B is not " + std::to_string(n_) + " equal blocks (one per node)";
        if (c != "allreduce" && c != "barrier" && n_ < 2) e.skip = "needs at least 2 nodes";
        plan_.push_back(e);
      }
    }
  }
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

bool BenchJob::is_p2p(const Entry& e) const { return e.coll == "bcast" || e.coll == "allgather" || e.coll == "alltoall"; }

void BenchJob::begin_entry() {
  while (next_ < plan_.size() && !plan_[next_].skip.empty()) ++next_;
  if (next_ >= plan_.size()) {
    finish();
    return;
  }
  Entry& e = plan_[next_];
  rep_ = 0;
  e.rep_ns.clear();
  e.rep_ns.reserve(e.reps);
  entry_start_ = ctx_.loop.now();
  if (e.coll == "allreduce") ar_.assign(e.bytes / 8, 0);
  if (is_p2p(e)) prepare_p2p(e);
  start_align();
}

void BenchJob::start_align() {
  phase_ = Phase::kAlign;
  if (Status st = ctx_.comm.start_barrier(); !st) fail(st);
}

void BenchJob::start_rep() {
  Entry& e = plan_[next_];
  phase_ = Phase::kOp;
  Status st;
  if (e.coll == "allreduce") {
    // Inputs: rank+1+i; the sum is n(n+1)/2 + n*i (checked after each rep).
    const int64_t base = static_cast<int64_t>(me_) + 1;
    for (size_t i = 0; i < ar_.size(); ++i) ar_[i] = base + static_cast<int64_t>(i);
    t0_ = ctx_.loop.clock().now_ns();
    st = ctx_.comm.start_allreduce_sum_i64(ar_.data(), ar_.size(), e.ar);
  } else if (e.coll == "barrier") {
    t0_ = ctx_.loop.clock().now_ns();
    st = ctx_.comm.start_barrier(e.algo);
  } else {
    t0_ = ctx_.loop.clock().now_ns();
    st = start_p2p(e);
  }
  if (!st) fail(st);
}

void BenchJob::prepare_p2p(const Entry& e) {
  uint64_t len = e.bytes;
  if (e.coll == "allgather") len = e.bytes / n_;
  if (e.coll == "bcast" && me_ != 0) len = 0;
  sbuf_.resize(len);
  for (uint64_t i = 0; i < len; ++i) sbuf_[i] = pattern(me_, i);
  recv_len_ = static_cast<uint32_t>(e.coll == "bcast" ? e.bytes : e.bytes / n_);
}

Status BenchJob::start_p2p(const Entry& e) {
  handles_.clear();
  recv_from_.clear();
  const Dims& dims = ctx_.personality.dims;
  const uint32_t block = static_cast<uint32_t>(e.bytes / n_);
  if (e.coll == "bcast") {
    if (me_ == 0) {
      for (uint32_t k = 1; k < n_; ++k) {
        auto h = ctx_.msgr.send(coord_of(k, dims), kContext, sbuf_.data(), static_cast<uint32_t>(e.bytes));
        if (!h) return h.status();
        handles_.push_back(*h);
      }
    } else {
      recv_from_.push_back(0);
    }
    return Status::ok();
  }
  // Staggered: node r sends to r+1 first, then r+2, ... (every link busy at once).
  for (uint32_t k = 1; k < n_; ++k) {
    const uint32_t dst = (me_ + k) % n_;
    const uint8_t* p = e.coll == "alltoall" ? sbuf_.data() + static_cast<size_t>(dst) * block : sbuf_.data();
    auto h = ctx_.msgr.send(coord_of(dst, dims), kContext, p, block);
    if (!h) return h.status();
    handles_.push_back(*h);
    recv_from_.push_back((me_ + n_ - k) % n_);
  }
  return Status::ok();
}

// Takes whatever arrived; ok while everything matches.
Status BenchJob::check_p2p(const Entry& e) {
  const Dims& dims = ctx_.personality.dims;
  Messenger::Message m;
  for (size_t i = 0; i < recv_from_.size();) {
    const uint32_t src = recv_from_[i];
    if (!ctx_.msgr.recv(coord_of(src, dims), kContext, &m)) {
      ++i;
      continue;
    }
    recv_from_[i] = recv_from_.back();
    recv_from_.pop_back();
    const uint64_t base = e.coll == "alltoall" ? static_cast<uint64_t>(me_) * recv_len_ : 0;
    bool ok = m.data.size() == recv_len_;
    if (ok && recv_len_ > 0) {
      for (uint64_t k : {uint64_t{0}, uint64_t{recv_len_} / 2, uint64_t{recv_len_} - 1})
        ok = ok && m.data[k] == pattern(src, base + k);
    }
    if (!ok)
      return error(Code::kInternal, "bench %s %s %lu B: the message from rank %u is wrong (%zu bytes, expected %u)",
                   e.coll.c_str(), e.algo.c_str(), static_cast<unsigned long>(e.bytes), src, m.data.size(),
                   recv_len_);
  }
  return ctx_.msgr.status();
}

bool BenchJob::op_complete(Status* st) {
  const Entry& e = plan_[next_];
  if (!is_p2p(e)) return ctx_.comm.test(st);
  *st = check_p2p(e);
  if (!*st) return true;
  if (!recv_from_.empty()) return false;
  for (uint32_t h : handles_)
    if (!ctx_.msgr.send_done(h)) return false;
  return true;
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
      if (!op_complete(&st)) return spin();
      const uint64_t t = ctx_.loop.clock().now_ns() - t0_;
      if (!st) {
        fail(st);
        return true;
      }
      Entry& e = plan_[next_];
      if (rep_ >= e.warmup) e.rep_ns.push_back(t);
      ++rep_;
      end_rep();
      return true;
    }
    default:
      return false;
  }
}

void BenchJob::end_rep() {
  Entry& e = plan_[next_];
  if (e.coll == "allreduce") {
    const int64_t n = n_;
    for (size_t i = 0; i < ar_.size(); ++i) {
      const int64_t want = n * (n + 1) / 2 + n * static_cast<int64_t>(i);
      if (ar_[i] != want) {
        fail(error(Code::kInternal, "bench allreduce %s %lu B: element %zu is %lld, expected %lld", e.algo.c_str(),
                   static_cast<unsigned long>(e.bytes), i, static_cast<long long>(ar_[i]),
                   static_cast<long long>(want)));
        return;
      }
    }
  }
  if (rep_ >= e.warmup + e.reps) {
    end_entry();
    return;
  }
  // The next repetition starts after a barrier, so every node starts it
  // within about one barrier's skew of the others. A barrier is its own
  // alignment.
  if (e.coll == "barrier") start_rep();
  else start_align();
}

void BenchJob::end_entry() {
  const Entry& e = plan_[next_];
  // One case per (collective, algorithm): its last size closes it.
  const bool last_of_kind = next_ + 1 >= plan_.size() || plan_[next_ + 1].coll != e.coll ||
                            plan_[next_ + 1].algo != e.algo;
  if (last_of_kind) {
    uint32_t sizes = 0;
    for (const auto& x : plan_)
      if (x.coll == e.coll && x.algo == e.algo && x.skip.empty()) ++sizes;
    CaseResult r;
    r.coll = e.coll;
    r.algo = e.algo;
    r.name = e.coll == "barrier" ? std::to_string(e.reps) + " reps" : "sweep, " + std::to_string(sizes) + " sizes";
    r.elapsed_ns = ctx_.loop.now() - entry_start_;
    cases_.push_back(r);
  }
  ++next_;
  begin_entry();
}

void BenchJob::fail(Status st) {
  if (done_) return;
  const std::string what = next_ < plan_.size()
                               ? plan_[next_].coll + " " + plan_[next_].algo + " " + std::to_string(plan_[next_].bytes) + " B"
                               : "bench";
  CaseResult r;
  if (next_ < plan_.size()) {
    r.coll = plan_[next_].coll;
    r.algo = plan_[next_].algo;
    r.name = std::to_string(plan_[next_].bytes) + " B";
  } else {
    r.coll = "bench";
  }
  r.verdict = CaseVerdict::kFail;
  r.detail = st.to_string();
  r.elapsed_ns = ctx_.loop.now() - entry_start_;
  cases_.push_back(r);
  ctx_.log.error("bench: %s failed: %s", what.c_str(), st.to_string().c_str());
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
  emit_results();
}

void BenchJob::emit_results() {
  const std::string node = ctx_.personality.coord.to_string();
  for (const auto& e : plan_) {
    std::string l = "bench node=" + node + " coll=" + e.coll + " algo=" + e.algo + " bytes=" + std::to_string(e.bytes);
    if (!e.skip.empty()) {
      l += " skip=\"" + e.skip + "\"";
      emit_line(l);
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
  j->fail(error(Code::kTimeout, "bench: not finished within %s", format_duration(j->ctx_.timeout_ns, dur, sizeof dur)));
}

}  // namespace toroid
