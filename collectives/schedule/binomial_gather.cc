// Binomial-tree gather (MPICH; Thakur, Rabenseifner, Gropp 2005, section
// 3.3): with v = (rank - root) mod n, rank v collects the blocks of its
// subtree, the relative ranks [v, v + min(lowbit(v), n - v)), in relative
// order: for m = 1, 2, ..: if bit m of v is set, send the subtree to v - m and
// stop; else, if v + m < n, receive the subtree of v + m (min(m, n-v-m)
// blocks) behind what it holds.
//
// Buffers: a rank with children collects in kTmp (its subtree's blocks); a
// leaf sends straight from its input. The root with root 0 collects in recv
// directly; any other root collects in kTmp (n*count) in relative order and
// rotates it into recv at the end (two copies). In place, the root's own
// block is already at recv[root*count].
//
// Cost: ceil(log2 n) steps at the root; rank v sends its subtree once
// (subtree size * count elements); n-1 messages. Any n, any root.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan binomial_gather_plan(uint32_t n, uint32_t r, uint32_t root, uint64_t count, bool in_place) {
  Plan p;
  const uint32_t v = (r + n - root) % n;
  auto real = [&](uint32_t u) { return (u + root) % n; };
  const uint32_t sub = v == 0 ? n : std::min(lowbit(v), n - v);  // blocks of v's subtree
  Buf w;  // holds the subtree's blocks in relative order from offset 0
  std::vector<Copy> init;
  if (v == 0 && root == 0) {
    w = Buf::kOut;
    if (!in_place && count) init.push_back(copy_op(Buf::kIn, 0, Buf::kOut, 0, count));
  } else if (sub > 1) {
    w = Buf::kTmp;
    p.tmp_elems = uint64_t{sub} * count;
    Buf own = (v == 0 && in_place) ? Buf::kOut : Buf::kIn;
    uint64_t own_off = (v == 0 && in_place) ? uint64_t{root} * count : 0;
    if (count) init.push_back(copy_op(own, own_off, Buf::kTmp, 0, count));
  } else {
    w = Buf::kIn;  // a leaf: its own block is the subtree (in place: recv[0, count) is the same memory)
  }
  for (uint32_t m = 1; m < n; m <<= 1) {
    Step st;
    if (v & m) {
      st.sends = {send_op(real(v - m), w, 0, uint64_t{sub} * count)};
      p.steps.push_back(std::move(st));
      break;
    }
    if (v + m >= n) continue;
    st.recvs = {recv_op(real(v + m), w, uint64_t{m} * count, uint64_t{std::min(m, n - v - m)} * count, Act::kCopy)};
    p.steps.push_back(std::move(st));
  }
  if (v == 0 && root != 0 && count) {  // relative [0, n-root) -> real [root, n); relative [n-root, n) -> real [0, root)
    p.finish = {copy_op(Buf::kTmp, 0, Buf::kOut, uint64_t{root} * count, uint64_t{n - root} * count),
                copy_op(Buf::kTmp, uint64_t{n - root} * count, Buf::kOut, 0, uint64_t{root} * count)};
  }
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
