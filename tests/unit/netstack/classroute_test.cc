// Class routes: every generator passes the verifier on many shapes and roots;
// an independent router simulation (written here, not taken from the code
// under test) counts copies, sends and hops; hand-broken tables are rejected
// with the reason; the per-node ClassTable.
#include <cstdint>
#include <iterator>
#include <deque>
#include <string>
#include <vector>

#include "base/torus.h"
#include "netstack/classroute.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

Dims dims(uint32_t x, uint32_t y, uint32_t z) {
  Dims d;
  d.n = {x, y, z};
  return d;
}

Coord coord(uint32_t x, uint32_t y, uint32_t z) {
  Coord c;
  c.c = {x, y, z};
  return c;
}

// What one injection at `root` does under the router semantics: drop when the
// arrival port is not accepted, else deposit if asked and forward on `out`.
struct Sim {
  std::vector<int> arrivals;   // copies accepted, per rank (the root counts its injection)
  std::vector<int> deposits;   // per rank
  int root_sends = 0;
  int drops = 0;
  uint32_t max_hops = 0;
  bool runaway = false;        // more copies than any correct route makes
};

Sim simulate(const ClassRoute& r, const Coord& root) {
  const uint32_t n = r.dims.nodes();
  Sim s;
  s.arrivals.assign(n, 0);
  s.deposits.assign(n, 0);
  struct Copy { Coord at; uint8_t port; uint32_t hops; };
  std::deque<Copy> q{{root, kClassFromLocal, 0}};
  uint32_t budget = 4 * n + 8;
  while (!q.empty()) {
    if (budget-- == 0) { s.runaway = true; break; }
    Copy p = q.front();
    q.pop_front();
    const ClassEntry& e = r.by_rank[rank_of(p.at, r.dims)];
    if (!(e.accept & p.port)) { ++s.drops; continue; }
    const uint32_t k = rank_of(p.at, r.dims);
    ++s.arrivals[k];
    if (e.deposit) ++s.deposits[k];
    if (p.hops > s.max_hops) s.max_hops = p.hops;
    for (int i = 0; i < kNumDirs; ++i) {
      if (!(e.out & (1u << i))) continue;
      const Dir t = static_cast<Dir>(i);
      if (p.port == kClassFromLocal) ++s.root_sends;
      q.push_back({neighbour(p.at, t, r.dims), static_cast<uint8_t>(1u << static_cast<int>(opposite(t))),
                   p.hops + 1});
    }
  }
  return s;
}

int popcount(uint8_t m) {
  int n = 0;
  for (; m; m &= m - 1) ++n;
  return n;
}

// Root out links along a ring of n: both ways from 3 on, one at 2, none at 1.
int ring_sends(uint32_t n) { return n >= 3 ? 2 : n == 2 ? 1 : 0; }

bool in_group(const ClassRoute& r, const Coord& c, const Coord& g) {
  for (int i = 0; i < kDims; ++i) {
    bool span = false;
    for (int j = 0; j < r.n_spanned; ++j) span |= r.dims_spanned[j] == i;
    if (!span && c.c[i] != g.c[i]) return false;
  }
  return true;
}

// Each group root's injection reaches exactly its own line/plane/box, once.
void check_exactly_once(const ClassRoute& r) {
  const uint32_t n = r.dims.nodes();
  std::vector<int> total(n, 0);
  for (const Coord& g : route_roots(r)) {
    Sim s = simulate(r, g);
    CHECK(!s.runaway);
    LONGS_EQUAL(0, s.drops);
    LONGS_EQUAL(popcount(r.at(g).out), s.root_sends);
    for (uint32_t k = 0; k < n; ++k) {
      const Coord c = coord_of(k, r.dims);
      const bool target = in_group(r, c, g);
      LONGS_EQUAL(target ? 1 : 0, s.arrivals[k]);
      LONGS_EQUAL(target && !(c == g) ? 1 : 0, s.deposits[k]);
      total[k] += s.arrivals[k];
    }
  }
  for (uint32_t k = 0; k < n; ++k) LONGS_EQUAL(1, total[k]);
}

void check_ok(const ClassRoute& r) {
  Status s = verify_route(r);
  if (!s) FAIL(s.to_string().c_str());
  check_exactly_once(r);
}

void check_rejected(const ClassRoute& r, const std::string& want) {
  Status s = verify_route(r);
  CHECK_FALSE(s.is_ok());
  LONGS_EQUAL(static_cast<int>(Code::kInvalid), static_cast<int>(s.code()));
  if (s.message().find(want) == std::string::npos)
    FAIL(("expected '" + want + "' in: " + s.message()).c_str());
}

const Dims kShapes[] = {dims(1, 1, 1), dims(2, 1, 1), dims(2, 2, 2), dims(3, 1, 1),
                        dims(4, 4, 4), dims(8, 4, 2), dims(1, 1, 16), dims(3, 5, 7),
                        dims(5, 5, 5)};

// All roots on shapes up to 64 nodes, else corners, centre and a stride.
std::vector<Coord> roots_for(const Dims& d) {
  std::vector<Coord> v;
  const uint32_t n = d.nodes();
  if (n <= 64) {
    for (uint32_t k = 0; k < n; ++k) v.push_back(coord_of(k, d));
    return v;
  }
  for (uint32_t k = 0; k < n; k += 13) v.push_back(coord_of(k, d));
  v.push_back(coord_of(n - 1, d));
  v.push_back(coord(d.n[0] / 2, d.n[1] / 2, d.n[2] / 2));
  return v;
}

}  // namespace

TEST_GROUP(ClassRouteGen){};

TEST(ClassRouteGen, LinesPassOnEveryShapeRootAndDim) {
  for (const Dims& d : kShapes)
    for (const Coord& root : roots_for(d))
      for (int dim = 0; dim < kDims; ++dim) check_ok(make_line_route(d, root, dim));
}

TEST(ClassRouteGen, PlanesPassForEveryOrderedDimPair) {
  for (const Dims& d : kShapes)
    for (const Coord& root : roots_for(d))
      for (int a = 0; a < kDims; ++a)
        for (int b = 0; b < kDims; ++b)
          if (a != b) check_ok(make_plane_route(d, root, a, b));
}

TEST(ClassRouteGen, BoxesAndTreesPass) {
  const std::array<int, kDims> orders[] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}};
  for (const Dims& d : kShapes)
    for (const Coord& root : roots_for(d))
      for (const auto& o : orders) {
        check_ok(make_box_route(d, root, o));
        check_ok(make_tree_route(d, root, o));
      }
}

TEST(ClassRouteGen, LineOnRingExact) {
  for (uint32_t n = 1; n <= 17; ++n)
    for (int dim = 0; dim < kDims; ++dim) {
      Dims d = dims(1, 1, 1);
      d.n[dim] = n;
      for (uint32_t r0 = 0; r0 < n; ++r0) {
        Coord root = coord(0, 0, 0);
        root.c[dim] = r0;
        ClassRoute r = make_line_route(d, root, dim);
        check_ok(r);
        const ClassEntry& re = r.at(root);
        LONGS_EQUAL(kClassFromLocal, re.accept);
        CHECK_FALSE(re.deposit);
        LONGS_EQUAL(ring_sends(n), popcount(re.out));
        Sim s = simulate(r, root);
        LONGS_EQUAL(ring_sends(n), s.root_sends);
        UNSIGNED_LONGS_EQUAL(n / 2, s.max_hops);  // ceil((n-1)/2)
        UNSIGNED_LONGS_EQUAL(n / 2, route_depth(r));
        for (uint32_t k = 0; k < n; ++k) LONGS_EQUAL(1, s.arrivals[k]);
        // Intermediate nodes accept exactly one port.
        for (uint32_t k = 0; k < n; ++k)
          if (k != rank_of(root, d)) LONGS_EQUAL(1, popcount(r.by_rank[k].accept));
      }
    }
}

TEST(ClassRouteGen, LineTwoNodesUsesOnlyPlus) {
  ClassRoute r = make_line_route(dims(2, 1, 1), coord(1, 0, 0), 0);
  LONGS_EQUAL(dir_bit(Dir::kXp), r.at(coord(1, 0, 0)).out);
  LONGS_EQUAL(dir_bit(Dir::kXm), r.at(coord(0, 0, 0)).accept);
  LONGS_EQUAL(0, r.at(coord(0, 0, 0)).out);
}

TEST(ClassRouteGen, LineEveryParallelLineHasItsRoot) {
  ClassRoute r = make_line_route(dims(4, 3, 2), coord(2, 1, 1), 0);
  std::vector<Coord> roots = route_roots(r);
  LONGS_EQUAL(6, static_cast<long>(roots.size()));
  for (const Coord& g : roots) {
    UNSIGNED_LONGS_EQUAL(2u, g.c[0]);
    LONGS_EQUAL(kClassFromLocal, r.at(g).accept);
  }
  CHECK(root_for(r, coord(0, 2, 0)) == coord(2, 2, 0));
  CHECK(same_group(r, coord(0, 2, 0), coord(3, 2, 0)));
  CHECK_FALSE(same_group(r, coord(0, 2, 0), coord(0, 1, 0)));
}

TEST(ClassRouteGen, PlaneExact) {
  const Dims shapes[] = {dims(4, 4, 1), dims(5, 3, 2), dims(2, 7, 3), dims(6, 1, 5)};
  for (const Dims& d : shapes)
    for (int a = 0; a < kDims; ++a)
      for (int b = 0; b < kDims; ++b) {
        if (a == b) continue;
        const Coord root = coord(d.n[0] - 1, d.n[1] / 2, 0);
        ClassRoute r = make_plane_route(d, root, a, b);
        check_ok(r);
        const int sends = ring_sends(d.n[a]) + ring_sends(d.n[b]);
        for (const Coord& g : route_roots(r)) {
          Sim s = simulate(r, g);
          LONGS_EQUAL(sends, s.root_sends);
          LONGS_EQUAL(sends, popcount(r.at(g).out));
          UNSIGNED_LONGS_EQUAL(d.n[a] / 2 + d.n[b] / 2, s.max_hops);
        }
        // Nodes reached along dim2 continue along dim2 only.
        for (uint32_t k = 0; k < d.nodes(); ++k) {
          const Coord c = coord_of(k, d);
          if (c.c[b] == root.c[b]) continue;
          for (Dir t : dirs_in(r.by_rank[k].out)) LONGS_EQUAL(b, dir_dim(t));
        }
      }
}

TEST(ClassRouteGen, TreeDepthIsTorusRadius) {
  struct { Dims d; uint32_t depth; } cases[] = {
      {dims(2, 2, 2), 3}, {dims(4, 4, 4), 6}, {dims(8, 4, 2), 7},
      {dims(3, 5, 7), 6}, {dims(1, 1, 16), 8}, {dims(1, 1, 1), 0},
  };
  const std::array<int, kDims> orders[] = {{0, 1, 2}, {2, 0, 1}};
  for (const auto& c : cases)
    for (const Coord& root : roots_for(c.d))
      for (const auto& o : orders) {
        ClassRoute r = make_tree_route(c.d, root, o);
        UNSIGNED_LONGS_EQUAL(c.depth, tree_depth(r));
        UNSIGNED_LONGS_EQUAL(c.depth, route_depth(make_box_route(c.d, root, o)));
      }
}

TEST(ClassRouteGen, TreeUpAndDownLinks) {
  const Dims d = dims(4, 3, 2);
  const Coord root = coord(1, 2, 1);
  ClassRoute r = make_tree_route(d, root);
  CHECK(!tree_up(r, root).has_value());
  LONGS_EQUAL(kClassFromLocal, r.at(root).accept);
  for (uint32_t k = 0; k < d.nodes(); ++k) {
    const Coord c = coord_of(k, d);
    if (c == root) continue;
    auto up = tree_up(r, c);
    CHECK(up.has_value());
    // The parent lies on the up side and sends down to this node.
    const Coord parent = neighbour(c, *up, d);
    bool found = false;
    for (Dir t : tree_down(r, parent)) found |= t == opposite(*up);
    CHECK(found);
    // Climbing reaches the root within the depth.
    Coord cur = c;
    uint32_t hops = 0;
    while (!(cur == root) && hops <= tree_depth(r)) {
      cur = neighbour(cur, *tree_up(r, cur), d);
      ++hops;
    }
    CHECK(cur == root);
  }
}

// What a booting node computes for itself (class_entry, O(1)) is what the
// expansion generators, checked by verify_route above, give it: every node of
// every shape, root, kind and order here.
TEST(ClassRouteGen, ClosedFormEntryEqualsTheGenerator) {
  const std::array<int, kDims> orders[] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {1, 0, 2}};
  const Dims extra[] = {dims(6, 2, 3), dims(2, 2, 9), dims(7, 1, 4)};
  std::vector<Dims> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.insert(shapes.end(), std::begin(extra), std::end(extra));
  uint64_t compared = 0;
  auto same_everywhere = [&](const ClassRoute& r) {
    for (uint32_t k = 0; k < r.dims.nodes(); ++k) {
      const ClassEntry e = class_entry(r, coord_of(k, r.dims));
      if (!(e == r.by_rank[k]))
        FAIL(("class_entry differs from the generator at node " + coord_of(k, r.dims).to_string() + " of " +
              kind_name(r.kind) + " route on " + r.dims.to_string() + " rooted at " + r.root.to_string())
                 .c_str());
      ++compared;
    }
  };
  for (const Dims& d : shapes)
    for (const Coord& root : roots_for(d)) {
      for (int a = 0; a < kDims; ++a) {
        same_everywhere(make_line_route(d, root, a));
        for (int b = 0; b < kDims; ++b)
          if (a != b) same_everywhere(make_plane_route(d, root, a, b));
      }
      for (const auto& o : orders) {
        same_everywhere(make_box_route(d, root, o));
        const ClassRoute t = make_tree_route(d, root, o);
        same_everywhere(t);
        const Coord probe = coord_of(d.nodes() / 2, d);
        CHECK(tree_entry(d, root, probe, o) == t.at(probe));
      }
    }
  CHECK(compared > 100000);
  // Bad arguments and nodes outside the dims give an empty entry.
  CHECK_FALSE(tree_entry(dims(4, 4, 1), coord(4, 0, 0), coord(0, 0, 0)).valid());
  CHECK_FALSE(tree_entry(dims(4, 4, 1), coord(0, 0, 0), coord(0, 4, 0)).valid());
  CHECK_FALSE(tree_entry(dims(4, 4, 1), coord(0, 0, 0), coord(1, 0, 0), {0, 0, 2}).valid());
}

TEST(ClassRouteGen, BadArgumentsAreRejectedByTheVerifier) {
  check_rejected(make_line_route(dims(4, 1, 1), coord(0, 0, 0), 3), "spanned dimension 3");
  check_rejected(make_plane_route(dims(4, 4, 1), coord(0, 0, 0), 1, 1), "spanned twice");
  check_rejected(make_box_route(dims(4, 4, 1), coord(4, 0, 0)), "root outside");
  CHECK(make_line_route(dims(4, 1, 1), coord(0, 0, 0), -1).by_rank.empty());
}

TEST(ClassRouteGen, MaskNames) {
  STRCMP_EQUAL("none", class_mask_name(0).c_str());
  STRCMP_EQUAL("x+|y-|local",
               class_mask_name(dir_bit(Dir::kXp) | dir_bit(Dir::kYm) | kClassFromLocal).c_str());
  STRCMP_EQUAL("line", kind_name(ClassRoute::Kind::kLine));
  STRCMP_EQUAL("tree", kind_name(ClassRoute::Kind::kTree));
}

TEST_GROUP(ClassRouteVerify){};

// Ring of 4 rooted at 0: 0 -x+-> 1 -x+-> 2, and 0 -x-> 3.
TEST(ClassRouteVerify, MissingAcceptBit) {
  ClassRoute r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.at(coord(2, 0, 0)).accept &= static_cast<uint8_t>(~dir_bit(Dir::kXm));
  check_rejected(r, "node 1,0,0 forwards x+ but node 2,0,0 does not accept from x-");
}

TEST(ClassRouteVerify, ExtraForwardDuplicatesDelivery) {
  ClassRoute r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.at(coord(2, 0, 0)).out |= dir_bit(Dir::kXp);
  r.at(coord(3, 0, 0)).accept |= dir_bit(Dir::kXm);
  check_rejected(r, "node 3,0,0 reached twice");
}

TEST(ClassRouteVerify, ExtraForwardDuplicatesDeliveryInAPlane) {
  ClassRoute r = make_box_route(dims(4, 4, 1), coord(0, 0, 0));
  r.at(coord(1, 1, 0)).out |= dir_bit(Dir::kXm);
  r.at(coord(0, 1, 0)).accept |= dir_bit(Dir::kXp);
  check_rejected(r, "node 0,1,0 reached twice (cycle or duplicate path)");
}

TEST(ClassRouteVerify, CycleRoundTheRing) {
  // All the way round: 0 -> 1 -> 2 -> 3 -> 0.
  ClassRoute r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.at(coord(0, 0, 0)).out = dir_bit(Dir::kXp);
  r.at(coord(0, 0, 0)).accept |= dir_bit(Dir::kXm);
  r.at(coord(2, 0, 0)).out = dir_bit(Dir::kXp);
  r.at(coord(3, 0, 0)).accept = dir_bit(Dir::kXm);
  r.at(coord(3, 0, 0)).out = dir_bit(Dir::kXp);
  check_rejected(r, "node 0,0,0 reached twice (cycle or duplicate path)");
  // Without the root accepting it, the wrap is an unaccepted forward.
  r.at(coord(0, 0, 0)).accept = kClassFromLocal;
  check_rejected(r, "node 3,0,0 forwards x+ but node 0,0,0 does not accept from x-");
}

TEST(ClassRouteVerify, NodeNeverReached) {
  ClassRoute r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.at(coord(1, 0, 0)).out = 0;
  check_rejected(r, "node 2,0,0 never reached from root 0,0,0");
}

TEST(ClassRouteVerify, TreeNodeWithTwoUpLinks) {
  ClassRoute r = make_tree_route(dims(3, 3, 1), coord(0, 0, 0));
  r.at(coord(1, 1, 0)).accept |= dir_bit(Dir::kXm);
  check_rejected(r, "tree node 1,1,0 has 2 up links (x-|y-)");
  // The same table as a box route fails on the stray bit instead.
  r.kind = ClassRoute::Kind::kBox;
  check_rejected(r, "node 1,1,0 accepts from x- but nothing is ever sent to it that way");
}

TEST(ClassRouteVerify, TreeUpLinkCycle) {
  ClassRoute r = make_tree_route(dims(3, 3, 1), coord(0, 0, 0));
  // 1,0,0 now hangs from 1,1,0, which hangs from 1,0,0.
  r.at(coord(1, 0, 0)).accept = dir_bit(Dir::kYp);
  check_rejected(r, "up links from tree node 1,0,0 run into a cycle at node 1,0,0");
}

TEST(ClassRouteVerify, TreeRootAcceptsOnlyLocal) {
  ClassRoute r = make_tree_route(dims(3, 3, 1), coord(1, 1, 0));
  r.at(coord(1, 1, 0)).accept |= dir_bit(Dir::kYm);
  check_rejected(r, "tree root 1,1,0 must accept only local injection, accepts y-|local");
}

TEST(ClassRouteVerify, RootDoesNotAcceptLocal) {
  ClassRoute r = make_line_route(dims(4, 2, 1), coord(0, 0, 0), 0);
  r.at(coord(0, 1, 0)).accept = 0;
  check_rejected(r, "root 0,1,0 does not accept local injection");
}

TEST(ClassRouteVerify, RootDeposits) {
  ClassRoute r = make_box_route(dims(2, 2, 2), coord(1, 1, 1));
  r.at(coord(1, 1, 1)).deposit = true;
  check_rejected(r, "root 1,1,1 deposits its own packet");
}

TEST(ClassRouteVerify, ForwardIntoSizeOneDimension) {
  ClassRoute r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.at(coord(1, 0, 0)).out |= dir_bit(Dir::kZp);
  check_rejected(r, "node 1,0,0 forwards z+ but dimension z has size 1");
}

TEST(ClassRouteVerify, AcceptFromSizeOneDimension) {
  ClassRoute r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.at(coord(1, 0, 0)).accept |= dir_bit(Dir::kYm);
  check_rejected(r, "node 1,0,0 accepts from y- but dimension y has size 1");
}

TEST(ClassRouteVerify, StrayAcceptBit) {
  ClassRoute r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.at(coord(1, 0, 0)).accept |= dir_bit(Dir::kXp);
  check_rejected(r, "node 1,0,0 accepts from x+ but nothing is ever sent to it that way");
}

TEST(ClassRouteVerify, StrayLocalAccept) {
  ClassRoute r = make_plane_route(dims(3, 3, 2), coord(0, 0, 0), 0, 1);
  r.at(coord(2, 2, 1)).accept |= kClassFromLocal;
  check_rejected(r, "node 2,2,1 accepts local injection but is not a root");
}

TEST(ClassRouteVerify, TargetNotDeposited) {
  ClassRoute r = make_plane_route(dims(3, 3, 1), coord(0, 0, 0), 1, 0);
  r.at(coord(2, 1, 0)).deposit = false;
  check_rejected(r, "node 2,1,0 is reached from root 0,0,0 but does not deposit");
}

TEST(ClassRouteVerify, LeavesItsLine) {
  ClassRoute r = make_line_route(dims(4, 2, 1), coord(0, 0, 0), 0);
  r.at(coord(1, 0, 0)).out |= dir_bit(Dir::kYp);
  r.at(coord(1, 1, 0)).accept |= dir_bit(Dir::kYm);
  check_rejected(r, "node 1,1,0 (forwarded y+ from node 1,0,0) is outside the target set of root "
                    "0,0,0 but deposits");
}

TEST(ClassRouteVerify, UnknownBitsAndWrongSize) {
  ClassRoute r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.at(coord(1, 0, 0)).accept |= 0x80;
  check_rejected(r, "unknown accept bits 0x80");
  r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.by_rank.pop_back();
  check_rejected(r, "3 entries for 4 nodes");
  r = make_line_route(dims(4, 1, 1), coord(0, 0, 0), 0);
  r.n_spanned = 2;
  check_rejected(r, "spans 1 dimension(s), not 2");
}

TEST(ClassRouteVerify, TableSet) {
  const Dims d = dims(4, 4, 2);
  std::vector<ClassRoute> set = {make_line_route(d, coord(0, 0, 0), 0),
                                 make_plane_route(d, coord(1, 2, 0), 1, 0),
                                 make_box_route(d, coord(3, 3, 1)),
                                 make_tree_route(d, coord(0, 0, 0))};
  Status ok = verify_table_set(set);
  if (!ok) FAIL(ok.to_string().c_str());
  set[2].at(coord(3, 0, 1)).deposit = false;
  Status bad = verify_table_set(set);
  CHECK_FALSE(bad.is_ok());
  CHECK(bad.message().find("route 2:") != std::string::npos);
  CHECK(bad.message().find("node 3,0,1") != std::string::npos);

  set[2] = make_box_route(dims(4, 4, 1), coord(0, 0, 0));
  bad = verify_table_set(set);
  CHECK(bad.message().find("route 2 is for 4x4x1") != std::string::npos);

  std::vector<ClassRoute> many(kMaxClasses, make_line_route(d, coord(0, 0, 0), 0));
  CHECK_FALSE(verify_table_set(many).is_ok());
  many.pop_back();
  CHECK(verify_table_set(many).is_ok());
}

TEST_GROUP(ClassTableT){};

TEST(ClassTableT, LookupOfNoClassOrOutOfRangeOrUnsetIsNull) {
  ClassTable t;
  POINTERS_EQUAL(nullptr, t.lookup(0));
  POINTERS_EQUAL(nullptr, t.lookup(kMaxClasses));
  POINTERS_EQUAL(nullptr, t.lookup(255));
  for (int c = 1; c < kMaxClasses; ++c) POINTERS_EQUAL(nullptr, t.lookup(static_cast<uint8_t>(c)));
}

TEST(ClassTableT, SetLookupRoundTrip) {
  ClassTable t;
  const ClassEntry e{static_cast<uint8_t>(dir_bit(Dir::kYm)), static_cast<uint8_t>(dir_bit(Dir::kYp)),
                     true};
  CHECK(t.set(3, e).is_ok());
  CHECK(t.set(kMaxClasses - 1, ClassEntry{kClassFromLocal, 0, false}).is_ok());
  const ClassEntry* got = t.lookup(3);
  CHECK(got != nullptr);
  CHECK(*got == e);
  CHECK(t.lookup(kMaxClasses - 1) != nullptr);
  POINTERS_EQUAL(nullptr, t.lookup(4));
  CHECK_FALSE(t.set(0, e).is_ok());
  CHECK_FALSE(t.set(kMaxClasses, e).is_ok());
  t.clear(3);
  POINTERS_EQUAL(nullptr, t.lookup(3));
}

TEST(ClassTableT, InstallFromRoute) {
  const Dims d = dims(4, 4, 1);
  ClassRoute r = make_plane_route(d, coord(1, 1, 0), 0, 1);
  for (uint32_t k = 0; k < d.nodes(); ++k) {
    ClassTable t;
    const Coord me = coord_of(k, d);
    CHECK(t.install(7, r, me).is_ok());
    CHECK(t.lookup(7) != nullptr);
    CHECK(*t.lookup(7) == r.by_rank[k]);
  }
  ClassTable t;
  CHECK_FALSE(t.install(7, r, coord(4, 0, 0)).is_ok());
  CHECK_FALSE(t.install(0, r, coord(0, 0, 0)).is_ok());
  ClassRoute empty = make_line_route(d, coord(0, 0, 0), 5);
  CHECK_FALSE(t.install(7, empty, coord(0, 0, 0)).is_ok());
}
