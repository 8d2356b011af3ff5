// Binomial-tree scatter (MPICH; Thakur, Rabenseifner, Gropp 2005, section
// 3.3), the gather run backwards: with v = (rank - root) mod n, rank v != 0
// receives the blocks of its subtree, relative ranks [v, v + min(lowbit(v),
// n - v)), from v - lowbit(v), keeps the first and sends the subtree of
// v + m (min(m, n-v-m) blocks) to v + m for m = lowbit(v)/2, .., 1; the root
// sends for m = 2^(ceil(log2 n) - 1), .., 1. Each send is its own step.
//
// Buffers: the root with root 0 sends straight from its send buffer; any
// other root first rotates it into kTmp (n*count, relative order, two
// copies). A non-root with children receives its subtree into kTmp and
// copies its own block to recv at the end; a leaf receives into recv. In
// place at the root (MPI_IN_PLACE), recv holds the n*count input and the
// root's block stays at recv[root*count].
//
// Cost: ceil(log2 n) steps at the root; rank v receives its subtree once
// (subtree size * count elements); n-1 messages. Any n, any root.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan binomial_scatter_plan(uint32_t n, uint32_t r, uint32_t root, uint64_t count, bool in_place) {
  Plan p;
  const uint32_t v = (r + n - root) % n;
  auto real = [&](uint32_t u) { return (u + root) % n; };
  Buf w = Buf::kIn;  // holds v's subtree in relative order from offset 0
  uint32_t m;
  std::vector<Copy> init;
  if (v == 0) {
    if (!in_place && count) init.push_back(copy_op(Buf::kIn, uint64_t{root} * count, Buf::kOut, 0, count));
    if (root != 0 && n > 1) {
      w = Buf::kTmp;
      p.tmp_elems = uint64_t{n} * count;
      if (count) {
        init.push_back(copy_op(Buf::kIn, uint64_t{root} * count, Buf::kTmp, 0, uint64_t{n - root} * count));
        init.push_back(copy_op(Buf::kIn, 0, Buf::kTmp, uint64_t{n - root} * count, uint64_t{root} * count));
      }
    }
    m = n > 1 ? (1u << ceil_log2(n)) / 2 : 0;
  } else {
    const uint32_t sub = std::min(lowbit(v), n - v);
    w = sub > 1 ? Buf::kTmp : Buf::kOut;
    if (sub > 1) {
      p.tmp_elems = uint64_t{sub} * count;
      if (count) p.finish = {copy_op(Buf::kTmp, 0, Buf::kOut, 0, count)};
    }
    Step st;
    st.recvs = {recv_op(real(v - lowbit(v)), w, 0, uint64_t{sub} * count, Act::kCopy)};
    p.steps.push_back(std::move(st));
    m = lowbit(v) / 2;
  }
  for (; m >= 1; m /= 2) {
    if (v + m >= n) continue;
    Step st;
    st.sends = {send_op(real(v + m), w, uint64_t{m} * count, uint64_t{std::min(m, n - v - m)} * count)};
    p.steps.push_back(std::move(st));
  }
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
