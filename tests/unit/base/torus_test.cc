#include <set>
#include <string>

#include "base/torus.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {
Coord C(uint32_t x, uint32_t y, uint32_t z) {
  Coord c;
  c.c = {x, y, z};
  return c;
}
Dims D(uint32_t x, uint32_t y, uint32_t z) {
  Dims d;
  d.n = {x, y, z};
  return d;
}
bool contains(const std::string& hay, const char* needle) { return hay.find(needle) != std::string::npos; }
}  // namespace

TEST_GROUP(Torus) {};

TEST(Torus, ParseDims) {
  auto d = parse_dims("4x4x2");
  CHECK_TRUE(d.is_ok());
  CHECK(*d == D(4, 4, 2));
  LONGS_EQUAL(32, d->nodes());
  STRCMP_EQUAL("4x4x2", d->to_string().c_str());

  auto one = parse_dims("8");
  CHECK_TRUE(one.is_ok());
  CHECK(*one == D(8, 1, 1));
  auto two = parse_dims("4X3");
  CHECK_TRUE(two.is_ok());
  CHECK(*two == D(4, 3, 1));
  auto max = parse_dims("256x1x1");
  CHECK_TRUE(max.is_ok());
  LONGS_EQUAL(256, max->n[0]);
}

TEST(Torus, ParseDimsErrors) {
  auto zero = parse_dims("0x2x2");
  CHECK_FALSE(zero.is_ok());
  CHECK(zero.status().code() == Code::kInvalid);
  CHECK_TEXT(contains(zero.status().message(), "size 0"), zero.status().message().c_str());

  auto four = parse_dims("4x4x4x4");
  CHECK_FALSE(four.is_ok());
  CHECK_TEXT(contains(four.status().message(), "4x4x4x4"), four.status().message().c_str());

  auto letters = parse_dims("axb");
  CHECK_FALSE(letters.is_ok());
  CHECK_TEXT(contains(letters.status().message(), "'a' is not a number"), letters.status().message().c_str());

  auto big = parse_dims("300x1x1");
  CHECK_FALSE(big.is_ok());
  CHECK_TEXT(contains(big.status().message(), "300"), big.status().message().c_str());
  CHECK_TEXT(contains(big.status().message(), "256"), big.status().message().c_str());

  CHECK_FALSE(parse_dims("").is_ok());
  CHECK_FALSE(parse_dims("4x").is_ok());
  CHECK_FALSE(parse_dims("257").is_ok());
  CHECK_FALSE(parse_dims("-4x2").is_ok());
  CHECK_FALSE(parse_dims("99999999999x1").is_ok());
}

TEST(Torus, ParseCoordBothForms) {
  const Dims d = D(4, 4, 2);
  auto a = parse_coord("1,0,1", d);
  auto b = parse_coord("1.0.1", d);
  CHECK_TRUE(a.is_ok());
  CHECK_TRUE(b.is_ok());
  CHECK(*a == C(1, 0, 1));
  CHECK(*b == C(1, 0, 1));
  STRCMP_EQUAL("1,0,1", a->to_string().c_str());
  auto corner = parse_coord("3,3,1", d);
  CHECK_TRUE(corner.is_ok());
  CHECK(*corner == C(3, 3, 1));
}

TEST(Torus, ParseCoordErrors) {
  const Dims d = D(4, 4, 2);
  auto out = parse_coord("1,0,2", d);
  CHECK_FALSE(out.is_ok());
  CHECK(out.status().code() == Code::kOutOfRange);
  CHECK_TEXT(contains(out.status().message(), "4x4x2"), out.status().message().c_str());
  CHECK_TEXT(contains(out.status().message(), "z=2"), out.status().message().c_str());

  auto short_form = parse_coord("1,0", d);
  CHECK_FALSE(short_form.is_ok());
  CHECK(short_form.status().code() == Code::kInvalid);
  CHECK_FALSE(parse_coord("1,a,0", d).is_ok());
  CHECK_FALSE(parse_coord("1,0,0,0", d).is_ok());
  CHECK_FALSE(parse_coord("", d).is_ok());
}

TEST(Torus, RankCoordRoundTrip) {
  const Dims d = D(3, 5, 7);
  std::set<uint32_t> seen;
  for (uint32_t r = 0; r < d.nodes(); ++r) {
    const Coord c = coord_of(r, d);
    for (int k = 0; k < kDims; ++k) CHECK_TRUE(c.c[k] < d.n[k]);
    UNSIGNED_LONGS_EQUAL(r, rank_of(c, d));
    CHECK_TRUE(seen.insert(c.c[0] * 10000 + c.c[1] * 100 + c.c[2]).second);
  }
  // x varies fastest.
  UNSIGNED_LONGS_EQUAL(1, rank_of(C(1, 0, 0), d));
  UNSIGNED_LONGS_EQUAL(3, rank_of(C(0, 1, 0), d));
  UNSIGNED_LONGS_EQUAL(15, rank_of(C(0, 0, 1), d));
  UNSIGNED_LONGS_EQUAL(104, rank_of(C(2, 4, 6), d));
}

TEST(Torus, NeighbourWrapsBothWays) {
  const Dims d = D(4, 4, 2);
  CHECK(neighbour(C(3, 0, 0), Dir::kXp, d) == C(0, 0, 0));
  CHECK(neighbour(C(0, 0, 0), Dir::kXm, d) == C(3, 0, 0));
  CHECK(neighbour(C(1, 3, 0), Dir::kYp, d) == C(1, 0, 0));
  CHECK(neighbour(C(1, 0, 0), Dir::kYm, d) == C(1, 3, 0));
  CHECK(neighbour(C(2, 2, 1), Dir::kZp, d) == C(2, 2, 0));
  CHECK(neighbour(C(2, 2, 0), Dir::kZm, d) == C(2, 2, 1));
  CHECK(neighbour(C(1, 1, 0), Dir::kXp, d) == C(2, 1, 0));
  CHECK(neighbour(C(1, 1, 0), Dir::kXm, d) == C(0, 1, 0));
}

TEST(Torus, NeighbourThenOppositeReturns) {
  const Dims d = D(3, 5, 7);
  for (uint32_t r = 0; r < d.nodes(); ++r) {
    const Coord c = coord_of(r, d);
    for (int i = 0; i < kNumDirs; ++i) {
      const Dir dir = static_cast<Dir>(i);
      const Coord n = neighbour(c, dir, d);
      CHECK_FALSE(n == c);
      CHECK(neighbour(n, opposite(dir), d) == c);
    }
  }
}

TEST(Torus, SizeOneDimensionHasNoLink) {
  const Dims d = D(4, 1, 2);
  CHECK(neighbour(C(2, 0, 1), Dir::kYp, d) == C(2, 0, 1));
  CHECK_FALSE(has_link(Dir::kYp, d));
  CHECK_FALSE(has_link(Dir::kYm, d));
  CHECK_TRUE(has_link(Dir::kXm, d));
  CHECK_TRUE(has_link(Dir::kZp, d));
}

TEST(Torus, DirNamesAndOpposites) {
  const char* names[kNumDirs] = {"x+", "x-", "y+", "y-", "z+", "z-"};
  for (int i = 0; i < kNumDirs; ++i) {
    const Dir d = static_cast<Dir>(i);
    STRCMP_EQUAL(names[i], dir_name(d));
    Dir parsed = Dir::kZm;
    CHECK_TRUE(parse_dir(names[i], &parsed));
    CHECK(parsed == d);
    CHECK(opposite(opposite(d)) == d);
    CHECK(opposite(d) != d);
    LONGS_EQUAL(dir_dim(d), dir_dim(opposite(d)));
    CHECK(dir_plus(d) != dir_plus(opposite(d)));
    CHECK(dir_of(dir_dim(d), dir_plus(d)) == d);
  }
  CHECK(opposite(Dir::kXp) == Dir::kXm);
  CHECK(opposite(Dir::kZm) == Dir::kZp);
  Dir out = Dir::kYp;
  CHECK_FALSE(parse_dir("w+", &out));
  CHECK_FALSE(parse_dir("x", &out));
  CHECK(out == Dir::kYp);
}
