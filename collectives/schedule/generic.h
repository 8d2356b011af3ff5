// Pure plans (schedule/plan.h) of the generic point-to-point collectives, one
// builder per algorithm (each in its own .cc with its source and cost), and
// the block and fold arithmetic and the steps they share.
//
// Arguments: n ranks, this rank, count in elements with the meaning of
// CollArgs (coll.h: per block for reduce-scatter, gather, scatter, allgather
// and alltoall), root for the rooted kinds, in_place as CollArgs::in_place().
// Every builder is total: any n >= 1 and any count (0 included) give a plan.
//
// Zero-length messages: when count is smaller than the number of blocks, some
// blocks are empty; their messages are still sent, with 0 elements, on both
// sides alike. Every rank then runs the same steps whatever the count, and a
// count mismatch between ranks shows up as a size mismatch, not a hang.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "collectives/schedule/plan.h"

namespace toroid::schedule {

// --- allreduce: send[count] -> recv[count] ---
Plan ring_allreduce_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);
Plan recursive_doubling_allreduce_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);
Plan rabenseifner_allreduce_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);
// --- reduce-scatter: send[n*count] -> recv[count] ---
Plan ring_reduce_scatter_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);
Plan recursive_halving_reduce_scatter_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);
// --- allgather: send[count] -> recv[n*count] ---
Plan ring_allgather_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);
Plan recursive_doubling_allgather_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);
// --- rooted: bcast recv[count]; reduce send[count] -> recv[count] at root;
//     gather send[count] -> recv[n*count] at root; scatter send[n*count] at root -> recv[count] ---
Plan binomial_bcast_plan(uint32_t n, uint32_t rank, uint32_t root, uint64_t count);
Plan binomial_reduce_plan(uint32_t n, uint32_t rank, uint32_t root, uint64_t count, bool in_place);
Plan binomial_gather_plan(uint32_t n, uint32_t rank, uint32_t root, uint64_t count, bool in_place);
Plan binomial_scatter_plan(uint32_t n, uint32_t rank, uint32_t root, uint64_t count, bool in_place);
// --- barrier ---
Plan dissemination_barrier_plan(uint32_t n, uint32_t rank);
// --- alltoall: send[n*count] -> recv[n*count] ---
Plan pairwise_alltoall_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);
Plan bruck_alltoall_plan(uint32_t n, uint32_t rank, uint64_t count, bool in_place);

// --- shared arithmetic ---

inline bool is_pow2(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }
// Largest power of two <= n (n >= 1).
inline uint32_t floor_pow2(uint32_t n) {
  uint32_t p = 1;
  while (p <= n / 2) p <<= 1;
  return p;
}
// ceil(log2 n): 0 for n = 1.
inline uint32_t ceil_log2(uint32_t n) {
  uint32_t k = 0;
  while ((uint64_t{1} << k) < n) ++k;
  return k;
}
inline uint32_t lowbit(uint32_t v) { return v & (~v + 1); }

// Block i of `count` elements split into `parts` nearly equal blocks: the
// first count % parts blocks hold one element more.
struct Range {
  uint64_t off;
  uint64_t n;
};
inline uint64_t block_start(uint64_t count, uint32_t parts, uint32_t i) {
  uint64_t base = count / parts, rem = count % parts;
  return i * base + std::min<uint64_t>(i, rem);
}
inline Range block_of(uint64_t count, uint32_t parts, uint32_t i) {
  uint64_t a = block_start(count, parts, i);
  return Range{a, block_start(count, parts, i + 1) - a};
}
// Blocks [a, b) as one element range.
inline Range blocks_of(uint64_t count, uint32_t parts, uint32_t a, uint32_t b) {
  uint64_t x = block_start(count, parts, a);
  return Range{x, block_start(count, parts, b) - x};
}

// The fold of n ranks onto p = floor_pow2(n) (Thakur, Rabenseifner, Gropp
// 2005, section 4): of the first 2*extra ranks (extra = n - p) the even ones
// hand their data to the odd one above them and sit out ("idle"), the odd
// ones ("absorb") act for both; ranks from 2*extra on act for themselves.
// Virtual rank v of the p acting ranks: r/2 below 2*extra, r - extra above;
// v stands for the real ranks [first_real(v), first_real(v+1)).
struct Fold {
  uint32_t n, p, extra;
  explicit Fold(uint32_t n_) : n(n_), p(floor_pow2(n_)), extra(n_ - floor_pow2(n_)) {}
  bool folded() const { return extra != 0; }
  bool idle(uint32_t r) const { return r < 2 * extra && r % 2 == 0; }
  bool absorbs(uint32_t r) const { return r < 2 * extra && r % 2 == 1; }
  uint32_t vrank(uint32_t r) const { return r < 2 * extra ? r / 2 : r - extra; }
  uint32_t real(uint32_t v) const { return v < extra ? 2 * v + 1 : v + extra; }
  uint32_t first_real(uint32_t v) const { return v < extra ? 2 * v : v + extra; }  // first_real(p) = n
  // Virtual ranks [a, b) as elements of a buffer of `count` elements per real
  // rank: the blocks of the real ranks they stand for.
  Range rank_blocks(uint32_t a, uint32_t b, uint64_t count) const {
    uint64_t x = uint64_t{first_real(a)} * count;
    return Range{x, uint64_t{first_real(b)} * count - x};
  }
};

// Builders' shorthands.
inline Copy copy_op(Buf from, uint64_t from_off, Buf to, uint64_t to_off, uint64_t n) {
  return Copy{from, from_off, to, to_off, n};
}
inline Send send_op(uint32_t peer, Buf b, uint64_t off, uint64_t n) { return Send{peer, b, off, n}; }
inline Recv recv_op(uint32_t peer, Buf b, uint64_t off, uint64_t n, Act act) { return Recv{peer, b, off, n, act}; }

// Adds a step of a ring plan without its zero-length messages and copies:
// both ends of a message compute its length alike, so both drop it, and the
// messages of a pair still match in order. A step left with nothing is not
// added: a count smaller than the ring (the blocks beyond it are empty)
// costs messages only for the blocks that hold data, not 2(n-1) steps of
// empty ones on every rank.
inline void add_data_step(Plan& p, Step st) {
  std::erase_if(st.sends, [](const Send& s) { return s.n == 0; });
  std::erase_if(st.recvs, [](const Recv& r) { return r.n == 0; });
  std::erase_if(st.before, [](const Copy& c) { return c.n == 0; });
  if (st.sends.empty() && st.recvs.empty() && st.before.empty()) return;
  p.steps.push_back(std::move(st));
}

// Puts `init`, local copies that must come before everything else, ahead of
// the first step's copies, or ahead of `finish` when the plan has no steps.
inline void start_with(Plan& p, const std::vector<Copy>& init) {
  std::vector<Copy>& first = p.steps.empty() ? p.finish : p.steps.front().before;
  first.insert(first.begin(), init.begin(), init.end());
}

// --- steps shared by the folded builders (generic_fold.cc) ---

// The fold's own steps (see Fold). An idle rank r's whole plan: one step
// sending buf[off, off+n) to its absorbing partner r+1, one receiving the
// result, result_n elements, into recv[0, result_n).
Plan fold_idle_plan(uint32_t r, Buf buf, uint64_t off, uint64_t n, uint64_t result_n);
// An absorbing rank r's first step: receive the data of its idle partner r-1
// into buf[off, off+n) (copy or reduce).
Step fold_in_step(uint32_t r, Buf buf, uint64_t off, uint64_t n, Act act);
// An absorbing rank r's last step: send buf[off, off+n) back to r-1.
Step fold_out_step(uint32_t r, Buf buf, uint64_t off, uint64_t n);

// The exchanges of virtual rank v among the f.p acting ranks, in buf, with
// the partners' real ranks from f; range(a, b) is the element range of the
// blocks of virtual ranks [a, b) (or of blocks [a, b) of p equal ones).
using VirtualRange = std::function<Range(uint32_t a, uint32_t b)>;
// Recursive halving, distance d = p/2, .., 1: of the current range [lo, hi)
// (initially [0, p)) keep the lower half if bit d of v is clear (else the
// upper), send the other half to v XOR d and reduce the half kept with what
// v XOR d sends. v ends up holding range(v, v+1) reduced over all p ranks.
void recursive_halving_steps(Plan& p, const Fold& f, uint32_t v, Buf buf, const VirtualRange& range);
// Recursive doubling, distance d = 1, 2, .., p/2: exchange the range of v's
// aligned group of d virtual ranks for that of v XOR d's group, by copy. v
// starts with range(v, v+1) and ends with range(0, p).
void recursive_doubling_steps(Plan& p, const Fold& f, uint32_t v, Buf buf, const VirtualRange& range);

// An allreduce of count elements over n ranks, folded: send is copied to recv
// (unless in place); an absorbing rank first reduces its idle partner's
// vector into recv, then acting(p, f, v) adds the steps of virtual rank v
// (which must leave the total of all n vectors in recv), then the absorbing
// rank sends recv back to its idle partner.
using ActingSteps = std::function<void(Plan& p, const Fold& f, uint32_t v)>;
Plan folded_allreduce_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place, const ActingSteps& acting);

}  // namespace toroid::schedule
