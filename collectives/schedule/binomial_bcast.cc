// Binomial-tree broadcast (the MPICH short-message broadcast; Thakur,
// Rabenseifner, Gropp 2005, section 3.1): with v = (rank - root) mod n, a
// rank v != 0 receives the whole vector from v - lowbit(v), then sends it to
// v + m for m = lowbit(v)/2, .., 1 (those below n); the root sends to
// v + m for m = 2^(ceil(log2 n) - 1), .., 1. Each send is its own step, so the
// tree completes in ceil(log2 n) rounds.
//
// Cost: ceil(log2 n) steps at the root (1 + log2 lowbit(v) at rank v); every
// non-root receives count elements once; n-1 messages in all. The whole
// vector moves at every level (no pipelining): for short and medium vectors.
// Any n, any root.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan binomial_bcast_plan(uint32_t n, uint32_t r, uint32_t root, uint64_t count) {
  Plan p;
  const uint32_t v = (r + n - root) % n;
  auto real = [&](uint32_t u) { return (u + root) % n; };
  uint32_t m;
  if (v != 0) {
    Step st;
    st.recvs = {recv_op(real(v - lowbit(v)), Buf::kOut, 0, count, Act::kCopy)};
    p.steps.push_back(std::move(st));
    m = lowbit(v) / 2;
  } else {
    m = n > 1 ? (1u << ceil_log2(n)) / 2 : 0;
  }
  for (; m >= 1; m /= 2) {
    if (v + m >= n) continue;
    Step st;
    st.sends = {send_op(real(v + m), Buf::kOut, 0, count)};
    p.steps.push_back(std::move(st));
  }
  return p;
}

}  // namespace toroid::schedule
