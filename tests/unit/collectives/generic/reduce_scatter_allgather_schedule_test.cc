// The generic reduce-scatter (ring, recursive-halving) and allgather (ring,
// recursive-doubling) schedules, every rank's plan run together by
// plan_sim.h: exact results for every n and count, in place or not; the ring
// reduce-scatter equal bit for bit to the serial sum in ring order (its fixed
// order); step counts, peers and bytes as the header comments state.

#include <cmath>
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

using BuildFn = Plan (*)(uint32_t, uint32_t, uint64_t, bool);

std::vector<Plan> plans(BuildFn b, uint32_t n, uint64_t count, bool in_place) {
  return plans_of(n, [&](uint32_t nn, uint32_t r) { return b(nn, r, count, in_place); });
}

// Reduce-scatter of int64 SUM: rank r must hold sum over s of in_s[r*count + i].
plansim::Report run_rs(const char* name, BuildFn b, uint32_t n, uint64_t count, bool in_place) {
  std::vector<plansim::RankIO> io;
  for (uint32_t r = 0; r < n; ++r) {
    std::vector<int64_t> in(uint64_t{n} * count);
    for (uint64_t i = 0; i < in.size(); ++i) in[i] = ival(r, i);
    io.push_back(make_io(in, count, in_place));
  }
  auto rep = plansim::run_plans(plans(b, n, count, in_place), io, 8, sum_i64());
  const std::string w = where(name, n, count, in_place);
  CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
  for (uint32_t r = 0; r < n; ++r) {
    auto got = plansim::from_bytes<int64_t>(io[r].out);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t want = 0;
      for (uint32_t s = 0; s < n; ++s) want += static_cast<uint64_t>(ival(s, uint64_t{r} * count + i));
      CHECK_TEXT(got[i] == static_cast<int64_t>(want), (w + ": rank " + std::to_string(r) + " wrong").c_str());
    }
  }
  return rep;
}

// Allgather of int64: block s of every rank's result is rank s's input.
plansim::Report run_ag(const char* name, BuildFn b, uint32_t n, uint64_t count, bool in_place) {
  std::vector<plansim::RankIO> io;
  for (uint32_t r = 0; r < n; ++r) {
    std::vector<int64_t> in(count);
    for (uint64_t i = 0; i < count; ++i) in[i] = ival(r, i);
    io.push_back(make_io(in, uint64_t{n} * count, in_place, uint64_t{r} * count));
  }
  auto rep = plansim::run_plans(plans(b, n, count, in_place), io, 8, nullptr);
  const std::string w = where(name, n, count, in_place);
  CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
  for (uint32_t r = 0; r < n; ++r) {
    auto got = plansim::from_bytes<int64_t>(io[r].out);
    for (uint32_t s = 0; s < n; ++s)
      for (uint64_t i = 0; i < count; ++i)
        CHECK_TEXT(got[uint64_t{s} * count + i] == ival(s, i),
                   (w + ": rank " + std::to_string(r) + " block " + std::to_string(s)).c_str());
  }
  return rep;
}

// Every message goes to a ring neighbour; with count >= 2 both directions
// carry data in every step (n >= 3, where the two neighbours differ).
void check_ring_traffic(const plansim::Report& rep, uint32_t n, uint64_t count) {
  for (const auto& step : rep.msgs) {
    std::vector<int> cw(n, 0), ccw(n, 0);
    for (const auto& m : step) {
      const bool right = m.dst == (m.src + 1) % n, left = m.dst == (m.src + n - 1) % n;
      CHECK_TEXT(right || left, "ring sends only to ring neighbours");
      if (n >= 3 && m.elems > 0) ++(right ? cw : ccw)[m.src];
    }
    if (n >= 3 && count >= 2)
      for (uint32_t r = 0; r < n; ++r) CHECK_TEXT(cw[r] == 1 && ccw[r] == 1, "both directions carry data");
  }
}

}  // namespace

TEST_GROUP(GenericReduceScatter){};

TEST(GenericReduceScatter, ResultsAreExactForEveryNAndCount) {
  for (uint32_t n : node_counts())
    for (uint64_t count : counts_for(n))
      for (bool in_place : {false, true}) {
        run_rs("ring", ring_reduce_scatter_plan, n, count, in_place);
        run_rs("recursive-halving", recursive_halving_reduce_scatter_plan, n, count, in_place);
      }
}

TEST(GenericReduceScatter, RingStepsTrafficBytesAndScratch) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 9;
    auto rep = run_rs("ring", ring_reduce_scatter_plan, n, count, false);
    for (uint32_t r = 0; r < n; ++r) {
      LONGS_EQUAL(n - 1, rep.steps[r]);
      LONGS_EQUAL((n - 1) * count * 8, rep.sent_bytes[r]);  // (n-1) * count per rank
      LONGS_EQUAL(n > 1 ? 2 * count : 0, ring_reduce_scatter_plan(n, r, count, false).tmp_elems);
    }
    LONGS_EQUAL(n - 1, rep.time);
    check_ring_traffic(rep, n, count);
  }
}

// The ring's fixed order: rank r's clockwise part is the serial sum in ring
// order starting at rank r+1 (x[r+1] + x[r+2] + ... + x[r]), the
// counter-clockwise part the one starting at r-1 going down; equal bits.
TEST(GenericReduceScatter, RingEqualsTheSerialRingOrderSumBitForBit) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 13, h = (count + 1) / 2;
    std::vector<plansim::RankIO> io;
    for (uint32_t r = 0; r < n; ++r) {
      std::vector<double> in(uint64_t{n} * count);
      for (uint64_t i = 0; i < in.size(); ++i) in[i] = dval(r, i);
      io.push_back(make_io(in, count, false));
    }
    auto rep = plansim::run_plans(plans(ring_reduce_scatter_plan, n, count, false), io, 8, sum_f64());
    CHECK_TEXT(rep.ok, rep.error.c_str());
    for (uint32_t r = 0; r < n; ++r) {
      auto got = plansim::from_bytes<double>(io[r].out);
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t at = uint64_t{r} * count + i;
        double acc = 0;
        for (uint32_t k = 1; k <= n; ++k) {
          uint32_t s = i < h ? (r + k) % n : (r + 2 * n - k) % n;
          acc = k == 1 ? dval(s, at) : acc + dval(s, at);
        }
        CHECK_TEXT(std::memcmp(&acc, &got[i], 8) == 0, where("ring", n, count, false).c_str());
      }
    }
  }
}

TEST(GenericReduceScatter, RecursiveHalvingStepsAndBytes) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 5;
    auto rep = run_rs("recursive-halving", recursive_halving_reduce_scatter_plan, n, count, false);
    const Fold f(n);
    const uint32_t lg = ceil_log2(f.p);
    uint64_t total = 0;
    for (uint32_t r = 0; r < n; ++r) {
      LONGS_EQUAL(n == 1 ? 0 : f.idle(r) ? 2 : f.absorbs(r) ? lg + 2 : lg, rep.steps[r]);
      total += rep.sent_bytes[r] / 8;
      if (is_pow2(n)) LONGS_EQUAL((n - 1) * count * 8, rep.sent_bytes[r]);  // (p-1)/p of the n*count input
    }
    LONGS_EQUAL((f.p - 1) * n * count + f.extra * (n + 1) * count, total);
    LONGS_EQUAL(lg + (f.folded() ? 2 : 0), rep.time);
    if (is_pow2(n))  // distances p/2, p/4, .., 1
      for (uint32_t k = 0; k < rep.msgs.size(); ++k)
        for (const auto& m : rep.msgs[k]) LONGS_EQUAL(m.src ^ (n >> (k + 1)), m.dst);
  }
}

TEST_GROUP(GenericAllgather){};

TEST(GenericAllgather, ResultsAreExactForEveryNAndCount) {
  for (uint32_t n : node_counts())
    for (uint64_t count : counts_for(n))
      for (bool in_place : {false, true}) {
        run_ag("ring", ring_allgather_plan, n, count, in_place);
        run_ag("recursive-doubling", recursive_doubling_allgather_plan, n, count, in_place);
      }
}

TEST(GenericAllgather, RingStepsTrafficAndBytes) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 6;
    auto rep = run_ag("ring", ring_allgather_plan, n, count, false);
    for (uint32_t r = 0; r < n; ++r) {
      LONGS_EQUAL(n - 1, rep.steps[r]);
      LONGS_EQUAL((n - 1) * count * 8, rep.sent_bytes[r]);
      LONGS_EQUAL(0, ring_allgather_plan(n, r, count, false).tmp_elems);
    }
    LONGS_EQUAL(n - 1, rep.time);
    check_ring_traffic(rep, n, count);
  }
}

TEST(GenericAllgather, RecursiveDoublingStepsAndBytes) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 3;
    auto rep = run_ag("recursive-doubling", recursive_doubling_allgather_plan, n, count, false);
    const Fold f(n);
    const uint32_t lg = ceil_log2(f.p);
    uint64_t total = 0;
    for (uint32_t r = 0; r < n; ++r) {
      LONGS_EQUAL(f.idle(r) ? 2 : f.absorbs(r) ? lg + 2 : lg, rep.steps[r]);
      total += rep.sent_bytes[r] / 8;
      if (is_pow2(n)) LONGS_EQUAL((n - 1) * count * 8, rep.sent_bytes[r]);
    }
    LONGS_EQUAL((f.p - 1) * n * count + f.extra * (n + 1) * count, total);
    LONGS_EQUAL(lg + (f.folded() ? 2 : 0), rep.time);
    if (is_pow2(n))  // step k: partner r XOR 2^k, 2^k blocks each way
      for (uint32_t k = 0; k < rep.msgs.size(); ++k)
        for (const auto& m : rep.msgs[k]) {
          LONGS_EQUAL(m.src ^ (1u << k), m.dst);
          LONGS_EQUAL((1u << k) * count, m.elems);
        }
  }
}
