// The combine network's ALU (seed 004 B): what a tree router computes on
// packets in flight. Operands are little-endian unsigned or two's-complement
// integers of 4, 8 or 16 bytes (32/64/128-bit words), or long-precision
// operands of 24..256 bytes in steps of 8 (up to 2048 bits), where ADD
// carries across the 64-bit words of one operand. ADD wraps modulo 2^width
// (software layers above choose encodings that never overflow, and check).
#pragma once
#include <cstdint>

#include "base/status.h"

namespace toroid {

enum class AluOp : uint8_t { kAdd = 1, kMax, kMin, kAnd, kOr, kXor };
enum class AluType : uint8_t { kUnsigned = 1, kSigned };
constexpr uint32_t kAluMaxWidth = 256;  // bytes: 2048-bit long precision

const char* alu_op_name(AluOp op);      // "add", "max", ...
bool parse_alu_op(const char* s, AluOp* out);

// ok, or kInvalid naming the bad op / type / width (e.g. width 12).
Status alu_check(AluOp op, AluType type, uint32_t width_bytes);

// acc[i] = acc[i] OP in[i] for n operands of width_bytes each. Arguments must
// have passed alu_check. No allocation; acc and in may not overlap partially.
void alu_combine(AluOp op, AluType type, uint32_t width_bytes, uint8_t* acc, const uint8_t* in, uint32_t n);

}  // namespace toroid
