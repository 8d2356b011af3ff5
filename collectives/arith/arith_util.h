// Internal to collectives/arith: operand loads/stores and the IEEE 754 bit
// views shared by the encoders. ALU operands are little-endian; on the
// little-endian hosts we build for that is the native layout, so memcpy of a
// native integer is the conversion (any alignment).
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

#include "base/bytes.h"

namespace toroid::arith::detail {


using toroid::load;
using toroid::store;

template <typename F>
struct FloatFormat;

template <>
struct FloatFormat<double> {
  using U = uint64_t;
  static constexpr int kPrecision = 53;  // significand bits, the hidden one included
  static constexpr int kExpBits = 11;
  static constexpr uint32_t kExpMax = 2047;  // biased exponent of Inf/NaN
  static constexpr int kBias = 1023;
};

template <>
struct FloatFormat<float> {
  using U = uint32_t;
  static constexpr int kPrecision = 24;
  static constexpr int kExpBits = 8;
  static constexpr uint32_t kExpMax = 255;
  static constexpr int kBias = 127;
};

template <typename F>
inline typename FloatFormat<F>::U bits_of(F x) {
  return std::bit_cast<typename FloatFormat<F>::U>(x);
}

template <typename F>
inline F from_bits(typename FloatFormat<F>::U u) {
  return std::bit_cast<F>(u);
}

template <typename F>
constexpr typename FloatFormat<F>::U kSignBit = typename FloatFormat<F>::U{1} << (sizeof(F) * 8 - 1);

template <typename F>
inline bool is_nan_bits(typename FloatFormat<F>::U u) {
  return (u & ~kSignBit<F>) > (typename FloatFormat<F>::U{FloatFormat<F>::kExpMax} << (FloatFormat<F>::kPrecision - 1));
}

// The default quiet NaN, one bit pattern everywhere (results must be identical).
template <typename F>
inline F quiet_nan() {
  return from_bits<F>(typename FloatFormat<F>::U{FloatFormat<F>::kExpMax} << (FloatFormat<F>::kPrecision - 1) |
                      typename FloatFormat<F>::U{1} << (FloatFormat<F>::kPrecision - 2));
}

// t(x): order-preserving map of non-NaN floats onto unsigned integers
// (IEEE 754 totalOrder: -Inf < ... < -0 < +0 < ... < +Inf).
template <typename F>
inline typename FloatFormat<F>::U to_ordered(typename FloatFormat<F>::U u) {
  return (u & kSignBit<F>) ? ~u : (u | kSignBit<F>);
}

template <typename F>
inline typename FloatFormat<F>::U from_ordered(typename FloatFormat<F>::U t) {
  return (t & kSignBit<F>) ? (t & ~kSignBit<F>) : ~t;
}

}  // namespace toroid::arith::detail
