// The tree group's pure codec (collectives/schedule/tree_codec.h), checked
// without a network: for every datatype x op the combine network can do,
// N nodes' encoded operands folded with the ALU (in several orders, as
// different tree shapes would) decode to exactly the bytes a serial fold
// with the datatype kernel (make_reducer) gives, on inputs full of extremes
// and ties; the method and operand width chosen per type and node count are
// the documented ones (the narrowest covering method); PROD, too many
// operands and bad ALU words are refused with their reason; byte movements
// (bcast OR over zeros, allgather ADD over zeros) reproduce the bytes.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "base/rng.h"
#include "collectives/dtype.h"
#include "collectives/schedule/tree_codec.h"
#include "netstack/tree/alu.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;

namespace {

constexpr DType kIntTypes[] = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                               DType::kUint8, DType::kUint16, DType::kUint32, DType::kUint64};
constexpr DType kFloatTypes[] = {DType::kFloat, DType::kDouble};
constexpr ROp kIntOps[] = {ROp::kSum,  ROp::kMin, ROp::kMax, ROp::kBand,   ROp::kBor,   ROp::kBxor,
                           ROp::kLand, ROp::kLor, ROp::kLxor, ROp::kMinloc, ROp::kMaxloc};
constexpr ROp kFloatOps[] = {ROp::kMin, ROp::kMax, ROp::kMinloc, ROp::kMaxloc};

// A value of the datatype drawn to hit the edges: extremes, zero, +-1, a few
// repeated values (ties for MINLOC/MAXLOC), or anything.
void fill_value(DType t, Rng& rng, uint8_t* p) {
  const size_t vs = dtype_size(t);
  const uint64_t r = rng.next();
  if (dtype_is_float(t)) {
    const double choices[] = {0.0, -0.0, 1.0, -1.0, 3.5, -3.5, 1e300, -1e-300, 1e30, -2.0e-38};
    double d = (r % 3 == 0) ? choices[(r >> 8) % 10]
                            : static_cast<double>(static_cast<int64_t>(rng.next() % 2001) - 1000) / 8.0;
    if (t == DType::kFloat) {
      const auto f = static_cast<float>(d);
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &d, 8);
    }
    return;
  }
  uint64_t v = rng.next();
  switch (r % 6) {
    case 0: v = uint64_t{1} << (8 * vs - 1); break;        // INT_MIN / the top bit
    case 1: v = (uint64_t{1} << (8 * vs - 1)) - 1; break;  // INT_MAX
    case 2: v = 0; break;
    case 3: v = ~uint64_t{0}; break;                       // -1 / UINT_MAX
    case 4: v = (r >> 8) % 3; break;                       // small repeats
    default: break;
  }
  std::memcpy(p, &v, vs);
}

std::vector<uint8_t> node_input(DType t, ROp op, uint64_t count, uint32_t rank, uint64_t seed) {
  const size_t es = elem_size(t, op);
  std::vector<uint8_t> in(count * es);
  Rng rng(seed * 1000003 + rank);
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t* p = in.data() + i * es;
    fill_value(t, rng, p);
    if (rop_is_loc(op)) {
      // Indices: the rank mostly (MPI's usual), sometimes negative or equal.
      const int32_t idx = (rng.next() % 4 == 0) ? -static_cast<int32_t>(rank) - 1 : static_cast<int32_t>(rank % 3);
      std::memcpy(p + dtype_size(t), &idx, 4);
    }
  }
  return in;
}

// Serial fold with the datatype kernel, ranks in order. A logical op on one
// node still writes 0 or 1 (dtype.h), which a fold of nothing does not: the
// reference normalises that case.
std::vector<uint8_t> reference(DType t, ROp op, const std::vector<std::vector<uint8_t>>& in, uint64_t count) {
  std::vector<uint8_t> acc = in[0];
  const Reducer red = make_reducer(t, op);
  for (size_t r = 1; r < in.size(); ++r) red.apply(acc.data(), in[r].data(), count);
  if (in.size() == 1 && (op == ROp::kLand || op == ROp::kLor || op == ROp::kLxor)) {
    const Reducer lor = make_reducer(t, ROp::kLor);
    std::vector<uint8_t> zeros(acc.size(), 0);
    lor.apply(acc.data(), zeros.data(), count);
  }
  return acc;
}

// The network's view: every node encodes, the ALU folds the operands in
// `order`, every node decodes the same combined operands.
std::vector<uint8_t> through_tree(const TreeCodec& c, const std::vector<std::vector<uint8_t>>& in,
                                  const std::vector<uint32_t>& order) {
  std::vector<std::vector<uint8_t>> ops(in.size(), std::vector<uint8_t>(c.pass.bytes() + 1, 0xA5));
  for (size_t r = 0; r < in.size(); ++r) {
    Status st = tree_encode(c, in[r].data(), ops[r].data());
    CHECK_TEXT(st.is_ok(), st.to_string().c_str());
    LONGS_EQUAL_TEXT(0xA5, ops[r][c.pass.bytes()], "encode writes exactly pass.bytes()");
  }
  std::vector<uint8_t> acc = ops[order[0]];
  for (size_t k = 1; k < order.size(); ++k) {
    alu_combine(c.pass.op, c.pass.type, c.pass.width, acc.data(), ops[order[k]].data(), c.pass.operands);
  }
  std::vector<uint8_t> out(c.bytes() + 1, 0x5A);
  tree_decode(c, acc.data(), out.data());
  LONGS_EQUAL_TEXT(0x5A, out[c.bytes()], "decode writes exactly count elements");
  out.pop_back();
  return out;
}

void check_case(DType t, ROp op, uint64_t count, uint32_t nodes, uint64_t seed) {
  std::string what = std::string(dtype_name(t)) + " " + rop_name(op) + " x" + std::to_string(count) + " on " +
                     std::to_string(nodes) + " nodes";
  auto c = plan_tree_reduce(t, op, Reducer{}, count, nodes);
  CHECK_TEXT(c.is_ok(), (what + ": " + c.status().to_string()).c_str());
  std::vector<std::vector<uint8_t>> in;
  for (uint32_t r = 0; r < nodes; ++r) in.push_back(node_input(t, op, count, r, seed));
  const std::vector<uint8_t> want = reference(t, op, in, count);
  std::vector<uint32_t> order(nodes);
  std::iota(order.begin(), order.end(), 0u);
  Rng rng(seed);
  for (int trial = 0; trial < 3; ++trial) {
    const std::vector<uint8_t> got = through_tree(*c, in, order);
    CHECK_TEXT(got == want, (what + ": differs from the serial kernel fold (" + tree_method_name(c->method) +
                             ", order trial " + std::to_string(trial) + ")").c_str());
    for (uint32_t i = nodes; i > 1; --i) std::swap(order[i - 1], order[rng.next() % i]);
  }
}

}  // namespace

TEST_GROUP(TreeCodec){};

TEST(TreeCodec, EveryIntegerOpEqualsTheKernelFoldInAnyOrder) {
  for (DType t : kIntTypes) {
    for (ROp op : kIntOps) {
      for (uint32_t nodes : {1u, 2u, 7u, 8u}) {
        for (uint64_t count : {0ull, 1ull, 3ull, 64ull, 131ull}) check_case(t, op, count, nodes, 17 + count + nodes);
      }
    }
  }
}

TEST(TreeCodec, FloatMinMaxAndLocEqualTheKernelFold) {
  for (DType t : kFloatTypes) {
    for (ROp op : kFloatOps) {
      for (uint32_t nodes : {1u, 3u, 8u}) check_case(t, op, 97, nodes, 5 + nodes);
    }
  }
}

TEST(TreeCodec, FloatMinMaxOfANanIsTheQuietNan) {
  auto c = plan_tree_reduce(DType::kDouble, ROp::kMax, Reducer{}, 1, 2);
  CHECK_TRUE(c.is_ok());
  const double a = 1.0, b = -__builtin_nan("7");
  std::vector<std::vector<uint8_t>> in(2, std::vector<uint8_t>(8));
  std::memcpy(in[0].data(), &a, 8);
  std::memcpy(in[1].data(), &b, 8);
  const std::vector<uint8_t> got = through_tree(*c, in, {0, 1});
  double r;
  std::memcpy(&r, got.data(), 8);
  CHECK_TRUE(r != r);
}

TEST(TreeCodec, MethodAndWidthPerTypeAndNodeCount) {
  struct Want {
    DType t;
    ROp op;
    uint64_t nodes;
    TreeMethod m;
    uint32_t width;
  };
  const Want wants[] = {
      {DType::kUint32, ROp::kSum, 8, TreeMethod::kRaw, 4},
      {DType::kUint64, ROp::kSum, 8, TreeMethod::kRaw, 8},
      {DType::kUint8, ROp::kSum, 8, TreeMethod::kWiden, 4},
      {DType::kInt8, ROp::kSum, 8, TreeMethod::kBiasSum, 4},
      {DType::kInt8, ROp::kSum, 1u << 23, TreeMethod::kBiasSum, 4},
      {DType::kInt8, ROp::kSum, (1u << 23) + 1, TreeMethod::kSextSum, 8},
      {DType::kInt16, ROp::kSum, 32768, TreeMethod::kBiasSum, 4},
      {DType::kInt16, ROp::kSum, 32769, TreeMethod::kSextSum, 8},
      {DType::kInt32, ROp::kSum, 8, TreeMethod::kSextSum, 8},
      {DType::kInt32, ROp::kSum, UINT32_MAX, TreeMethod::kSextSum, 8},
      {DType::kInt64, ROp::kSum, 8, TreeMethod::kSextSum, 16},
      {DType::kInt16, ROp::kMax, 8, TreeMethod::kExtreme, 4},
      {DType::kUint64, ROp::kMin, 8, TreeMethod::kExtreme, 8},
      {DType::kDouble, ROp::kMin, 8, TreeMethod::kExtreme, 8},
      {DType::kFloat, ROp::kMaxloc, 8, TreeMethod::kLoc, 8},
      {DType::kInt64, ROp::kMinloc, 8, TreeMethod::kLoc, 16},
      {DType::kInt8, ROp::kBxor, 8, TreeMethod::kRaw, 8},
      {DType::kInt32, ROp::kLor, 8, TreeMethod::kLogical, 8},
      {DType::kDouble, ROp::kSum, 8, TreeMethod::kFloatSum, 4},
  };
  for (const Want& w : wants) {
    auto c = plan_tree_reduce(w.t, w.op, Reducer{}, 64, w.nodes);
    std::string what = std::string(dtype_name(w.t)) + " " + rop_name(w.op) + " on " + std::to_string(w.nodes);
    CHECK_TEXT(c.is_ok(), (what + ": " + c.status().to_string()).c_str());
    STRCMP_EQUAL_TEXT(tree_method_name(w.m), tree_method_name(c->method), what.c_str());
    LONGS_EQUAL_TEXT(w.width, c->pass.width, what.c_str());
  }
  // Bytes on the network per element: one operand each, but one bit for the
  // logical ops and 3 words per 64 values for the float sum's first pass.
  LONGS_EQUAL(64, plan_tree_reduce(DType::kInt32, ROp::kSum, Reducer{}, 64, 8)->pass.operands);
  LONGS_EQUAL(1, plan_tree_reduce(DType::kInt32, ROp::kLor, Reducer{}, 64, 8)->pass.operands);
  LONGS_EQUAL(3, plan_tree_reduce(DType::kDouble, ROp::kSum, Reducer{}, 64, 8)->pass.operands);
  // Raw bitwise: 7 int8 bytes pad to one 8-byte word (a copy); 64 int8 run direct.
  CHECK_FALSE(plan_tree_reduce(DType::kInt8, ROp::kBand, Reducer{}, 7, 8)->direct());
  CHECK_TRUE(plan_tree_reduce(DType::kInt8, ROp::kBand, Reducer{}, 64, 8)->direct());
  CHECK_TRUE(plan_tree_reduce(DType::kInt16, ROp::kBor, Reducer{}, 6, 8)->direct());  // 12 bytes: 4-byte words
  LONGS_EQUAL(4, plan_tree_reduce(DType::kInt16, ROp::kBor, Reducer{}, 6, 8)->pass.width);
  CHECK_TRUE(plan_tree_reduce(DType::kUint64, ROp::kSum, Reducer{}, 5, 8)->direct());
  LONGS_EQUAL(0, plan_tree_reduce(DType::kUint64, ROp::kSum, Reducer{}, 5, 8)->operand_bytes());
  LONGS_EQUAL(5 * 16, plan_tree_reduce(DType::kInt64, ROp::kSum, Reducer{}, 5, 8)->operand_bytes());
}

TEST(TreeCodec, RefusalsNameTheReason) {
  STRCMP_EQUAL("the combine ALU has no multiply",
               tree_reduce_unsupported(DType::kInt32, ROp::kProd, Reducer{}, 4, 8).c_str());
  STRCMP_EQUAL("the combine ALU has no multiply",
               tree_reduce_unsupported(DType::kDouble, ROp::kProd, Reducer{}, 4, 8).c_str());
  CHECK_FALSE(tree_reduce_unsupported(DType::kDouble, ROp::kBxor, Reducer{}, 4, 8).empty());
  STRCMP_EQUAL("", tree_reduce_unsupported(DType::kInt32, ROp::kSum, Reducer{}, 4, 27).c_str());
  const std::string big = tree_reduce_unsupported(DType::kDouble, ROp::kSum, Reducer{}, 1ull << 33, 8);
  CHECK_TEXT(big.find("operands") != std::string::npos, big.c_str());
  // ALU words: the reducer's op, type and width; a bad width is refused.
  auto w = plan_tree_reduce(DType::kAluWord, ROp::kSum, make_alu_reducer(AluOp::kAdd, AluType::kSigned, 24), 3, 8);
  CHECK_TRUE(w.is_ok());
  CHECK_TRUE(w->direct());
  LONGS_EQUAL(24, w->pass.width);
  LONGS_EQUAL(3, w->pass.operands);
  CHECK_TRUE(w->pass.op == AluOp::kAdd && w->pass.type == AluType::kSigned);
  Reducer bad = make_alu_reducer(AluOp::kMax, AluType::kUnsigned, 4);
  bad.esize = 12;
  CHECK_FALSE(plan_tree_reduce(DType::kAluWord, ROp::kSum, bad, 3, 8).is_ok());
}

TEST(TreeCodec, ByteMovementsOverZerosKeepEveryByte) {
  // bcast: the root's bytes, zeros elsewhere, OR; allgather: one block per
  // node in its slot, zeros elsewhere, ADD (never carries).
  for (uint64_t bytes : {0ull, 1ull, 7ull, 12ull, 64ull, 1001ull}) {
    const uint32_t nodes = 5;
    for (AluOp op : {AluOp::kOr, AluOp::kAdd}) {
      auto c = plan_tree_bytes(op, bytes * nodes, nodes);
      CHECK_TRUE(c.is_ok());
      LONGS_EQUAL(bytes * nodes, c->bytes());
      std::vector<std::vector<uint8_t>> in(nodes, std::vector<uint8_t>(bytes * nodes, 0));
      std::vector<uint8_t> want(bytes * nodes);
      Rng rng(bytes + 1);
      for (uint32_t r = 0; r < nodes; ++r) {
        for (uint64_t i = 0; i < bytes; ++i) {
          in[r][r * bytes + i] = static_cast<uint8_t>(rng.next() | 0x80);  // high bits set: a carry would show
          want[r * bytes + i] = in[r][r * bytes + i];
        }
      }
      CHECK_TRUE(through_tree(*c, in, {4, 2, 0, 1, 3}) == want);
      CHECK_EQUAL(bytes * nodes % 8 == 0 || bytes * nodes % 4 == 0, c->direct());
    }
  }
}
