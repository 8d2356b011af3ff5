// Unaligned loads and stores of native integers from byte buffers (memcpy,
// which compilers turn into plain moves). Operands and payloads are
// little-endian; the hosts we build for are too.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>

namespace toroid {

static_assert(std::endian::native == std::endian::little, "payloads are little-endian: add byte swaps here");

template <typename T>
inline T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
inline void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace toroid
