// Bidirectional ring reduce-scatter (Patarasuk & Yuan 2009; the first phase
// of the ring allreduce): send[n*count] -> recv[count], block r to rank r.
// Each block is split in two parts: the first ceil(count/2) elements travel
// clockwise (to rank+1), the rest counter-clockwise (to rank-1), in the same
// steps. Step s in 0..n-2: clockwise rank r sends its running partial of
// block r-s-1 and reduces block r-s-2 (its own input part plus the partial
// from rank r-1); counter-clockwise mirrored (sends r+s+1, reduces r+s+2).
// After n-1 steps rank r holds block r.
//
// Buffers: the input is never written (it may be the caller's const send
// buffer); partials live in kTmp, two slots per direction used alternately
// (the step's `before` copies the own input part into the receiving slot,
// the receive reduces into it, the next step sends it): 2*count elements.
// The result is copied to recv[0, count) at the end, so in place works.
//
// Fixed order: each block part is one chain starting at one rank and adding
// the next rank's input in ring order (fixed_order).
//
// Cost: n-1 steps; (n-1) * count elements sent per rank, (n-1)/2 * count per
// link direction. Any n; count 0 or 1 leave one or both directions empty,
// and their messages are not sent (add_data_step).
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan ring_reduce_scatter_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  Plan p;
  if (n == 1) {
    if (!in_place && count) p.finish.push_back(copy_op(Buf::kIn, 0, Buf::kOut, 0, count));
    return p;
  }
  const uint64_t h = (count + 1) / 2, g = count - h;  // clockwise part [0, h), counter-clockwise [h, count)
  const uint64_t cw_slot[2] = {0, h}, ccw_slot[2] = {2 * h, 2 * h + g};
  p.tmp_elems = 2 * count;
  const uint32_t right = (r + 1) % n, left = (r + n - 1) % n;
  for (uint32_t s = 0; s + 1 < n; ++s) {
    Step st;
    uint32_t cw_send = (r + 2 * n - s - 1) % n, cw_recv = (r + 2 * n - s - 2) % n;
    uint32_t ccw_send = (r + s + 1) % n, ccw_recv = (r + s + 2) % n;
    st.before = {copy_op(Buf::kIn, uint64_t{cw_recv} * count, Buf::kTmp, cw_slot[s % 2], h),
                 copy_op(Buf::kIn, uint64_t{ccw_recv} * count + h, Buf::kTmp, ccw_slot[s % 2], g)};
    if (s == 0) {
      st.sends = {send_op(right, Buf::kIn, uint64_t{cw_send} * count, h),
                  send_op(left, Buf::kIn, uint64_t{ccw_send} * count + h, g)};
    } else {
      st.sends = {send_op(right, Buf::kTmp, cw_slot[(s - 1) % 2], h),
                  send_op(left, Buf::kTmp, ccw_slot[(s - 1) % 2], g)};
    }
    st.recvs = {recv_op(left, Buf::kTmp, cw_slot[s % 2], h, Act::kReduce),
                recv_op(right, Buf::kTmp, ccw_slot[s % 2], g, Act::kReduce)};
    add_data_step(p, std::move(st));
  }
  const uint32_t last = (n - 2) % 2;
  p.finish = {copy_op(Buf::kTmp, cw_slot[last], Buf::kOut, 0, h), copy_op(Buf::kTmp, ccw_slot[last], Buf::kOut, h, g)};
  return p;
}

}  // namespace toroid::schedule
