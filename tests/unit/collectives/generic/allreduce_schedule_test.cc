// The generic allreduce schedules (ring, recursive-doubling, rabenseifner),
// every rank's plan run together by plan_sim.h: exact integer SUM and XOR
// results for every n and count, in place or not; doubles bit-identical on
// every rank; step counts, peers and bytes as the header comments state.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/schedule/generic.h"
#include "tests/unit/collectives/generic/generic_test_util.h"
#include "tests/unit/collectives/plan_sim.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;
using namespace toroid::gentest;

namespace {

struct Algo {
  const char* name;
  Plan (*build)(uint32_t, uint32_t, uint64_t, bool);
};
const Algo kAlgos[] = {
    {"ring", ring_allreduce_plan},
    {"recursive-doubling", recursive_doubling_allreduce_plan},
    {"rabenseifner", rabenseifner_allreduce_plan},
};

std::vector<Plan> plans(const Algo& a, uint32_t n, uint64_t count, bool in_place) {
  return plans_of(n, [&](uint32_t nn, uint32_t r) { return a.build(nn, r, count, in_place); });
}

// Runs int64 SUM and checks every rank against the directly computed sum.
plansim::Report run_sum(const Algo& a, uint32_t n, uint64_t count, bool in_place) {
  std::vector<plansim::RankIO> io;
  std::vector<int64_t> want(count, 0);
  for (uint32_t r = 0; r < n; ++r) {
    std::vector<int64_t> in(count);
    for (uint64_t i = 0; i < count; ++i) {
      in[i] = ival(r, i);
      want[i] = static_cast<int64_t>(static_cast<uint64_t>(want[i]) + static_cast<uint64_t>(in[i]));
    }
    io.push_back(make_io(in, count, in_place));
  }
  auto rep = plansim::run_plans(plans(a, n, count, in_place), io, sizeof(int64_t), sum_i64());
  const std::string w = where(a.name, n, count, in_place);
  CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
  for (uint32_t r = 0; r < n; ++r) {
    auto got = plansim::from_bytes<int64_t>(io[r].out);
    CHECK_TEXT(got == want, (w + ": wrong sum at rank " + std::to_string(r)).c_str());
  }
  return rep;
}

uint32_t log2_exact(uint32_t p) { return ceil_log2(p); }

}  // namespace

TEST_GROUP(GenericAllreduce){};

TEST(GenericAllreduce, IntegerSumIsExactOnEveryRankForEveryNAndCount) {
  for (const Algo& a : kAlgos)
    for (uint32_t n : node_counts())
      for (uint64_t count : counts_for(n))
        for (bool in_place : {false, true}) run_sum(a, n, count, in_place);
}

TEST(GenericAllreduce, BitwiseXorIsExact) {
  for (const Algo& a : kAlgos)
    for (uint32_t n : node_counts()) {
      const uint64_t count = 2 * uint64_t{n} + 5;
      std::vector<plansim::RankIO> io;
      std::vector<uint32_t> want(count, 0);
      for (uint32_t r = 0; r < n; ++r) {
        std::vector<uint32_t> in(count);
        for (uint64_t i = 0; i < count; ++i) want[i] ^= in[i] = static_cast<uint32_t>(ival(r, i, 3));
        io.push_back(make_io(in, count, false));
      }
      auto rep = plansim::run_plans(plans(a, n, count, false), io, sizeof(uint32_t), xor_u32());
      CHECK_TEXT(rep.ok, rep.error.c_str());
      for (uint32_t r = 0; r < n; ++r) CHECK(plansim::from_bytes<uint32_t>(io[r].out) == want);
    }
}

// The test data really is order-sensitive: summing it in two orders gives
// different bits, so the bit-identity below is not an accident of the data.
TEST(GenericAllreduce, DoubleDataIsOrderSensitive) {
  const uint32_t n = 9;
  int differ = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    double fwd = 0, bwd = 0;
    for (uint32_t r = 0; r < n; ++r) fwd += dval(r, i);
    for (uint32_t r = n; r-- > 0;) bwd += dval(r, i);
    differ += std::memcmp(&fwd, &bwd, sizeof fwd) != 0;
  }
  CHECK(differ > 20);
}

// Fixed order: every rank ends with the same bits, and close to the true sum.
TEST(GenericAllreduce, DoubleSumIsBitIdenticalOnEveryRank) {
  for (const Algo& a : kAlgos)
    for (uint32_t n : node_counts())
      for (uint64_t count : {uint64_t{1}, uint64_t{7}, 4 * uint64_t{n} + 9})
        for (bool in_place : {false, true}) {
          std::vector<plansim::RankIO> io;
          std::vector<long double> exact(count, 0);
          std::vector<double> mag(count, 0);
          for (uint32_t r = 0; r < n; ++r) {
            std::vector<double> in(count);
            for (uint64_t i = 0; i < count; ++i) {
              in[i] = dval(r, i);
              exact[i] += in[i];
              mag[i] += std::fabs(in[i]);
            }
            io.push_back(make_io(in, count, in_place));
          }
          auto rep = plansim::run_plans(plans(a, n, count, in_place), io, sizeof(double), sum_f64());
          const std::string w = where(a.name, n, count, in_place);
          CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
          for (uint32_t r = 1; r < n; ++r)
            CHECK_TEXT(io[r].out == io[0].out, (w + ": rank " + std::to_string(r) + " differs from rank 0").c_str());
          auto got = plansim::from_bytes<double>(io[0].out);
          for (uint64_t i = 0; i < count; ++i)
            CHECK_TEXT(std::fabs(got[i] - static_cast<double>(exact[i])) <= n * 2.3e-16 * mag[i] + 1e-300,
                       (w + ": sum out of the rounding bound").c_str());
        }
}

// The ring's fixed order: element i in block j of the clockwise half is the
// serial sum in ring order from rank j upwards (x[j] + x[j+1] + ... +
// x[j-1]); in the counter-clockwise half from rank j downwards. Equal bits.
TEST(GenericAllreduce, RingEqualsTheSerialRingOrderSumBitForBit) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 3 * uint64_t{n} + 4, h = (count + 1) / 2;
    std::vector<plansim::RankIO> io;
    for (uint32_t r = 0; r < n; ++r) {
      std::vector<double> in(count);
      for (uint64_t i = 0; i < count; ++i) in[i] = dval(r, i);
      io.push_back(make_io(in, count, false));
    }
    auto rep = plansim::run_plans(plans(kAlgos[0], n, count, false), io, sizeof(double), sum_f64());
    CHECK_TEXT(rep.ok, rep.error.c_str());
    auto got = plansim::from_bytes<double>(io[n - 1].out);
    for (uint64_t i = 0; i < count; ++i) {
      const bool cw = i < h;
      uint32_t j = 0;  // the block of i within its half
      while (j + 1 < n && (cw ? block_start(h, n, j + 1) <= i : h + block_start(count - h, n, j + 1) <= i)) ++j;
      double acc = 0;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t s = cw ? (j + k) % n : (j + n - k) % n;
        acc = k == 0 ? dval(s, i) : acc + dval(s, i);
      }
      CHECK_TEXT(std::memcmp(&acc, &got[i], sizeof acc) == 0, where("ring", n, count, false).c_str());
    }
  }
}

TEST(GenericAllreduce, RingTakesTwoNMinusOneStepsBetweenNeighboursOnly) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 2 * uint64_t{n} * 5 + 3;  // every block of both halves non-empty
    auto rep = run_sum(kAlgos[0], n, count, false);
    const uint32_t steps = n > 1 ? 2 * (n - 1) : 0;
    for (uint32_t r = 0; r < n; ++r) LONGS_EQUAL(steps, rep.steps[r]);
    LONGS_EQUAL(steps, rep.time);
    LONGS_EQUAL(steps, rep.msgs.size());
    for (uint32_t k = 0; k < rep.msgs.size(); ++k) {
      std::vector<int> cw(n, 0), ccw(n, 0);
      for (const auto& m : rep.msgs[k]) {
        const bool right = m.dst == (m.src + 1) % n, left = m.dst == (m.src + n - 1) % n;
        CHECK_TEXT(right || left, "ring sends only to ring neighbours");
        CHECK_TEXT(m.elems > 0, "every message of a long vector carries data");
        if (n == 2)  // both neighbours are the same rank: the first message is the clockwise one
          (cw[m.src] ? ccw[m.src] : cw[m.src])++;
        else
          (right ? cw[m.src] : ccw[m.src])++;
      }
      for (uint32_t r = 0; r < n; ++r) {
        LONGS_EQUAL_TEXT(1, cw[r], "one clockwise message per rank and step");
        LONGS_EQUAL_TEXT(1, ccw[r], "one counter-clockwise message per rank and step");
      }
    }
    // Bytes: every block of each half travels n-1 hops reducing and n-1 copying.
    uint64_t total = 0;
    const uint64_t h = (count + 1) / 2, g = count - h;
    const uint64_t hi = 2 * (n - 1) * ((h + n - 1) / n + (g + n - 1) / n), lo = 2 * (n - 1) * (h / n + g / n);
    for (uint32_t r = 0; r < n; ++r) {
      const uint64_t e = rep.sent_bytes[r] / sizeof(int64_t);
      total += e;
      CHECK(e <= hi && e >= lo);
      if (n >= 3) {  // at most one block in flight per link direction
        CHECK(rep.max_inflight(r, (r + 1) % n) <= ((h + n - 1) / n) * sizeof(int64_t));
        CHECK(rep.max_inflight(r, (r + n - 1) % n) <= ((g + n - 1) / n) * sizeof(int64_t));
      }
    }
    LONGS_EQUAL(2 * (n - 1) * count, total);
  }
}

// A count below 2n leaves blocks empty: they are not sent. Each block that
// holds data still takes its 2(n-1) messages (n-1 reducing, n-1 copying),
// and nothing else travels.
TEST(GenericAllreduce, RingSmallCountsSendOnlyTheBlocksThatHoldData) {
  for (uint32_t n : {3u, 8u, 27u})
    for (uint64_t count : {uint64_t{0}, uint64_t{1}, uint64_t{7}, 2 * uint64_t{n} - 1}) {
      auto rep = run_sum(kAlgos[0], n, count, false);
      const uint64_t h = (count + 1) / 2, g = count - h;
      const uint64_t blocks = std::min<uint64_t>(h, n) + std::min<uint64_t>(g, n);
      uint64_t msgs = 0;
      for (const auto& step : rep.msgs)
        for (const auto& m : step) {
          CHECK_TEXT(m.elems > 0, where("ring", n, count, false).c_str());
          ++msgs;
        }
      LONGS_EQUAL_TEXT(2 * (n - 1) * blocks, msgs, where("ring", n, count, false).c_str());
      for (uint32_t r = 0; r < n; ++r) CHECK(rep.steps[r] <= 2 * (n - 1));
      if (count == 0)
        for (uint32_t r = 0; r < n; ++r) LONGS_EQUAL(0, rep.steps[r]);
    }
}

TEST(GenericAllreduce, RecursiveDoublingStepsPeersAndBytes) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 11;
    auto rep = run_sum(kAlgos[1], n, count, false);
    const Fold f(n);
    const uint32_t lg = log2_exact(f.p);
    for (uint32_t r = 0; r < n; ++r) {
      const uint32_t want = f.idle(r) ? 2 : f.absorbs(r) ? lg + 2 : lg;
      LONGS_EQUAL_TEXT(want, rep.steps[r], where("recursive-doubling", n, count, false).c_str());
      const uint64_t sent = f.idle(r) ? count : (lg + (f.absorbs(r) ? 1 : 0)) * count;
      LONGS_EQUAL(sent * sizeof(int64_t), rep.sent_bytes[r]);
    }
    LONGS_EQUAL(lg + (f.folded() ? 2 : 0), rep.time);
    if (is_pow2(n))  // step k pairs rank r with r XOR 2^k
      for (uint32_t k = 0; k < rep.msgs.size(); ++k)
        for (const auto& m : rep.msgs[k]) LONGS_EQUAL(m.src ^ (1u << k), m.dst);
  }
}

TEST(GenericAllreduce, RabenseifnerStepsAndBytes) {
  for (uint32_t n : node_counts()) {
    const Fold f(n);
    const uint64_t count = 4 * uint64_t{f.p};  // blocks of exactly 4 elements
    auto rep = run_sum(kAlgos[2], n, count, false);
    const uint32_t lg = log2_exact(f.p);
    uint64_t total = 0;
    for (uint32_t r = 0; r < n; ++r) {
      const uint32_t want = f.idle(r) ? 2 : f.absorbs(r) ? 2 * lg + 2 : 2 * lg;
      LONGS_EQUAL(want, rep.steps[r]);
      const uint64_t e = rep.sent_bytes[r] / sizeof(int64_t);
      total += e;
      // acting ranks: (p-1)/p of the vector out in each phase, plus the unfold
      if (!f.idle(r)) LONGS_EQUAL(2 * (f.p - 1) * 4 + (f.absorbs(r) ? count : 0), e);
    }
    LONGS_EQUAL(2 * (f.p - 1) * count + 2 * f.extra * count, total);
    LONGS_EQUAL(2 * lg + (f.folded() ? 2 : 0), rep.time);
  }
}

// Rabenseifner's halving/doubling moves far fewer bytes than recursive
// doubling on long vectors (the reason to have both).
TEST(GenericAllreduce, RabenseifnerSendsLessThanRecursiveDoubling) {
  const uint32_t n = 16;
  const uint64_t count = 1024;
  auto rd = run_sum(kAlgos[1], n, count, false), rab = run_sum(kAlgos[2], n, count, false);
  LONGS_EQUAL(4 * count * 8, rd.sent_bytes[0]);
  LONGS_EQUAL(2 * 15 * 64 * 8, rab.sent_bytes[0]);
}
