// The checking side of the collective jobs: the big-integer correctly
// rounded sum agrees with MPFR on adversarial inputs (so exact mode is
// judged by an independent reference), generated data depends only on
// (seed, rank, index), the 64-bit SUM closed form equals a direct sum, and
// a case verifies a right result and rejects a wrong one.
#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "base/rng.h"
#include "firmware/jobs/coll_case.h"
#include "firmware/jobs/coll_data.h"
#include "base/sha256.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

double mpfr_sum(const std::vector<double>& x) {
  mpfr_t acc, v;
  mpfr_init2(acc, 2400);
  mpfr_init2(v, 64);
  mpfr_set_zero(acc, 1);
  for (double d : x) {
    mpfr_set_d(v, d, MPFR_RNDN);
    mpfr_add(acc, acc, v, MPFR_RNDN);
  }
  const double r = mpfr_get_d(acc, MPFR_RNDN);
  mpfr_clear(acc);
  mpfr_clear(v);
  return r;
}

bool same(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }

}  // namespace

TEST_GROUP(CollData){};

TEST(CollData, ExactSumMatchesMpfr) {
  Rng rng(42);
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t n = 1 + rng.below(40);
    std::vector<double> x(n);
    for (double& d : x) {
      const int e = trial % 3 == 0 ? static_cast<int>(rng.below(2098)) - 1074 : static_cast<int>(rng.below(80)) - 40;
      d = (rng.next() & 1 ? -1 : 1) * std::ldexp(1.0 + rng.uniform(), e);
      if (trial % 7 == 0 && rng.below(3) == 0) d = -x[0];  // cancellation
    }
    const double want = mpfr_sum(x);
    const double got = colldata::exact_sum(x.data(), n);
    if (want == 0 && got == 0) continue;  // zero signs: separate rule below
    CHECK_TEXT(same(got, want), ("trial " + std::to_string(trial)).c_str());
  }
  // The special rules.
  std::vector<double> z = {-0.0, -0.0};
  CHECK(same(colldata::exact_sum(z.data(), 2), -0.0));
  z = {-0.0, 0.0};
  CHECK(same(colldata::exact_sum(z.data(), 2), 0.0));
  z = {1e308, 1e308};
  CHECK(same(colldata::exact_sum(z.data(), 2), INFINITY));
  z = {INFINITY, -INFINITY};
  CHECK(std::isnan(colldata::exact_sum(z.data(), 2)));
  z = {0x1p-1074, 0x1p-1074, -0x1p-1074};
  CHECK(same(colldata::exact_sum(z.data(), 3), 0x1p-1074));
  std::vector<float> f = {1.0f, 0x1p-24f, 0x1p-48f};  // just above the tie: rounds up
  CHECK(colldata::exact_sum(f.data(), 3) == 1.0f + 0x1p-23f);
}

TEST(CollData, InputDependsOnSeedRankAndIndexOnly) {
  uint8_t a[16], b[16];
  for (int t = 0; t < kUserDTypes; ++t) {
    for (ROp op : {ROp::kSum, ROp::kMin, ROp::kMaxloc, ROp::kLand}) {
      if (!check_rop(static_cast<DType>(t), op)) continue;
      const size_t e = elem_size(static_cast<DType>(t), op);
      colldata::element(static_cast<DType>(t), op, 7, 3, 100, a);
      colldata::element(static_cast<DType>(t), op, 7, 3, 100, b);
      CHECK(std::memcmp(a, b, e) == 0);
    }
  }
  // 64-bit SUM: the closed form equals the direct sum over ranks.
  colldata::Source src(DType::kInt64, ROp::kSum, 11);
  for (uint64_t nodes : {1ull, 8ull, 27ull, 64ull}) {
    for (uint64_t i = 0; i < 20; ++i) {
      int64_t direct = 0, v;
      for (uint64_t r = 0; r < nodes; ++r) {
        src.get(r, i, reinterpret_cast<uint8_t*>(&v));
        direct = static_cast<int64_t>(static_cast<uint64_t>(direct) + static_cast<uint64_t>(v));
      }
      int64_t closed;
      double bound;
      colldata::reduce_reference(src, DType::kInt64, ROp::kSum, nodes, i, reinterpret_cast<uint8_t*>(&closed), &bound);
      LONGS_EQUAL(direct, closed);
    }
  }
}

TEST(CollData, CaseVerifiesRightAndRejectsWrong) {
  colldata::Source src(DType::kInt32, ROp::kMax, 5);
  CaseSpec s;
  s.kind = CollKind::kAllreduce;
  s.dtype = DType::kInt32;
  s.op = ROp::kMax;
  s.count = 9;
  CollCase c;
  c.prepare(s, 1, 4, src);
  CollArgs a = c.args();
  auto* out = static_cast<int32_t*>(a.recv);
  for (uint32_t i = 0; i < 9; ++i) {
    double bound;
    colldata::reduce_reference(src, DType::kInt32, ROp::kMax, 4, i, reinterpret_cast<uint8_t*>(&out[i]), &bound);
  }
  CHECK_TRUE(c.verify().is_ok());
  UNSIGNED_LONGS_EQUAL(9, c.checked());
  out[4] += 1;
  Status st = c.verify();
  CHECK_FALSE(st.is_ok());
  STRCMP_CONTAINS("element 4", st.message().c_str());
  // The fingerprint is the SHA-256 of the output bytes.
  STRCMP_EQUAL(sha256_hex(out, 9 * 4).c_str(), c.sha256().c_str());
}
