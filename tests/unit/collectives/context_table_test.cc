// Context ids agreed by the members of each communicator: many nodes'
// tables, communicators of overlapping memberships made and freed at
// random, each agreement the AND of its members' offers. No node ever holds
// one id for two live communicators, every member of a communicator holds
// the same id, and an agreement that meets another in flight on a shared
// node retries instead of colliding.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "base/rng.h"
#include "collectives/context_table.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

// One agreement among `members`, rounds until it settles; offers of the
// members listed in `busy_elsewhere` are first taken by an agreement in
// flight there (their round finds nothing, then the round repeats).
uint16_t agree(std::vector<ContextTable>& nodes, const std::vector<uint32_t>& members, uint32_t* rounds) {
  for (uint32_t window = 0;;) {
    uint64_t all[ContextTable::kRoundWords];
    std::fill(std::begin(all), std::end(all), ~uint64_t{0});
    std::vector<bool> offered(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
      uint64_t mine[ContextTable::kRoundWords];
      bool o = false;
      nodes[members[i]].offer(window, mine, &o);
      offered[i] = o;
      for (uint32_t w = 0; w < ContextTable::kRoundWords; ++w) all[w] &= mine[w];
    }
    ++*rounds;
    uint16_t id = 0, first = 0;
    ContextTable::Round r = ContextTable::Round::kRetry;
    for (size_t i = 0; i < members.size(); ++i) {
      const ContextTable::Round ri = nodes[members[i]].settle(window, all, offered[i], &id);
      if (i == 0) {
        r = ri;
        first = id;
      }
      CHECK_TRUE(ri == r);  // every member reads the same result
      if (r == ContextTable::Round::kPicked) UNSIGNED_LONGS_EQUAL(first, id);
    }
    if (r == ContextTable::Round::kPicked) return first;
    if (r == ContextTable::Round::kExhausted) return 0;
    window = r == ContextTable::Round::kNextWindow ? window + 1 : 0;
  }
}

}  // namespace

TEST_GROUP(ContextTable){};

TEST(ContextTable, WorldAndZeroAreTakenAndReleaseIgnoresThem) {
  ContextTable t;
  CHECK_TRUE(t.in_use(0));
  CHECK_TRUE(t.in_use(ContextTable::kWorld));
  UNSIGNED_LONGS_EQUAL(2, t.used());
  t.release(ContextTable::kWorld);
  CHECK_TRUE(t.in_use(ContextTable::kWorld));
  CHECK_TRUE(t.reserve(7));
  CHECK_FALSE(t.reserve(7));
  t.release(7);
  CHECK_FALSE(t.in_use(7));
}

TEST(ContextTable, HundredThousandCommunicatorsOfOverlappingMembersNeverShareAnId) {
  constexpr uint32_t kNodes = 8;
  std::vector<ContextTable> nodes(kNodes);
  struct Live {
    std::vector<uint32_t> members;
    uint16_t id;
  };
  std::vector<Live> live;
  std::vector<std::map<uint16_t, size_t>> held(kNodes);  // per node: id -> live communicators using it
  Rng rng(12345);
  uint32_t rounds = 0, made = 0, peak = 0;
  while (made < 100000) {
    const bool make = live.size() < 50 || (live.size() < 3000 && rng.next() % 3 != 0);
    if (make) {
      std::vector<uint32_t> members;
      const uint64_t mask = rng.next() % ((1u << kNodes) - 1) + 1;
      for (uint32_t n = 0; n < kNodes; ++n)
        if (mask >> n & 1) members.push_back(n);
      const uint16_t id = agree(nodes, members, &rounds);
      CHECK_TRUE(id >= ContextTable::kFirstAgreed);
      for (uint32_t n : members) {
        CHECK_TRUE_TEXT(held[n][id] == 0, "a node holds one id for two live communicators");
        ++held[n][id];
      }
      live.push_back(Live{members, id});
      ++made;
      peak = std::max<uint32_t>(peak, static_cast<uint32_t>(live.size()));
    } else {
      const size_t k = rng.next() % live.size();
      for (uint32_t n : live[k].members) {
        --held[n][live[k].id];
        nodes[n].release(live[k].id);
      }
      live[k] = live.back();
      live.pop_back();
    }
  }
  CHECK_TRUE(peak >= 1000);  // several windows of ids in use at once
  CHECK_TRUE(rounds >= made);
}

TEST(ContextTable, AnAgreementMeetingAnotherInFlightRetriesInsteadOfColliding) {
  std::vector<ContextTable> nodes(3);
  // Agreement A over {0, 1} has offered (node 1's mask is taken) but not
  // settled; agreement B over {1, 2} runs meanwhile.
  uint64_t a0[ContextTable::kRoundWords], a1[ContextTable::kRoundWords];
  bool o0 = false, o1 = false;
  nodes[0].offer(0, a0, &o0);
  nodes[1].offer(0, a1, &o1);
  CHECK_TRUE(o0 && o1);
  uint64_t b1[ContextTable::kRoundWords], b2[ContextTable::kRoundWords];
  bool p1 = true, p2 = false;
  nodes[1].offer(0, b1, &p1);
  nodes[2].offer(0, b2, &p2);
  CHECK_FALSE(p1);  // node 1 offers nothing to B
  uint64_t b[ContextTable::kRoundWords];
  for (uint32_t w = 0; w < ContextTable::kRoundWords; ++w) b[w] = b1[w] & b2[w];
  uint16_t id = 0;
  CHECK_TRUE(nodes[1].settle(0, b, p1, &id) == ContextTable::Round::kRetry);
  CHECK_TRUE(nodes[2].settle(0, b, p2, &id) == ContextTable::Round::kRetry);
  // A settles and takes the lowest id on both of its members.
  uint64_t a[ContextTable::kRoundWords];
  for (uint32_t w = 0; w < ContextTable::kRoundWords; ++w) a[w] = a0[w] & a1[w];
  uint16_t ida = 0, ida1 = 0;
  CHECK_TRUE(nodes[0].settle(0, a, o0, &ida) == ContextTable::Round::kPicked);
  CHECK_TRUE(nodes[1].settle(0, a, o1, &ida1) == ContextTable::Round::kPicked);
  UNSIGNED_LONGS_EQUAL(ContextTable::kFirstAgreed, ida);
  UNSIGNED_LONGS_EQUAL(ida, ida1);
  // B's retry now finds node 1's id taken: it gets the next one.
  uint32_t rounds = 0;
  const uint16_t idb = agree(nodes, {1, 2}, &rounds);
  CHECK_TRUE(idb != ida);
  UNSIGNED_LONGS_EQUAL(1, rounds);
}

TEST(ContextTable, EveryIdInUseIsExhaustion) {
  std::vector<ContextTable> nodes(2);
  for (uint32_t id = ContextTable::kFirstAgreed; id < ContextTable::kIds; ++id)
    CHECK_TRUE(nodes[id % 2].reserve(static_cast<uint16_t>(id)));  // together they use every id
  uint32_t rounds = 0;
  UNSIGNED_LONGS_EQUAL(0, agree(nodes, {0, 1}, &rounds));
  UNSIGNED_LONGS_EQUAL(ContextTable::kWindows, rounds);  // one round per window, then exhausted
  nodes[1].release(1001);  // odd ids were node 1's: 1001 is now free on both
  rounds = 0;
  UNSIGNED_LONGS_EQUAL(1001, agree(nodes, {0, 1}, &rounds));
  UNSIGNED_LONGS_EQUAL(1, rounds);  // in the first window
}
