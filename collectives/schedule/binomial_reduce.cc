// Binomial-tree reduce (the MPICH reduce for short vectors and commutative
// ops; Thakur, Rabenseifner, Gropp 2005, section 4.4): with v = (rank - root)
// mod n, for m = 1, 2, 4, ..: if bit m of v is set, send the running result to
// v - m and stop; else, if v + m < n, receive from v + m and reduce it into
// the running result. The root (v = 0) ends with the total in recv.
//
// Fixed order: every rank combines its children in increasing m, each child's
// partial formed the same way, so the grouping is fixed by n and root
// (fixed_order: the same bits on every run of the partition).
//
// Buffers: the root accumulates in recv; other ranks with children in kTmp
// (count elements), leaves send straight from their input. recv is not
// touched on non-root ranks.
//
// Cost: ceil(log2 n) steps at the root (receives), one send of count elements
// per non-root rank; n-1 messages in all. Any n, any root.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan binomial_reduce_plan(uint32_t n, uint32_t r, uint32_t root, uint64_t count, bool in_place) {
  Plan p;
  const uint32_t v = (r + n - root) % n;
  auto real = [&](uint32_t u) { return (u + root) % n; };
  const bool children = v % 2 == 0 && v + 1 < n;
  Buf acc = Buf::kIn;
  std::vector<Copy> init;
  if (v == 0) {
    acc = Buf::kOut;
    if (!in_place && count) init.push_back(copy_op(Buf::kIn, 0, Buf::kOut, 0, count));
  } else if (children) {
    acc = Buf::kTmp;
    p.tmp_elems = count;
    if (count) init.push_back(copy_op(Buf::kIn, 0, Buf::kTmp, 0, count));
  }
  for (uint32_t m = 1; m < n; m <<= 1) {
    Step st;
    if (v & m) {
      st.sends = {send_op(real(v - m), acc, 0, count)};
      p.steps.push_back(std::move(st));
      break;
    }
    if (v + m >= n) continue;
    st.recvs = {recv_op(real(v + m), acc, 0, count, Act::kReduce)};
    p.steps.push_back(std::move(st));
  }
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
