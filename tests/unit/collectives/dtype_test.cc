// Reduction kernels of every datatype and op: wrapping integer arithmetic,
// the NaN and signed-zero rules of MIN/MAX, MINLOC/MAXLOC ties (lower index
// wins), logical ops producing 0/1, ops refused for floats, name parsing,
// and the ALU form used by exact mode.
#include <cmath>
#include <cstring>
#include <limits>

#include "collectives/coll.h"
#include "collectives/dtype.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

template <typename T>
T red(DType t, ROp op, T a, T b) {
  make_reducer(t, op).apply(&a, &b, 1);
  return a;
}

struct LocD {
  double v;
  int32_t i;
};

LocD loc(ROp op, LocD a, LocD b) {
  uint8_t x[12], y[12];
  std::memcpy(x, &a.v, 8);
  std::memcpy(x + 8, &a.i, 4);
  std::memcpy(y, &b.v, 8);
  std::memcpy(y + 8, &b.i, 4);
  make_reducer(DType::kDouble, op).apply(x, y, 1);
  LocD r;
  std::memcpy(&r.v, x, 8);
  std::memcpy(&r.i, x + 8, 4);
  return r;
}

}  // namespace

TEST_GROUP(DType){};

TEST(DType, IntegerOpsWrapLikeTwosComplement) {
  LONGS_EQUAL(-128, red<int8_t>(DType::kInt8, ROp::kSum, 127, 1));
  UNSIGNED_LONGS_EQUAL(0, red<uint16_t>(DType::kUint16, ROp::kSum, 65535, 1));
  LONGS_EQUAL(0, red<int16_t>(DType::kInt16, ROp::kProd, 256, 256));
  CHECK_EQUAL(std::numeric_limits<int64_t>::min(),
              red<int64_t>(DType::kInt64, ROp::kSum, std::numeric_limits<int64_t>::max(), 1));
  UNSIGNED_LONGS_EQUAL(3u * 0xffffffffu, red<uint32_t>(DType::kUint32, ROp::kProd, 3, 0xffffffffu));
  LONGS_EQUAL(-5, red<int32_t>(DType::kInt32, ROp::kMin, -5, 3));
  UNSIGNED_LONGS_EQUAL(200, red<uint8_t>(DType::kUint8, ROp::kMax, 200, 100));  // unsigned order
  UNSIGNED_LONGS_EQUAL(0x0f, red<uint8_t>(DType::kUint8, ROp::kBand, 0x3f, 0xcf));
  UNSIGNED_LONGS_EQUAL(0xff, red<uint8_t>(DType::kUint8, ROp::kBor, 0xf0, 0x0f));
  UNSIGNED_LONGS_EQUAL(0xf0, red<uint8_t>(DType::kUint8, ROp::kBxor, 0xff, 0x0f));
}

TEST(DType, LogicalOpsGiveZeroOrOne) {
  LONGS_EQUAL(1, red<int32_t>(DType::kInt32, ROp::kLand, 7, -2));
  LONGS_EQUAL(0, red<int32_t>(DType::kInt32, ROp::kLand, 7, 0));
  LONGS_EQUAL(1, red<int64_t>(DType::kInt64, ROp::kLor, 0, 9));
  LONGS_EQUAL(0, red<int64_t>(DType::kInt64, ROp::kLor, 0, 0));
  LONGS_EQUAL(0, red<uint8_t>(DType::kUint8, ROp::kLxor, 3, 4));
  LONGS_EQUAL(1, red<uint8_t>(DType::kUint8, ROp::kLxor, 3, 0));
}

TEST(DType, FloatMinMaxPropagateNanAndOrderZeros) {
  CHECK(std::isnan(red<double>(DType::kDouble, ROp::kMax, 1.0, NAN)));
  CHECK(std::isnan(red<double>(DType::kDouble, ROp::kMax, NAN, 1.0)));
  CHECK(std::isnan(red<double>(DType::kDouble, ROp::kMin, 1.0, NAN)));
  CHECK(std::isnan(red<float>(DType::kFloat, ROp::kMin, NAN, 1.0f)));
  CHECK_FALSE(std::signbit(red<double>(DType::kDouble, ROp::kMax, -0.0, 0.0)));
  CHECK(std::signbit(red<double>(DType::kDouble, ROp::kMin, 0.0, -0.0)));
  DOUBLES_EQUAL(-INFINITY, red<double>(DType::kDouble, ROp::kMin, -INFINITY, 3.0), 0);
  // SUM and PROD: plain IEEE operations, and commutative bit for bit.
  const double a = 0.1, b = 0.2;
  CHECK(red<double>(DType::kDouble, ROp::kSum, a, b) == red<double>(DType::kDouble, ROp::kSum, b, a));
}

TEST(DType, LocOpsPreferTheLowerIndexOnTies) {
  LocD r = loc(ROp::kMaxloc, {5.0, 7}, {5.0, 3});
  DOUBLES_EQUAL(5.0, r.v, 0);
  LONGS_EQUAL(3, r.i);
  r = loc(ROp::kMaxloc, {5.0, 2}, {5.0, 3});
  LONGS_EQUAL(2, r.i);
  r = loc(ROp::kMaxloc, {4.0, 0}, {5.0, 9});
  LONGS_EQUAL(9, r.i);
  r = loc(ROp::kMinloc, {4.0, 8}, {-1.0, 9});
  LONGS_EQUAL(9, r.i);
  r = loc(ROp::kMinloc, {-1.0, 8}, {-1.0, 1});
  LONGS_EQUAL(1, r.i);
  UNSIGNED_LONGS_EQUAL(12, elem_size(DType::kDouble, ROp::kMinloc));
  UNSIGNED_LONGS_EQUAL(5, elem_size(DType::kInt8, ROp::kMaxloc));
}

TEST(DType, BitwiseAndLogicalAreRefusedForFloats) {
  for (ROp op : {ROp::kBand, ROp::kBor, ROp::kBxor, ROp::kLand, ROp::kLor, ROp::kLxor}) {
    Status st = check_rop(DType::kFloat, op);
    CHECK_FALSE(st.is_ok());
    STRCMP_CONTAINS("integer types only, not float", st.message().c_str());
    CHECK_TRUE(check_rop(DType::kUint64, op).is_ok());
  }
  for (int t = 0; t < kUserDTypes; ++t)
    for (ROp op : {ROp::kSum, ROp::kProd, ROp::kMin, ROp::kMax, ROp::kMinloc, ROp::kMaxloc})
      CHECK_TRUE(check_rop(static_cast<DType>(t), op).is_ok());
}

TEST(DType, NamesParseAndRoundTrip) {
  for (int t = 0; t < kUserDTypes; ++t)
    CHECK(parse_dtype(dtype_name(static_cast<DType>(t))).value() == static_cast<DType>(t));
  for (int o = 0; o < kROps; ++o) CHECK(parse_rop(rop_name(static_cast<ROp>(o))).value() == static_cast<ROp>(o));
  CHECK(parse_rop("MAXLOC").value() == ROp::kMaxloc);
  STRCMP_CONTAINS("unknown datatype 'int128'", parse_dtype("int128").status().message().c_str());
  STRCMP_CONTAINS("known: none, fixed-order, exact", parse_repro("fast").status().message().c_str());
  for (int k = 0; k < kCollKinds; ++k)
    CHECK(parse_coll_kind(coll_kind_name(static_cast<CollKind>(k))).value() == static_cast<CollKind>(k));
  CHECK_FALSE(parse_coll_kind("allscatter").is_ok());
}

TEST(DType, AluFormAddsWideOperandsWithCarry) {
  // Two 16-byte operands: carry out of the low word.
  uint64_t a[2] = {~0ull, 1}, b[2] = {1, 2};
  make_alu_reducer(AluOp::kAdd, AluType::kUnsigned, 16).apply(a, b, 1);
  UNSIGNED_LONGS_EQUAL(0, a[0]);
  UNSIGNED_LONGS_EQUAL(4, a[1]);
}
