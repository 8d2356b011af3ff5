// The fuzz input of the structured targets, read front to back: numbers in
// little-endian with as many bytes as their range needs, byte strings as
// they are. (libFuzzer's FuzzedDataProvider reads numbers from the end,
// which no seed writer can follow; this order lets tests/fuzz/make_seeds.py
// write seeds from captured frames.) Past the end every read gives the low
// end of its range, so any input is valid.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace toroid::fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  size_t remaining_bytes() const { return n_; }

  // A value in [lo, hi]: lo + (the next k bytes, little-endian) mod (hi - lo + 1),
  // k the bytes that hi - lo needs (0 when lo == hi).
  template <typename T>
  T ConsumeIntegralInRange(T lo, T hi) {
    static_assert(std::is_integral_v<T>);
    if (hi <= lo) return lo;
    using U = std::make_unsigned_t<T>;
    const uint64_t range = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
    uint64_t raw = 0;
    int shift = 0;
    for (uint64_t r = range; r != 0 && n_ > 0; r >>= 8, shift += 8) {
      raw |= static_cast<uint64_t>(*p_++) << shift;
      --n_;
    }
    const uint64_t v = range == UINT64_MAX ? raw : raw % (range + 1);
    return static_cast<T>(static_cast<U>(static_cast<U>(lo) + static_cast<U>(v)));
  }
  template <typename T>
  T ConsumeIntegral() {
    return ConsumeIntegralInRange<T>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  }
  bool ConsumeBool() { return ConsumeIntegral<uint8_t>() & 1; }
  // Up to n bytes (fewer at the end of the input).
  template <typename T>
  std::vector<T> ConsumeBytes(size_t n) {
    static_assert(sizeof(T) == 1);
    if (n > n_) n = n_;
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), p_, n);
    p_ += n;
    n_ -= n;
    return v;
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

}  // namespace toroid::fuzz
