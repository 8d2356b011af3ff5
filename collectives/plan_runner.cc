#include "collectives/plan_runner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "collectives/comm.h"

namespace toroid {

using schedule::Act;
using schedule::Buf;

Status PlanAlgo::start(Comm& comm, const CollArgs& args) {
  reset();
  comm_ = &comm;
  args_ = args;
  const CommInfo& ci = comm.info();
  const Shape shape{args.kind, args.count,  args.esize, args.root, args.buffer_blocks, ci.size, ci.rank,
                    args.seed, args.in_place(), true};
  if (!(shape == shape_)) {
    shape_ = Shape{};
    auto plan = build(ci, args);
    if (!plan) return plan.status();
    plan_ = std::move(*plan);
    size_t most_sends = 0, most_recvs = 0;
    for (const auto& s : plan_.steps) {
      most_sends = std::max(most_sends, s.sends.size());
      most_recvs = std::max(most_recvs, s.recvs.size());
    }
    handles_.reserve(most_sends);
    if (reqs_.size() < most_recvs) reqs_.resize(most_recvs);
    if (state_.size() < most_recvs) state_.resize(most_recvs);
    if (prev_same_peer_.size() < most_recvs) prev_same_peer_.resize(most_recvs);
    by_peer_.reserve(most_recvs);
    if (ov_at_.size() < most_recvs + 1) ov_at_.resize(most_recvs + 1);
    by_start_.reserve(most_sends);
    ov_idx_.reserve(most_recvs);  // one overlapping send per receive is the usual most
    max_end_.reserve(most_sends);
    if (log_slots_.size() < most_recvs) log_slots_.resize(most_recvs);
    shape_ = shape;
  }
  log_.slots = log_slots_.data();
  log_.cap = static_cast<uint32_t>(log_slots_.size());
  // The scratch never needs clearing: every plan writes before it reads.
  if (tmp_.size() < plan_.tmp_elems * args.esize) tmp_.resize(plan_.tmp_elems * args.esize);
  arrivals_.clear();
  step_ = 0;
  in_step_ = false;
  if (plan_.steps.empty()) {
    for (const auto& c : plan_.finish) copy(c);
    finish(Status::ok());
  }
  return Status::ok();
}

uint8_t* PlanAlgo::base(Buf b) {
  switch (b) {
    case Buf::kIn: return const_cast<uint8_t*>(static_cast<const uint8_t*>(args_.input()));
    case Buf::kOut: return static_cast<uint8_t*>(args_.recv);
    case Buf::kTmp: return tmp_.data();
  }
  return nullptr;
}

void PlanAlgo::copy(const schedule::Copy& c) {
  if (c.n == 0) return;
  const size_t e = args_.esize;
  uint8_t* src = base(c.from) + c.from_off * e;
  uint8_t* dst = base(c.to) + c.to_off * e;
  if (src != dst) std::memmove(dst, src, c.n * e);
}

void PlanAlgo::reduce_into(const void* ctx, uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  const Reducer& red = *static_cast<const Reducer*>(ctx);
  red.apply(dst, src, bytes / red.esize);
}

namespace {
bool overlap(const uint8_t* a, uint64_t an, const uint8_t* b, uint64_t bn) { return an && bn && a < b + bn && b < a + an; }
}  // namespace

// Whether receive i of the step may be posted now, and the send that must
// gate it (0: none). It waits while it would overwrite what more than one
// unsent send of the step reads, or a send not issued yet; one such send
// gates it instead (its segments land behind that send's progress). A
// reducing receive also waits for an earlier receive of the step that
// reduces into the same elements, so float results keep the plan's order.
bool PlanAlgo::ready(uint32_t i, uint64_t* gate) {
  const schedule::Step& st = plan_.steps[step_];
  const schedule::Recv& r = st.recvs[i];
  *gate = 0;
  // Receives from one peer match its messages in posting order: never post
  // one ahead of an earlier one from the same peer (the previous one posted
  // means every earlier one is: they post in order).
  if (prev_same_peer_[i] >= 0 && state_[prev_same_peer_[i]] == RecvState::kWaiting) return false;
  if (r.n == 0) return true;
  const size_t e = args_.esize;
  const uint8_t* rb = base(r.buf) + r.off * e;
  const uint64_t rn = r.n * e;
  for (uint32_t o = ov_at_[i]; o < ov_at_[i + 1]; ++o) {
    const uint32_t k = ov_idx_[o];
    if (handles_[k] == 0) continue;
    if (handles_[k] != kNotSent && comm_->send_done(handles_[k])) {
      handles_[k] = 0;  // left: no need to ask again
      continue;
    }
    if (handles_[k] == kNotSent || *gate) return false;
    *gate = handles_[k];
  }
  if (r.act == Act::kReduce) {
    for (uint32_t j = 0; j < i; ++j) {
      const schedule::Recv& q = st.recvs[j];
      if (q.act == Act::kReduce && state_[j] != RecvState::kDone && overlap(rb, rn, base(q.buf) + q.off * e, q.n * e))
        return false;
    }
  }
  return true;
}

// For each receive of the step, the sends it overlaps, found once per step
// through the sends sorted by address (with the running maximum of their
// ends), not by testing every send against every receive at each look: an
// all-to-all step has a send and a receive per rank.
void PlanAlgo::index_overlaps(const schedule::Step& st) {
  const size_t e = args_.esize;
  auto start = [&](uint32_t k) { return reinterpret_cast<uintptr_t>(base(st.sends[k].buf) + st.sends[k].off * e); };
  by_start_.clear();
  for (uint32_t k = 0; k < st.sends.size(); ++k)
    if (st.sends[k].n) by_start_.push_back(k);
  std::sort(by_start_.begin(), by_start_.end(), [&](uint32_t a, uint32_t b) { return start(a) < start(b); });
  max_end_.clear();
  for (uint32_t k : by_start_)
    max_end_.push_back(std::max(max_end_.empty() ? 0 : max_end_.back(), start(k) + st.sends[k].n * e));
  ov_idx_.clear();
  for (uint32_t i = 0; i < st.recvs.size(); ++i) {
    ov_at_[i] = static_cast<uint32_t>(ov_idx_.size());
    const schedule::Recv& r = st.recvs[i];
    if (r.n == 0) continue;
    const uintptr_t lo = reinterpret_cast<uintptr_t>(base(r.buf) + r.off * e), hi = lo + r.n * e;
    // The sends that start below hi, from the last one down while some of
    // them still reaches above lo.
    size_t j = static_cast<size_t>(std::partition_point(by_start_.begin(), by_start_.end(),
                                                        [&](uint32_t k) { return start(k) < hi; }) -
                                   by_start_.begin());
    while (j > 0 && max_end_[j - 1] > lo) {
      --j;
      const uint32_t k = by_start_[j];
      if (start(k) + st.sends[k].n * e > lo) ov_idx_.push_back(k);
    }
  }
  ov_at_[st.recvs.size()] = static_cast<uint32_t>(ov_idx_.size());
}

// Post every waiting receive of the step that may land now.
bool PlanAlgo::post_ready() {
  if (waiting_ == 0) return false;
  const schedule::Step& st = plan_.steps[step_];
  bool moved = false;
  for (uint32_t i = 0; i < st.recvs.size(); ++i) {
    uint64_t gate = 0;
    if (state_[i] != RecvState::kWaiting || !ready(i, &gate)) continue;
    const schedule::Recv& r = st.recvs[i];
    RecvReq& q = reqs_[i];
    q.gate = gate;
    q.src = static_cast<int32_t>(comm_->world_rank_of(r.peer));
    q.context = comm_->context();
    q.tag = comm_->tag();
    q.any_tag = false;
    q.buf = base(r.buf) + r.off * args_.esize;
    q.cap = r.n * args_.esize;
    q.action = RecvAction{};
    q.log = &log_;
    q.cookie = i;
    if (r.act == Act::kReduce) q.action = RecvAction{&PlanAlgo::reduce_into, &args_.red, static_cast<uint32_t>(args_.esize)};
    if (Status s = comm_->msgr().post(&q); !s) {
      fail(s);
      return true;
    }
    state_[i] = RecvState::kPosted;
    --waiting_;
    moved = true;
  }
  return moved;
}

bool PlanAlgo::begin_step() {
  const schedule::Step& st = plan_.steps[step_];
  for (const auto& c : st.before) copy(c);
  recvs_done_ = 0;
  waiting_ = static_cast<uint32_t>(st.recvs.size());
  log_.n = 0;
  log_.overflow = false;
  std::fill(state_.begin(), state_.begin() + static_cast<ptrdiff_t>(st.recvs.size()), RecvState::kWaiting);
  // Each receive's previous receive from the same peer, found by sorting
  // (peer, index) once per step: O(R log R), where a scan per receive and
  // poll is O(R^2) (an alltoall step has a receive from every rank).
  by_peer_.clear();
  for (uint32_t i = 0; i < st.recvs.size(); ++i) by_peer_.push_back(uint64_t{st.recvs[i].peer} << 32 | i);
  std::sort(by_peer_.begin(), by_peer_.end());
  for (size_t k = 0; k < by_peer_.size(); ++k) {
    const bool same = k > 0 && (by_peer_[k] >> 32) == (by_peer_[k - 1] >> 32);
    prev_same_peer_[by_peer_[k] & 0xffffffffu] = same ? static_cast<int32_t>(by_peer_[k - 1] & 0xffffffffu) : -1;
  }
  // Receives first (those that may land at once), so the sends' data finds
  // them posted at the other end as often as possible; then the sends.
  handles_.assign(st.sends.size(), kNotSent);  // overlapping receives wait for their send's handle
  index_overlaps(st);
  post_ready();
  if (done_) return true;
  const size_t e = args_.esize;
  for (size_t k = 0; k < st.sends.size(); ++k) {
    const schedule::Send& s = st.sends[k];
    auto h = comm_->send_msg(s.peer, base(s.buf) + s.off * e, s.n * e, static_cast<uint32_t>(e));
    if (!h) {
      fail(h.status());
      return true;
    }
    handles_[k] = *h;
  }
  in_step_ = true;
  post_ready();  // the receives a send gates
  return true;
}

bool PlanAlgo::sends_left() {
  for (uint64_t& h : handles_) {
    if (h == 0) continue;
    if (!comm_->send_done(h)) return false;
    h = 0;
  }
  return true;
}

// Collect finished receives: their sizes must be the plan's. The messenger
// logs each completed receive of the step (log_), so this looks only at
// those, not at every receive of the step at every poll (an all-to-all step
// holds a receive per rank); a full log falls back to the scan.
bool PlanAlgo::check_done() {
  const schedule::Step& st = plan_.steps[step_];
  bool moved = false;
  auto collect = [&](uint32_t i) {
    if (state_[i] != RecvState::kPosted || !reqs_[i].done()) return;
    const RecvReq& q = reqs_[i];
    const schedule::Recv& r = st.recvs[i];
    state_[i] = RecvState::kDone;
    ++recvs_done_;
    moved = true;
    const uint64_t want = r.n * args_.esize;
    if (q.length() != want) {
      fail(error(Code::kInvalid,
                 "%s: mismatched sizes across nodes: rank %u sent %llu bytes in step %u, this rank expected %llu "
                 "(count %llu here)",
                 coll_kind_name(args_.kind), r.peer, static_cast<unsigned long long>(q.length()), step_,
                 static_cast<unsigned long long>(want), static_cast<unsigned long long>(args_.count)));
      return;
    }
    if (!q.status()) {
      fail(error(q.status().code(), "%s: step %u, from rank %u: %s", coll_kind_name(args_.kind), step_, r.peer,
                 q.status().message().c_str()));
      return;
    }
    if (st.first_come) arrivals_.push_back(r.peer);
  };
  const bool scan = log_.overflow;
  const uint32_t logged = log_.n;
  log_.n = 0;
  log_.overflow = false;
  if (scan) {
    for (uint32_t i = 0; i < st.recvs.size() && !done_; ++i) collect(i);
  } else {
    for (uint32_t k = 0; k < logged && !done_; ++k)
      if (log_.slots[k] < st.recvs.size()) collect(log_.slots[k]);
  }
  return moved;
}

bool PlanAlgo::next_step() {
  in_step_ = false;
  ++step_;
  if (step_ < plan_.steps.size()) return true;
  for (const auto& c : plan_.finish) copy(c);
  finish(Status::ok());
  return true;
}

bool PlanAlgo::progress() {
  bool moved = false;
  while (!done_) {
    if (!in_step_) {
      moved |= begin_step();
      continue;
    }
    moved |= check_done();
    if (done_) return true;
    if (recvs_done_ < plan_.steps[step_].recvs.size()) {
      moved |= post_ready();
      moved |= check_done();
      if (done_) return true;
    }
    if (recvs_done_ < plan_.steps[step_].recvs.size() || !sends_left()) return moved;
    moved |= next_step();
  }
  return moved;
}

void PlanAlgo::abort() {
  if (comm_) {
    for (uint64_t h : handles_)
      if (h && h != kNotSent) comm_->cancel_send(h);
    if (in_step_ && step_ < plan_.steps.size()) {
      for (uint32_t i = 0; i < plan_.steps[step_].recvs.size(); ++i)
        if (state_[i] == RecvState::kPosted && !reqs_[i].done()) comm_->msgr().withdraw(&reqs_[i]);
    }
  }
  handles_.clear();
  in_step_ = false;
  done_ = true;
}

std::string PlanAlgo::waiting_for() const {
  if (done_ || step_ >= plan_.steps.size()) return "nothing";
  const schedule::Step& st = plan_.steps[step_];
  char buf[200];
  size_t leaving = 0;
  for (uint64_t h : handles_) leaving += h != 0 && !comm_->send_done(h);
  std::string who;
  for (uint32_t i = 0; i < st.recvs.size(); ++i) {
    if (i < state_.size() && state_[i] == RecvState::kDone) continue;
    if (!who.empty()) who += ", ";
    who += std::to_string(st.recvs[i].peer);
    if (who.size() > 80) {
      who += ", ...";
      break;
    }
  }
  if (who.empty()) who = "none";
  snprintf(buf, sizeof buf, "step %u/%zu: messages from rank(s) %s; %zu of its sends still leaving", step_ + 1,
           plan_.steps.size(), who.c_str(), leaving);
  return buf;
}

}  // namespace toroid
