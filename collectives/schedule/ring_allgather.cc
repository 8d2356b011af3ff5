// Bidirectional ring allgather (the second phase of the ring allreduce,
// Patarasuk & Yuan 2009): send[count] -> recv[n*count]. Each block is split in
// two parts, the first ceil(count/2) elements travel clockwise (to rank+1),
// the rest counter-clockwise (to rank-1), in the same steps. Step s in
// 0..n-2: clockwise rank r forwards block r-s and receives block r-s-1 from
// rank r-1; counter-clockwise forwards block r+s and receives r+s+1 from
// rank r+1. Everything moves inside recv (no scratch); in place, the own
// block is already at recv[r*count].
//
// Cost: n-1 steps; (n-1) * count elements sent per rank, (n-1)/2 * count per
// link direction. Any n; count 0 or 1 leave one or both directions empty,
// and their messages are not sent (add_data_step).
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan ring_allgather_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  Plan p;
  std::vector<Copy> init;
  if (!in_place && count) init.push_back(copy_op(Buf::kIn, 0, Buf::kOut, uint64_t{r} * count, count));
  const uint64_t h = (count + 1) / 2, g = count - h;
  const uint32_t right = (r + 1) % n, left = (r + n - 1) % n;
  for (uint32_t s = 0; s + 1 < n; ++s) {
    Step st;
    uint64_t cs = (r + n - s) % n, cr = (r + 2 * n - s - 1) % n, ks = (r + s) % n, kr = (r + s + 1) % n;
    st.sends = {send_op(right, Buf::kOut, cs * count, h), send_op(left, Buf::kOut, ks * count + h, g)};
    st.recvs = {recv_op(left, Buf::kOut, cr * count, h, Act::kCopy),
                recv_op(right, Buf::kOut, kr * count + h, g, Act::kCopy)};
    add_data_step(p, std::move(st));
  }
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
