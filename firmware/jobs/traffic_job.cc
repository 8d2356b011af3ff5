#include "firmware/jobs/traffic_job.h"

#include <cstdlib>
#include <cstring>

#include "base/rng.h"
#include "netstack/netstack.h"

namespace toroid {

namespace {

bool parse_u32(const std::string& s, uint32_t* out) {
  if (s.empty() || s.size() > 9) return false;
  uint32_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint32_t>(ch - '0');
  }
  *out = v;
  return true;
}

void fill_payload(uint8_t* out, uint32_t len, uint64_t seed, uint32_t src, uint32_t dst, uint32_t seq) {
  Rng rng(mix64(seed ^ mix64((uint64_t{src} << 40) ^ (uint64_t{dst} << 20) ^ seq)));
  for (uint32_t i = 0; i < len; i += 8) {
    const uint64_t w = rng.next();
    std::memcpy(out + i, &w, std::min<uint32_t>(8, len - i));
  }
}

}  // namespace

Result<TrafficSpec> parse_traffic_args(const std::map<std::string, std::string>& args) {
  TrafficSpec s;
  for (const auto& [k, v] : args) {
    if (k == "pattern") {
      if (v != "uniform" && v != "transpose" && v != "bitcomp" && v != "neighbor" && v != "alltoall" && v != "ring")
        return error(Code::kInvalid,
                     "traffic: unknown pattern '%s' (uniform, transpose, bitcomp, neighbor, alltoall, ring)",
                     v.c_str());
      s.pattern = v;
    } else if (k == "messages") {
      if (!parse_u32(v, &s.messages) || s.messages == 0 || s.messages > 100000)
        return error(Code::kInvalid, "traffic: --messages '%s' must be 1..100000", v.c_str());
    } else if (k == "size") {
      if (!parse_u32(v, &s.size) || s.size > (16u << 20))
        return error(Code::kInvalid, "traffic: --size '%s' must be 0..16777216 bytes", v.c_str());
    } else if (k == "routing") {
      if (v != "det" && v != "adaptive")
        return error(Code::kInvalid, "traffic: --routing '%s' must be det or adaptive", v.c_str());
      s.adaptive = v == "adaptive";
    } else {
      return error(Code::kInvalid, "traffic: unknown argument '--%s' (pattern, messages, size, routing)", k.c_str());
    }
  }
  return s;
}

std::vector<uint32_t> traffic_destinations(const TrafficSpec& s, uint32_t rank, const Dims& dims, uint64_t seed) {
  std::vector<uint32_t> out;
  const uint32_t n = dims.nodes();
  if (n < 2) return out;
  const Coord c = coord_of(rank, dims);
  auto one = [&](const Coord& d) {
    const uint32_t r = rank_of(d, dims);
    if (r != rank)
      for (uint32_t i = 0; i < s.messages; ++i) out.push_back(r);
  };
  if (s.pattern == "uniform") {
    Rng rng = Rng::derive(seed, 0x7261ull << 32 | rank);
    for (uint32_t i = 0; i < s.messages; ++i) {
      const uint32_t x = static_cast<uint32_t>(rng.below(n - 1));
      out.push_back(x >= rank ? x + 1 : x);
    }
  } else if (s.pattern == "transpose") {
    one(Coord{{c.c[1] % dims.n[0], c.c[0] % dims.n[1], c.c[2]}});
  } else if (s.pattern == "bitcomp") {
    one(Coord{{dims.n[0] - 1 - c.c[0], dims.n[1] - 1 - c.c[1], dims.n[2] - 1 - c.c[2]}});
  } else if (s.pattern == "neighbor") {
    std::vector<uint32_t> nb;
    for (int d = 0; d < kNumDirs; ++d) {
      if (has_link(static_cast<Dir>(d), dims)) nb.push_back(rank_of(neighbour(c, static_cast<Dir>(d), dims), dims));
    }
    for (uint32_t i = 0; i < s.messages; ++i) out.push_back(nb[i % nb.size()]);
  } else if (s.pattern == "ring") {
    one(Coord{{(c.c[0] + (dims.n[0] - 1) / 2) % dims.n[0], c.c[1], c.c[2]}});
  } else if (s.pattern == "alltoall") {
    for (uint32_t i = 0; i < s.messages; ++i)
      for (uint32_t k = 1; k < n; ++k) out.push_back((rank + k) % n);  // staggered start
  }
  return out;
}

TrafficJob::TrafficJob(const JobContext& ctx, const TrafficSpec& spec) : ctx_(ctx), spec_(spec), msgr_(ctx.msgr) {
  deadline_.set_callback(&TrafficJob::on_timeout, this);
}

void TrafficJob::start() {
  const Dims& dims = ctx_.personality.dims;
  const uint32_t n = dims.nodes();
  const uint32_t me = rank_of(ctx_.personality.coord, dims);
  const uint64_t seed = ctx_.personality.seed;
  expect_from_.assign(n, 0);
  for (uint32_t src = 0; src < n; ++src) {
    for (uint32_t d : traffic_destinations(spec_, src, dims, seed)) expect_from_[src] += d == me;
  }
  seen_.resize(n);
  for (uint32_t src = 0; src < n; ++src) {
    seen_[src].assign(expect_from_[src], false);
    expected_ += expect_from_[src];
  }
  dests_ = traffic_destinations(spec_, me, dims, seed);
  seq_to_.assign(n, 0);
  payloads_.resize(dests_.size());
  handles_.reserve(dests_.size());
  // One byte more than a message: a longer one shows as the wrong length.
  recvs_.resize(kPosted);
  rbufs_.assign(kPosted, std::vector<uint8_t>(spec_.size + 1));
  for (uint32_t i = 0; i < kPosted; ++i)
    if (!repost(i)) return;
  start_ns_ = ctx_.loop.now();
  ctx_.loop.timers().arm(deadline_, start_ns_ + ctx_.timeout_ns);
}

bool TrafficJob::send_some() {
  const Dims& dims = ctx_.personality.dims;
  const uint32_t me = rank_of(ctx_.personality.coord, dims);
  uint64_t bytes = 0;
  uint32_t sent = 0;
  for (; next_send_ < dests_.size() && sent < kSendsPerPoll && bytes < kSendBytesPerPoll; ++next_send_, ++sent) {
    const uint32_t dst = dests_[next_send_];
    std::vector<uint8_t>& payload = payloads_[next_send_];
    payload.resize(spec_.size);
    const uint32_t seq = seq_to_[dst]++;
    fill_payload(payload.data(), spec_.size, ctx_.personality.seed, me, dst, seq);
    MsgSendOptions opt;
    opt.adaptive = spec_.adaptive;
    auto h = msgr_.send_rank(dst, /*context=*/1, seq, payload.data(), spec_.size, opt);
    if (!h) {
      finish(h.status());
      return true;
    }
    handles_.push_back(*h);
    bytes += spec_.size;
  }
  return sent > 0;
}

bool TrafficJob::repost(uint32_t i) {
  RecvReq& r = recvs_[i];
  r = RecvReq{};
  r.src = kAnySource;
  r.context = 1;
  r.any_tag = true;
  r.buf = rbufs_[i].data();
  r.cap = rbufs_[i].size();
  if (Status st = msgr_.post(&r); !st) {
    finish(st);
    return false;
  }
  return true;
}

bool TrafficJob::poll() {
  if (done_) return false;
  bool moved = send_some();
  if (done_) return true;
  const uint32_t me = rank_of(ctx_.personality.coord, ctx_.personality.dims);
  std::vector<uint8_t> want;
  for (uint32_t i = 0; i < recvs_.size() && !done_; ++i) {
    RecvReq& r = recvs_[i];
    if (!r.done()) continue;
    moved = true;
    if (!r.status()) {
      finish(r.status());
      return true;
    }
    const uint32_t src = r.source();
    const uint32_t seq = r.msg_tag();
    if (seq >= seen_[src].size() || seen_[src][seq]) {  // more messages than the pattern sends, or again
      ++duplicates_;
    } else {
      seen_[src][seq] = true;
      ++delivered_;
      want.resize(spec_.size);
      fill_payload(want.data(), spec_.size, ctx_.personality.seed, src, me, seq);
      if (r.length() != spec_.size || std::memcmp(rbufs_[i].data(), want.data(), spec_.size) != 0) ++corrupt_;
    }
    if (!repost(i)) return true;
  }
  if (!msgr_.status()) {
    finish(msgr_.status());
    return true;
  }
  if (delivered_ + duplicates_ >= expected_ && next_send_ == dests_.size() && msgr_.sends_pending() == 0) {
    finish(Status::ok());
    return true;
  }
  return moved;
}

void TrafficJob::finish(Status st) {
  if (done_) return;
  done_ = true;
  ctx_.loop.timers().cancel(deadline_);
  // The messenger may still point into payloads of unfinished sends and
  // into the receive buffers.
  msgr_.cancel_sends();
  for (RecvReq& r : recvs_) msgr_.withdraw(&r);
  payloads_.clear();
  if (st && (delivered_ != expected_ || duplicates_ || corrupt_))
    st = error(Code::kInternal, "traffic: expected=%lu delivered=%lu duplicates=%lu corrupt=%lu",
               static_cast<unsigned long>(expected_), static_cast<unsigned long>(delivered_),
               static_cast<unsigned long>(duplicates_), static_cast<unsigned long>(corrupt_));
  status_ = st;
  CaseResult r;
  r.coll = "traffic";
  r.algo = spec_.adaptive ? "adaptive" : "det";
  r.name = spec_.pattern + " " + std::to_string(spec_.messages) + "x" + std::to_string(spec_.size) + "B";
  r.elapsed_ns = ctx_.loop.now() - start_ns_;
  r.verdict = st ? CaseVerdict::kPass : CaseVerdict::kFail;
  if (!st) r.detail = st.to_string();
  cases_.push_back(r);
}

void TrafficJob::on_timeout(void* self) {
  auto* j = static_cast<TrafficJob*>(self);
  char dur[32];
  j->finish(error(Code::kTimeout, "traffic: not finished within %s: received %lu of %lu messages, %u sends pending",
                  format_duration(j->ctx_.timeout_ns, dur, sizeof dur), static_cast<unsigned long>(j->delivered_),
                  static_cast<unsigned long>(j->expected_), j->msgr_.sends_pending()));
}

std::vector<std::pair<std::string, uint64_t>> TrafficJob::totals() const {
  const uint64_t lost = expected_ > delivered_ ? expected_ - delivered_ : 0;
  return {{"expected", expected_}, {"delivered", delivered_}, {"duplicates", duplicates_}, {"corrupt", corrupt_},
          {"lost", lost}};
}

}  // namespace toroid
