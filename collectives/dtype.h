// Datatypes, reduction operations and reproducibility modes of the
// collectives library, and the reduction kernels every algorithm applies.
//
// A reduction element is one value of the datatype, except for MINLOC and
// MAXLOC, whose element is a (value, index) pair laid out as the value
// followed by a little-endian int32 index, packed (sizeof(T) + 4 bytes, like
// MPI's pair types but without padding). Ties go to the lower index.
// Logical ops (LAND, LOR, LXOR) read any non-zero value as true and write 0
// or 1 of the datatype. Bitwise and logical ops exist for integers only.
//
// Every kernel computes acc[i] = acc[i] OP in[i]: the accumulator is the
// left operand. All our ops are commutative bit for bit (IEEE addition and
// multiplication are; MIN/MAX pick by a total order: any NaN wins, -0 < +0),
// so only the grouping of a reduction changes float results, never which
// side an operand is on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "netstack/tree/alu.h"

namespace toroid {

enum class DType : uint8_t {
  kInt8, kInt16, kInt32, kInt64, kUint8, kUint16, kUint32, kUint64, kFloat, kDouble,
  kAluWord,  // internal: raw combine-network operands (Reducer::alu), used by exact mode
};
constexpr int kUserDTypes = 10;  // kInt8 .. kDouble

enum class ROp : uint8_t { kSum, kProd, kMin, kMax, kBand, kBor, kBxor, kLand, kLor, kLxor, kMinloc, kMaxloc };
constexpr int kROps = 12;

// How a floating-point reduction may round.
//   kNone        whatever the algorithm's order gives (may differ per node).
//   kFixedOrder  bit-identical on every node and every run of a partition:
//                only algorithms that fix the combining order may run.
//   kExact       correctly rounded (SUM; MIN/MAX are exact anyway):
//                bit-identical across shapes, node counts and algorithms.
enum class Repro : uint8_t { kNone, kFixedOrder, kExact };

const char* dtype_name(DType t);  // "int8" .. "double"
const char* rop_name(ROp op);     // "sum" .. "maxloc"
const char* repro_name(Repro r);  // "none", "fixed-order", "exact"
Result<DType> parse_dtype(const std::string& s);  // names as above; error lists them
Result<ROp> parse_rop(const std::string& s);      // case-insensitive
Result<Repro> parse_repro(const std::string& s);

// Inline: the self-test's data generation and checks ask per element.
inline size_t dtype_size(DType t) {  // bytes of one value
  switch (t) {
    case DType::kInt8: case DType::kUint8: return 1;
    case DType::kInt16: case DType::kUint16: return 2;
    case DType::kInt32: case DType::kUint32: case DType::kFloat: return 4;
    case DType::kInt64: case DType::kUint64: case DType::kDouble: return 8;
    case DType::kAluWord: return 0;  // the ALU reducer says
  }
  return 0;
}
inline bool dtype_is_float(DType t) { return t == DType::kFloat || t == DType::kDouble; }
inline bool dtype_is_signed(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 || dtype_is_float(t);
}
inline bool rop_is_loc(ROp op) { return op == ROp::kMinloc || op == ROp::kMaxloc; }
// Bytes of one reduction element: dtype_size, or dtype_size + 4 for the loc ops.
inline size_t elem_size(DType t, ROp op) { return dtype_size(t) + (rop_is_loc(op) ? 4 : 0); }

// ok, or kInvalid saying why `op` does not apply to `t` ("bxor is defined
// for integer types only, not double").
Status check_rop(DType t, ROp op);

// The reduction every algorithm applies: dst[i] = dst[i] OP src[i] for n
// elements. Either a datatype kernel or a combine-network ALU operation on
// raw operands (exact mode's integer passes run through every algorithm).
// Allocation-free; dst and src must not partially overlap.
struct Reducer {
  using Fn = void (*)(void* dst, const void* src, size_t n);
  // A caller's kernel with its state (the MPI library's user operations and
  // the types the library has no kernel for); it takes precedence over fn.
  using CtxFn = void (*)(const void* ctx, void* dst, const void* src, size_t n);
  Fn fn = nullptr;
  CtxFn cfn = nullptr;
  const void* ctx = nullptr;
  size_t esize = 0;          // bytes per element
  AluOp alu_op = AluOp::kAdd;  // for the ALU form (fn == nullptr)
  AluType alu_type = AluType::kUnsigned;
  void apply(void* dst, const void* src, size_t n) const;
};
// Kernel for a user datatype; check_rop must have passed.
Reducer make_reducer(DType t, ROp op);
// ALU form: elements are `width`-byte operands (alu_check must have passed).
Reducer make_alu_reducer(AluOp op, AluType type, uint32_t width);

}  // namespace toroid
