// Context ids agreed by the members of each communicator: many nodes'
// tables, communicators of overlapping memberships made and freed at
// random, each agreement the AND of its members' offers. No node ever holds
// one id for two live communicators, every member of a communicator holds
// the same id, and agreements in flight at once on a shared node neither
// collide nor wait for each other.
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

// Offers of every member of one agreement's round, ANDed.
void offer_all(std::vector<ContextTable>& nodes, const std::vector<uint32_t>& members,
               std::vector<ContextTable::Walk>& walks, uint64_t* all) {
  std::fill(all, all + ContextTable::kRoundWords, ~uint64_t{0});
  for (size_t i = 0; i < members.size(); ++i) {
    uint64_t mine[ContextTable::kRoundWords];
    nodes[members[i]].offer(&walks[i], mine);
    for (uint32_t w = 0; w < ContextTable::kRoundWords; ++w) all[w] &= mine[w];
  }
}

// Every member settles the round; they must read the same result.
ContextTable::Round settle_all(std::vector<ContextTable>& nodes, const std::vector<uint32_t>& members,
                               std::vector<ContextTable::Walk>& walks, const uint64_t* all, uint16_t* id) {
  ContextTable::Round r = ContextTable::Round::kRetry;
  for (size_t i = 0; i < members.size(); ++i) {
    uint16_t got = 0;
    const ContextTable::Round ri = nodes[members[i]].settle(&walks[i], all, &got);
    if (i == 0) {
      r = ri;
      *id = got;
    }
    CHECK_TRUE(ri == r);  // every member reads the same result
    if (r == ContextTable::Round::kPicked) UNSIGNED_LONGS_EQUAL(*id, got);
    UNSIGNED_LONGS_EQUAL(walks[0].window(), walks[i].window());  // and walks on in step
  }
  return r;
}

// One agreement among `members` over a communicator of id `key`, rounds
// until it settles; 0 when exhausted.
uint16_t agree(std::vector<ContextTable>& nodes, const std::vector<uint32_t>& members, uint32_t* rounds,
               uint16_t key = 0) {
  std::vector<ContextTable::Walk> walks(members.size());
  for (auto& w : walks) ContextTable::begin(&w, key);
  for (;;) {
    uint64_t all[ContextTable::kRoundWords];
    offer_all(nodes, members, walks, all);
    ++*rounds;
    uint16_t id = 0;
    const ContextTable::Round r = settle_all(nodes, members, walks, all, &id);
    if (r == ContextTable::Round::kPicked) return id;
    if (r == ContextTable::Round::kExhausted) return 0;
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
      const uint16_t id = agree(nodes, members, &rounds, static_cast<uint16_t>(rng.next() % ContextTable::kIds));
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

TEST(ContextTable, AnAgreementMeetingAnotherInFlightTakesOtherIdsWithoutWaiting) {
  std::vector<ContextTable> nodes(3);
  // Agreement A over {0, 1} has offered but not settled; agreement B over
  // {1, 2}, of the same key (so the same first window), runs meanwhile.
  const std::vector<uint32_t> am{0, 1}, bm{1, 2};
  std::vector<ContextTable::Walk> aw(2), bw(2);
  for (auto& w : aw) ContextTable::begin(&w, 7);
  for (auto& w : bw) ContextTable::begin(&w, 7);
  uint64_t a[ContextTable::kRoundWords], b[ContextTable::kRoundWords];
  offer_all(nodes, am, aw, a);
  CHECK_TRUE(nodes[1].pending() > 1000);  // node 1's free ids of the window are A's for now
  offer_all(nodes, bm, bw, b);
  UNSIGNED_LONGS_EQUAL(0, b[ContextTable::kWindowWords]);  // node 1 withheld them from B
  uint16_t idb = 0;
  CHECK_TRUE(settle_all(nodes, bm, bw, b, &idb) == ContextTable::Round::kNextWindow);
  // B's next window is not A's: B settles before A does.
  offer_all(nodes, bm, bw, b);
  CHECK_TRUE(settle_all(nodes, bm, bw, b, &idb) == ContextTable::Round::kPicked);
  UNSIGNED_LONGS_EQUAL(8 * ContextTable::kWindowIds, idb);  // the first id of window 8
  uint16_t ida = 0;
  CHECK_TRUE(settle_all(nodes, am, aw, a, &ida) == ContextTable::Round::kPicked);
  UNSIGNED_LONGS_EQUAL(7 * ContextTable::kWindowIds, ida);
  UNSIGNED_LONGS_EQUAL(0, nodes[1].pending());  // nothing left withheld
  CHECK_TRUE(nodes[1].in_use(ida) && nodes[1].in_use(idb));
}

// Two communicators of the same two nodes each start an agreement, in
// opposite orders on the two (MPI_Comm_idup of both, as MPICH's
// comm_idup_overlap does), and their rounds run in lockstep: every round,
// each node offers first to the agreement it started first. Both settle,
// on different ids, and a failed round gives its offer back.
TEST(ContextTable, AgreementsStartedInOppositeOrdersBothSettle) {
  for (const auto& keys : std::vector<std::pair<uint16_t, uint16_t>>{{5, 6}, {5, 5 + ContextTable::kWindows}}) {
    std::vector<ContextTable> nodes(2);
    const std::vector<uint32_t> m{0, 1};
    std::vector<ContextTable::Walk> aw(2), bw(2);
    for (auto& w : aw) ContextTable::begin(&w, keys.first);
    for (auto& w : bw) ContextTable::begin(&w, keys.second);
    uint16_t ida = 0, idb = 0;
    bool a_done = false, b_done = false;
    uint32_t rounds = 0;
    while ((!a_done || !b_done) && rounds < 1000) {
      ++rounds;
      uint64_t a0[ContextTable::kRoundWords] = {}, a1[ContextTable::kRoundWords] = {};
      uint64_t b0[ContextTable::kRoundWords] = {}, b1[ContextTable::kRoundWords] = {};
      // Node 0 offers to A first, node 1 to B first.
      if (!a_done) nodes[0].offer(&aw[0], a0);
      if (!b_done) nodes[1].offer(&bw[1], b1);
      if (!b_done) nodes[0].offer(&bw[0], b0);
      if (!a_done) nodes[1].offer(&aw[1], a1);
      if (!a_done) {
        uint64_t all[ContextTable::kRoundWords];
        for (uint32_t w = 0; w < ContextTable::kRoundWords; ++w) all[w] = a0[w] & a1[w];
        a_done = settle_all(nodes, m, aw, all, &ida) == ContextTable::Round::kPicked;
      }
      if (!b_done) {
        uint64_t all[ContextTable::kRoundWords];
        for (uint32_t w = 0; w < ContextTable::kRoundWords; ++w) all[w] = b0[w] & b1[w];
        b_done = settle_all(nodes, m, bw, all, &idb) == ContextTable::Round::kPicked;
      }
    }
    CHECK_TRUE(a_done && b_done);
    CHECK_TRUE(ida != idb);
    // Different first windows: one round each. The same first window (keys
    // equal modulo the windows): they meet in every window of the first
    // walk, then walk apart.
    if (keys.second == 6) UNSIGNED_LONGS_EQUAL(1, rounds);
    else CHECK_TRUE(rounds > ContextTable::kWindows && rounds < 4 * ContextTable::kWindows);
    UNSIGNED_LONGS_EQUAL(0, nodes[0].pending());
    UNSIGNED_LONGS_EQUAL(0, nodes[1].pending());
  }
  // An offer whose round never settles is dropped.
  ContextTable t;
  ContextTable::Walk w;
  ContextTable::begin(&w, 3);
  uint64_t out[ContextTable::kRoundWords];
  t.offer(&w, out);
  CHECK_TRUE(t.pending() > 0);
  t.drop(&w);
  UNSIGNED_LONGS_EQUAL(0, t.pending());
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
