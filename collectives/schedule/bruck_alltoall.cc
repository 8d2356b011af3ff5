// Bruck alltoall (Bruck, Ho, Kipnis, Upfal, Weathersby 1997, "Efficient
// algorithms for all-to-all communications in multiport message-passing
// systems"; Thakur, Rabenseifner, Gropp 2005, section 3.5): for short
// messages, ceil(log2 n) steps instead of n-1.
//   1. Rotate: W[i] = send block (r + i) mod n, the block for the rank i
//      places ahead (local copies into kTmp).
//   2. Step k, d = 2^k: pack every W[i] with bit k of i set into P, send P to
//      rank r + d, receive the same number of blocks from rank r - d into P
//      (receives apply after the sends, so P is reused) and unpack them into
//      the same W[i] (in the next step's `before`, or at the end). Afterwards
//      W[i] holds the block that rank r - i sent to r.
//   3. Inverse rotation: recv block (r - i) mod n = W[i].
// All packing and rotation are Copy ops in kTmp: W (n*count) then P
// (count * the most blocks any step moves, about n/2). The input is read only
// in the first step's `before`, so in place works.
//
// Cost: ceil(log2 n) steps, one message per step; about count * n/2 *
// ceil(log2 n) elements sent per rank (each block travels once per set bit
// of its distance). Any n.
#include "collectives/schedule/generic.h"

namespace toroid::schedule {

Plan bruck_alltoall_plan(uint32_t n, uint32_t r, uint64_t count, bool in_place) {
  Plan p;
  const Buf in = in_place ? Buf::kOut : Buf::kIn;
  if (n == 1) {
    if (!in_place && count) p.finish = {copy_op(Buf::kIn, 0, Buf::kOut, 0, count)};
    return p;
  }
  const uint64_t W = 0, c = count;
  uint64_t most = 0;
  for (uint32_t d = 1; d < n; d <<= 1) {
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; ++i) k += (i & d) != 0;
    most = std::max(most, k);
  }
  const uint64_t P = uint64_t{n} * c;
  p.tmp_elems = P + most * c;
  std::vector<Copy> pending;  // unpacking of the previous step
  if (c) {
    pending.push_back(copy_op(in, uint64_t{r} * c, Buf::kTmp, W, uint64_t{n - r} * c));
    if (r) pending.push_back(copy_op(in, 0, Buf::kTmp, W + uint64_t{n - r} * c, uint64_t{r} * c));
  }
  for (uint32_t d = 1; d < n; d <<= 1) {
    Step st;
    st.before = std::move(pending);
    pending.clear();
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (!(i & d)) continue;
      if (c) {
        st.before.push_back(copy_op(Buf::kTmp, W + uint64_t{i} * c, Buf::kTmp, P + k * c, c));
        pending.push_back(copy_op(Buf::kTmp, P + k * c, Buf::kTmp, W + uint64_t{i} * c, c));
      }
      ++k;
    }
    st.sends = {send_op((r + d) % n, Buf::kTmp, P, k * c)};
    st.recvs = {recv_op((r + n - d) % n, Buf::kTmp, P, k * c, Act::kCopy)};
    p.steps.push_back(std::move(st));
  }
  p.finish = std::move(pending);
  if (c)
    for (uint32_t i = 0; i < n; ++i)
      p.finish.push_back(copy_op(Buf::kTmp, W + uint64_t{i} * c, Buf::kOut, uint64_t{(r + n - i) % n} * c, c));
  return p;
}

}  // namespace toroid::schedule
