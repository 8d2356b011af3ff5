#include "firmware/jobs/coll_data.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "base/rng.h"
#include "firmware/jobs/coll_pattern.h"

namespace toroid::colldata {

namespace {

template <typename T>
void put(uint8_t* out, T v) {
  std::memcpy(out, &v, sizeof v);
}
template <typename T>
T get_as(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Exact sum as a big two's-complement integer in units of 2^-1074 (the
// smallest subnormal double), 2112 + 64 bits of headroom: 34 words.
struct BigAcc {
  static constexpr int kWords = 34;
  uint64_t w[kWords] = {};
  void add(double x) {
    if (x == 0) return;
    int e;
    const double m = std::frexp(std::fabs(x), &e);       // |x| = m * 2^e, m in [0.5, 1)
    auto mant = static_cast<uint64_t>(std::ldexp(m, 53));  // |x| = mant * 2^(e-53)
    int shift = e - 53 + 1074;                            // in units of 2^-1074
    if (shift < 0) {                                      // subnormal: exact since mant has trailing zeros
      mant >>= -shift;
      shift = 0;
    }
    uint64_t limb[kWords] = {};
    const int wi = shift / 64, bi = shift % 64;
    limb[wi] = mant << bi;
    if (bi && wi + 1 < kWords) limb[wi + 1] = mant >> (64 - bi);
    if (x < 0) {  // two's complement negate
      uint64_t carry = 1;
      for (auto& l : limb) {
        l = ~l + carry;
        carry = carry && l == 0;
      }
    }
    unsigned __int128 c = 0;
    for (int i = 0; i < kWords; ++i) {
      c += static_cast<unsigned __int128>(w[i]) + limb[i];
      w[i] = static_cast<uint64_t>(c);
      c >>= 64;
    }
  }
  bool negative() const { return w[kWords - 1] >> 63; }
  bool zero() const {
    for (uint64_t l : w)
      if (l) return false;
    return true;
  }
  // Round |value| to a float format with `p` mantissa bits whose smallest
  // subnormal is 2^min_exp2 (double: 53, -1074; float: 24, -149).
  double round(int p, int min_exp2, double huge) const {
    uint64_t a[kWords];
    std::memcpy(a, w, sizeof a);
    const bool neg = negative();
    if (neg) {
      uint64_t carry = 1;
      for (auto& l : a) {
        l = ~l + carry;
        carry = carry && l == 0;
      }
    }
    int top = -1;
    for (int i = kWords - 1; i >= 0 && top < 0; --i)
      if (a[i]) top = i * 64 + 63 - __builtin_clzll(a[i]);
    if (top < 0) return 0.0;
    auto bit = [&](int b) -> int { return b < 0 ? 0 : static_cast<int>(a[b / 64] >> (b % 64) & 1); };
    // The value is sum a_b 2^(b-1074). Keep bits down to position `low`.
    const int lowest = min_exp2 + 1074;                 // bit index of the format's smallest unit
    const int low = std::max(top - (p - 1), lowest);
    uint64_t mant = 0;
    for (int b = top; b >= low; --b) mant = mant << 1 | static_cast<uint64_t>(bit(b));
    const int guard = bit(low - 1);
    bool sticky = false;
    for (int b = low - 2; b >= 0 && !sticky; --b) sticky = bit(b);
    if (guard && (sticky || (mant & 1))) ++mant;
    const double v = std::ldexp(static_cast<double>(mant), low - 1074);
    const double r = v >= huge ? INFINITY : v;
    return neg ? -r : r;
  }
};

template <typename F>
F exact_sum_t(const F* x, size_t n) {
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  BigAcc acc;
  for (size_t i = 0; i < n; ++i) {
    const F v = x[i];
    nan |= std::isnan(v);
    pinf |= std::isinf(v) && v > 0;
    ninf |= std::isinf(v) && v < 0;
    all_neg_zero &= v == 0 && std::signbit(v);
    if (std::isfinite(v)) acc.add(static_cast<double>(v));
  }
  if (nan || (pinf && ninf)) return std::numeric_limits<F>::quiet_NaN();
  if (pinf) return std::numeric_limits<F>::infinity();
  if (ninf) return -std::numeric_limits<F>::infinity();
  if (acc.zero()) return all_neg_zero ? F(-0.0) : F(0.0);
  // Overflow threshold: the largest finite plus half an ulp rounds to Inf.
  if constexpr (sizeof(F) == 8) {
    return static_cast<F>(acc.round(53, -1074, std::numeric_limits<double>::infinity()));  // ldexp overflows to Inf
  } else {
    return static_cast<F>(acc.round(24, -149, 0x1p128));
  }
}

}  // namespace

double exact_sum(const double* x, size_t n) { return exact_sum_t(x, n); }
float exact_sum(const float* x, size_t n) { return exact_sum_t(x, n); }

void element(DType t, ROp op, uint64_t seed, uint64_t rank, uint64_t index, uint8_t* out) {
  pattern_element(t, op, seed, rank, index, out);
}

void fill(DType t, ROp op, uint64_t seed, uint64_t rank, uint64_t first, uint64_t count, uint8_t* out) {
  pattern_row(t, op, seed, rank, first, count, out);
}

Status Source::load_file(const std::string& path, uint64_t nodes, uint64_t count) {
  esize_ = elem_size(t_, op_);
  std::ifstream f(path, std::ios::binary);
  if (!f) return error(Code::kIo, "--input %s: cannot open it", path.c_str());
  f.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(f.tellg());
  const uint64_t want = nodes * count * esize_;
  if (size != want)
    return error(Code::kInvalid,
                 "--input %s: %llu bytes, expected %llu (%llu nodes x %llu elements x %zu bytes of %s%s)", path.c_str(),
                 static_cast<unsigned long long>(size), static_cast<unsigned long long>(want),
                 static_cast<unsigned long long>(nodes), static_cast<unsigned long long>(count), esize_, dtype_name(t_),
                 rop_is_loc(op_) ? " + int32 index" : "");
  file_.resize(want);
  f.seekg(0);
  f.read(reinterpret_cast<char*>(file_.data()), static_cast<std::streamsize>(want));
  if (!f) return error(Code::kIo, "--input %s: read failed", path.c_str());
  count_ = count;
  return Status::ok();
}

void Source::get(uint64_t rank, uint64_t index, uint8_t* out) const {
  if (file_.empty()) {
    element(t_, op_, seed_, rank, index, out);
    return;
  }
  std::memcpy(out, file_.data() + (rank * count_ + index % (count_ ? count_ : 1)) * esize_, esize_);
}

void Source::keys(uint64_t first, uint64_t n, std::vector<PatternKeys>* keys) const {
  keys->resize(n);
  if (!file_.empty()) return;  // file data: rows_keyed reads the file
  for (uint64_t i = 0; i < n; ++i) (*keys)[i] = pattern_keys(seed_, first + i);
}

void Source::rows_keyed(const PatternKeys* keys, uint64_t rank, uint64_t first, uint64_t count, uint8_t* out) const {
  if (file_.empty()) {
    pattern_row_keyed(t_, op_, keys, rank, count, out);
    return;
  }
  const size_t e = elem_size(t_, op_);
  for (uint64_t i = 0; i < count; ++i) get(rank, first + i, out + i * e);
}

void Source::rows(uint64_t rank, uint64_t first, uint64_t count, uint8_t* out) const {
  if (file_.empty()) {
    pattern_row(t_, op_, seed_, rank, first, count, out);
    return;
  }
  const size_t e = elem_size(t_, op_);
  for (uint64_t i = 0; i < count; ++i) get(rank, first + i, out + i * e);
}

void reduce_reference(const Source& src, DType t, ROp op, uint64_t nodes, uint64_t index, uint8_t* out,
                      double* bound) {
  // Generated data: the closed form, O(1) per element whatever the nodes.
  if (!src.from_file() && pattern_reduce(t, op, src.seed(), nodes, index, out, bound)) return;
  reduce_direct(src, t, op, nodes, index, out, bound);
}

void reduce_direct(const Source& src, DType t, ROp op, uint64_t nodes, uint64_t index, uint8_t* out,
                   double* bound) {
  const size_t e = elem_size(t, op);
  *bound = 0;
  uint8_t cur[16];
  if (dtype_is_float(t) && (op == ROp::kSum || op == ROp::kProd)) {
    std::vector<double> xs;
    xs.resize(nodes);
    double abs_sum = 0, prod = 1;
    for (uint64_t r = 0; r < nodes; ++r) {
      src.get(r, index, cur);
      xs[r] = t == DType::kFloat ? static_cast<double>(get_as<float>(cur)) : get_as<double>(cur);
      abs_sum += std::fabs(xs[r]);
      prod *= xs[r];
    }
    const double eps = t == DType::kFloat ? 0x1p-24 : 0x1p-53;
    if (op == ROp::kSum) {
      if (t == DType::kFloat) {
        std::vector<float> fs;
        fs.resize(nodes);
        for (uint64_t r = 0; r < nodes; ++r) fs[r] = static_cast<float>(xs[r]);
        put<float>(out, exact_sum(fs.data(), nodes));
      } else {
        put<double>(out, exact_sum(xs.data(), nodes));
      }
      *bound = static_cast<double>(nodes + 1) * eps * abs_sum + std::numeric_limits<double>::denorm_min();
    } else {
      if (t == DType::kFloat) put<float>(out, static_cast<float>(prod));
      else put<double>(out, prod);
      *bound = 2.0 * static_cast<double>(nodes + 1) * eps * std::fabs(prod);
    }
    return;
  }
  const Reducer red = make_reducer(t, op);
  src.get(0, index, out);
  for (uint64_t r = 1; r < nodes; ++r) {
    src.get(r, index, cur);
    red.apply(out, cur, 1);
  }
  (void)e;
}

namespace {
// Bit-identical elements, compared at their fixed width (a call per element
// to the library's memcmp was a tenth of a self-test's CPU time).
bool same_bits(const uint8_t* a, const uint8_t* b, size_t n) {
  switch (n) {
    case 1: return *a == *b;
    case 2: return get_as<uint16_t>(a) == get_as<uint16_t>(b);
    case 4: return get_as<uint32_t>(a) == get_as<uint32_t>(b);
    case 8: return get_as<uint64_t>(a) == get_as<uint64_t>(b);
    default: return std::memcmp(a, b, n) == 0;
  }
}
}  // namespace

bool close_enough(DType t, const uint8_t* got, const uint8_t* want, double bound) {
  const size_t n = dtype_size(t);
  if (same_bits(got, want, n)) return true;
  if (!dtype_is_float(t) || bound <= 0) return false;
  const double g = t == DType::kFloat ? get_as<float>(got) : get_as<double>(got);
  const double w = t == DType::kFloat ? get_as<float>(want) : get_as<double>(want);
  if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w);
  if (std::isinf(g) || std::isinf(w)) return g == w;
  return std::fabs(g - w) <= bound;
}

std::string format_element(DType t, ROp op, const uint8_t* p) {
  char buf[64] = "?";  // (a DType out of range prints as "?")
  switch (t) {
    case DType::kInt8: snprintf(buf, sizeof buf, "%d", get_as<int8_t>(p)); break;
    case DType::kInt16: snprintf(buf, sizeof buf, "%d", get_as<int16_t>(p)); break;
    case DType::kInt32: snprintf(buf, sizeof buf, "%d", get_as<int32_t>(p)); break;
    case DType::kInt64: snprintf(buf, sizeof buf, "%lld", static_cast<long long>(get_as<int64_t>(p))); break;
    case DType::kUint8: snprintf(buf, sizeof buf, "%u", get_as<uint8_t>(p)); break;
    case DType::kUint16: snprintf(buf, sizeof buf, "%u", get_as<uint16_t>(p)); break;
    case DType::kUint32: snprintf(buf, sizeof buf, "%u", get_as<uint32_t>(p)); break;
    case DType::kUint64: snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(get_as<uint64_t>(p))); break;
    case DType::kFloat: snprintf(buf, sizeof buf, "%a", static_cast<double>(get_as<float>(p))); break;
    case DType::kDouble: snprintf(buf, sizeof buf, "%a", get_as<double>(p)); break;
    case DType::kAluWord: snprintf(buf, sizeof buf, "?"); break;
  }
  if (rop_is_loc(op)) {
    const size_t used = std::strlen(buf);
    snprintf(buf + used, sizeof buf - used, "@%d", get_as<int32_t>(p + dtype_size(t)));
  }
  return buf;
}

}  // namespace toroid::colldata
