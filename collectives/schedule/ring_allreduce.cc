// Bidirectional ring allreduce: reduce-scatter then allgather around the ring
// of communicator ranks (Patarasuk & Yuan 2009, "Bandwidth optimal
// all-reduce algorithms for clusters of workstations"), made bidirectional as
// issue 5 asks: the vector is split in two halves, the first half
// ([0, ceil(count/2))) runs the ring clockwise (to rank+1), the second
// counter-clockwise (to rank-1), in the same steps. Ring order is rank order,
// which is neighbour order on a line or a torus ring.
//
// Each half is cut into n blocks. Reduce-scatter, step s in 0..n-2: clockwise
// rank r sends block r-s and reduces block r-s-1 from rank r-1; afterwards it
// holds block r+1 fully reduced (counter-clockwise mirrored: sends r+s,
// reduces r+s+1, holds r-1). Allgather, step s: clockwise sends block r+1-s,
// copies block r-s from r-1 (mirrored likewise).
//
// Fixed order: block j of a direction is reduced by one chain that starts at
// one rank and adds each next rank's input in ring order, then travels by
// copies, so every rank holds the same bits (fixed_order).
//
// Cost: 2(n-1) steps; each step a rank sends one block of each half, one to
// each neighbour: 2(n-1)/n * count elements sent per rank in total, (n-1)/n *
// count per link direction. Works for any n; count < 2n gives empty blocks,
// which are not sent (add_data_step): each block that holds data costs its
// 2(n-1) messages, and a rank's plan keeps only the steps that move data.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan ring_allreduce_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  Plan p;
  std::vector<Copy> init;
  if (!in_place && count) init.push_back(copy_op(Buf::kIn, 0, Buf::kOut, 0, count));
  const uint64_t h = (count + 1) / 2;
  auto cw = [&](uint32_t j) { return block_of(h, n, j % n); };
  auto ccw = [&](uint32_t j) {
    Range b = block_of(count - h, n, j % n);
    b.off += h;
    return b;
  };
  const uint32_t right = (r + 1) % n, left = (r + n - 1) % n;
  for (uint32_t s = 0; s + 1 < n; ++s) {  // reduce-scatter
    Step st;
    Range as = cw(r + n - s), ar = cw(r + 2 * n - s - 1), bs = ccw(r + s), br = ccw(r + s + 1);
    st.sends = {send_op(right, Buf::kOut, as.off, as.n), send_op(left, Buf::kOut, bs.off, bs.n)};
    st.recvs = {recv_op(left, Buf::kOut, ar.off, ar.n, Act::kReduce),
                recv_op(right, Buf::kOut, br.off, br.n, Act::kReduce)};
    add_data_step(p, std::move(st));
  }
  for (uint32_t s = 0; s + 1 < n; ++s) {  // allgather
    Step st;
    Range as = cw(r + 1 + n - s), ar = cw(r + n - s), bs = ccw(r + n - 1 + s), br = ccw(r + s);
    st.sends = {send_op(right, Buf::kOut, as.off, as.n), send_op(left, Buf::kOut, bs.off, bs.n)};
    st.recvs = {recv_op(left, Buf::kOut, ar.off, ar.n, Act::kCopy),
                recv_op(right, Buf::kOut, br.off, br.n, Act::kCopy)};
    add_data_step(p, std::move(st));
  }
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
