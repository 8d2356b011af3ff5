// Seed 001's cube allreduce (methods 300 and 400), all 8 ranks' plans run
// together without a network: exactly 8 / 6 steps; every message goes to one
// of the rank's three cube neighbours; in every step all 24 directed links
// carry data; the bytes per link per phase are the patent's 2q/(3b) claim;
// opposite faces end with matching sub-segments (figure 30); results exact
// for int64 SUM and bit-identical doubles on all ranks.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/rng.h"
#include "collectives/schedule/cube_allreduce.h"
#include "tests/unit/collectives/plan_sim.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;

namespace {

const Dims kCube{{2, 2, 2}};
constexpr CubeMethod kMethods[] = {CubeMethod::k300, CubeMethod::k400};

std::vector<Plan> plans(CubeMethod m, uint64_t count, bool in_place) {
  std::vector<Plan> ps;
  for (uint32_t r = 0; r < 8; ++r) {
    auto p = cube_allreduce_plan(kCube, r, count, m, in_place);
    CHECK_TEXT(p.is_ok(), p.status().to_string().c_str());
    ps.push_back(*p);
  }
  return ps;
}

template <typename T>
std::vector<plansim::RankIO> make_io(const std::vector<std::vector<T>>& in, bool in_place) {
  std::vector<plansim::RankIO> io(in.size());
  for (size_t r = 0; r < in.size(); ++r) {
    io[r].in_place = in_place;
    (in_place ? io[r].out : io[r].in) = plansim::to_bytes(in[r]);
    if (!in_place) io[r].out.assign(in[r].size() * sizeof(T), 0xee);
  }
  return io;
}

plansim::Report run_cube(CubeMethod m, uint64_t count, bool in_place = true) {
  std::vector<std::vector<int64_t>> in(8, std::vector<int64_t>(count, 1));
  auto io = make_io(in, in_place);
  auto rep = plansim::run_plans(plans(m, count, in_place), io, sizeof(int64_t), plansim::sum_fn<int64_t>);
  CHECK_TEXT(rep.ok, rep.error.c_str());
  return rep;
}

int popcount(uint32_t x) { return std::popcount(x); }

}  // namespace

TEST_GROUP(Cube){};

TEST(Cube, OnlyOn2x2x2) {
  STRCMP_EQUAL("", cube_applicable(kCube).c_str());
  STRCMP_EQUAL("needs a 2x2x2 communicator (this one is 4x2x1)", cube_applicable(Dims{{4, 2, 1}}).c_str());
  STRCMP_EQUAL("needs a 2x2x2 communicator (this one is 2x2x1)", cube_applicable(Dims{{2, 2, 1}}).c_str());
  auto p = cube_allreduce_plan(Dims{{8, 1, 1}}, 0, 12, CubeMethod::k300, true);
  CHECK(!p.is_ok());
  STRCMP_CONTAINS("needs a 2x2x2 communicator (this one is 8x1x1)", p.status().message().c_str());
  CHECK(!cube_allreduce_plan(kCube, 8, 12, CubeMethod::k400, true).is_ok());
}

TEST(Cube, EightAndSixSteps) {
  for (uint64_t count : {0ull, 5ull, 12ull, 1201ull}) {
    auto r3 = run_cube(CubeMethod::k300, count);
    auto r4 = run_cube(CubeMethod::k400, count);
    for (uint32_t r = 0; r < 8; ++r) {
      LONGS_EQUAL(8, r3.steps[r]);
      LONGS_EQUAL(6, r4.steps[r]);
    }
  }
  LONGS_EQUAL(8, cube_steps(CubeMethod::k300));
  LONGS_EQUAL(6, cube_steps(CubeMethod::k400));
}

TEST(Cube, OnlyTheThreeCubeLinksAndAllTwentyFourDirectionsBusyInEveryStep) {
  for (CubeMethod m : kMethods) {
    for (uint64_t count : {12ull, 13ull, 24ull, 1200ull, 1211ull}) {
      auto rep = run_cube(m, count);
      LONGS_EQUAL(cube_steps(m), rep.msgs.size());
      for (size_t s = 0; s < rep.msgs.size(); ++s) {
        std::set<std::pair<uint32_t, uint32_t>> busy;
        for (const auto& msg : rep.msgs[s]) {
          LONGS_EQUAL(1, popcount(msg.src ^ msg.dst));  // a cube neighbour: one coordinate differs
          if (msg.elems > 0) busy.insert({msg.src, msg.dst});
        }
        LONGS_EQUAL(24, busy.size());  // 12 links, both directions, all carrying data
        LONGS_EQUAL(24, rep.msgs[s].size());  // and exactly one message on each
      }
    }
  }
}

TEST(Cube, PhaseOneRingsUseEachDirectedLinkOnce) {
  // The six face rings turn the same way (thumb out of the cube): two faces
  // sharing an edge travel it in opposite directions.
  std::map<std::pair<uint32_t, uint32_t>, int> use;
  for (uint32_t r = 0; r < 8; ++r)
    for (int a = 0; a < 3; ++a) {
      CubeFace f = cube_face(r, a);
      use[{r, f.next}]++;
      LONGS_EQUAL(r, cube_face(f.next, a).prev);
      LONGS_EQUAL(1, popcount(r ^ f.next));
      CHECK(((r ^ f.next) & (1u << a)) == 0);  // stays on its face
    }
  LONGS_EQUAL(24, use.size());
  for (auto& [k, v] : use) LONGS_EQUAL(1, v);
}

TEST(Cube, OppositeFacesEndWithMatchingSubSegments) {
  // Figure 30: for neighbours s, t along the phase-2 axis on one face and
  // s', t' opposite them, sigma(s) = sigma(t') and sigma(t) = sigma(s');
  // every face holds each sub-segment once.
  for (int a = 0; a < 3; ++a) {
    for (uint32_t side = 0; side < 2; ++side) {
      std::set<uint32_t> sig;
      for (uint32_t r = 0; r < 8; ++r)
        if (((r >> a) & 1) == side) sig.insert(cube_face(r, a).sigma);
      LONGS_EQUAL(4, sig.size());
    }
    for (uint32_t s = 0; s < 8; ++s) {
      CubeFace fs = cube_face(s, a);
      CubeFace ft = cube_face(fs.pair, a);
      LONGS_EQUAL(fs.sigma, cube_face(ft.opp, a).sigma);
      LONGS_EQUAL(ft.sigma, cube_face(fs.opp, a).sigma);
      // Phase-2 and phase-3 partners of the three face pairs use three different axes.
      std::set<uint32_t> axes;
      for (int b = 0; b < 3; ++b) axes.insert(s ^ cube_face(s, b).pair);
      LONGS_EQUAL(3, axes.size());
      axes.clear();
      for (int b = 0; b < 3; ++b) axes.insert(s ^ cube_face(s, b).third);
      LONGS_EQUAL(3, axes.size());
    }
  }
}

TEST(Cube, BytesPerLinkPerPhaseAreTwoThirdsOfTheVector) {
  // 1200 elements: parts of 100. Each directed link carries, per step,
  //   method 300: 100 in each of the 8 steps;
  //   method 400: 100 in steps 1-4, 200 in steps 5-6 (two sub-segments);
  // 800 = 2/3 of 1200 per direction in all: time 2q/(3b).
  const uint64_t count = 1200;
  const std::vector<uint64_t> want300(8, 100), want400{100, 100, 100, 100, 200, 200};
  for (CubeMethod m : kMethods) {
    auto rep = run_cube(m, count);
    const auto& want = m == CubeMethod::k300 ? want300 : want400;
    for (size_t s = 0; s < rep.msgs.size(); ++s) {
      std::map<std::pair<uint32_t, uint32_t>, uint64_t> per_link;
      for (const auto& msg : rep.msgs[s]) per_link[{msg.src, msg.dst}] += msg.elems;
      LONGS_EQUAL(24, per_link.size());
      for (auto& [k, v] : per_link) LONGS_EQUAL(want[s], v);
    }
    for (uint32_t src = 0; src < 8; ++src)
      for (uint32_t b = 0; b < 3; ++b) LONGS_EQUAL(800 * 8, rep.pair_bytes(src, src ^ (1u << b)));
    // Phase totals per directed link: 300: 300 + 200 + 300; 400: 300 + 300 + 200.
    uint64_t p1 = 0, p2 = 0, p3 = 0;
    for (size_t s = 0; s < rep.msgs.size(); ++s) {
      uint64_t link = 0;
      for (const auto& msg : rep.msgs[s])
        if (msg.src == 0 && msg.dst == 1) link += msg.elems;
      (s < 3 ? p1 : s < 5 ? p2 : p3) += link;
    }
    LONGS_EQUAL(300, p1);
    LONGS_EQUAL(m == CubeMethod::k300 ? 200 : 300, p2);
    LONGS_EQUAL(m == CubeMethod::k300 ? 300 : 200, p3);
  }
}

TEST(Cube, ExactInt64Sum) {
  Rng rng(5);
  for (CubeMethod m : kMethods) {
    for (uint64_t count : {0ull, 1ull, 5ull, 11ull, 12ull, 13ull, 100ull, 1201ull}) {
      for (bool in_place : {true, false}) {
        std::vector<std::vector<int64_t>> in(8, std::vector<int64_t>(count));
        std::vector<uint64_t> want(count, 0);
        for (auto& v : in)
          for (uint64_t i = 0; i < count; ++i) {
            v[i] = static_cast<int64_t>(rng.next());  // wraps around: exact modulo 2^64
            want[i] += static_cast<uint64_t>(v[i]);
          }
        auto io = make_io(in, in_place);
        auto rep = plansim::run_plans(plans(m, count, in_place), io, 8, plansim::sum_fn<int64_t>);
        CHECK_TEXT(rep.ok, rep.error.c_str());
        for (uint32_t r = 0; r < 8; ++r) {
          auto got = plansim::from_bytes<int64_t>(io[r].out);
          for (uint64_t i = 0; i < count; ++i) CHECK_EQUAL(static_cast<int64_t>(want[i]), got[i]);
        }
        // Not in place: the send buffer is untouched.
        if (!in_place)
          for (uint32_t r = 0; r < 8; ++r) CHECK(plansim::from_bytes<int64_t>(io[r].in) == in[r]);
      }
    }
  }
}

TEST(Cube, DoublesBitIdenticalOnAllRanks) {
  Rng rng(11);
  const uint64_t count = 997;
  for (CubeMethod m : kMethods) {
    std::vector<std::vector<double>> in(8, std::vector<double>(count));
    for (auto& v : in)
      for (auto& x : v) x = std::ldexp(rng.uniform() - 0.5, static_cast<int>(rng.below(80)) - 40);  // rounding matters
    auto io = make_io(in, true);
    auto rep = plansim::run_plans(plans(m, count, true), io, 8, plansim::sum_fn<double>);
    CHECK_TEXT(rep.ok, rep.error.c_str());
    for (uint32_t r = 1; r < 8; ++r) CHECK(io[r].out == io[0].out);  // bit for bit
    auto got = plansim::from_bytes<double>(io[0].out);
    int differs_from_serial = 0;
    for (uint64_t i = 0; i < count; ++i) {
      double serial = 0, mag = 0;
      long double exact = 0;
      for (uint32_t r = 0; r < 8; ++r) {
        serial += in[r][i];
        exact += in[r][i];
        mag += std::fabs(in[r][i]);
      }
      CHECK(std::fabs(got[i] - static_cast<double>(exact)) <= 8 * 0x1p-52 * mag);
      differs_from_serial += std::memcmp(&got[i], &serial, 8) != 0;
    }
    // The inputs do exercise rounding: the cube's grouping differs from a
    // serial sum for some elements, and yet all ranks agree.
    CHECK(differs_from_serial > 0);
  }
}

TEST(Cube, TinyCountsStillExactWithEmptyMessages) {
  for (CubeMethod m : kMethods) {
    for (uint64_t count : {1ull, 7ull}) {
      auto rep = run_cube(m, count);
      uint64_t empty = 0, total = 0;
      for (const auto& s : rep.msgs)
        for (const auto& msg : s) {
          empty += msg.elems == 0;
          ++total;
        }
      CHECK(empty > 0 && empty < total);  // the step structure stays; some parts are empty
      for (uint32_t r = 0; r < 8; ++r) LONGS_EQUAL(cube_steps(m), rep.steps[r]);
    }
  }
}
