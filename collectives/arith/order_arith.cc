// Seed 004 B.4 and B.6: order-based reductions in one MAX pass. Every value
// is mapped to an unsigned integer whose order is the value's order (signed
// ints: sign bit flipped; floats: the totalOrder transform, NaN on top), so
// the ALU's unsigned MAX does the whole job; MIN maps to the complement, and
// MAXLOC/MINLOC carry (M - index) in the low bits below the value. See
// tree_arith.h, sections 4 and 5.
#include <cstdio>
#include <type_traits>

#include "collectives/arith/arith_util.h"
#include "collectives/arith/tree_arith.h"

namespace toroid::arith {
namespace {

using detail::FloatFormat;
using detail::load;
using detail::store;

// Unsigned key of a value in the order MAX should see; all ones is reserved
// for NaN (no number maps there, see tree_arith.h section 4).
template <typename T>
struct Key;

template <typename T>
  requires std::is_integral_v<T>
struct Key<T> {
  using U = std::make_unsigned_t<T>;
  static constexpr U kSign = U{1} << (8 * sizeof(T) - 1);
  static U encode(Extreme e, T x) {
    const U u = static_cast<U>(x) ^ kSign;
    return e == Extreme::kMax ? u : static_cast<U>(~u);
  }
  static T decode(Extreme e, U k) { return static_cast<T>((e == Extreme::kMax ? k : static_cast<U>(~k)) ^ kSign); }
};

template <typename T>
  requires std::is_floating_point_v<T>
struct Key<T> {
  using U = typename FloatFormat<T>::U;
  static U encode(Extreme e, T x) {
    const U u = detail::bits_of(x);
    if (detail::is_nan_bits<T>(u)) return ~U{0};
    const U t = detail::to_ordered<T>(u);
    return e == Extreme::kMax ? t : static_cast<U>(~t);
  }
  static T decode(Extreme e, U k) {
    if (k == ~U{0}) return detail::quiet_nan<T>();
    return detail::from_bits<T>(detail::from_ordered<T>(e == Extreme::kMax ? k : static_cast<U>(~k)));
  }
};

constexpr uint32_t kLocM = UINT32_MAX;  // M > every index

}  // namespace

// --- float MAX / MIN ---------------------------------------------------------

template <typename F>
TreePass float_extreme_pass(uint32_t n) {
  return TreePass{AluOp::kMax, AluType::kUnsigned, sizeof(F), n};
}

template <typename F>
void float_extreme_encode(Extreme e, const F* x, uint32_t n, uint8_t* out) {
  for (uint32_t i = 0; i < n; ++i) store(out + sizeof(F) * i, Key<F>::encode(e, x[i]));
}

template <typename F>
void float_extreme_decode(Extreme e, const uint8_t* in, uint32_t n, F* out) {
  using U = typename FloatFormat<F>::U;
  for (uint32_t i = 0; i < n; ++i) out[i] = Key<F>::decode(e, load<U>(in + sizeof(F) * i));
}

template <typename F>
Status nonneg_max_encode(const F* x, uint32_t n, uint8_t* out) {
  for (uint32_t i = 0; i < n; ++i) {
    const auto u = detail::bits_of(x[i]);
    if ((u & detail::kSignBit<F>) != 0) {
      return error(Code::kInvalid, "non-negative float max: x[%u] = %g has its sign bit set", i,
                   static_cast<double>(x[i]));
    }
    store(out + sizeof(F) * i, u);
  }
  return Status::ok();
}

template <typename F>
void nonneg_max_decode(const uint8_t* in, uint32_t n, F* out) {
  using U = typename FloatFormat<F>::U;
  for (uint32_t i = 0; i < n; ++i) out[i] = detail::from_bits<F>(load<U>(in + sizeof(F) * i));
}

// --- MAXLOC / MINLOC -----------------------------------------------------------

template <typename T>
TreePass loc_pass(uint32_t n) {
  return TreePass{AluOp::kMax, AluType::kUnsigned, sizeof(T) == 4 ? 8u : 16u, n};
}

template <typename T>
void loc_encode(Extreme e, const ValueLoc<T>* x, uint32_t n, uint8_t* out) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t tag = kLocM - x[i].index;
    if constexpr (sizeof(T) == 4) {
      store<uint64_t>(out + 8 * static_cast<size_t>(i), uint64_t{Key<T>::encode(e, x[i].value)} << 32 | tag);
    } else {
      using U128 = unsigned __int128;
      store<U128>(out + 16 * static_cast<size_t>(i), U128{Key<T>::encode(e, x[i].value)} << 64 | tag);
    }
  }
}

template <typename T>
void loc_decode(Extreme e, const uint8_t* in, uint32_t n, ValueLoc<T>* out) {
  for (uint32_t i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 4) {
      const auto r = load<uint64_t>(in + 8 * static_cast<size_t>(i));
      out[i].value = Key<T>::decode(e, static_cast<uint32_t>(r >> 32));
      out[i].index = kLocM - static_cast<uint32_t>(r);
    } else {
      const auto r = load<unsigned __int128>(in + 16 * static_cast<size_t>(i));
      out[i].value = Key<T>::decode(e, static_cast<uint64_t>(r >> 64));
      out[i].index = kLocM - static_cast<uint32_t>(r);
    }
  }
}

template TreePass float_extreme_pass<double>(uint32_t);
template TreePass float_extreme_pass<float>(uint32_t);
template void float_extreme_encode<double>(Extreme, const double*, uint32_t, uint8_t*);
template void float_extreme_encode<float>(Extreme, const float*, uint32_t, uint8_t*);
template void float_extreme_decode<double>(Extreme, const uint8_t*, uint32_t, double*);
template void float_extreme_decode<float>(Extreme, const uint8_t*, uint32_t, float*);
template Status nonneg_max_encode<double>(const double*, uint32_t, uint8_t*);
template Status nonneg_max_encode<float>(const float*, uint32_t, uint8_t*);
template void nonneg_max_decode<double>(const uint8_t*, uint32_t, double*);
template void nonneg_max_decode<float>(const uint8_t*, uint32_t, float*);

#define TOROID_LOC(T)                                                          \
  template TreePass loc_pass<T>(uint32_t);                                     \
  template void loc_encode<T>(Extreme, const ValueLoc<T>*, uint32_t, uint8_t*); \
  template void loc_decode<T>(Extreme, const uint8_t*, uint32_t, ValueLoc<T>*);
TOROID_LOC(int32_t)
TOROID_LOC(int64_t)
TOROID_LOC(float)
TOROID_LOC(double)
#undef TOROID_LOC

}  // namespace toroid::arith
