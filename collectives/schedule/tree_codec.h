// How a collective maps onto the combine (tree) network: the pure part of the
// tree group's algorithms (collectives/algos/tree/), unit-tested without a
// network. A TreeCodec says which seed 004 B method turns a (datatype, op)
// reduction, or a byte movement, into one integer pass over the network's ALU
// (collectives/arith/tree_arith.h): the pass (op, type, operand width,
// operands per node), an encode of this node's elements into operands before
// it and a decode of the combined operands into elements after it.
//
// Method per (dtype, op), N = the communicator's size:
//   SUM unsigned 32/64-bit    kRaw: the user's bytes are the operands, ADD
//                             unsigned (wraps like the datatype)
//   SUM unsigned 8/16-bit     kWiden: zero-extended to 4-byte words, ADD,
//                             truncated (the sum modulo 2^8 / 2^16)
//   SUM signed                the narrowest of: bias on 4/8/16-byte words
//                             (B.1; when 2^P - 1 covers the type's whole
//                             range for N) and sign extension (B.1'; int8/16
//                             widened to int32 first; 8-byte words for
//                             32-bit values, 16 for 64-bit); sign extension
//                             wins a tie. The exact sum is narrowed to the
//                             type, i.e. wraps like the datatype kernels.
//                             int8: 4-byte words up to 2^23 nodes, int16 up
//                             to 2^15 nodes, then 8-byte words.
//   MIN / MAX integers        kExtreme: signed_extreme (B.2) on int32/int64
//                             keys: int8/16 and uint8/16 widened to int32,
//                             uint32/64 mapped to int32/64 by flipping the
//                             sign bit (order-preserving); one MAX pass
//   MIN / MAX float/double    kExtreme: float_extreme (B.4), the totalOrder
//                             transform; any NaN -> the default quiet NaN
//   BAND / BOR / BXOR         kRaw: bitwise ops are byte-lane independent, so
//                             the raw bytes are the operands (8-byte words,
//                             or 4, zero padded where the length is not a
//                             multiple of 4)
//   LAND / LOR / LXOR         kLogical: one bit per value (B.7)
//   MINLOC / MAXLOC           kLoc: loc_encode (B.6) on the same int32/int64/
//                             float/double keys; the int32 index is mapped
//                             to unsigned order (sign bit flipped) so ties
//                             go to the lower signed index
//   SUM float/double          kFloatSum: two passes, exact and correctly
//                             rounded (B.3; TreeFloatSum runs them)
//   PROD                      none: the combine ALU has no multiply
//   kAluWord (exact mode)     kRaw with the Reducer's ALU op, type and width
// Byte movements (bcast: OR over zeros; allgather: ADD over zeros, B.5) are
// kRaw too. kRaw runs the engine on the caller's buffers when the byte count
// is a multiple of the operand width (direct()), else on a zero-padded copy.
//
// Cost on the network: one pass of pass.bytes() per node up the tree and
// down again (2 x depth hops, pipelined in packets); kFloatSum adds a
// 24-byte-per-value pass first. Limits: every pass has fewer than 2^32
// operands (the engine's count).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "collectives/arith/tree_arith.h"
#include "collectives/dtype.h"

namespace toroid::schedule {

enum class TreeMethod : uint8_t { kRaw, kWiden, kBiasSum, kSextSum, kExtreme, kLogical, kLoc, kFloatSum };
const char* tree_method_name(TreeMethod m);  // "raw", "widen", "bias-sum", ...

struct TreeCodec {
  TreeMethod method = TreeMethod::kRaw;
  DType dtype = DType::kUint8;  // kUint8 for byte movements
  ROp op = ROp::kSum;
  uint64_t count = 0;   // elements (bytes for byte movements)
  size_t esize = 1;     // bytes per element
  uint64_t nodes = 1;
  arith::TreePass pass{AluOp::kAdd, AluType::kUnsigned, 8, 0};  // kFloatSum: pass 1
  arith::BiasSum bias{};    // kBiasSum
  uint32_t key_bytes = 0;   // kExtreme / kLoc: 4 (int32/float keys) or 8 (int64/double keys)
  uint64_t bytes() const { return count * esize; }  // the caller's bytes
  // kRaw with no padding: the engine runs on the caller's buffers, no copy.
  bool direct() const { return method == TreeMethod::kRaw && pass.bytes() == bytes(); }
  // Bytes of operand buffer a non-direct codec needs (0 when direct or kFloatSum).
  size_t operand_bytes() const { return direct() || method == TreeMethod::kFloatSum ? 0 : pass.bytes(); }
};

// "" if the combine network can reduce (t, op) over `nodes` nodes, else why
// not in one line ("the combine ALU has no multiply"). For DType::kAluWord
// `red` names the ALU op, type and width (red.fn == nullptr).
std::string tree_reduce_unsupported(DType t, ROp op, const Reducer& red, uint64_t count, uint64_t nodes);
// The codec of an allreduce of `count` elements; errors as above.
Result<TreeCodec> plan_tree_reduce(DType t, ROp op, const Reducer& red, uint64_t count, uint64_t nodes);
// A byte movement of `bytes` bytes combined with `op` (kOr for bcast, kAdd
// for allgather) over zeros from every other node.
Result<TreeCodec> plan_tree_bytes(AluOp op, uint64_t bytes, uint64_t nodes);

// in: count elements -> operands: pass.bytes() bytes (every byte written).
// kOutOfRange only if a value breaks the method's limit (never for the
// methods chosen above, which cover the type's whole range). Not for
// kFloatSum (TreeFloatSum encodes).
Status tree_encode(const TreeCodec& c, const void* in, uint8_t* operands);
// operands (the combined pass) -> out: count elements. out must not overlap
// operands (except kRaw, where it may be operands itself).
void tree_decode(const TreeCodec& c, const uint8_t* operands, void* out);

}  // namespace toroid::schedule
