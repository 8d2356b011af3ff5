// The generated inputs' closed-form reductions (firmware/jobs/coll_pattern.h)
// agree with reducing every rank's element in rank order, for every datatype
// and op, on partition sizes around each pattern's period; float SUM bit for
// bit (the correctly rounded sum), float PROD within half the bound an
// algorithm is allowed.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "firmware/jobs/coll_data.h"
#include "firmware/jobs/coll_pattern.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

std::string what(DType t, ROp op, uint64_t n, uint64_t i) {
  return std::string(dtype_name(t)) + " " + rop_name(op) + " nodes=" + std::to_string(n) + " index=" + std::to_string(i);
}

double as_double(DType t, const uint8_t* p) {
  if (t == DType::kFloat) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

}  // namespace

TEST_GROUP(CollPattern){};

TEST(CollPattern, ClosedFormsEqualTheRankOrderReduction) {
  const uint64_t sizes[] = {1, 2, 3, 5, 7, 8, 9, 10, 14, 27, 63, 64, 65, 100, 512};
  uint64_t compared = 0;
  for (int ti = 0; ti < kUserDTypes; ++ti) {
    const auto t = static_cast<DType>(ti);
    for (int oi = 0; oi < kROps; ++oi) {
      const auto op = static_cast<ROp>(oi);
      if (!check_rop(t, op)) continue;
      const size_t e = elem_size(t, op);
      const colldata::Source src(t, op, 1234 + oi);
      for (uint64_t n : sizes)
        for (uint64_t i = 0; i < 12; ++i) {
          uint8_t closed[16] = {}, direct[16] = {};
          double bound_closed = 0, bound_direct = 0;
          CHECK_TEXT(colldata::pattern_reduce(t, op, src.seed(), n, i, closed, &bound_closed), what(t, op, n, i).c_str());
          colldata::reduce_direct(src, t, op, n, i, direct, &bound_direct);
          ++compared;
          if (dtype_is_float(t) && op == ROp::kProd) {
            // Long double powers (half an ulp) against n - 1 roundings in
            // rank order: together within half the bound an algorithm gets.
            const double c = as_double(t, closed), d = as_double(t, direct);
            CHECK_TEXT(std::fabs(c - d) <= bound_direct / 2, what(t, op, n, i).c_str());
            CHECK_TEXT(n == 1 ? bound_closed == 0 : bound_closed > 0, what(t, op, n, i).c_str());
            continue;
          }
          CHECK_TEXT(std::memcmp(closed, direct, e) == 0, what(t, op, n, i).c_str());
          if (dtype_is_float(t) && op == ROp::kSum && n > 1)  // an upper bound of the same form
            CHECK_TEXT(bound_closed >= bound_direct * (1 - 1e-12), what(t, op, n, i).c_str());
          else if (n == 1)  // one contribution: the result is that element, exactly
            CHECK_TEXT(bound_closed == 0, what(t, op, n, i).c_str());
          else
            CHECK_TEXT(bound_closed == 0 && bound_direct == 0, what(t, op, n, i).c_str());
        }
    }
  }
  CHECK(compared > 10000);
}

// The row generators (a loop per type for integer SUM, the general path
// for the rest) give every element the bits pattern_element gives it.
TEST(CollPattern, RowsEqualTheElementsOneByOne) {
  const uint64_t first = 1000, count = 37;
  std::vector<colldata::PatternKeys> keys(count);
  for (uint64_t i = 0; i < count; ++i) keys[i] = colldata::pattern_keys(77, first + i);
  uint64_t compared = 0;
  for (int k = 0; k < kUserDTypes * kROps; ++k) {  // every datatype x op pair
    const auto t = static_cast<DType>(k / kROps);
    const auto op = static_cast<ROp>(k % kROps);
    if (!check_rop(t, op)) continue;
    const size_t e = elem_size(t, op);
    for (uint64_t rank : {0ull, 1ull, 6ull, 511ull, 65535ull}) {
      std::vector<uint8_t> row(count * e, 0xa5), keyed(count * e, 0x5a), one(e);
      colldata::pattern_row(t, op, 77, rank, first, count, row.data());
      colldata::pattern_row_keyed(t, op, keys.data(), rank, count, keyed.data());
      for (uint64_t i = 0; i < count; ++i) {
        colldata::pattern_element(t, op, 77, rank, first + i, one.data());
        const std::string w = std::string(dtype_name(t)) + " " + rop_name(op) + " rank=" + std::to_string(rank) +
                              " index=" + std::to_string(first + i);
        CHECK_TEXT(std::memcmp(row.data() + i * e, one.data(), e) == 0, w.c_str());
        CHECK_TEXT(std::memcmp(keyed.data() + i * e, one.data(), e) == 0, w.c_str());
        ++compared;
      }
    }
  }
  CHECK(compared > 10000);
}

TEST(CollPattern, ValuesAreNotDegenerate) {
  // Float sums cross zero and spread over binades; rounding depends on order.
  double lo = INFINITY, hi = 0;
  bool neg = false, pos = false;
  for (uint64_t r = 0; r < 64; ++r) {
    uint8_t b[8];
    colldata::pattern_element(DType::kDouble, ROp::kSum, 9, r, 3, b);
    const double v = as_double(DType::kDouble, b);
    neg |= v < 0;
    pos |= v > 0;
    if (v != 0) lo = std::fmin(lo, std::fabs(v)), hi = std::fmax(hi, std::fabs(v));
  }
  CHECK(neg && pos);
  CHECK(hi / lo > 0x1p30);
  // Ties for MIN: every 9 consecutive ranks hold the 9 values once.
  bool seen[9] = {};
  for (uint64_t r = 100; r < 109; ++r) {
    int32_t v;
    colldata::pattern_element(DType::kInt32, ROp::kMin, 5, r, 7, reinterpret_cast<uint8_t*>(&v));
    CHECK(v >= -4 && v <= 4);
    seen[v + 4] = true;
  }
  for (bool s : seen) CHECK(s);
  // A missing rank changes an integer product (odd factors never reach 0).
  uint8_t all[8], fewer[8];
  double b;
  CHECK(colldata::pattern_reduce(DType::kInt64, ROp::kProd, 3, 512, 0, all, &b));
  CHECK(colldata::pattern_reduce(DType::kInt64, ROp::kProd, 3, 511, 0, fewer, &b));
  CHECK(std::memcmp(all, fewer, 8) != 0);
}

TEST(CollPattern, FloatSumOnHugePartitionsFallsBackToTheDirectReduction) {
  uint8_t out[8];  // a double
  double bound;
  CHECK_FALSE(colldata::pattern_reduce(DType::kFloat, ROp::kSum, 1, (1u << 20) + 1, 0, out, &bound));
  CHECK(colldata::pattern_reduce(DType::kDouble, ROp::kSum, 1, 1u << 24, 0, out, &bound));
}
