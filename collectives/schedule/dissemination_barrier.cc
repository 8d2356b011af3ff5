// Dissemination barrier (Hensgen, Finkel, Manber 1988, "Two algorithms for
// barrier synchronization"): in step k = 0 .. ceil(log2 n) - 1 every rank
// sends a zero-length message to rank + 2^k and waits for one from
// rank - 2^k (mod n). After step k a rank has heard, directly or not, from
// the 2^(k+1) - 1 ranks before it, so after the last step from all of them.
//
// Cost: ceil(log2 n) steps, one zero-length message sent and one received
// per rank and step; no data. Any n (n = 1: no steps).
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan dissemination_barrier_plan(uint32_t n, uint32_t r) {
  Plan p;
  for (uint64_t d = 1; d < n; d <<= 1) {
    Step st;
    st.sends = {send_op(static_cast<uint32_t>((r + d) % n), Buf::kOut, 0, 0)};
    st.recvs = {recv_op(static_cast<uint32_t>((r + n - d) % n), Buf::kOut, 0, 0, Act::kCopy)};
    p.steps.push_back(std::move(st));
  }
  return p;
}

}  // namespace toroid::schedule
