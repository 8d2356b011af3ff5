#include "collectives/context_table.h"

#include <cstring>

namespace toroid {

ContextTable::ContextTable() {
  (void)reserve(0);
  (void)reserve(kWorld);
}

bool ContextTable::reserve(uint16_t id) {
  if (in_use(id)) return false;
  used_[id / 64] |= uint64_t{1} << (id % 64);
  ++used_count_;
  return true;
}

void ContextTable::release(uint16_t id) {
  if (id < kFirstAgreed || id >= kIds || !in_use(id)) return;
  used_[id / 64] &= ~(uint64_t{1} << (id % 64));
  --used_count_;
}

void ContextTable::offer(uint32_t window, uint64_t* out, bool* offered) {
  *offered = !busy_ && window < kWindows;
  if (!*offered) {
    std::memset(out, 0, kRoundWords * sizeof(uint64_t));
    return;
  }
  busy_ = true;
  for (uint32_t w = 0; w < kWindowWords; ++w) out[w] = ~used_[window * kWindowWords + w];
  out[kWindowWords] = ~uint64_t{0};
}

ContextTable::Round ContextTable::settle(uint32_t window, const uint64_t* all, bool offered, uint16_t* id) {
  if (offered) busy_ = false;
  if (all[kWindowWords] != ~uint64_t{0}) return Round::kRetry;
  for (uint32_t w = 0; w < kWindowWords; ++w) {
    if (!all[w]) continue;
    const auto found = static_cast<uint16_t>((window * kWindowWords + w) * 64 + __builtin_ctzll(all[w]));
    // Free on every member, this one included: the reservation cannot fail.
    if (!reserve(found)) return Round::kRetry;
    *id = found;
    return Round::kPicked;
  }
  return window + 1 < kWindows ? Round::kNextWindow : Round::kExhausted;
}

}  // namespace toroid
