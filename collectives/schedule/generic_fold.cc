// The steps that the folded generic builders share (declared in
// schedule/generic.h): the fold's give/take steps, the recursive halving
// and doubling exchanges among the acting ranks, and the folded allreduce
// frame.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan fold_idle_plan(uint32_t r, Buf buf, uint64_t off, uint64_t n, uint64_t result_n) {
  Plan p;
  Step give, take;
  give.sends = {send_op(r + 1, buf, off, n)};
  take.recvs = {recv_op(r + 1, Buf::kOut, 0, result_n, Act::kCopy)};
  p.steps = {std::move(give), std::move(take)};
  return p;
}

Step fold_in_step(uint32_t r, Buf buf, uint64_t off, uint64_t n, Act act) {
  Step st;
  st.recvs = {recv_op(r - 1, buf, off, n, act)};
  return st;
}

Step fold_out_step(uint32_t r, Buf buf, uint64_t off, uint64_t n) {
  Step st;
  st.sends = {send_op(r - 1, buf, off, n)};
  return st;
}

void recursive_halving_steps(Plan& p, const Fold& f, uint32_t v, Buf buf, const VirtualRange& range) {
  uint32_t lo = 0, hi = f.p;
  for (uint32_t d = f.p / 2; d >= 1; d /= 2) {
    uint32_t mid = lo + (hi - lo) / 2;
    bool lower = (v & d) == 0;
    Range keep = lower ? range(lo, mid) : range(mid, hi), give = lower ? range(mid, hi) : range(lo, mid);
    uint32_t peer = f.real(v ^ d);
    Step st;
    st.sends = {send_op(peer, buf, give.off, give.n)};
    st.recvs = {recv_op(peer, buf, keep.off, keep.n, Act::kReduce)};
    p.steps.push_back(std::move(st));
    if (lower)
      hi = mid;
    else
      lo = mid;
  }
}

void recursive_doubling_steps(Plan& p, const Fold& f, uint32_t v, Buf buf, const VirtualRange& range) {
  for (uint32_t d = 1; d < f.p; d <<= 1) {
    uint32_t lo = v & ~(d - 1), plo = (v ^ d) & ~(d - 1);
    Range mine = range(lo, lo + d), theirs = range(plo, plo + d);
    uint32_t peer = f.real(v ^ d);
    Step st;
    st.sends = {send_op(peer, buf, mine.off, mine.n)};
    st.recvs = {recv_op(peer, buf, theirs.off, theirs.n, Act::kCopy)};
    p.steps.push_back(std::move(st));
  }
}

Plan folded_allreduce_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place, const ActingSteps& acting) {
  Plan p;
  std::vector<Copy> init;
  if (!in_place && count) init.push_back(copy_op(Buf::kIn, 0, Buf::kOut, 0, count));
  const Fold f(n);
  if (f.idle(r)) return fold_idle_plan(r, Buf::kIn, 0, count, count);
  if (f.absorbs(r)) p.steps.push_back(fold_in_step(r, Buf::kOut, 0, count, Act::kReduce));
  acting(p, f, f.vrank(r));
  if (f.absorbs(r)) p.steps.push_back(fold_out_step(r, Buf::kOut, 0, count));
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
