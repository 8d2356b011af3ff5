// Seed 004 B.1 and B.2: signed integer SUM (by bias, by sign extension) and
// signed MAX/MIN on an ALU that adds and compares unsigned words. The limits
// are checked here, on the sending side, because the network cannot report
// an overflow: it wraps silently.
#include <bit>
#include <type_traits>

#include "collectives/arith/arith_util.h"
#include "collectives/arith/tree_arith.h"

namespace toroid::arith {
namespace {

using U128 = unsigned __int128;
using detail::load;
using detail::store;

bool bias_width_ok(uint32_t width) { return width == 4 || width == 8 || width == 16; }

uint32_t ceil_log2(uint64_t n) { return n <= 1 ? 0 : static_cast<uint32_t>(std::bit_width(n - 1)); }

U128 load_width(const uint8_t* p, uint32_t width) {
  U128 v = 0;
  std::memcpy(&v, p, width);
  return v;
}

// Keep the low `bits` bits of v and read them as a signed integer.
__int128 sign_extend(U128 v, uint32_t bits) {
  if (bits >= 128) return static_cast<__int128>(v);
  const uint32_t s = 128 - bits;
  return static_cast<__int128>(v << s) >> s;
}

}  // namespace

Result<BiasSum> plan_bias_sum(uint32_t width, uint64_t nodes) {
  if (!bias_width_ok(width)) {
    return error(Code::kInvalid, "signed sum by bias: width %u bytes (want 4, 8 or 16)", width);
  }
  if (nodes == 0) return error(Code::kInvalid, "signed sum by bias: no nodes");
  const uint32_t w = 8 * width;
  const uint32_t lg = ceil_log2(nodes);
  if (lg + 1 > w) {  // P = w - 1 - lg would be negative: not even x = 0 fits
    return error(Code::kOutOfRange, "signed sum by bias: %llu nodes exceed 2^%u on %u-bit words",
                 static_cast<unsigned long long>(nodes), w - 1, w);
  }
  return BiasSum{width, w - 1 - lg, nodes};
}

Result<uint64_t> bias_sum_max_abs(uint32_t width, uint64_t nodes) {
  auto plan = plan_bias_sum(width, nodes);
  if (!plan) return plan.status();
  if (plan->p >= 64) return uint64_t{1} << 63;  // every int64, INT64_MIN included
  return (uint64_t{1} << plan->p) - 1;
}

uint64_t bias_sum_max_nodes(uint32_t width, uint64_t max_abs) {
  if (!bias_width_ok(width)) return 0;
  const uint32_t w = 8 * width;
  const auto p = static_cast<uint32_t>(std::bit_width(max_abs));  // smallest P with 2^P > max_abs
  if (p + 1 > w) return 0;
  const uint32_t e = w - 1 - p;
  return e >= 64 ? UINT64_MAX : uint64_t{1} << e;
}

TreePass bias_sum_pass(const BiasSum& plan, uint32_t n) {
  return TreePass{AluOp::kAdd, AluType::kUnsigned, plan.width, n};
}

Status bias_sum_encode(const BiasSum& plan, const int64_t* x, uint32_t n, uint8_t* out) {
  const U128 bias = U128{1} << plan.p;
  for (uint32_t i = 0; i < n; ++i) {
    // |x| as unsigned: exact for INT64_MIN too.
    const uint64_t mag = x[i] < 0 ? 0 - static_cast<uint64_t>(x[i]) : static_cast<uint64_t>(x[i]);
    if (plan.p < 64 && mag >= (uint64_t{1} << plan.p)) {
      return error(Code::kOutOfRange,
                   "signed sum by bias: |x[%u]| = %llu exceeds 2^%u - 1, the limit for %llu nodes on %u-bit words",
                   i, static_cast<unsigned long long>(mag), plan.p, static_cast<unsigned long long>(plan.nodes),
                   8 * plan.width);
    }
    const U128 u = bias + static_cast<U128>(static_cast<__int128>(x[i]));  // in [1, 2^(P+1) - 1]
    std::memcpy(out + static_cast<size_t>(i) * plan.width, &u, plan.width);
  }
  return Status::ok();
}

void bias_sum_decode(const BiasSum& plan, const uint8_t* in, uint32_t n, __int128* sum) {
  // Modulo 2^w the subtraction is exact; |true sum| < N*2^P <= 2^(w-1) fits signed.
  const U128 total_bias = static_cast<U128>(plan.nodes) << plan.p;
  for (uint32_t i = 0; i < n; ++i) {
    const U128 s = load_width(in + static_cast<size_t>(i) * plan.width, plan.width);
    sum[i] = sign_extend(s - total_bias, 8 * plan.width);
  }
}

// --- sign extension ----------------------------------------------------------

uint64_t sext_sum_max_nodes(uint32_t value_bits) {
  // N*2^(w-1) < 2^(w'-1) with w' = 2w: N < 2^w.
  if (value_bits == 32) return (uint64_t{1} << 32) - 1;
  if (value_bits == 64) return UINT64_MAX;
  return 0;
}

Status sext_sum_check(uint32_t value_bits, uint64_t nodes) {
  if (value_bits != 32 && value_bits != 64) {
    return error(Code::kInvalid, "signed sum by sign extension: %u-bit values (want 32 or 64)", value_bits);
  }
  if (nodes == 0) return error(Code::kInvalid, "signed sum by sign extension: no nodes");
  if (nodes > sext_sum_max_nodes(value_bits)) {
    return error(Code::kOutOfRange, "signed sum by sign extension: %llu nodes of %u-bit values overflow %u-bit words",
                 static_cast<unsigned long long>(nodes), value_bits, 2 * value_bits);
  }
  return Status::ok();
}

TreePass sext_sum_pass(uint32_t value_bits, uint32_t n) {
  return TreePass{AluOp::kAdd, AluType::kSigned, value_bits / 4, n};
}

void sext_sum_encode(const int32_t* x, uint32_t n, uint8_t* out) {
  for (uint32_t i = 0; i < n; ++i) store<int64_t>(out + 8 * static_cast<size_t>(i), x[i]);
}

void sext_sum_encode(const int64_t* x, uint32_t n, uint8_t* out) {
  for (uint32_t i = 0; i < n; ++i) store<__int128>(out + 16 * static_cast<size_t>(i), x[i]);
}

void sext_sum_decode(const uint8_t* in, uint32_t n, int64_t* sum) {
  for (uint32_t i = 0; i < n; ++i) sum[i] = load<int64_t>(in + 8 * static_cast<size_t>(i));
}

void sext_sum_decode(const uint8_t* in, uint32_t n, __int128* sum) {
  for (uint32_t i = 0; i < n; ++i) sum[i] = load<__int128>(in + 16 * static_cast<size_t>(i));
}

// --- signed MAX / MIN ----------------------------------------------------------

template <typename T>
TreePass signed_extreme_pass(uint32_t n) {
  return TreePass{AluOp::kMax, AluType::kUnsigned, sizeof(T), n};
}

template <typename T>
void signed_extreme_encode(Extreme e, const T* x, uint32_t n, uint8_t* out) {
  using U = std::make_unsigned_t<T>;
  constexpr U kSign = U{1} << (8 * sizeof(T) - 1);
  for (uint32_t i = 0; i < n; ++i) {
    const U u = static_cast<U>(x[i]) ^ kSign;  // x + 2^(w-1) mod 2^w
    store<U>(out + sizeof(T) * i, e == Extreme::kMax ? u : static_cast<U>(~u));
  }
}

template <typename T>
void signed_extreme_decode(Extreme e, const uint8_t* in, uint32_t n, T* out) {
  using U = std::make_unsigned_t<T>;
  constexpr U kSign = U{1} << (8 * sizeof(T) - 1);
  for (uint32_t i = 0; i < n; ++i) {
    U r = load<U>(in + sizeof(T) * i);
    if (e == Extreme::kMin) r = static_cast<U>(~r);
    out[i] = static_cast<T>(r ^ kSign);
  }
}

template TreePass signed_extreme_pass<int32_t>(uint32_t);
template TreePass signed_extreme_pass<int64_t>(uint32_t);
template void signed_extreme_encode<int32_t>(Extreme, const int32_t*, uint32_t, uint8_t*);
template void signed_extreme_encode<int64_t>(Extreme, const int64_t*, uint32_t, uint8_t*);
template void signed_extreme_decode<int32_t>(Extreme, const uint8_t*, uint32_t, int32_t*);
template void signed_extreme_decode<int64_t>(Extreme, const uint8_t*, uint32_t, int64_t*);

}  // namespace toroid::arith
