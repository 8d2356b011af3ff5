#include "collectives/dtype.h"

#include <cmath>
#include <cstring>
#include <strings.h>

namespace toroid {

namespace {

const char* const kDTypeNames[] = {"int8",   "int16",  "int32", "int64", "uint8",
                                   "uint16", "uint32", "uint64", "float", "double", "alu-word"};
const char* const kROpNames[] = {"sum", "prod", "min",  "max",  "band",   "bor",
                                 "bxor", "land", "lor", "lxor", "minloc", "maxloc"};

template <typename T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store(void* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// A total order for MIN/MAX and the loc ops: any NaN is the extreme that
// wins (so NaN propagates), -0 below +0; integers compare as usual.
template <typename T>
bool less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return !std::isnan(a);
    if (std::isnan(a)) return false;
    if (a == b) return std::signbit(a) && !std::signbit(b);
  }
  return a < b;
}

template <typename T, typename F>
void binary(void* dst, const void* src, size_t n, F f) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n; ++i) store<T>(d + i * sizeof(T), f(load<T>(d + i * sizeof(T)), load<T>(s + i * sizeof(T))));
}

template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // no int promotion UB
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

template <typename T>
void k_sum(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return wrap_add(a, b); }); }
template <typename T>
void k_prod(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return wrap_mul(a, b); }); }
// NaN wins MIN as well as MAX (it propagates); the first NaN is kept.
template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}
template <typename T>
void k_min(void* d, const void* s, size_t n) {
  binary<T>(d, s, n, [](T a, T b) { return is_nan(a) ? a : is_nan(b) ? b : less(b, a) ? b : a; });
}
template <typename T>
void k_max(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return less(a, b) ? b : a; }); }
template <typename T>
void k_band(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return static_cast<T>(a & b); }); }
template <typename T>
void k_bor(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return static_cast<T>(a | b); }); }
template <typename T>
void k_bxor(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return static_cast<T>(a ^ b); }); }
template <typename T>
void k_land(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return static_cast<T>((a != 0) && (b != 0)); }); }
template <typename T>
void k_lor(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return static_cast<T>((a != 0) || (b != 0)); }); }
template <typename T>
void k_lxor(void* d, const void* s, size_t n) { binary<T>(d, s, n, [](T a, T b) { return static_cast<T>((a != 0) != (b != 0)); }); }

// (value, int32 index) pairs, packed.
template <typename T, bool kMax>
void k_loc(void* dst, const void* src, size_t n) {
  constexpr size_t kE = sizeof(T) + 4;
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* de = d + i * kE;
    const uint8_t* se = s + i * kE;
    const T a = load<T>(de), b = load<T>(se);
    const int32_t ia = load<int32_t>(de + sizeof(T)), ib = load<int32_t>(se + sizeof(T));
    const bool b_wins = kMax ? less(a, b) : (!is_nan(a) && (is_nan(b) || less(b, a)));
    const bool tie = !less(a, b) && !less(b, a);
    if (b_wins || (tie && ib < ia)) std::memcpy(de, se, kE);
  }
}

template <typename T>
Reducer::Fn kernel(ROp op) {
  switch (op) {
    case ROp::kSum: return k_sum<T>;
    case ROp::kProd: return k_prod<T>;
    case ROp::kMin: return k_min<T>;
    case ROp::kMax: return k_max<T>;
    case ROp::kMinloc: return k_loc<T, false>;
    case ROp::kMaxloc: return k_loc<T, true>;
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ROp::kBand: return k_band<T>;
      case ROp::kBor: return k_bor<T>;
      case ROp::kBxor: return k_bxor<T>;
      case ROp::kLand: return k_land<T>;
      case ROp::kLor: return k_lor<T>;
      case ROp::kLxor: return k_lxor<T>;
      default: break;
    }
  }
  return nullptr;
}

}  // namespace

const char* dtype_name(DType t) {
  const auto i = static_cast<size_t>(t);
  return i < sizeof kDTypeNames / sizeof *kDTypeNames ? kDTypeNames[i] : "?";
}
const char* rop_name(ROp op) {
  const auto i = static_cast<size_t>(op);
  return i < static_cast<size_t>(kROps) ? kROpNames[i] : "?";
}
const char* repro_name(Repro r) {
  switch (r) {
    case Repro::kNone: return "none";
    case Repro::kFixedOrder: return "fixed-order";
    case Repro::kExact: return "exact";
  }
  return "?";
}

Result<DType> parse_dtype(const std::string& s) {
  for (int i = 0; i < kUserDTypes; ++i)
    if (strcasecmp(s.c_str(), kDTypeNames[i]) == 0) return static_cast<DType>(i);
  return error(Code::kInvalid,
               "unknown datatype '%s' (known: int8, int16, int32, int64, uint8, uint16, uint32, uint64, float, double)",
               s.c_str());
}
Result<ROp> parse_rop(const std::string& s) {
  for (int i = 0; i < kROps; ++i)
    if (strcasecmp(s.c_str(), kROpNames[i]) == 0) return static_cast<ROp>(i);
  return error(Code::kInvalid,
               "unknown reduction op '%s' (known: sum, prod, min, max, band, bor, bxor, land, lor, lxor, minloc, "
               "maxloc)",
               s.c_str());
}
Result<Repro> parse_repro(const std::string& s) {
  if (s == "none") return Repro::kNone;
  if (s == "fixed-order") return Repro::kFixedOrder;
  if (s == "exact") return Repro::kExact;
  return error(Code::kInvalid, "unknown reproducibility mode '%s' (known: none, fixed-order, exact)", s.c_str());
}


Status check_rop(DType t, ROp op) {
  if (static_cast<int>(t) >= kUserDTypes) return error(Code::kInvalid, "datatype %s is internal", dtype_name(t));
  if (static_cast<int>(op) >= kROps) return error(Code::kInvalid, "unknown reduction op %d", static_cast<int>(op));
  const bool bitwise = op == ROp::kBand || op == ROp::kBor || op == ROp::kBxor;
  const bool logical = op == ROp::kLand || op == ROp::kLor || op == ROp::kLxor;
  if ((bitwise || logical) && dtype_is_float(t))
    return error(Code::kInvalid, "%s is defined for integer types only, not %s", rop_name(op), dtype_name(t));
  return Status::ok();
}

void Reducer::apply(void* dst, const void* src, size_t n) const {
  if (cfn) cfn(ctx, dst, src, n);
  else if (fn) fn(dst, src, n);
  else alu_combine(alu_op, alu_type, static_cast<uint32_t>(esize), static_cast<uint8_t*>(dst),
                   static_cast<const uint8_t*>(src), static_cast<uint32_t>(n));
}

Reducer make_reducer(DType t, ROp op) {
  Reducer r;
  r.esize = elem_size(t, op);
  switch (t) {
    case DType::kInt8: r.fn = kernel<int8_t>(op); break;
    case DType::kInt16: r.fn = kernel<int16_t>(op); break;
    case DType::kInt32: r.fn = kernel<int32_t>(op); break;
    case DType::kInt64: r.fn = kernel<int64_t>(op); break;
    case DType::kUint8: r.fn = kernel<uint8_t>(op); break;
    case DType::kUint16: r.fn = kernel<uint16_t>(op); break;
    case DType::kUint32: r.fn = kernel<uint32_t>(op); break;
    case DType::kUint64: r.fn = kernel<uint64_t>(op); break;
    case DType::kFloat: r.fn = kernel<float>(op); break;
    case DType::kDouble: r.fn = kernel<double>(op); break;
    case DType::kAluWord: break;
  }
  return r;
}

Reducer make_alu_reducer(AluOp op, AluType type, uint32_t width) {
  Reducer r;
  r.esize = width;
  r.alu_op = op;
  r.alu_type = type;
  return r;
}

}  // namespace toroid
