#include "collectives/schedule/tree_codec.h"

#include <cinttypes>
#include <cstring>

#include "base/bytes.h"

namespace toroid::schedule {
namespace {

using arith::Extreme;
using arith::TreePass;

constexpr uint32_t kIndexFlip = 0x80000000u;  // int32 index -> unsigned order

bool is_extreme(ROp op) { return op == ROp::kMin || op == ROp::kMax; }
bool is_bitwise(ROp op) { return op == ROp::kBand || op == ROp::kBor || op == ROp::kBxor; }
bool is_logical(ROp op) { return op == ROp::kLand || op == ROp::kLor || op == ROp::kLxor; }
Extreme extreme_of(ROp op) { return op == ROp::kMax || op == ROp::kMaxloc ? Extreme::kMax : Extreme::kMin; }

// Raw bytes as operands: 8-byte words, or 4-byte ones when that avoids a
// padded copy (lengths that are a multiple of 4 but not of 8).
uint32_t raw_width(uint64_t bytes) { return (bytes % 8 != 0 && bytes % 4 == 0) ? 4 : 8; }
uint64_t raw_operands(uint64_t bytes) { return (bytes + raw_width(bytes) - 1) / raw_width(bytes); }
TreePass raw_pass(AluOp op, AluType type, uint64_t bytes) {
  return TreePass{op, type, raw_width(bytes), static_cast<uint32_t>(raw_operands(bytes))};
}

// Integer element -> the value of its int32/int64 key type, order-preserving:
// narrow types widen, unsigned 32/64-bit ones get their sign bit flipped.
int64_t key_value(DType t, const uint8_t* p) {
  switch (t) {
    case DType::kInt8: return load<int8_t>(p);
    case DType::kInt16: return load<int16_t>(p);
    case DType::kInt32: return load<int32_t>(p);
    case DType::kInt64: return load<int64_t>(p);
    case DType::kUint8: return load<uint8_t>(p);
    case DType::kUint16: return load<uint16_t>(p);
    case DType::kUint32: return static_cast<int32_t>(load<uint32_t>(p) ^ kIndexFlip);
    case DType::kUint64: return static_cast<int64_t>(load<uint64_t>(p) ^ (uint64_t{1} << 63));
    default: return 0;
  }
}

void store_key_value(DType t, int64_t v, uint8_t* p) {
  switch (t) {
    case DType::kUint32: store<uint32_t>(p, static_cast<uint32_t>(v) ^ kIndexFlip); return;
    case DType::kUint64: store<uint64_t>(p, static_cast<uint64_t>(v) ^ (uint64_t{1} << 63)); return;
    default: std::memcpy(p, &v, dtype_size(t)); return;  // little-endian truncation of an in-range value
  }
}

// Operands per node of a pass, checked against the engine's uint32 count.
Status check_operands(uint64_t operands, const char* what) {
  if (operands > UINT32_MAX) {
    return error(Code::kOutOfRange, "%s needs %" PRIu64 " operands on the combine network (at most 2^32 - 1)", what,
                 operands);
  }
  return Status::ok();
}

// Signed SUM: the narrowest covering method (see the header).
Status plan_signed_sum(TreeCodec& c) {
  const uint32_t vbits = 8 * static_cast<uint32_t>(dtype_size(c.dtype));
  const uint64_t max_abs = uint64_t{1} << (vbits - 1);  // |INT_MIN|
  const uint32_t sext_bits = vbits < 32 ? 32 : vbits;   // int8/16 widen to int32
  const uint32_t sext_width = sext_bits / 4;
  for (uint32_t w : {4u, 8u, 16u}) {
    if (w == sext_width && arith::sext_sum_check(sext_bits, c.nodes)) {
      c.method = TreeMethod::kSextSum;
      c.pass = arith::sext_sum_pass(sext_bits, static_cast<uint32_t>(c.count));
      return Status::ok();
    }
    if (8 * w < vbits) continue;
    auto abs = arith::bias_sum_max_abs(w, c.nodes);
    if (abs && *abs >= max_abs) {
      c.method = TreeMethod::kBiasSum;
      c.bias = *arith::plan_bias_sum(w, c.nodes);
      c.pass = arith::bias_sum_pass(c.bias, static_cast<uint32_t>(c.count));
      return Status::ok();
    }
  }
  uint64_t most = arith::sext_sum_max_nodes(sext_bits);
  if (const uint64_t b = arith::bias_sum_max_nodes(16, max_abs); b > most) most = b;
  return error(Code::kOutOfRange, "a signed sum of %s on the combine network covers at most %" PRIu64
               " nodes (this communicator has %" PRIu64 ")", dtype_name(c.dtype), most, c.nodes);
}

}  // namespace

const char* tree_method_name(TreeMethod m) {
  switch (m) {
    case TreeMethod::kRaw: return "raw";
    case TreeMethod::kWiden: return "widen";
    case TreeMethod::kBiasSum: return "bias-sum";
    case TreeMethod::kSextSum: return "sext-sum";
    case TreeMethod::kExtreme: return "extreme";
    case TreeMethod::kLogical: return "logical";
    case TreeMethod::kLoc: return "loc";
    case TreeMethod::kFloatSum: return "float-sum";
  }
  return "?";
}

Result<TreeCodec> plan_tree_reduce(DType t, ROp op, const Reducer& red, uint64_t count, uint64_t nodes) {
  if (nodes == 0) return error(Code::kInvalid, "tree reduction over no nodes");
  TreeCodec c;
  c.dtype = t;
  c.op = op;
  c.count = count;
  c.nodes = nodes;
  if (t == DType::kAluWord) {
    if (red.fn != nullptr) return error(Code::kInvalid, "ALU-word reduction without an ALU reducer");
    const auto width = static_cast<uint32_t>(red.esize);
    Status st = alu_check(red.alu_op, red.alu_type, width);
    if (!st) return st;
    if (st = check_operands(count, "this ALU-word reduction"); !st) return st;
    c.method = TreeMethod::kRaw;
    c.esize = width;
    c.pass = TreePass{red.alu_op, red.alu_type, width, static_cast<uint32_t>(count)};
    return c;
  }
  if (op == ROp::kProd) return error(Code::kUnsupported, "the combine ALU has no multiply");
  Status st = check_rop(t, op);
  if (!st) return st;
  c.esize = elem_size(t, op);
  // The most operands a method below needs: raw bytes in 4-byte words, else
  // one per element (float SUM's pass 1 takes fewer; its pass 2 is counted
  // by its plan).
  uint64_t most = count;
  if (is_bitwise(op)) most = raw_operands(count * c.esize) > count ? raw_operands(count * c.esize) : count;
  if (count > UINT64_MAX / 8) most = UINT64_MAX;
  if (st = check_operands(most, "this reduction"); !st) return st;
  const auto n = static_cast<uint32_t>(count);
  const bool flt = dtype_is_float(t);
  const uint32_t vbytes = static_cast<uint32_t>(dtype_size(t));
  if (op == ROp::kSum && flt) {
    c.method = TreeMethod::kFloatSum;
    c.pass = arith::float_sum_pass1(n);
    if (nodes > arith::kFloatSumMaxNodes) {
      return error(Code::kOutOfRange, "the exact float sum covers at most 2^32 nodes (this communicator has %" PRIu64
                   ")", nodes);
    }
    return c;
  }
  if (op == ROp::kSum && !dtype_is_signed(t)) {
    if (vbytes >= 4) {
      c.method = TreeMethod::kRaw;
      c.pass = TreePass{AluOp::kAdd, AluType::kUnsigned, vbytes, n};
    } else {
      c.method = TreeMethod::kWiden;
      c.pass = TreePass{AluOp::kAdd, AluType::kUnsigned, 4, n};
    }
    return c;
  }
  if (op == ROp::kSum) {
    if (st = plan_signed_sum(c); !st) return st;
    return c;
  }
  if (is_bitwise(op)) {
    const AluOp aop = op == ROp::kBand ? AluOp::kAnd : op == ROp::kBor ? AluOp::kOr : AluOp::kXor;
    c.method = TreeMethod::kRaw;
    c.pass = raw_pass(aop, AluType::kUnsigned, c.bytes());
    return c;
  }
  if (is_logical(op)) {
    const arith::Logic l = op == ROp::kLand ? arith::Logic::kAnd : op == ROp::kLor ? arith::Logic::kOr
                                                                                     : arith::Logic::kXor;
    c.method = TreeMethod::kLogical;
    c.pass = arith::logical_pass(l, n);
    return c;
  }
  c.key_bytes = vbytes == 8 ? 8 : 4;
  if (is_extreme(op)) {
    c.method = TreeMethod::kExtreme;
    c.pass = TreePass{AluOp::kMax, AluType::kUnsigned, c.key_bytes, n};
    return c;
  }
  if (rop_is_loc(op)) {
    c.method = TreeMethod::kLoc;
    c.pass = TreePass{AluOp::kMax, AluType::kUnsigned, 2 * c.key_bytes, n};
    return c;
  }
  return error(Code::kUnsupported, "%s on %s has no combine-network method", rop_name(op), dtype_name(t));
}

Result<TreeCodec> plan_tree_bytes(AluOp op, uint64_t bytes, uint64_t nodes) {
  if (nodes == 0) return error(Code::kInvalid, "tree byte movement over no nodes");
  TreeCodec c;
  c.method = TreeMethod::kRaw;
  c.count = bytes;
  c.esize = 1;
  c.nodes = nodes;
  Status st = check_operands(raw_operands(bytes), "this byte movement");
  if (!st) return st;
  c.pass = raw_pass(op, AluType::kUnsigned, bytes);
  return c;
}

std::string tree_reduce_unsupported(DType t, ROp op, const Reducer& red, uint64_t count, uint64_t nodes) {
  auto c = plan_tree_reduce(t, op, red, count, nodes);
  return c ? std::string() : c.status().message();
}

Status tree_encode(const TreeCodec& c, const void* in_v, uint8_t* out) {
  const auto* in = static_cast<const uint8_t*>(in_v);
  const uint64_t n = c.count;
  const size_t es = c.esize;
  const uint32_t w = c.pass.width;
  switch (c.method) {
    case TreeMethod::kRaw:
      if (c.bytes() != 0) std::memcpy(out, in, c.bytes());
      std::memset(out + c.bytes(), 0, c.pass.bytes() - c.bytes());
      return Status::ok();
    case TreeMethod::kWiden:
      for (uint64_t i = 0; i < n; ++i) {
        uint32_t v = 0;
        std::memcpy(&v, in + i * es, es);
        store<uint32_t>(out + i * w, v);
      }
      return Status::ok();
    case TreeMethod::kBiasSum:
      for (uint64_t i = 0; i < n; ++i) {
        const int64_t v = key_value(c.dtype, in + i * es);
        Status st = arith::bias_sum_encode(c.bias, &v, 1, out + i * w);
        if (!st) return st;
      }
      return Status::ok();
    case TreeMethod::kSextSum:
      for (uint64_t i = 0; i < n; ++i) {
        const int64_t v = key_value(c.dtype, in + i * es);
        if (w == 8) {
          const auto v32 = static_cast<int32_t>(v);
          arith::sext_sum_encode(&v32, 1, out + i * w);
        } else {
          arith::sext_sum_encode(&v, 1, out + i * w);
        }
      }
      return Status::ok();
    case TreeMethod::kExtreme: {
      const Extreme e = extreme_of(c.op);
      for (uint64_t i = 0; i < n; ++i) {
        const uint8_t* p = in + i * es;
        uint8_t* o = out + i * w;
        if (c.dtype == DType::kFloat) {
          const auto f = load<float>(p);
          arith::float_extreme_encode<float>(e, &f, 1, o);
        } else if (c.dtype == DType::kDouble) {
          const auto d = load<double>(p);
          arith::float_extreme_encode<double>(e, &d, 1, o);
        } else if (c.key_bytes == 4) {
          const auto v = static_cast<int32_t>(key_value(c.dtype, p));
          arith::signed_extreme_encode<int32_t>(e, &v, 1, o);
        } else {
          const int64_t v = key_value(c.dtype, p);
          arith::signed_extreme_encode<int64_t>(e, &v, 1, o);
        }
      }
      return Status::ok();
    }
    case TreeMethod::kLogical: {
      const size_t vs = dtype_size(c.dtype);
      int32_t bits[64];
      for (uint64_t base = 0; base < n; base += 64) {
        const uint32_t k = static_cast<uint32_t>(n - base < 64 ? n - base : 64);
        for (uint32_t j = 0; j < k; ++j) {
          const uint8_t* p = in + (base + j) * es;
          uint8_t any = 0;
          for (size_t b = 0; b < vs; ++b) any |= p[b];
          bits[j] = any != 0;
        }
        arith::logical_encode(bits, k, out + base / 8);
      }
      return Status::ok();
    }
    case TreeMethod::kLoc: {
      const Extreme e = extreme_of(c.op);
      const size_t vs = dtype_size(c.dtype);
      for (uint64_t i = 0; i < n; ++i) {
        const uint8_t* p = in + i * es;
        uint8_t* o = out + i * w;
        const uint32_t idx = static_cast<uint32_t>(load<int32_t>(p + vs)) ^ kIndexFlip;
        if (c.dtype == DType::kFloat) {
          const arith::ValueLoc<float> v{load<float>(p), idx};
          arith::loc_encode<float>(e, &v, 1, o);
        } else if (c.dtype == DType::kDouble) {
          const arith::ValueLoc<double> v{load<double>(p), idx};
          arith::loc_encode<double>(e, &v, 1, o);
        } else if (c.key_bytes == 4) {
          const arith::ValueLoc<int32_t> v{static_cast<int32_t>(key_value(c.dtype, p)), idx};
          arith::loc_encode<int32_t>(e, &v, 1, o);
        } else {
          const arith::ValueLoc<int64_t> v{key_value(c.dtype, p), idx};
          arith::loc_encode<int64_t>(e, &v, 1, o);
        }
      }
      return Status::ok();
    }
    case TreeMethod::kFloatSum:
      break;
  }
  return error(Code::kInternal, "tree codec %s has no single-pass encoding", tree_method_name(c.method));
}

void tree_decode(const TreeCodec& c, const uint8_t* in, void* out_v) {
  auto* out = static_cast<uint8_t*>(out_v);
  const uint64_t n = c.count;
  const size_t es = c.esize;
  const uint32_t w = c.pass.width;
  switch (c.method) {
    case TreeMethod::kRaw:
      if (c.bytes() != 0 && out != in) std::memmove(out, in, c.bytes());
      return;
    case TreeMethod::kWiden:
      // Little-endian: the low bytes of the wide sum are the sum modulo 2^(8 es).
      for (uint64_t i = 0; i < n; ++i) std::memmove(out + i * es, in + i * w, es);
      return;
    case TreeMethod::kBiasSum:
    case TreeMethod::kSextSum:
      for (uint64_t i = 0; i < n; ++i) {
        __int128 s = 0;
        if (c.method == TreeMethod::kBiasSum) {
          arith::bias_sum_decode(c.bias, in + i * w, 1, &s);
        } else if (w == 8) {
          int64_t s64 = 0;
          arith::sext_sum_decode(in + i * w, 1, &s64);
          s = s64;
        } else {
          arith::sext_sum_decode(in + i * w, 1, &s);
        }
        std::memcpy(out + i * es, &s, es);  // narrowed: wraps like the datatype kernels
      }
      return;
    case TreeMethod::kExtreme: {
      const Extreme e = extreme_of(c.op);
      for (uint64_t i = 0; i < n; ++i) {
        uint8_t* o = out + i * es;
        const uint8_t* p = in + i * w;
        if (c.dtype == DType::kFloat) {
          float f;
          arith::float_extreme_decode<float>(e, p, 1, &f);
          store(o, f);
        } else if (c.dtype == DType::kDouble) {
          double d;
          arith::float_extreme_decode<double>(e, p, 1, &d);
          store(o, d);
        } else if (c.key_bytes == 4) {
          int32_t v;
          arith::signed_extreme_decode<int32_t>(e, p, 1, &v);
          store_key_value(c.dtype, v, o);
        } else {
          int64_t v;
          arith::signed_extreme_decode<int64_t>(e, p, 1, &v);
          store_key_value(c.dtype, v, o);
        }
      }
      return;
    }
    case TreeMethod::kLogical: {
      int32_t bits[64];
      for (uint64_t base = 0; base < n; base += 64) {
        const uint32_t k = static_cast<uint32_t>(n - base < 64 ? n - base : 64);
        arith::logical_decode(in + base / 8, k, bits);
        for (uint32_t j = 0; j < k; ++j) {
          uint8_t* o = out + (base + j) * es;
          std::memset(o, 0, es);
          o[0] = static_cast<uint8_t>(bits[j]);
        }
      }
      return;
    }
    case TreeMethod::kLoc: {
      const Extreme e = extreme_of(c.op);
      const size_t vs = dtype_size(c.dtype);
      for (uint64_t i = 0; i < n; ++i) {
        uint8_t* o = out + i * es;
        const uint8_t* p = in + i * w;
        uint32_t idx = 0;
        if (c.dtype == DType::kFloat) {
          arith::ValueLoc<float> v;
          arith::loc_decode<float>(e, p, 1, &v);
          store(o, v.value);
          idx = v.index;
        } else if (c.dtype == DType::kDouble) {
          arith::ValueLoc<double> v;
          arith::loc_decode<double>(e, p, 1, &v);
          store(o, v.value);
          idx = v.index;
        } else if (c.key_bytes == 4) {
          arith::ValueLoc<int32_t> v;
          arith::loc_decode<int32_t>(e, p, 1, &v);
          store_key_value(c.dtype, v.value, o);
          idx = v.index;
        } else {
          arith::ValueLoc<int64_t> v;
          arith::loc_decode<int64_t>(e, p, 1, &v);
          store_key_value(c.dtype, v.value, o);
          idx = v.index;
        }
        store<int32_t>(o + vs, static_cast<int32_t>(idx ^ kIndexFlip));
      }
      return;
    }
    case TreeMethod::kFloatSum:
      return;
  }
}

}  // namespace toroid::schedule
