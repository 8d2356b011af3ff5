// Pairwise-exchange alltoall (Thakur, Rabenseifner, Gropp 2005, section 3.5):
// n-1 steps, one block to one peer and one block from one peer per step. For
// a power-of-two n, step k (1..n-1) exchanges with rank XOR k (both sides
// send and receive the same pair of blocks, a true exchange); otherwise step
// k sends block r+k to rank r+k and receives block r-k from rank r-k.
//
// Buffers: the own block is copied from send to recv first. In place with
// XOR pairing, a step sends block r^k from recv and receives into the same
// block (receives apply after sends: no scratch); in place with the shift
// pairing, a received block would overwrite one not yet sent, so recv is
// first copied to kTmp (n*count) and sends read from there.
//
// Cost: n-1 steps; (n-1) * count elements sent per rank, count per message.
// For long messages. Any n.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan pairwise_alltoall_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  Plan p;
  std::vector<Copy> init;
  Buf src = in_place ? Buf::kOut : Buf::kIn;
  const bool xor_pairs = is_pow2(n);
  if (!in_place && count) init.push_back(copy_op(Buf::kIn, uint64_t{r} * count, Buf::kOut, uint64_t{r} * count, count));
  if (in_place && !xor_pairs && n > 1) {
    src = Buf::kTmp;
    p.tmp_elems = uint64_t{n} * count;
    if (count) init.push_back(copy_op(Buf::kOut, 0, Buf::kTmp, 0, uint64_t{n} * count));
  }
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t to = xor_pairs ? r ^ k : (r + k) % n, from = xor_pairs ? r ^ k : (r + n - k) % n;
    Step st;
    st.sends = {send_op(to, src, uint64_t{to} * count, count)};
    st.recvs = {recv_op(from, Buf::kOut, uint64_t{from} * count, count, Act::kCopy)};
    p.steps.push_back(std::move(st));
  }
  start_with(p, init);
  return p;
}

}  // namespace toroid::schedule
