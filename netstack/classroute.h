// Class routes: static multicast patterns over the torus links (seed 004 A.3,
// "class-function routing"). A packet of class c is injected once at a root;
// every router it reaches deposits a copy locally and forwards copies on the
// class's out links, with no software per hop.
//
// For one class id each node holds a ClassEntry {accept, out, deposit}. Bit i
// of `accept` and `out` is Dir i (x+ x- y+ y- z+ z- = 0..5); bit 6 of `accept`
// (kClassFromLocal) allows local injection. Directions in `accept` name the
// port a packet ARRIVES on: a copy sent on node n's x+ port arrives at the
// neighbour from its x- side. Router semantics (netstack implements them):
//   input port not in accept -> drop and count;
//   else deposit if `deposit`, and send one copy on each dir in `out`.
//
// The generators here build routes where every target node gets exactly one
// copy and no copy ever travels all the way round a ring. The root never
// deposits (it has the data); every other target does. verify_route()
// (classroute_verify.cc) simulates the pattern and rejects anything else, so
// hand-edited or personality-supplied tables are checked before they are
// loaded. Pure code: no I/O.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/torus.h"

namespace toroid {

constexpr int kMaxClasses = 16;                 // class ids 1..15 usable; 0 = no class (unicast)
constexpr uint8_t kClassFromLocal = 1u << 6;    // accept bit: local injection allowed
constexpr uint8_t kClassDirMask = 0x3f;         // the six direction bits

constexpr uint8_t dir_bit(Dir d) { return static_cast<uint8_t>(1u << static_cast<int>(d)); }

struct ClassEntry {
  uint8_t accept = 0;    // dir bits the packet may arrive on, plus kClassFromLocal
  uint8_t out = 0;       // dir bits to send a copy on
  bool deposit = false;  // deliver a copy to this node
  bool valid() const { return accept != 0; }
  bool operator==(const ClassEntry&) const = default;
};

// One class over the whole partition: an entry per node, indexed by linear
// rank (rank_of). A line or plane route is a family of parallel lines/planes,
// each rooted at its node that shares `root`'s coordinates in the spanned
// dimensions; box and tree routes have the single root `root`.
struct ClassRoute {
  enum class Kind : uint8_t { kLine, kPlane, kBox, kTree };
  Kind kind = Kind::kBox;
  Dims dims;
  Coord root;
  std::array<int, kDims> dims_spanned{0, 1, 2};  // in order of expansion; first n_spanned used
  int n_spanned = 0;                             // line 1, plane 2, box/tree 3
  std::vector<ClassEntry> by_rank;               // empty when the generator's arguments were bad

  const ClassEntry& at(const Coord& c) const { return by_rank[rank_of(c, dims)]; }
  ClassEntry& at(const Coord& c) { return by_rank[rank_of(c, dims)]; }
};

const char* kind_name(ClassRoute::Kind k);  // "line", "plane", "box", "tree"
// "x+|y-|local", or "none" for 0.
std::string class_mask_name(uint8_t mask);
// The directions set in a mask, in Dir order (bit 6 and up ignored).
std::vector<Dir> dirs_in(uint8_t mask);

// Per node: the class table the router consults, indexed by class id.
class ClassTable {
 public:
  // kInvalid for cls 0 or >= kMaxClasses. An entry with accept == 0 unsets the class.
  Status set(uint8_t cls, const ClassEntry& e);
  // The entry of `me` in route r, as class cls.
  Status install(uint8_t cls, const ClassRoute& r, const Coord& me);
  void clear(uint8_t cls) {
    if (cls != 0 && cls < kMaxClasses) e_[cls] = ClassEntry{};
  }
  // nullptr if cls == 0, cls >= kMaxClasses, or the class is unset.
  const ClassEntry* lookup(uint8_t cls) const {
    if (cls == 0 || cls >= kMaxClasses || !e_[cls].valid()) return nullptr;
    return &e_[cls];
  }

 private:
  std::array<ClassEntry, kMaxClasses> e_{};
};

// Generators. Bad arguments (dim out of range, dim1 == dim2, root outside
// dims, a repeated dim in `order`) give a route with an empty by_rank, which
// verify_route() rejects naming the argument.
//
// Expansion along one dim of a ring of n nodes from the source s: the plus
// direction covers s+1 .. s+ceil((n-1)/2), the minus direction s-1 ..
// s-floor((n-1)/2). So n == 2 uses only the plus link, n == 1 nothing, and
// each ring node is covered exactly once.

// Every line along `dim`, each rooted at its node with coord[dim] == root[dim].
ClassRoute make_line_route(const Dims& d, const Coord& root, int dim);
// Every plane spanned by dim1, dim2: expand along dim1 from the plane's root,
// then along dim2 from every node of the root's dim1 line.
ClassRoute make_plane_route(const Dims& d, const Coord& root, int dim1, int dim2);
// The whole partition from one root: expand along order[0], then order[1] from
// every node reached, then order[2]. A spanning tree rooted at `root`.
ClassRoute make_box_route(const Dims& d, const Coord& root,
                          const std::array<int, kDims>& order = {0, 1, 2});
// The box route seen as the combine (tree) network's spanning tree: each
// non-root node accepts exactly one dir, its up link toward the root; `out`
// are its down links; the root accepts only kClassFromLocal. Its depth is the
// torus radius sum_d floor(n_d / 2), the minimum for the shape, whatever the
// order of dims (it changes only the fan-out of each node).
ClassRoute make_tree_route(const Dims& d, const Coord& root,
                           const std::array<int, kDims>& order = {0, 1, 2});

// classroute_entry.cc. The entry the generators give node `me`, computed in
// O(1) from the route's kind, dims, root and spanned dims (`shape.by_rank` is
// not read): what a booting node installs without building the whole table.
// An empty (invalid) entry for bad arguments or a node outside the dims.
ClassEntry class_entry(const ClassRoute& shape, const Coord& me);
// tree_entry(d, root, me, order) == make_tree_route(d, root, order).at(me).
ClassEntry tree_entry(const Dims& d, const Coord& root, const Coord& me,
                      const std::array<int, kDims>& order = {0, 1, 2});

// The roots of a route: one per parallel line/plane, or just `root`.
std::vector<Coord> route_roots(const ClassRoute& r);
// The root of the line/plane that c belongs to (`root` for box/tree).
Coord root_for(const ClassRoute& r, const Coord& c);
// Whether a and b are in the same line/plane (always, for box/tree).
bool same_group(const ClassRoute& r, const Coord& a, const Coord& b);

// Longest root-to-node hop count over all roots, following out links that the
// neighbour accepts (each node counted once, so a broken route still ends).
uint32_t route_depth(const ClassRoute& r);
inline uint32_t tree_depth(const ClassRoute& r) { return route_depth(r); }
// For a node of a tree: the up link (the single dir it accepts from), or
// nullopt at the root (or if the node does not accept exactly one dir).
std::optional<Dir> tree_up(const ClassRoute& r, const Coord& c);
// The same from one entry: its single accepted dir (no local bit), else nullopt.
std::optional<Dir> tree_entry_up(const ClassEntry& e);
// Its down links: the dirs it forwards to.
std::vector<Dir> tree_down(const ClassRoute& r, const Coord& c);

// classroute_verify.cc. Simulates the multicast from every root with the
// router semantics and rejects, with a one-line reason naming node(s) and
// direction: a copy not accepted by the neighbour; a node reached twice; a
// target never reached; a node reached outside its root's line/plane; a link
// into a size-1 dimension; a non-root target that does not deposit, or a root
// that does or that does not accept local injection; an accept bit nothing
// ever arrives on. For kTree also: the root accepts only local, every other
// node exactly one dir, and up links lead to the root without a cycle.
Status verify_route(const ClassRoute& r);
// A whole tree route as an engine installs it: of kind kTree, over `dims`,
// and passing verify_route; the message says what is wrong.
Status check_tree_route(const ClassRoute& tree, const Dims& dims);
// Several classes at once (for one partition): each verified, and all must
// share one Dims; at most kMaxClasses - 1 routes. The reason names the index.
Status verify_table_set(const std::vector<ClassRoute>& routes);

}  // namespace toroid
