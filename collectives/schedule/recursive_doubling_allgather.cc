// Recursive-doubling allgather (Thakur, Rabenseifner, Gropp 2005, section
// 4.2): send[count] -> recv[n*count]. In step k, distance d = 2^k, a rank
// exchanges the d blocks it has gathered so far (its aligned group of d
// virtual ranks) with rank XOR d, doubling them. A non-power-of-two n is
// folded onto p = floor_pow2(n) (schedule::Fold: idle rank 2i first sends its
// block to rank 2i+1, which then holds the contiguous blocks [2i, 2i+2); so
// every group of virtual ranks covers a contiguous range of blocks) and rank
// 2i+1 sends the whole result to rank 2i at the end. Everything moves inside
// recv, no scratch; in place, the own block is already at recv[r*count].
//
// Cost: log2 p steps (+2 for folded pairs); (n-1) * count elements received
// per acting rank, the amount doubling every step. Any n.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan recursive_doubling_allgather_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  Plan p;
  const uint64_t total = uint64_t{n} * count;
  const Fold f(n);
  const Buf own_buf = in_place ? Buf::kOut : Buf::kIn;
  const uint64_t own_off = in_place ? uint64_t{r} * count : 0;
  if (f.idle(r)) return fold_idle_plan(r, own_buf, own_off, count, total);
  std::vector<Copy> init;
  if (!in_place && count) init.push_back(copy_op(Buf::kIn, 0, Buf::kOut, uint64_t{r} * count, count));
  if (f.absorbs(r)) p.steps.push_back(fold_in_step(r, Buf::kOut, uint64_t{r - 1} * count, count, Act::kCopy));
  auto range = [&](uint32_t a, uint32_t b) { return f.rank_blocks(a, b, count); };
  recursive_doubling_steps(p, f, f.vrank(r), Buf::kOut, range);
  if (f.absorbs(r)) p.steps.push_back(fold_out_step(r, Buf::kOut, 0, total));
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
