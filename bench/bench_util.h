// Small helpers shared by the micro-benchmarks.
#pragma once
#include <cstdint>
#include <vector>

#include "base/torus.h"

namespace toroid::bench {

// Deterministic 64-bit generator (splitmix64): the same inputs on every run,
// so two runs differ only in the machine, never in the data.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }

 private:
  uint64_t s_;
};

inline std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  SplitMix r(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(r.next());
  return v;
}

inline Coord random_coord(SplitMix& r, const Dims& d) {
  Coord c;
  for (int i = 0; i < kDims; ++i) c.c[i] = r.below(d.n[i]);
  return c;
}

}  // namespace toroid::bench
