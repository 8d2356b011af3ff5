// Seeded, splittable random numbers. Every random choice in the project
// (fault plans, test data, random-order schedules) draws from one of these,
// derived from the run's seed, so a run is replayable from its seed alone.
#pragma once
#include <cstdint>

namespace toroid {

// SplitMix64 step: also a good 64-bit mixer for hashing ids into seeds.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// xoshiro256** seeded through SplitMix64.
class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { reseed(seed); }
  void reseed(uint64_t seed) {
    for (auto& w : s_) { seed = mix64(seed); w = seed; }
  }
  // A child generator whose stream depends on (this seed, stream id) only.
  static Rng derive(uint64_t seed, uint64_t stream) { return Rng(mix64(seed ^ mix64(stream + 0x51ed))); }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0]; s_[3] ^= s_[1]; s_[1] ^= s_[2]; s_[0] ^= s_[3];
    s_[2] ^= t; s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n), n > 0 (Lemire's multiply-shift; bias < 2^-64 * n).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  bool chance(double p) { return p > 0 && uniform() < p; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace toroid
