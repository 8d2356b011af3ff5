// The fixed-order torus allreduce schedule (seed 004 A), checked without a
// network: the data flow is run symbolically on whole partitions, every node
// building the expression it would compute, and every node must end with the
// same expression, the nested left-to-right sum the header promises, having
// received each value of its line exactly once per phase.
#include <string>
#include <vector>

#include "collectives/schedule/torus_fixed_order.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;

namespace {

// "(a+b)", built by appending (GCC 12 warns falsely about operator+ chains).
std::string plus(const std::string& a, const std::string& b) {
  std::string s;
  s.reserve(a.size() + b.size() + 3);
  s.append(1, '(').append(a).append(1, '+').append(b).append(1, ')');
  return s;
}

std::string var(uint32_t rank) {
  std::string s = "v";
  s += std::to_string(rank);
  return s;
}

// The expression the header states: sum over z of sums over y of
// left-to-right sums over x (size-1 dimensions add no parentheses).
std::string nested_reference(const Dims& dims) {
  auto fold = [](const std::vector<std::string>& xs) {
    std::string acc = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) acc = plus(acc, xs[i]);
    return acc;
  };
  std::vector<std::string> zs;
  for (uint32_t z = 0; z < dims.n[2]; ++z) {
    std::vector<std::string> ys;
    for (uint32_t y = 0; y < dims.n[1]; ++y) {
      std::vector<std::string> xs;
      for (uint32_t x = 0; x < dims.n[0]; ++x) xs.push_back(var(rank_of(Coord{{x, y, z}}, dims)));
      ys.push_back(fold(xs));
    }
    zs.push_back(fold(ys));
  }
  return fold(zs);
}

void check_shape(const Dims& dims) {
  const uint32_t n = dims.nodes();
  std::vector<std::string> val(n);
  for (uint32_t r = 0; r < n; ++r) val[r] = var(r);
  std::vector<std::vector<FixedOrderPhase>> phases(n);
  for (uint32_t r = 0; r < n; ++r) phases[r] = torus_fixed_order_phases(coord_of(r, dims), dims);
  const size_t np = phases[0].size();
  for (uint32_t r = 0; r < n; ++r) LONGS_EQUAL(np, phases[r].size());
  for (size_t k = 0; k < np; ++k) {
    const int d = phases[0][k].dim;
    const uint32_t len = dims.n[d];
    // received[r][s]: value of line position s as delivered to node r.
    std::vector<std::vector<std::string>> received(n, std::vector<std::string>(len));
    std::vector<std::vector<int>> times(n, std::vector<int>(len, 0));
    for (uint32_t r = 0; r < n; ++r) {
      const FixedOrderPhase& ph = phases[r][k];
      LONGS_EQUAL(d, ph.dim);
      LONGS_EQUAL(len, ph.n);
      const Coord me = coord_of(r, dims);
      LONGS_EQUAL(me.c[d], ph.pos);
      LONGS_EQUAL(len == 2 ? 1 : 2, ph.sends.size());  // once per direction (n = 2: one direction)
      for (const LineSend& s : ph.sends) {
        CHECK(dir_dim(s.dir) == d);  // only the phase's own links
        Coord cur = me;
        for (uint32_t h = 1; h <= s.hops; ++h) {
          cur = neighbour(cur, s.dir, dims);
          const uint32_t to = rank_of(cur, dims);
          // The receiver expects this source on exactly this port at this distance.
          const LineArrival& a = phases[to][k].from[ph.pos];
          CHECK(a.port == opposite(s.dir));
          LONGS_EQUAL(h, a.hops);
          received[to][ph.pos] = val[r];
          ++times[to][ph.pos];
        }
        LONGS_EQUAL(s.dst, cur.c[d]);
      }
    }
    std::vector<std::string> next(n);
    for (uint32_t r = 0; r < n; ++r) {
      const FixedOrderPhase& ph = phases[r][k];
      received[r][ph.pos] = val[r];
      LONGS_EQUAL(0, ph.from[ph.pos].hops);
      for (uint32_t s = 0; s < len; ++s) LONGS_EQUAL(s == ph.pos ? 0 : 1, times[r][s]);
      std::string acc;
      for (uint32_t s : fixed_order_combine_order(len))
        acc = acc.empty() ? received[r][s] : plus(acc, received[r][s]);
      next[r] = acc;
    }
    val = next;
  }
  const std::string want = nested_reference(dims);
  for (uint32_t r = 0; r < n; ++r) STRCMP_EQUAL_TEXT(want.c_str(), val[r].c_str(), dims.to_string().c_str());
}

}  // namespace

TEST_GROUP(TorusFixedOrderSchedule){};

TEST(TorusFixedOrderSchedule, OnePhasePerDimensionLongerThanOne) {
  auto ph = torus_fixed_order_phases(Coord{{2, 0, 1}}, Dims{{4, 1, 3}});
  LONGS_EQUAL(2, ph.size());
  LONGS_EQUAL(0, ph[0].dim);
  LONGS_EQUAL(2, ph[0].pos);
  LONGS_EQUAL(2, ph[1].dim);
  LONGS_EQUAL(1, ph[1].pos);
  LONGS_EQUAL(3, ph[1].from.size());
  CHECK(torus_fixed_order_phases(Coord{}, Dims{{1, 1, 1}}).empty());
}

TEST(TorusFixedOrderSchedule, CombineOrderIsByCoordinate) {
  auto o = fixed_order_combine_order(5);
  LONGS_EQUAL(5, o.size());
  for (uint32_t i = 0; i < 5; ++i) LONGS_EQUAL(i, o[i]);
}

// 8x1x1: exactly the serial sum over ranks 0..7, left to right.
TEST(TorusFixedOrderSchedule, LineIsTheSerialSumInRankOrder) {
  STRCMP_EQUAL("(((((((v0+v1)+v2)+v3)+v4)+v5)+v6)+v7)", nested_reference(Dims{{8, 1, 1}}).c_str());
  check_shape(Dims{{8, 1, 1}});
}

TEST(TorusFixedOrderSchedule, NestedSumOnEveryShape) {
  STRCMP_EQUAL("(((v0+v1)+(v2+v3))+((v4+v5)+(v6+v7)))", nested_reference(Dims{{2, 2, 2}}).c_str());
  const Dims shapes[] = {Dims{{2, 2, 2}}, Dims{{4, 4, 4}}, Dims{{4, 2, 1}}, Dims{{3, 3, 3}}, Dims{{1, 1, 1}},
                         Dims{{1, 7, 1}}, Dims{{5, 1, 6}}, Dims{{2, 3, 5}}};
  for (const Dims& d : shapes) check_shape(d);
}
