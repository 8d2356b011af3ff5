// Rabenseifner's allreduce (Rabenseifner 2004, "Optimization of collective
// reduction operations"; Thakur, Rabenseifner, Gropp 2005, section 4.1):
// reduce-scatter by recursive halving, then allgather by recursive doubling.
// The vector is cut into p blocks. Halving, distance d = p/2, p/4, .., 1: a
// rank keeps the lower half of its current block range if its bit d is clear
// (else the upper), sends the other half to rank XOR d and reduces the half it
// keeps with what that rank sends. Virtual rank v ends up owning block v
// fully reduced. Doubling, d = 1, 2, .., p/2: exchange the owned range with
// rank XOR d by copy. A non-power-of-two n is folded onto p = floor_pow2(n)
// first and unfolded at the end (schedule::Fold, as in recursive doubling).
//
// Fixed order: each block is reduced by one fixed binary tree (at each level
// by the rank that keeps it) and then only copied, so every rank holds the
// same bits (fixed_order).
//
// Cost: 2 log2 p steps (+2 for absorbing and idle ranks when folded);
// 2 (p-1)/p * count elements sent per acting rank (plus count for the fold
// and unfold), so bandwidth-optimal for long vectors. Any n; count < p gives
// empty blocks, sent as zero-length messages.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan rabenseifner_allreduce_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  return folded_allreduce_plan(n, r, count, in_place, [&](Plan& p, const Fold& f, uint32_t v) {
    auto blocks = [&](uint32_t a, uint32_t b) { return blocks_of(count, f.p, a, b); };  // p equal blocks
    recursive_halving_steps(p, f, v, Buf::kOut, blocks);   // reduce-scatter: v ends up owning block v
    recursive_doubling_steps(p, f, v, Buf::kOut, blocks);  // allgather
  });
}

}  // namespace toroid::schedule
