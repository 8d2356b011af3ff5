// Explicit byte order for wire formats: every multi-byte wire field is a
// Be16/Be32/Be64, so a struct can never be read in host order by mistake.
#pragma once
#include <cstdint>

namespace toroid {

template <typename T>
struct __attribute__((packed)) BigEndian {
  T raw;  // network byte order
  static T swap(T v) {
    if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(v));
    else if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(v));
    else return static_cast<T>(__builtin_bswap64(v));
  }
  T get() const { return swap(raw); }
  void set(T v) { raw = swap(v); }
};
using Be16 = BigEndian<uint16_t>;
using Be32 = BigEndian<uint32_t>;
using Be64 = BigEndian<uint64_t>;
static_assert(sizeof(Be16) == 2 && sizeof(Be32) == 4 && sizeof(Be64) == 8);

}  // namespace toroid
