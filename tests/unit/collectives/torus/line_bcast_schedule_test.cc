// The deposit-bit line broadcast and the line multicast schedule
// (collectives/schedule/line_bcast.h), checked without a network: a deposit
// packet is walked hop by hop the way the router moves it, and every node
// must receive every value exactly once, on the port and at the distance the
// schedule says, never travelling more than half the ring.
#include <map>
#include <string>
#include <vector>

#include "collectives/schedule/line_bcast.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;

namespace {

// Where the deposit packet of `s` leaves copies: positions and the port it
// arrives on there (it moves along s.dir, so it enters through the opposite port).
struct Deposit {
  uint32_t pos;
  Dir port;
  uint32_t hops;
};
std::vector<Deposit> walk(uint32_t n, uint32_t src, const LineSend& s) {
  std::vector<Deposit> out;
  uint32_t cur = src;
  for (uint32_t h = 1; h <= s.hops; ++h) {
    cur = dir_plus(s.dir) ? (cur + 1) % n : (cur + n - 1) % n;
    out.push_back(Deposit{cur, opposite(s.dir), h});
  }
  CHECK_EQUAL_TEXT(s.dst, cur, "the packet is addressed to the last node it deposits at");
  return out;
}

}  // namespace

TEST_GROUP(LineBcastSchedule){};

TEST(LineBcastSchedule, HopSplitCoversTheRingOnce) {
  LONGS_EQUAL(0, line_hops_plus(1));
  LONGS_EQUAL(0, line_hops_minus(1));
  LONGS_EQUAL(1, line_hops_plus(2));  // n = 2: only the plus packet
  LONGS_EQUAL(0, line_hops_minus(2));
  LONGS_EQUAL(1, line_hops_plus(3));
  LONGS_EQUAL(1, line_hops_minus(3));
  LONGS_EQUAL(4, line_hops_plus(8));
  LONGS_EQUAL(3, line_hops_minus(8));
  for (uint32_t n = 1; n <= 64; ++n) {
    LONGS_EQUAL(n - 1, line_hops_plus(n) + line_hops_minus(n));
    LONGS_EQUAL((n - 1 + 1) / 2, line_hops_plus(n));  // ceil((n-1)/2)
    LONGS_EQUAL((n - 1) / 2, line_hops_minus(n));     // floor((n-1)/2)
  }
}

TEST(LineBcastSchedule, SendsOnePacketPerDirectionTowardsTheEndOfItsHalf) {
  auto s = line_sends(1, 8, 6);
  LONGS_EQUAL(2, s.size());
  CHECK(s[0].dir == Dir::kYp);
  LONGS_EQUAL(4, s[0].hops);
  LONGS_EQUAL(2, s[0].dst);  // 6 + 4 wraps to 2
  CHECK(s[1].dir == Dir::kYm);
  LONGS_EQUAL(3, s[1].hops);
  LONGS_EQUAL(3, s[1].dst);
  auto two = line_sends(2, 2, 1);
  LONGS_EQUAL(1, two.size());
  CHECK(two[0].dir == Dir::kZp);
  LONGS_EQUAL(0, two[0].dst);
  CHECK(line_sends(0, 1, 0).empty());
}

// Every value reaches every other node of the ring exactly once, on the port
// and after the hops line_arrival predicts, and line_source inverts it.
TEST(LineBcastSchedule, EveryNodeReceivesEveryOtherValueExactlyOnce) {
  for (uint32_t n = 1; n <= 17; ++n) {
    std::vector<std::map<uint32_t, int>> got(n);
    for (uint32_t src = 0; src < n; ++src) {
      for (const LineSend& s : line_sends(0, n, src)) {
        CHECK(s.hops <= (n - 1 + 1) / 2);  // never more than half the ring
        for (const Deposit& d : walk(n, src, s)) {
          ++got[d.pos][src];
          const LineArrival a = line_arrival(0, n, src, d.pos);
          CHECK_TEXT(a.port == d.port, ("arrival port n=" + std::to_string(n)).c_str());
          LONGS_EQUAL(d.hops, a.hops);
          LONGS_EQUAL(src, line_source(n, d.pos, d.port, d.hops));
        }
      }
    }
    for (uint32_t p = 0; p < n; ++p) {
      LONGS_EQUAL(n - 1, got[p].size());
      CHECK(got[p].count(p) == 0);  // never its own value
      for (const auto& [src, times] : got[p]) LONGS_EQUAL(1, times);
      LONGS_EQUAL(0, line_arrival(0, n, p, p).hops);
    }
  }
}

// On a ring of 5, node 0 hears 4 and 3 from its minus port (values going
// plus) and 1 and 2 from its plus port.
TEST(LineBcastSchedule, ArrivalPortsOnFiveRing) {
  CHECK(line_arrival(0, 5, 4, 0).port == Dir::kXm);
  LONGS_EQUAL(1, line_arrival(0, 5, 4, 0).hops);
  CHECK(line_arrival(0, 5, 3, 0).port == Dir::kXm);
  LONGS_EQUAL(2, line_arrival(0, 5, 3, 0).hops);
  CHECK(line_arrival(0, 5, 1, 0).port == Dir::kXp);
  LONGS_EQUAL(1, line_arrival(0, 5, 1, 0).hops);
  CHECK(line_arrival(0, 5, 2, 0).port == Dir::kXp);
  LONGS_EQUAL(2, line_arrival(0, 5, 2, 0).hops);
  // Even ring: the node opposite is reached by the plus packet (the longer half).
  CHECK(line_arrival(1, 4, 0, 2).port == Dir::kYm);
  LONGS_EQUAL(2, line_arrival(1, 4, 0, 2).hops);
}

TEST(LineBcastSchedule, MulticastPhasesSkipUnitDimensions) {
  auto ph = line_multicast_phases(Dims{{4, 1, 3}});
  LONGS_EQUAL(2, ph.size());
  LONGS_EQUAL(0, ph[0]);
  LONGS_EQUAL(2, ph[1]);
  CHECK(line_multicast_phases(Dims{{1, 1, 1}}).empty());
}

// Run the multicast phase by phase on whole partitions: every node receives
// exactly once, from a node that already holds the data, in the highest
// dimension where it differs from the root, through the port the schedule
// names; the root receives nothing; the data reaches everybody.
TEST(LineBcastSchedule, MulticastReachesEveryNodeOnce) {
  const Dims shapes[] = {Dims{{2, 2, 2}}, Dims{{4, 4, 4}}, Dims{{4, 2, 1}}, Dims{{8, 1, 1}},
                         Dims{{3, 3, 3}}, Dims{{1, 1, 1}}, Dims{{1, 5, 2}}, Dims{{5, 3, 7}}};
  for (const Dims& dims : shapes) {
    const uint32_t n = dims.nodes();
    for (uint32_t root_rank : {0u, n / 2, n - 1}) {
      const Coord root = coord_of(root_rank, dims);
      std::vector<McastRole> roles(n);
      for (uint32_t r = 0; r < n; ++r) roles[r] = line_multicast_role(coord_of(r, dims), root, dims);
      std::vector<int> has(n, 0), received(n, 0);
      has[root_rank] = 1;
      CHECK(roles[root_rank].root);
      for (int d : line_multicast_phases(dims)) {
        std::vector<int> next = has;
        for (uint32_t r = 0; r < n; ++r) {
          for (const McastSend& ms : roles[r].sends) {
            if (ms.dim != d) continue;
            CHECK_TEXT(has[r], "a sender holds the data before its phase");
            for (const Deposit& dep : walk(dims.n[d], coord_of(r, dims).c[d], ms.send)) {
              Coord c = coord_of(r, dims);
              c.c[d] = dep.pos;
              const uint32_t to = rank_of(c, dims);
              ++received[to];
              next[to] = 1;
              const McastRole& tr = roles[to];
              LONGS_EQUAL(d, tr.recv_dim);
              CHECK(tr.src == coord_of(r, dims));
              CHECK(tr.arrival.port == dep.port);
              LONGS_EQUAL(dep.hops, tr.arrival.hops);
            }
          }
        }
        has = next;
      }
      for (uint32_t r = 0; r < n; ++r) {
        LONGS_EQUAL_TEXT(1, has[r], (dims.to_string() + " node reached").c_str());
        LONGS_EQUAL(r == root_rank ? 0 : 1, received[r]);
      }
    }
  }
}

// The root of a 4x4x4 broadcast injects in all three dimensions, both ways;
// a node of the root's x line only along y and z; a node off the root's
// xy plane only receives.
TEST(LineBcastSchedule, MulticastInjectionsPerRole) {
  const Dims dims{{4, 4, 4}};
  const Coord root{{1, 2, 3}};
  LONGS_EQUAL(6, line_multicast_role(root, root, dims).sends.size());
  const McastRole xline = line_multicast_role(Coord{{3, 2, 3}}, root, dims);
  LONGS_EQUAL(0, xline.recv_dim);
  LONGS_EQUAL(4, xline.sends.size());
  for (const McastSend& s : xline.sends) CHECK(s.dim == 1 || s.dim == 2);
  const McastRole leaf = line_multicast_role(Coord{{0, 0, 0}}, root, dims);
  LONGS_EQUAL(2, leaf.recv_dim);
  CHECK(leaf.src == (Coord{{0, 0, 3}}));
  CHECK(leaf.sends.empty());
  // 2x1x1: the plus packet alone carries it.
  const McastRole two = line_multicast_role(Coord{{1, 0, 0}}, Coord{{0, 0, 0}}, Dims{{2, 1, 1}});
  CHECK(two.arrival.port == Dir::kXm);
  LONGS_EQUAL(1, two.arrival.hops);
  LONGS_EQUAL(1, line_multicast_role(Coord{{0, 0, 0}}, Coord{{0, 0, 0}}, Dims{{2, 1, 1}}).sends.size());
}
