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

void ContextTable::begin(Walk* w, uint16_t key) {
  *w = Walk{};
  w->key = key;
  start_walk(w);
}

void ContextTable::start_walk(Walk* w) {
  // The first walk from the key's own window; each later one from a window
  // mixed from the key and the walk's number (the same on every member).
  uint64_t x = (uint64_t{w->key} << 32 | w->walks) + 0x9e3779b97f4a7c15ull;  // splitmix64's finalizer
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  w->first = w->walks == 0 ? w->key % kWindows : static_cast<uint32_t>(x % kWindows);
  w->steps = 0;
  w->withheld = false;
}

void ContextTable::offer(Walk* w, uint64_t* out) {
  drop(w);  // a walk has one round in flight at most
  bool withheld = false;
  for (uint32_t i = 0; i < kWindowWords; ++i) {
    const uint32_t k = w->window() * kWindowWords + i;
    withheld |= (~used_[k] & pending_[k]) != 0;
    w->mine[i] = ~used_[k] & ~pending_[k];
    pending_[k] |= w->mine[i];
    pending_count_ += static_cast<uint32_t>(__builtin_popcountll(w->mine[i]));
    out[i] = w->mine[i];
  }
  out[kWindowWords] = withheld ? 0 : ~uint64_t{0};
  w->in_flight = true;
}

void ContextTable::drop(Walk* w) {
  if (!w->in_flight) return;
  for (uint32_t i = 0; i < kWindowWords; ++i) {
    pending_[w->window() * kWindowWords + i] &= ~w->mine[i];
    pending_count_ -= static_cast<uint32_t>(__builtin_popcountll(w->mine[i]));
    w->mine[i] = 0;
  }
  w->in_flight = false;
}

ContextTable::Round ContextTable::settle(Walk* w, const uint64_t* all, uint16_t* id) {
  const bool mine_in = w->in_flight;
  uint64_t mine[kWindowWords];
  std::memcpy(mine, w->mine, sizeof mine);
  drop(w);
  for (uint32_t i = 0; i < kWindowWords; ++i) {
    // Every member offered these, this one included: free here, and offered
    // to no other round, so the reservation cannot fail.
    const uint64_t common = all[i] & (mine_in ? mine[i] : 0);
    if (!common) continue;
    const auto found = static_cast<uint16_t>((w->window() * kWindowWords + i) * 64 + __builtin_ctzll(common));
    if (!reserve(found)) break;
    *id = found;
    return Round::kPicked;
  }
  if (all[kWindowWords] != ~uint64_t{0}) w->withheld = true;
  if (++w->steps < kWindows) return Round::kNextWindow;
  if (!w->withheld) return Round::kExhausted;
  ++w->walks;
  start_walk(w);
  return Round::kRetry;
}

}  // namespace toroid
