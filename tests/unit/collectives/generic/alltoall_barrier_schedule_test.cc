// The generic alltoall (pairwise, bruck) and barrier (dissemination)
// schedules, every rank's plan run together by plan_sim.h: exact results for
// every n and count, in place or not; n-1 pairwise steps (XOR partners for
// powers of two), ceil(log2 n) Bruck steps of the stated sizes, ceil(log2 n)
// dissemination steps; and no rank leaves the barrier before every rank has
// entered it.

#include <cstdint>
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

// Element i of the block rank src holds for rank dst.
int64_t a2a(uint32_t src, uint32_t dst, uint64_t i) { return ival(src, uint64_t{dst} << 32 | i, 9); }

plansim::Report run_a2a(const char* name, BuildFn b, uint32_t n, uint64_t count, bool in_place) {
  std::vector<plansim::RankIO> io;
  for (uint32_t r = 0; r < n; ++r) {
    std::vector<int64_t> in(uint64_t{n} * count);
    for (uint32_t d = 0; d < n; ++d)
      for (uint64_t i = 0; i < count; ++i) in[d * count + i] = a2a(r, d, i);
    io.push_back(make_io(in, uint64_t{n} * count, in_place));
  }
  auto ps = plans_of(n, [&](uint32_t nn, uint32_t r) { return b(nn, r, count, in_place); });
  auto rep = plansim::run_plans(ps, io, 8, nullptr);
  const std::string w = where(name, n, count, in_place);
  CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
  for (uint32_t r = 0; r < n; ++r) {
    auto got = plansim::from_bytes<int64_t>(io[r].out);
    for (uint32_t s = 0; s < n; ++s)
      for (uint64_t i = 0; i < count; ++i)
        CHECK_TEXT(got[s * count + i] == a2a(s, r, i),
                   (w + ": rank " + std::to_string(r) + " block " + std::to_string(s)).c_str());
  }
  return rep;
}

}  // namespace

TEST_GROUP(GenericAlltoall){};

TEST(GenericAlltoall, ResultsAreExactForEveryNAndCount) {
  for (uint32_t n : node_counts())
    for (uint64_t count : counts_for(n))
      for (bool in_place : {false, true}) {
        run_a2a("pairwise", pairwise_alltoall_plan, n, count, in_place);
        run_a2a("bruck", bruck_alltoall_plan, n, count, in_place);
      }
}

TEST(GenericAlltoall, PairwiseTakesNMinusOneStepsOneBlockEach) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 4;
    auto rep = run_a2a("pairwise", pairwise_alltoall_plan, n, count, false);
    for (uint32_t r = 0; r < n; ++r) {
      LONGS_EQUAL(n - 1, rep.steps[r]);
      LONGS_EQUAL((n - 1) * count * 8, rep.sent_bytes[r]);
    }
    LONGS_EQUAL(n - 1, rep.time);
    for (uint32_t k = 0; k < rep.msgs.size(); ++k)
      for (const auto& m : rep.msgs[k]) {
        const uint32_t d = k + 1;
        LONGS_EQUAL(is_pow2(n) ? (m.src ^ d) : (m.src + d) % n, m.dst);
        LONGS_EQUAL(count, m.elems);
      }
    // In place needs no scratch with XOR pairs (a step receives into the block it sends).
    if (is_pow2(n)) LONGS_EQUAL(0, pairwise_alltoall_plan(n, 0, count, true).tmp_elems);
  }
}

TEST(GenericAlltoall, BruckTakesCeilLog2NStepsToRankPlusTwoToTheK) {
  for (uint32_t n : node_counts()) {
    const uint64_t count = 3;
    auto rep = run_a2a("bruck", bruck_alltoall_plan, n, count, false);
    const uint32_t lg = ceil_log2(n);
    uint64_t most = 0, per_rank = 0;
    for (uint32_t k = 0; k < lg; ++k) {
      uint64_t blocks = 0;
      for (uint32_t i = 0; i < n; ++i) blocks += (i >> k) & 1;
      most = std::max(most, blocks);
      per_rank += blocks * count;
      for (const auto& m : rep.msgs[k]) {
        LONGS_EQUAL((m.src + (1u << k)) % n, m.dst);
        LONGS_EQUAL(blocks * count, m.elems);
      }
      LONGS_EQUAL(n, rep.msgs[k].size());
    }
    for (uint32_t r = 0; r < n; ++r) {
      LONGS_EQUAL(lg, rep.steps[r]);
      LONGS_EQUAL(lg, rep.msgs_sent[r]);
      LONGS_EQUAL(per_rank * 8, rep.sent_bytes[r]);
      LONGS_EQUAL(n > 1 ? (n + most) * count : 0, bruck_alltoall_plan(n, r, count, false).tmp_elems);
    }
    LONGS_EQUAL(lg, rep.time);
  }
}

TEST_GROUP(GenericBarrier){};

TEST(GenericBarrier, DisseminationStepsAndPeers) {
  for (uint32_t n : node_counts()) {
    std::vector<plansim::RankIO> io(n);
    auto ps = plans_of(n, [](uint32_t nn, uint32_t r) { return dissemination_barrier_plan(nn, r); });
    auto rep = plansim::run_plans(ps, io, 1, nullptr);
    CHECK_TEXT(rep.ok, rep.error.c_str());
    const uint32_t lg = ceil_log2(n);
    for (uint32_t r = 0; r < n; ++r) LONGS_EQUAL(lg, rep.steps[r]);
    LONGS_EQUAL(lg, rep.time);
    // Who has heard from whom: after the last step everybody from everybody,
    // one step earlier not yet (the step count is minimal).
    std::vector<std::vector<char>> known(n, std::vector<char>(n, 0));
    for (uint32_t r = 0; r < n; ++r) known[r][r] = 1;
    for (uint32_t k = 0; k < lg; ++k) {
      bool all_before = true;
      for (uint32_t r = 0; r < n; ++r)
        for (uint32_t s = 0; s < n; ++s) all_before &= known[r][s] != 0;
      CHECK_FALSE(all_before);
      auto next = known;
      LONGS_EQUAL(n, rep.msgs[k].size());
      for (const auto& m : rep.msgs[k]) {
        LONGS_EQUAL(0, m.elems);
        LONGS_EQUAL((m.src + (1u << k)) % n, m.dst);
        for (uint32_t s = 0; s < n; ++s) next[m.dst][s] |= known[m.src][s];
      }
      known = next;
    }
    for (uint32_t r = 0; r < n; ++r)
      for (uint32_t s = 0; s < n; ++s) CHECK(known[r][s]);
  }
}

// The defining property: while one rank has not entered, nobody leaves.
TEST(GenericBarrier, NobodyLeavesBeforeEveryoneEntered) {
  for (uint32_t n : node_counts()) {
    if (n == 1) continue;
    for (uint32_t late : {0u, n / 2, n - 1}) {
      std::vector<plansim::RankIO> io(n);
      auto ps = plans_of(n, [](uint32_t nn, uint32_t r) { return dissemination_barrier_plan(nn, r); });
      ps[late] = Plan{};  // never enters: sends nothing
      ps[late].steps.push_back(Step{});
      ps[late].steps[0].recvs = {Recv{(late + 1) % n, Buf::kOut, 0, 0, Act::kCopy}};  // and waits
      auto rep = plansim::run_plans(ps, io, 1, nullptr);
      CHECK_FALSE(rep.ok);
      for (uint32_t r = 0; r < n; ++r)
        if (r != late) CHECK_TEXT(rep.steps[r] < ceil_log2(n), "a rank left the barrier early");
    }
  }
}
