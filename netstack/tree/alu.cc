// The combine network's ALU (seed 004 B): see alu.h for the contract.
//
// Operands are little-endian and may sit at any alignment, so every load and
// store goes through memcpy (one instruction on x86 and arm64). Four kernel
// shapes cover every (op, type, width):
//   - bitwise ops ignore operand boundaries: the whole buffer is one run of
//     64-bit words (plus a 4-byte tail when width 4 and n is odd);
//   - 4- and 8-byte ADD/MAX/MIN are plain element loops the compiler
//     vectorises (`#pragma GCC ivdep`: acc[i] depends on acc[i] and in[i]
//     only, so even acc == in carries no dependence between iterations);
//   - 16-byte operands are one (unsigned) __int128;
//   - long operands (24..256 bytes) are arrays of 64-bit words: ADD ripples
//     a carry from word 0 up, MAX/MIN compare from the top word down (the
//     top word signed for kSigned) and then select branch-free, so random
//     data costs no mispredicted branches.
// On x86-64 with GCC alu_combine is also built for AVX2 (target_clones,
// chosen once at load time), which vectorises the 64-bit compares and
// widens every loop; elsewhere it is one portable build.
#include "netstack/tree/alu.h"

#include "base/bytes.h"

#include <cstring>
#include <utility>

namespace toroid {
namespace {

using toroid::load;
using toroid::store;

// --- bitwise: any width -----------------------------------------------------

template <AluOp kOp>
inline uint64_t bit_op(uint64_t a, uint64_t b) {
  if constexpr (kOp == AluOp::kAnd) return a & b;
  if constexpr (kOp == AluOp::kOr) return a | b;
  return a ^ b;
}

template <AluOp kOp>
[[gnu::always_inline]] inline void combine_bits(uint8_t* acc, const uint8_t* in, size_t bytes) {
  const size_t words = bytes / 8;
#pragma GCC ivdep
  for (size_t i = 0; i < words; ++i) {
    store(acc + 8 * i, bit_op<kOp>(load<uint64_t>(acc + 8 * i), load<uint64_t>(in + 8 * i)));
  }
  // Widths are multiples of 4, so the tail is 0 or 4 bytes.
  if (bytes % 8 != 0) {
    const size_t o = 8 * words;
    const uint32_t r = static_cast<uint32_t>(bit_op<kOp>(load<uint32_t>(acc + o), load<uint32_t>(in + o)));
    store(acc + o, r);
  }
}

// --- 4- and 8-byte words ----------------------------------------------------

template <typename T, AluOp kOp>
inline T word_op(T a, T b) {
  if constexpr (kOp == AluOp::kAdd) return static_cast<T>(a + b);
  if constexpr (kOp == AluOp::kMax) return a > b ? a : b;
  return a < b ? a : b;
}

template <typename T, AluOp kOp>
[[gnu::always_inline]] inline void combine_words(uint8_t* acc, const uint8_t* in, uint32_t n) {
#pragma GCC ivdep
  for (uint32_t i = 0; i < n; ++i) {
    const size_t o = static_cast<size_t>(i) * sizeof(T);
    store(acc + o, word_op<T, kOp>(load<T>(acc + o), load<T>(in + o)));
  }
}

// ADD is the same for both types (two's complement wraps like unsigned), so it
// always runs on the unsigned word.
template <typename U, typename S>
[[gnu::always_inline]] inline void combine_native(AluOp op, AluType type, uint8_t* acc, const uint8_t* in, uint32_t n) {
  const bool sgn = type == AluType::kSigned;
  switch (op) {
    case AluOp::kAdd: return combine_words<U, AluOp::kAdd>(acc, in, n);
    case AluOp::kMax:
      return sgn ? combine_words<S, AluOp::kMax>(acc, in, n) : combine_words<U, AluOp::kMax>(acc, in, n);
    case AluOp::kMin:
      return sgn ? combine_words<S, AluOp::kMin>(acc, in, n) : combine_words<U, AluOp::kMin>(acc, in, n);
    default: return;
  }
}

// --- long precision: 24..256 bytes as 64-bit words ---------------------------

#if defined(__x86_64__)
// ADD per width, known at compile time: each operand's words unroll into
// one add-with-carry chain (about a cycle a word), where a loop over a
// run-time word count keeps the carry in registers between iterations
// (about three cycles a word; the exact float sum's pass 2 is mostly this).
template <uint32_t kWords>
[[gnu::always_inline]] inline void add_fixed(uint8_t* acc, const uint8_t* in, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* a = acc + static_cast<size_t>(i) * 8 * kWords;
    const uint8_t* b = in + static_cast<size_t>(i) * 8 * kWords;
    // The sum goes straight to acc (x86 stores unaligned words alike): a
    // local whose address the builtin takes would round-trip the stack.
    using Word [[gnu::may_alias]] = unsigned long long;
    unsigned char c = 0;
#pragma GCC unroll 32
    for (uint32_t w = 0; w < kWords; ++w) {
      c = __builtin_ia32_addcarryx_u64(c, load<uint64_t>(a + 8 * w), load<uint64_t>(b + 8 * w),
                                       reinterpret_cast<Word*>(a + 8 * w));
    }
  }
}

template <uint32_t... kW>
[[gnu::always_inline]] inline void add_long_n(uint8_t* acc, const uint8_t* in, uint32_t words, uint32_t n,
                                              std::integer_sequence<uint32_t, kW...>) {
  ((words == kW + 3 ? add_fixed<kW + 3>(acc, in, n) : void()), ...);
}

// Every long width, 24..256 bytes (3..32 words).
[[gnu::always_inline]] inline void add_long_all(uint8_t* acc, const uint8_t* in, uint32_t words, uint32_t n) {
  add_long_n(acc, in, words, n, std::make_integer_sequence<uint32_t, kAluMaxWidth / 8 - 2>{});
}
#else
[[gnu::always_inline]] inline void add_long(uint8_t* acc, const uint8_t* in, uint32_t words) {
  unsigned __int128 carry = 0;
  for (uint32_t w = 0; w < words; ++w) {
    const unsigned __int128 s =
        carry + load<uint64_t>(acc + 8 * w) + static_cast<unsigned __int128>(load<uint64_t>(in + 8 * w));
    store(acc + 8 * w, static_cast<uint64_t>(s));
    carry = s >> 64;
  }
}

[[gnu::always_inline]] inline void add_long_all(uint8_t* acc, const uint8_t* in, uint32_t words, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const size_t o = static_cast<size_t>(i) * 8 * words;
    add_long(acc + o, in + o, words);
  }
}
#endif

// -1, 0 or 1 as the operand at a compares to the one at b.
[[gnu::always_inline]] inline int compare_long(const uint8_t* a, const uint8_t* b, uint32_t words, bool sgn) {
  const uint32_t top = words - 1;
  uint64_t x = load<uint64_t>(a + 8 * top);
  uint64_t y = load<uint64_t>(b + 8 * top);
  if (sgn) {  // flipping the sign bit turns a signed order into an unsigned one
    x ^= 1ull << 63;
    y ^= 1ull << 63;
  }
  for (uint32_t w = top;;) {
    if (x != y) return x > y ? 1 : -1;
    if (w == 0) return 0;
    --w;
    x = load<uint64_t>(a + 8 * w);
    y = load<uint64_t>(b + 8 * w);
  }
}

// acc = in where take, with a mask instead of a branch.
[[gnu::always_inline]] inline void select_long(uint8_t* acc, const uint8_t* in, uint32_t words, bool take) {
  const uint64_t m = 0 - static_cast<uint64_t>(take);
  for (uint32_t w = 0; w < words; ++w) {
    const uint64_t a = load<uint64_t>(acc + 8 * w);
    store(acc + 8 * w, a ^ ((a ^ load<uint64_t>(in + 8 * w)) & m));
  }
}

template <AluOp kOp>
[[gnu::always_inline]] inline void extreme_long(uint8_t* acc, const uint8_t* in, uint32_t width, uint32_t n, bool sgn) {
  const uint32_t words = width / 8;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t o = static_cast<size_t>(i) * width;
    const int c = compare_long(in + o, acc + o, words, sgn);
    select_long(acc + o, in + o, words, kOp == AluOp::kMax ? c > 0 : c < 0);
  }
}

// 16 bytes: one 128-bit word, which the compiler handles as two registers.
// MAX/MIN select with a mask: a ternary on __int128 becomes a branch, which
// random data mispredicts half the time.
template <typename T, AluOp kOp>
[[gnu::always_inline]] inline void combine_128(uint8_t* acc, const uint8_t* in, uint32_t n) {
  using U = unsigned __int128;
  for (uint32_t i = 0; i < n; ++i) {
    const size_t o = static_cast<size_t>(i) * 16;
    const T a = load<T>(acc + o);
    const T b = load<T>(in + o);
    if constexpr (kOp == AluOp::kAdd) {
      store(acc + o, static_cast<U>(a) + static_cast<U>(b));
    } else {
      const bool take = kOp == AluOp::kMax ? b > a : b < a;
      const U m = 0 - static_cast<U>(take);
      store(acc + o, static_cast<U>(a) ^ ((static_cast<U>(a) ^ static_cast<U>(b)) & m));
    }
  }
}

// x86-64's baseline (SSE2) has no 64-bit vector compare, so 8-byte MAX/MIN
// would stay scalar: on x86 the dispatch below is also built for AVX2 and
// picked at load time (ifunc); the kernels inline into each clone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TOROID_ALU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TOROID_ALU_CLONES
#endif

bool valid_width(uint32_t w) { return w == 4 || w == 8 || w == 16 || (w >= 24 && w <= kAluMaxWidth && w % 8 == 0); }

}  // namespace

const char* alu_op_name(AluOp op) {
  switch (op) {
    case AluOp::kAdd: return "add";
    case AluOp::kMax: return "max";
    case AluOp::kMin: return "min";
    case AluOp::kAnd: return "and";
    case AluOp::kOr: return "or";
    case AluOp::kXor: return "xor";
  }
  return "?";
}

bool parse_alu_op(const char* s, AluOp* out) {
  if (s == nullptr) return false;
  for (auto op : {AluOp::kAdd, AluOp::kMax, AluOp::kMin, AluOp::kAnd, AluOp::kOr, AluOp::kXor}) {
    if (std::strcmp(s, alu_op_name(op)) == 0) {
      *out = op;
      return true;
    }
  }
  return false;
}

Status alu_check(AluOp op, AluType type, uint32_t width_bytes) {
  const auto o = static_cast<unsigned>(op);
  if (o < static_cast<unsigned>(AluOp::kAdd) || o > static_cast<unsigned>(AluOp::kXor)) {
    return error(Code::kInvalid, "alu: op %u is not one of add, max, min, and, or, xor", o);
  }
  if (type != AluType::kUnsigned && type != AluType::kSigned) {
    return error(Code::kInvalid, "alu: type %u is neither unsigned (1) nor signed (2)", static_cast<unsigned>(type));
  }
  if (!valid_width(width_bytes)) {
    return error(Code::kInvalid, "alu: width %u bytes is not 4, 8, 16 or 24..%u in steps of 8", width_bytes,
                 kAluMaxWidth);
  }
  return Status::ok();
}

TOROID_ALU_CLONES
void alu_combine(AluOp op, AluType type, uint32_t width_bytes, uint8_t* acc, const uint8_t* in, uint32_t n) {
  switch (op) {
    case AluOp::kAnd: return combine_bits<AluOp::kAnd>(acc, in, static_cast<size_t>(n) * width_bytes);
    case AluOp::kOr: return combine_bits<AluOp::kOr>(acc, in, static_cast<size_t>(n) * width_bytes);
    case AluOp::kXor: return combine_bits<AluOp::kXor>(acc, in, static_cast<size_t>(n) * width_bytes);
    default: break;
  }
  const bool sgn = type == AluType::kSigned;
  if (width_bytes == 4) return combine_native<uint32_t, int32_t>(op, type, acc, in, n);
  if (width_bytes == 8) return combine_native<uint64_t, int64_t>(op, type, acc, in, n);
  if (width_bytes == 16) {
    using U = unsigned __int128;
    using S = __int128;
    if (op == AluOp::kAdd) return combine_128<U, AluOp::kAdd>(acc, in, n);
    if (op == AluOp::kMax) return sgn ? combine_128<S, AluOp::kMax>(acc, in, n) : combine_128<U, AluOp::kMax>(acc, in, n);
    return sgn ? combine_128<S, AluOp::kMin>(acc, in, n) : combine_128<U, AluOp::kMin>(acc, in, n);
  }
  const uint32_t words = width_bytes / 8;
  switch (op) {
    case AluOp::kAdd: return add_long_all(acc, in, words, n);
    case AluOp::kMax: return extreme_long<AluOp::kMax>(acc, in, width_bytes, n, sgn);
    case AluOp::kMin: return extreme_long<AluOp::kMin>(acc, in, width_bytes, n, sgn);
    default: return;
  }
}

}  // namespace toroid
