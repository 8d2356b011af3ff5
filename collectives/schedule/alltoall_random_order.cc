#include "collectives/schedule/alltoall_random_order.h"

#include <cstddef>
#include <utility>

#include "base/rng.h"

namespace toroid::schedule {

namespace {
// Separates this use of (seed, rank) from any other draw a caller makes from
// the same pair (test data, fault plans).
constexpr uint64_t kStreamTag = 0x3a11'70a1'0003'0003ull;
}  // namespace

std::vector<uint32_t> random_order_permutation(uint32_t n, uint32_t rank, uint64_t seed) {
  std::vector<uint32_t> order;
  if (n <= 1) return order;
  order.reserve(n - 1);
  for (uint32_t q = 0; q < n; ++q)
    if (q != rank) order.push_back(q);
  Rng rng = Rng::derive(mix64(seed ^ kStreamTag), rank);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

Plan alltoall_random_order_plan(uint32_t n, uint32_t rank, uint64_t count, uint64_t seed, bool in_place) {
  Plan plan;
  const uint64_t own = uint64_t{rank} * count;
  const Copy own_copy{Buf::kIn, own, Buf::kOut, own, count};
  if (n <= 1) {
    if (!in_place) plan.finish.push_back(own_copy);
    return plan;
  }
  Step st;
  st.first_come = true;
  if (!in_place) st.before.push_back(own_copy);
  for (uint32_t q : random_order_permutation(n, rank, seed)) st.sends.push_back(Send{q, Buf::kIn, q * count, count});
  for (uint32_t q = 0; q < n; ++q)
    if (q != rank) st.recvs.push_back(Recv{q, Buf::kOut, q * count, count, Act::kCopy});
  plan.steps.push_back(std::move(st));
  return plan;
}

}  // namespace toroid::schedule
