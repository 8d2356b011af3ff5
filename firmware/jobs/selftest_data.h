// Self-test input data. Node r's element i depends only on (seed, r, i), so
// every node can compute every other node's contribution, and the data never
// depends on the partition shape. The value is a quadratic in r with
// per-element random coefficients, so the sum over all ranks has a closed
// form (checking it costs O(count), not O(nodes * count)), and a rank that is
// missing or counted twice changes the sum (with overwhelming probability).
#pragma once
#include <cstdint>

#include "base/rng.h"

namespace toroid::selftest {

struct Coeffs {
  uint64_t a, b, c;
};
inline Coeffs coeffs(uint64_t seed, uint64_t i) {
  const uint64_t k = mix64(seed * 0x9e3779b97f4a7c15ull + i);
  return {mix64(k ^ 1), mix64(k ^ 2), mix64(k ^ 3)};
}
// All arithmetic wraps mod 2^64, like int64 SUM on two's-complement words.
inline int64_t input(uint64_t seed, uint64_t rank, uint64_t i) {
  const Coeffs k = coeffs(seed, i);
  return static_cast<int64_t>(k.a + k.b * rank + k.c * rank * rank);
}
inline int64_t expected_sum(uint64_t seed, uint64_t nodes, uint64_t i) {
  const Coeffs k = coeffs(seed, i);
  const unsigned __int128 n = nodes;
  const auto s1 = static_cast<uint64_t>(n * (n - 1) / 2);
  const auto s2 = static_cast<uint64_t>((n - 1) * n * (2 * n - 1) / 6);
  return static_cast<int64_t>(k.a * nodes + k.b * s1 + k.c * s2);
}

}  // namespace toroid::selftest
