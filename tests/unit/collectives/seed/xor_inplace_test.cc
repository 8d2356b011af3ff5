// Seed 000's xor-inplace alltoall schedule, checked without a network: every
// round is a set of pairwise swaps (so each arriving block lands in a slot
// whose content has just left), at most m blocks per round, a real barrier
// between rounds, the plain (p+k, p-k) schedule fails in place where the
// paired one works, and results are right for m = 1, 2, n-1 on every n.

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "collectives/schedule/alltoall_xor_inplace.h"
#include "tests/unit/collectives/plan_sim.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;

namespace {

bool is_pow2(uint32_t n) { return (n & (n - 1)) == 0; }

// Element e of the block that rank `src` holds for rank `dst`.
int64_t value(uint32_t src, uint32_t dst, uint64_t e) {
  return static_cast<int64_t>(src) * 1000003 + static_cast<int64_t>(dst) * 1009 + static_cast<int64_t>(e) + 1;
}

std::vector<plansim::RankIO> make_io(uint32_t n, uint64_t count, bool in_place) {
  std::vector<plansim::RankIO> io(n);
  for (uint32_t r = 0; r < n; ++r) {
    std::vector<int64_t> v(uint64_t{n} * count);
    for (uint32_t d = 0; d < n; ++d)
      for (uint64_t e = 0; e < count; ++e) v[d * count + e] = value(r, d, e);
    io[r].in_place = in_place;
    if (in_place) {
      io[r].out = plansim::to_bytes(v);
    } else {
      io[r].in = plansim::to_bytes(v);
      io[r].out.assign(v.size() * sizeof(int64_t), 0xee);
    }
  }
  return io;
}

// "" if every rank's out holds, at block s, what rank s held for it.
std::string check_result(const std::vector<plansim::RankIO>& io, uint32_t n, uint64_t count) {
  for (uint32_t r = 0; r < n; ++r) {
    auto v = plansim::from_bytes<int64_t>(io[r].out);
    for (uint32_t s = 0; s < n; ++s)
      for (uint64_t e = 0; e < count; ++e)
        if (v[s * count + e] != value(s, r, e))
          return "rank " + std::to_string(r) + " block " + std::to_string(s) + " element " + std::to_string(e) +
                 " wrong";
  }
  return "";
}

std::vector<Plan> plans(uint32_t n, uint64_t count, uint32_t m, bool in_place) {
  std::vector<Plan> ps;
  for (uint32_t r = 0; r < n; ++r) {
    auto p = alltoall_xor_inplace_plan(n, r, count, m, in_place);
    CHECK_TEXT(p.is_ok(), p.status().to_string().c_str());
    ps.push_back(*p);
  }
  return ps;
}

// Checks every pairing property for (n, m); returns the number of rounds.
size_t check_rounds(uint32_t n, uint32_t m) {
  std::vector<std::vector<std::vector<uint32_t>>> all(n);
  for (uint32_t p = 0; p < n; ++p) all[p] = xor_inplace_rounds(n, p, m);
  const size_t rounds = all[0].size();
  for (uint32_t p = 0; p < n; ++p) {
    LONGS_EQUAL(rounds, all[p].size());  // the same on every rank: barriers match
    std::multiset<uint32_t> seen;
    for (size_t r = 0; r < rounds; ++r) {
      CHECK(all[p][r].size() <= m);  // at most m blocks arrive per round
      std::set<uint32_t> offsets;
      for (uint32_t q : all[p][r]) {
        CHECK(q != p && q < n);
        seen.insert(q);
        // A swap: p's partner has p as its partner in the same round, so the
        // slot block[q] receives q's block in the round that sends block[q].
        const auto& qr = all[q][r];
        CHECK_TEXT(std::count(qr.begin(), qr.end(), p) == 1, "round is not a pairwise swap");
        offsets.insert((q + n - p) % n);
      }
      if (!is_pow2(n) && m >= 2)  // offset pairs: k and n-k always together
        for (uint32_t k : offsets) CHECK(offsets.count((n - k) % n) == 1);
    }
    // Every other rank exactly once over all rounds.
    LONGS_EQUAL(n - 1, seen.size());
    LONGS_EQUAL(n - 1, std::set<uint32_t>(seen.begin(), seen.end()).size());
  }
  return rounds;
}

}  // namespace

TEST_GROUP(XorInplace){};

TEST(XorInplace, BufferBlocksRange) {
  LONGS_EQUAL(7, *xor_buffer_blocks(8, 0));
  LONGS_EQUAL(1, *xor_buffer_blocks(8, 1));
  LONGS_EQUAL(7, *xor_buffer_blocks(8, 7));
  auto bad = xor_buffer_blocks(8, 8);
  CHECK(!bad.is_ok());
  CHECK(bad.status().code() == Code::kInvalid);
  STRCMP_CONTAINS("buffer_blocks 8 is out of range for 8 nodes (1..7 blocks, or 0 for 7)",
                  bad.status().message().c_str());
  LONGS_EQUAL(0, *xor_buffer_blocks(1, 0));
  CHECK(!xor_buffer_blocks(1, 1).is_ok());
  CHECK(!alltoall_xor_inplace_plan(4, 0, 10, 4, true).is_ok());
}

TEST(XorInplace, PowerOfTwoRoundsAreTheSeedsXorSchedule) {
  for (uint32_t n : {2u, 4u, 8u, 16u, 64u}) {
    for (uint32_t m : {1u, 2u, 3u, n - 1}) {
      if (m > n - 1) continue;
      CHECK(xor_pairing(n, m) == XorPairing::kXor);
      LONGS_EQUAL((n - 1 + m - 1) / m, check_rounds(n, m));
      for (uint32_t p = 0; p < n; ++p) {
        auto rounds = xor_inplace_rounds(n, p, m);
        uint32_t i = 1;
        for (const auto& r : rounds)
          for (uint32_t q : r) LONGS_EQUAL(p ^ i++, q);  // to = myid ^ (i + j), in the seed's order
      }
    }
  }
}

TEST(XorInplace, OtherCountsPairOffsetsKAndNMinusK) {
  for (uint32_t n : {3u, 5u, 6u, 7u, 12u, 27u}) {
    for (uint32_t m : {2u, 3u, 4u, n - 1}) {
      if (m > n - 1) continue;
      CHECK(xor_pairing(n, m) == XorPairing::kOffsetPairs);
      check_rounds(n, m);
    }
  }
  // 27 nodes, m = 2: one pair {k, 27-k} per round, 13 rounds.
  LONGS_EQUAL(13, check_rounds(27, 2));
  // 6 nodes, m = 3: {1,5} then {2,4} then... {3} fits beside {2,4}.
  auto r = xor_inplace_rounds(6, 0, 3);
  LONGS_EQUAL(2, r.size());
  CHECK((r[0] == std::vector<uint32_t>{1, 5}));
  CHECK((r[1] == std::vector<uint32_t>{2, 4, 3}));
}

TEST(XorInplace, OneBlockOnOtherCountsUsesTheReflectionPairing) {
  for (uint32_t n : {3u, 5u, 6u, 12u, 27u}) {
    CHECK(xor_pairing(n, 1) == XorPairing::kReflection);
    LONGS_EQUAL(n, check_rounds(n, 1));  // one idle round per rank
  }
}

TEST(XorInplace, TheBarrierIsABarrier) {
  // Take each rank's first barrier from its plan (the first run of
  // zero-length steps) and follow who has heard from whom: after its
  // ceil(log2 n) steps every rank has heard, transitively, from every rank,
  // so none leaves before all have entered, i.e. taken the round's blocks.
  // (m = 2 on other counts: no reflection rounds in which a rank idles, so
  // the first run of zero-length steps is exactly one barrier.)
  for (uint32_t n : {4u, 5u, 6u, 8u, 27u, 64u}) {
    const uint32_t steps = dissemination_steps(n);
    std::vector<std::vector<const Step*>> bar(n);
    auto ps = plans(n, 1, is_pow2(n) ? 1 : 2, true);
    for (uint32_t p = 0; p < n; ++p) {
      for (const Step& st : ps[p].steps) {
        const bool zero = st.sends.size() == 1 && st.sends[0].n == 0;
        if (zero) bar[p].push_back(&st);
        else if (!bar[p].empty()) break;
      }
      LONGS_EQUAL(steps, bar[p].size());
    }
    std::vector<std::set<uint32_t>> know(n);
    for (uint32_t p = 0; p < n; ++p) know[p] = {p};
    for (uint32_t s = 0; s < steps; ++s) {
      auto next = know;
      for (uint32_t p = 0; p < n; ++p) {
        LONGS_EQUAL(1, bar[p][s]->recvs.size());
        const uint32_t from = bar[p][s]->recvs[0].peer;
        LONGS_EQUAL(p, bar[from][s]->sends[0].peer);  // the sender's step s goes to p
        next[p].insert(know[from].begin(), know[from].end());
      }
      know = next;
    }
    for (uint32_t p = 0; p < n; ++p) LONGS_EQUAL(n, know[p].size());
  }
  LONGS_EQUAL(0, dissemination_steps(1));
  LONGS_EQUAL(1, dissemination_steps(2));
  LONGS_EQUAL(3, dissemination_steps(8));
  LONGS_EQUAL(5, dissemination_steps(27));
}

TEST(XorInplace, StepsAreRoundsPlusBarriers) {
  // 8 nodes: m = 1: 7 rounds, 6 barriers of 3 steps; m = 2: 4 rounds; m = 7: one step.
  LONGS_EQUAL(7 + 6 * 3, plans(8, 4, 1, true)[3].steps.size());
  LONGS_EQUAL(4 + 3 * 3, plans(8, 4, 2, true)[3].steps.size());
  LONGS_EQUAL(1, plans(8, 4, 7, true)[3].steps.size());
  for (uint32_t m : {1u, 2u, 7u}) {
    auto io = make_io(8, 4, true);
    auto rep = plansim::run_plans(plans(8, 4, m, true), io, sizeof(int64_t), nullptr);
    CHECK_TEXT(rep.ok, rep.error.c_str());
    // Every step is either a data step (at most m messages of a block) or a
    // barrier step (one zero-length message).
    for (const auto& step_msgs : rep.msgs) {
      uint64_t data = 0, zero = 0;
      for (const auto& msg : step_msgs) (msg.elems ? data : zero) += 1;
      CHECK(data == 0 || zero == 0);
    }
  }
}

TEST(XorInplace, AtMostMBlocksArriveBetweenTwoBarriers) {
  for (uint32_t n : {8u, 6u, 27u}) {
    for (uint32_t m : {1u, 2u, n - 1}) {
      auto ps = plans(n, 5, m, true);
      for (uint32_t r = 0; r < n; ++r) {
        uint64_t since_barrier = 0;
        for (const Step& st : ps[r].steps) {
          bool barrier = !st.recvs.empty() && st.recvs[0].n == 0;
          if (barrier) {
            since_barrier = 0;
            continue;
          }
          for (const Recv& rv : st.recvs) since_barrier += rv.n;
          CHECK(since_barrier <= uint64_t{m} * 5);
        }
      }
    }
  }
}

TEST(XorInplace, ResultsInPlaceAndNot) {
  for (uint32_t n : {1u, 2u, 3u, 4u, 5u, 6u, 8u, 12u}) {
    for (uint32_t m : {1u, 2u, n - 1}) {
      if (n == 1) m = 0;
      if (n > 1 && (m == 0 || m > n - 1)) continue;
      for (uint64_t count : {0ull, 1ull, 3ull}) {
        for (bool in_place : {true, false}) {
          auto io = make_io(n, count, in_place);
          auto rep = plansim::run_plans(plans(n, count, m, in_place), io, sizeof(int64_t), nullptr);
          CHECK_TEXT(rep.ok, rep.error.c_str());
          std::string bad = check_result(io, n, count);
          CHECK_TEXT(bad.empty(), bad.c_str());
          // Each rank sends exactly its n-1 foreign blocks.
          for (uint32_t r = 0; r < n; ++r) LONGS_EQUAL((n - 1) * count * 8, rep.sent_bytes[r]);
        }
      }
    }
  }
}

// The hazard the pairing avoids: offset k alone sends block[p+k] to p+k but
// receives p-k's block into slot p-k, which still holds what p owes p-k.
TEST(XorInplace, PlainOffsetScheduleIsNotInPlaceSafe) {
  const uint32_t n = 5, count = 2;
  std::vector<Plan> naive(n);
  for (uint32_t p = 0; p < n; ++p) {
    for (uint32_t k = 1; k < n; ++k) {
      Step st;
      const uint32_t to = (p + k) % n, from = (p + n - k) % n;
      st.sends.push_back(Send{to, Buf::kOut, to * count, count});
      st.recvs.push_back(Recv{from, Buf::kOut, from * count, count, Act::kCopy});
      naive[p].steps.push_back(st);
    }
  }
  auto io = make_io(n, count, true);
  auto rep = plansim::run_plans(naive, io, sizeof(int64_t), nullptr);
  CHECK_TEXT(rep.ok, rep.error.c_str());
  CHECK(!check_result(io, n, count).empty());  // blocks overwritten before they were sent

  io = make_io(n, count, true);
  rep = plansim::run_plans(plans(n, count, 2, true), io, sizeof(int64_t), nullptr);
  CHECK_TEXT(rep.ok, rep.error.c_str());
  STRCMP_EQUAL("", check_result(io, n, count).c_str());
}
