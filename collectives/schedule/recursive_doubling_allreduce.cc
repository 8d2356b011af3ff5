// Recursive-doubling allreduce (Thakur, Rabenseifner, Gropp 2005,
// "Optimization of collective communication operations in MPICH", section
// 4.1): in step k every rank exchanges its whole running result with rank
// XOR 2^k and reduces what it receives, so after log2 n steps everyone holds
// the total. A non-power-of-two n is folded onto p = floor_pow2(n) ranks first
// (schedule::Fold: the even ranks below 2*(n-p) send their vector to the odd
// rank above and sit out) and the result is sent back to them at the end.
//
// Fixed order: the partners of a step compute acc OP partner_acc from the
// same two operands (the ops are commutative bit for bit), so every rank
// forms the same pairwise tree of partial results; folded inputs are added
// once, by the absorbing rank, and returned by copy. Bit-identical everywhere
// (fixed_order).
//
// Cost: log2 p steps for the ranks that act, 2 more for the absorbing ranks
// (fold and unfold), 2 for the idle ones; count elements sent per step, so
// log2 p * count elements per rank (the whole vector on every step: for short
// vectors). Any n.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan recursive_doubling_allreduce_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  return folded_allreduce_plan(n, r, count, in_place, [&](Plan& p, const Fold& f, uint32_t v) {
    for (uint32_t d = 1; d < f.p; d <<= 1) {
      uint32_t peer = f.real(v ^ d);
      Step st;
      st.sends = {send_op(peer, Buf::kOut, 0, count)};
      st.recvs = {recv_op(peer, Buf::kOut, 0, count, Act::kReduce)};
      p.steps.push_back(std::move(st));
    }
  });
}

}  // namespace toroid::schedule
