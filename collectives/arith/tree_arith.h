// Seed 004 B: every MPI reduction built from the combine network's integer
// ALU (netstack/tree/alu.h). The network part of each method is one or two
// integer passes over all N nodes (a TreePass: op, type, operand width and
// count); everything else is a pure encode (my values -> my operands) before
// the pass and a pure decode (the combined operands -> the result) after it.
// Because the ALU ops are associative and commutative integer ops, the
// combined operands, and so every decoded result, are bit-identical on every
// node and independent of the tree's shape, root and arrival order: that is
// what makes even the float SUM reproducible.
//
// Method                    passes (op/type/width)            limits
// ------------------------  --------------------------------  ---------------------------------
// signed SUM by bias         ADD/unsigned/4|8|16               |x| < 2^P, N*2^(P+1) <= 2^(8W)
// signed SUM by sign ext.    ADD/signed/8 (int32), 16 (int64)  N*2^(w-1) < 2^(w'-1)
// signed MAX / MIN           MAX/unsigned/4|8                  none
// float SUM, exact           1) MAX/unsigned/4 x3 per 64 values N <= 2^32
//                            2) ADD/unsigned/176..256, per value
//                               V + 1 + log2 N bits, V the
//                               block's exponent spread + p
// float MAX / MIN            MAX/unsigned/4|8                  any NaN -> NaN
// non-negative float MAX     MAX/unsigned/4|8                  sign bit must be clear
// MAXLOC / MINLOC            MAX/unsigned/8 (32-bit values),   index < 2^32
//                            16 (64-bit values)
// ALLGATHER                  ADD/unsigned/8                    N*block/8 < 2^32 operands
// LAND / LOR / LXOR          AND|OR|XOR/unsigned/8, 64 per op  none
// barrier                    AND/unsigned/8 x2                 none
//
// Operand buffers are little-endian ALU operands, laid out value after value
// (operand i of value k at (k * per_value + i) * width). Encoders write every
// byte of their output; none allocates.
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "netstack/tree/alu.h"

namespace toroid::arith {

// One pass over the combine network: every node contributes `operands`
// operands of `width` bytes; the network folds them with (op, type).
struct TreePass {
  AluOp op;
  AluType type;
  uint32_t width;     // bytes per operand
  uint32_t operands;  // operands per node
  size_t bytes() const { return static_cast<size_t>(width) * operands; }
};

enum class Extreme : uint8_t { kMax, kMin };

// ---------------------------------------------------------------------------
// 1. Signed integer SUM by bias (seed 004 B.1).
//   pass    ADD, unsigned, width W in {4, 8, 16} bytes (w = 8W bits), n operands
//   encode  u = x + 2^P (unsigned, in [1, 2^(P+1)-1])
//   decode  S - N*2^P, read as a signed w-bit integer
//   limits  2^P > |x| and N*2^(P+1) <= 2^w. Every node must use the same P,
//           so P depends on (W, N) only: the largest P with N*2^(P+1) <= 2^w,
//           P = w - 1 - ceil(log2 N). The largest |x| is then 2^P - 1.
struct BiasSum {
  uint32_t width = 0;  // operand bytes
  uint32_t p = 0;      // bias exponent
  uint64_t nodes = 0;  // N
};
// kInvalid for a width other than 4/8/16, N = 0, or N > 2^(w-1) (no P >= 0).
Result<BiasSum> plan_bias_sum(uint32_t width, uint64_t nodes);
// Largest |x| a plan for (width, nodes) accepts: min(2^P - 1, 2^63), the cap
// being |INT64_MIN|; errors as plan_bias_sum.
Result<uint64_t> bias_sum_max_abs(uint32_t width, uint64_t nodes);
// Largest N for which every |x| <= max_abs is accepted: 2^(w - 1 - P) with
// P = bit_width(max_abs); saturates at UINT64_MAX; 0 when no N fits.
uint64_t bias_sum_max_nodes(uint32_t width, uint64_t max_abs);
TreePass bias_sum_pass(const BiasSum& plan, uint32_t n);
// kOutOfRange naming the first offending value, e.g. "signed sum by bias:
// |x[3]| = 5000000000 exceeds 2^28 - 1, the limit for 8 nodes on 32-bit
// words"; the output is then incomplete and must not be sent.
Status bias_sum_encode(const BiasSum& plan, const int64_t* x, uint32_t n, uint8_t* out);
// The exact sums (a 128-bit plan can exceed int64).
void bias_sum_decode(const BiasSum& plan, const uint8_t* in, uint32_t n, __int128* sum);

// ---------------------------------------------------------------------------
// 1'. Signed integer SUM by sign extension (seed 004 B.1, the alternative).
//   pass    ADD, signed, int32 -> 8-byte operands, int64 -> 16-byte operands
//   encode  x sign-extended to the wide word (two's complement)
//   decode  the wide word, read signed: wrap-around modulo 2^w' is exact
//           as long as the true sum fits
//   limits  N*2^(w-1) < 2^(w'-1): N < 2^32 for int32, N < 2^64 for int64.
uint64_t sext_sum_max_nodes(uint32_t value_bits);  // 32 or 64
Status sext_sum_check(uint32_t value_bits, uint64_t nodes);
TreePass sext_sum_pass(uint32_t value_bits, uint32_t n);
void sext_sum_encode(const int32_t* x, uint32_t n, uint8_t* out);
void sext_sum_encode(const int64_t* x, uint32_t n, uint8_t* out);
void sext_sum_decode(const uint8_t* in, uint32_t n, int64_t* sum);   // of int32 values
void sext_sum_decode(const uint8_t* in, uint32_t n, __int128* sum);  // of int64 values

// ---------------------------------------------------------------------------
// 2. Signed integer MAX / MIN by bias (seed 004 B.2).
//   pass    MAX, unsigned, width sizeof(T) (int32_t or int64_t), n operands
//   encode  MAX: u = x + 2^(w-1), i.e. the sign bit flipped, which maps the
//           signed order onto the unsigned one; MIN: ~u
//   decode  MAX: flip the sign bit back; MIN: ~r, then flip the sign bit
//   limits  none. MIN uses the one's complement ~u = 2^w - 1 - u, not the
//           two's complement -x of the seed's "MAX of the negated values":
//           -INT_MIN does not exist in w bits (it wraps to INT_MIN, which
//           would then win no MAX and lose the MIN), while ~ is an
//           order-reversing bijection of all 2^w patterns and cannot overflow.
template <typename T>
TreePass signed_extreme_pass(uint32_t n);
template <typename T>
void signed_extreme_encode(Extreme e, const T* x, uint32_t n, uint8_t* out);
template <typename T>
void signed_extreme_decode(Extreme e, const uint8_t* in, uint32_t n, T* out);

// ---------------------------------------------------------------------------
// 3. Floating-point SUM, exact and correctly rounded (seed 004 B.3), for
//    F = double or float. Every finite x is +-m * 2^(b - bias - p + 1), with
//    p the precision (53 / 24), m < 2^p and b = max(biased exponent, 1).
//    Values go in blocks of kFloatSumBlock = 64 (the last one shorter).
//
//   pass 1  MAX, unsigned, 4-byte operands, kFloatSumPass1Words = 3 per block:
//             [0] the largest b of the block's finite nonzero x, else 0 -> bmax
//             [1] 2047 - the smallest such b (float: 255 - b), else 0  -> bmin
//             [2] 2 if the block holds an Inf or NaN, else 1 if a -0, else 0
//   plan    from pass 1 alone, so identical everywhere. With h =
//           ceil(log2 N): a block's values need the window from bmin's lowest
//           bit to bmax's highest, V = bmax - bmin + p value bits, cut into
//           K = ceil(V / (127 - h)) chunks; chunk k of c bits travels as an
//           F = c + 1 + h bit field (rounded up to whole bytes) holding
//           2^c + (the value's bits of that chunk, negated for negative x):
//           positive, and N of them add up to less than 2^F, so no carry ever
//           leaves a field. Blocks flagged in pass 1 add (h+1)-bit counters
//           per value: -0 inputs, and for Inf/NaN blocks NaN, +Inf and -Inf
//           inputs. A block of zeros only takes no pass-2 field at all.
//           Fields go 8 to a sub-block (a group of 8 values, F bytes), sub-
//           blocks into operands of width W (at most 256 bytes), never
//           across two (float_sum_layout.h has the exact order): W is whole
//           multiples of the most frequent group's sub-blocks together
//           where the largest sub-block fits, else of the most frequent
//           sub-block size.
//   pass 2  ADD (unsigned; the fields are never negative), width W.
//   decode  on every node: each chunk's sum minus N * 2^c is an exact signed
//           integer; the chunks, added at their places, give the exact sum
//           scaled by 2^(bmin - bias - p + 1), which is rounded once, to
//           nearest, ties to even, with subnormals and overflow to +-Inf done
//           on the bit pattern. Specials, from the counters:
//             any NaN                  -> the default quiet NaN
//             +Inf and -Inf together   -> the default quiet NaN
//             else +Inf / -Inf present -> +Inf / -Inf
//             an exact zero sum        -> -0 if every input is -0, else +0
//           A finite sum that rounds beyond the largest finite -> +-Inf.
//   cost    pass 1: 12 bytes per 64 values (0.19 per value). Pass 2 per
//           value: ceil((V + 1 + h) / 8) bytes when V <= 127 - h, i.e. for
//           doubles on 8 nodes 8 bytes when a block's exponents lie within 7
//           binades of each other, 10 within 23, 12 within 39, 14 within 55,
//           16 within 71; the whole range 2^-1074 .. 2^1023 takes 17 to 23
//           chunks of 16 bytes. Plus the unused end of an operand when sub-
//           block sizes differ (none when they are all the same).
//   limits  N <= 2^32; n values need fewer than 2^32 pass-2 operands.
constexpr uint32_t kFloatSumBlock = 64;
constexpr uint32_t kFloatSumPass1Words = 3;
constexpr uint64_t kFloatSumMaxNodes = 1ull << 32;
struct FloatSumPlan {
  uint32_t width = 0;     // pass-2 operand bytes
  uint32_t operands = 0;  // pass-2 operands per node (0: skip pass 2)
  uint32_t headroom = 0;  // h = ceil(log2 nodes)
  uint64_t nodes = 0;     // N
};
TreePass float_sum_pass1(uint32_t n);
TreePass float_sum_pass2(const FloatSumPlan& plan);
template <typename F>
void float_sum_pass1_encode(const F* x, uint32_t n, uint8_t* out);
// The MAX of `parts` contributions' pass-1 words, xs[j][0..n) for j < parts
// (one rank holding several contributions: allreduce exact-share).
template <typename F>
void float_sum_pass1_encode_parts(const F* const* xs, uint32_t parts, uint32_t n, uint8_t* out);
// kOutOfRange for nodes = 0 or > kFloatSumMaxNodes; kInvalid when the
// pass-1 result is not one that encoders can produce.
template <typename F>
Result<FloatSumPlan> float_sum_plan(const uint8_t* pass1, uint32_t n, uint64_t nodes);
template <typename F>
void float_sum_pass2_encode(const FloatSumPlan& plan, const uint8_t* pass1, const F* x, uint32_t n,
                            uint8_t* out);
// The ADD of `parts` contributions' pass-2 operands without them: out gets
// the sum of float_sum_pass2_encode(plan, pass1, xs[j], n) over j < parts
// (what pass 2's ADD would make of them), each field summed once. For a
// rank that holds several contributions (allreduce exact-share); the plan
// must be for at least `parts` nodes. False, with out undefined, where the
// vector kernels do not take every block (floats, other layouts, a CPU
// without AVX-512): then encode each and ADD.
template <typename F>
bool float_sum_pass2_encode_sum(const FloatSumPlan& plan, const uint8_t* pass1, const F* const* xs, uint32_t parts,
                                uint32_t n, uint8_t* out);
// pass2 may be null when plan.operands is 0.
template <typename F>
void float_sum_decode(const FloatSumPlan& plan, const uint8_t* pass1, const uint8_t* pass2, uint32_t n,
                      F* sum);

// ---------------------------------------------------------------------------
// 4. Floating-point MAX / MIN in one pass (seed 004 B.4), F = double/float.
//   pass    MAX, unsigned, width sizeof(F), n operands
//   encode  the order-preserving bit transform t(x): negative (sign set):
//           all bits flipped; else the sign bit flipped. t orders like
//           IEEE 754 totalOrder, -0 below +0. MAX: t(x); MIN: ~t(x).
//           Any NaN (either sign) encodes as all ones, which no number's
//           t(x) or ~t(x) reaches.
//   decode  all ones -> the default quiet NaN; else the inverse transform.
//   so      any NaN -> NaN (payload and sign not kept); MAX(-0, +0) = +0,
//           MIN(-0, +0) = -0.
template <typename F>
TreePass float_extreme_pass(uint32_t n);
template <typename F>
void float_extreme_encode(Extreme e, const F* x, uint32_t n, uint8_t* out);
template <typename F>
void float_extreme_decode(Extreme e, const uint8_t* in, uint32_t n, F* out);
//   The seed's special case: non-negative floats order like their bit
//   patterns, so the operand is the value itself (a NaN with the sign clear
//   sorts above +Inf and wins). kInvalid naming the first value with its
//   sign bit set (negatives, -0, -NaN).
template <typename F>
Status nonneg_max_encode(const F* x, uint32_t n, uint8_t* out);
template <typename F>
void nonneg_max_decode(const uint8_t* in, uint32_t n, F* out);

// ---------------------------------------------------------------------------
// 5. MAXLOC / MINLOC (seed 004 B.6) for T = int32_t, int64_t, float, double.
//   pass    MAX, unsigned; 4-byte T -> 8-byte operands, 8-byte T -> 16
//   encode  high half: the value in unsigned order (signed ints: sign bit
//           flipped; floats: t(x), NaN as all ones), for MINLOC its
//           complement (the order reversed); low 32 bits: M - index, with
//           M = 2^32 - 1 (16-byte operands leave bits 32..63 zero)
//   decode  value from the high half; index = M - low bits
//   so      the largest (smallest) value wins; on ties the largest M - index,
//           i.e. the lowest index. Floats: any NaN wins, -0 and +0 differ
//           as in section 4.
template <typename T>
struct ValueLoc {
  T value;
  uint32_t index;
};
template <typename T>
TreePass loc_pass(uint32_t n);
template <typename T>
void loc_encode(Extreme e, const ValueLoc<T>* x, uint32_t n, uint8_t* out);
template <typename T>
void loc_decode(Extreme e, const uint8_t* in, uint32_t n, ValueLoc<T>* out);

// ---------------------------------------------------------------------------
// 6. ALLGATHER through SUM (seed 004 B.5).
//   pass    ADD, unsigned, width 8, ceil(N * block / 8) operands (zero pad)
//   encode  a zeroed array of the final size with my block in slot `rank`
//   decode  the first N * block bytes: block r came from node r. Adding
//           zeros never carries, so any block size and alignment is exact.
struct GatherLayout {
  uint32_t block = 0;  // bytes per node
  uint32_t nodes = 0;
  uint32_t operands = 0;
  size_t slot(uint32_t rank) const { return static_cast<size_t>(rank) * block; }
  size_t gathered_bytes() const { return static_cast<size_t>(block) * nodes; }
};
constexpr uint32_t kGatherWidth = 8;
// kInvalid for nodes = 0; kOutOfRange when N * block needs 2^32 operands.
Result<GatherLayout> plan_gather(uint32_t block, uint32_t nodes);
TreePass gather_pass(const GatherLayout& layout);
Status gather_encode(const GatherLayout& layout, uint32_t rank, const void* block, uint8_t* out);
void gather_decode(const GatherLayout& layout, const uint8_t* in, void* gathered);

// ---------------------------------------------------------------------------
// 7. Logical LAND / LOR / LXOR (seed 004 B.7) on one bit per value.
//   pass    AND / OR / XOR, unsigned, width 8, ceil(n / 64) operands
//   encode  bit (k % 64) of operand k / 64 = (x[k] != 0); unused bits zero
//   decode  out[k] = that bit (0 or 1)
enum class Logic : uint8_t { kAnd, kOr, kXor };
TreePass logical_pass(Logic l, uint32_t n);
void logical_encode(const int32_t* x, uint32_t n, uint8_t* out);
void logical_decode(const uint8_t* in, uint32_t n, int32_t* out);

// ---------------------------------------------------------------------------
// 8. Barrier as a global AND (seed 004 B.8): no node's result arrives before
//    every node's operand has entered the network.
//   pass    AND, unsigned, width 8, 2 operands
//   encode  (epoch, ~epoch)
//   decode  ok iff the result is (epoch, ~epoch): AND(e_i) = e and
//           AND(~e_i) = ~e hold together only if every e_i = e, so a node
//           in another epoch is caught (kInternal naming both epochs).
TreePass barrier_pass();
void barrier_encode(uint64_t epoch, uint8_t* out);
Status barrier_decode(uint64_t epoch, const uint8_t* in);

}  // namespace toroid::arith
