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
  auto plan = build(comm.info(), args);
  if (!plan) return plan.status();
  plan_ = std::move(*plan);
  tmp_.assign(plan_.tmp_elems * args.esize, 0);
  size_t most_sends = 0, most_recvs = 0;
  for (const auto& s : plan_.steps) {
    most_sends = std::max(most_sends, s.sends.size());
    most_recvs = std::max(most_recvs, s.recvs.size());
  }
  handles_.clear();
  handles_.reserve(most_sends);
  got_.assign(most_recvs, 0);
  clear_.assign(most_recvs, 0);
  prev_same_peer_.assign(most_recvs, -1);
  by_peer_.reserve(most_recvs);
  arrivals_.clear();
  step_ = 0;
  if (plan_.steps.empty()) {
    for (const auto& c : plan_.finish) copy(c);
    finish(Status::ok());
    return Status::ok();
  }
  phase_ = Phase::kSend;
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

bool PlanAlgo::begin_step() {
  const schedule::Step& st = plan_.steps[step_];
  for (const auto& c : st.before) copy(c);
  handles_.clear();
  for (const auto& s : st.sends) {
    auto h = comm_->send_msg(s.peer, base(s.buf) + s.off * args_.esize, s.n * args_.esize);
    if (!h) {
      fail(h.status());
      return true;
    }
    handles_.push_back(*h);
  }
  std::fill(got_.begin(), got_.end(), 0);
  if (st.first_come) {
    std::fill(clear_.begin(), clear_.end(), 0);
    by_peer_.clear();
    for (uint32_t i = 0; i < st.recvs.size(); ++i) by_peer_.push_back(uint64_t{st.recvs[i].peer} << 32 | i);
    std::sort(by_peer_.begin(), by_peer_.end());
    for (size_t k = 0; k < by_peer_.size(); ++k) {
      const bool same = k > 0 && (by_peer_[k] >> 32) == (by_peer_[k - 1] >> 32);
      prev_same_peer_[by_peer_[k] & 0xffffffffu] = same ? static_cast<int32_t>(by_peer_[k - 1] & 0xffffffffu) : -1;
    }
  }
  next_recv_ = 0;
  recvs_done_ = 0;
  phase_ = Phase::kRecv;
  return true;
}

// A receive may land while sends of its step are still leaving, unless it
// would overwrite what one of them still reads (then it waits for that send).
// Receiving early matters: the message layer stops granting a peer credit
// while much of its data waits unreceived, so two ranks that each wait for
// their own sends before receiving could wait for each other.
bool PlanAlgo::overlaps_pending_send(const schedule::Recv& r) {
  if (r.n == 0) return false;
  const schedule::Step& st = plan_.steps[step_];
  const uint8_t* rb = base(r.buf) + r.off * args_.esize;
  const uint8_t* re = rb + r.n * args_.esize;
  for (size_t i = 0; i < st.sends.size(); ++i) {
    const schedule::Send& s = st.sends[i];
    if (s.n == 0 || handles_[i] == 0) continue;
    const uint8_t* sb = base(s.buf) + s.off * args_.esize;
    const uint8_t* se = sb + s.n * args_.esize;
    if (sb < re && rb < se) {
      if (!comm_->send_done(handles_[i])) return true;
      handles_[i] = 0;  // left: no need to ask again
    }
  }
  return false;
}

bool PlanAlgo::sends_left() {
  for (uint32_t& h : handles_) {
    if (h == 0) continue;
    if (!comm_->send_done(h)) return false;
    h = 0;
  }
  return true;
}

// Take the next message from r.peer if there is one; false if none yet (or
// the operation failed).
bool PlanAlgo::take(const schedule::Recv& r) {
  auto got = comm_->recv_msg(r.peer, &msg_);
  if (!got) {
    fail(got.status());
    return false;
  }
  if (!*got) return false;
  const size_t want = r.n * args_.esize;
  if (msg_.data.size() != want) {
    fail(error(Code::kInvalid,
               "%s: mismatched sizes across nodes: rank %u sent %zu bytes in step %u, this rank expected %zu "
               "(count %llu here)",
               coll_kind_name(args_.kind), r.peer, msg_.data.size(), step_, want,
               static_cast<unsigned long long>(args_.count)));
    return false;
  }
  if (want) {
    uint8_t* dst = base(r.buf) + r.off * args_.esize;
    if (r.act == Act::kReduce) args_.red.apply(dst, msg_.data.data(), r.n);
    else std::memcpy(dst, msg_.data.data(), want);
  }
  comm_->recycle(std::move(msg_.data));
  return true;
}

bool PlanAlgo::next_step() {
  ++step_;
  if (step_ < plan_.steps.size()) {
    phase_ = Phase::kSend;
    return true;
  }
  for (const auto& c : plan_.finish) copy(c);
  finish(Status::ok());
  return true;
}

bool PlanAlgo::progress() {
  bool moved = false;
  while (!done_) {
    if (phase_ == Phase::kSend) {
      moved |= begin_step();
      continue;
    }
    const schedule::Step& st = plan_.steps[step_];
    if (st.first_come) {
      for (uint32_t i = 0; i < st.recvs.size() && !done_; ++i) {
        if (got_[i]) continue;
        // Two receives from one peer complete in list order (the previous
        // one done means every earlier one is).
        if (prev_same_peer_[i] >= 0 && !got_[prev_same_peer_[i]]) continue;
        if (!clear_[i]) {
          if (overlaps_pending_send(st.recvs[i])) continue;
          clear_[i] = 1;
        }
        if (!take(st.recvs[i])) continue;
        got_[i] = 1;
        ++recvs_done_;
        arrivals_.push_back(st.recvs[i].peer);
        moved = true;
      }
    } else {
      while (next_recv_ < st.recvs.size() && !done_ && !overlaps_pending_send(st.recvs[next_recv_]) &&
             take(st.recvs[next_recv_])) {
        ++next_recv_;
        ++recvs_done_;
        moved = true;
      }
    }
    if (done_) return true;
    if (recvs_done_ < st.recvs.size() || !sends_left()) return moved;
    moved |= next_step();
  }
  return moved;
}

void PlanAlgo::abort() {
  if (comm_)
    for (uint32_t h : handles_)
      if (h) comm_->cancel_send(h);
  handles_.clear();
  done_ = true;
}

std::string PlanAlgo::waiting_for() const {
  if (done_ || step_ >= plan_.steps.size()) return "nothing";
  const schedule::Step& st = plan_.steps[step_];
  char buf[200];
  size_t leaving = 0;
  for (uint32_t h : handles_) leaving += h != 0 && !comm_->send_done(h);
  std::string who;
  for (uint32_t i = 0; i < st.recvs.size(); ++i) {
    const bool pending = st.first_come ? !got_[i] : i >= next_recv_;
    if (!pending) continue;
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
