// Recursive-halving reduce-scatter (Thakur, Rabenseifner, Gropp 2005, section
// 4.3; the first half of Rabenseifner's allreduce): send[n*count] ->
// recv[count], block r to rank r. Halving, distance d = p/2, .., 1: a rank
// keeps the lower half of its current range of blocks if its bit d is clear
// (else the upper), sends the other half to rank XOR d and reduces the half
// it keeps with what that rank sends; after log2 p steps it holds its own
// block. A non-power-of-two n is folded onto p = floor_pow2(n) (schedule::Fold:
// the idle even rank 2i sends its whole input to rank 2i+1, which reduces it
// into its own and acts for both; virtual rank v owns the contiguous blocks
// [first_real(v), first_real(v+1)), so the halving splits block ranges in
// rank order); at the end rank 2i+1 sends block 2i to rank 2i.
//
// Buffers: the input is copied to kTmp (n*count elements) and reduced there;
// the own block is copied to recv[0, count) at the end, so in place works.
//
// Fixed order: each block is reduced by one fixed binary tree (fixed_order).
//
// Cost: log2 p steps (+2 for folded pairs); (p-1)/p * n * count elements sent
// per acting rank (plus n*count from each idle rank, count back to it). Any n.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan recursive_halving_reduce_scatter_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  Plan p;
  const uint64_t total = uint64_t{n} * count;
  const Fold f(n);
  if (n == 1) {
    if (!in_place && count) p.finish.push_back(copy_op(Buf::kIn, 0, Buf::kOut, 0, count));
    return p;
  }
  if (f.idle(r)) return fold_idle_plan(r, Buf::kIn, 0, total, count);
  p.tmp_elems = total;
  std::vector<Copy> init;
  if (total) init.push_back(copy_op(Buf::kIn, 0, Buf::kTmp, 0, total));
  if (f.absorbs(r)) p.steps.push_back(fold_in_step(r, Buf::kTmp, 0, total, Act::kReduce));
  auto range = [&](uint32_t a, uint32_t b) { return f.rank_blocks(a, b, count); };  // as elements of kTmp
  recursive_halving_steps(p, f, f.vrank(r), Buf::kTmp, range);
  if (f.absorbs(r)) p.steps.push_back(fold_out_step(r, Buf::kTmp, uint64_t{r - 1} * count, count));
  if (count) p.finish = {copy_op(Buf::kTmp, uint64_t{r} * count, Buf::kOut, 0, count)};
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
