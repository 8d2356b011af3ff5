// Class route generators (seed 004 A.3): lines, planes and boxes built by
// expanding dimension by dimension from a root, so each node is reached by
// exactly one path; the tree route is the box route read as a spanning tree.
#include "netstack/classroute.h"

#include <deque>

namespace toroid {

namespace {

bool args_ok(const Dims& d, const Coord& root, const int* dims, int n) {
  for (int i = 0; i < kDims; ++i) {
    if (d.n[i] < 1 || d.n[i] > static_cast<uint32_t>(kMaxDimSize)) return false;
    if (root.c[i] >= d.n[i]) return false;
  }
  for (int i = 0; i < n; ++i) {
    if (dims[i] < 0 || dims[i] >= kDims) return false;
    for (int j = 0; j < i; ++j)
      if (dims[i] == dims[j]) return false;
  }
  return true;
}

bool spanned(const ClassRoute& r, int dim) {
  for (int i = 0; i < r.n_spanned; ++i)
    if (r.dims_spanned[i] == dim) return true;
  return false;
}

// Sends along t from src, covering `count` nodes; appends them to *reached.
void expand(ClassRoute* r, const Coord& src, Dir t, uint32_t count, std::vector<Coord>* reached) {
  if (count == 0) return;
  r->at(src).out |= dir_bit(t);
  Coord c = src;
  for (uint32_t k = 1; k <= count; ++k) {
    c = neighbour(c, t, r->dims);
    ClassEntry& e = r->at(c);
    e.accept |= dir_bit(opposite(t));
    e.deposit = true;
    if (k < count) e.out |= dir_bit(t);
    reached->push_back(c);
  }
}

ClassRoute make_route(ClassRoute::Kind kind, const Dims& d, const Coord& root, const int* dims,
                      int n) {
  ClassRoute r;
  r.kind = kind;
  r.dims = d;
  r.root = root;
  r.n_spanned = n;
  for (int i = 0; i < n; ++i) r.dims_spanned[i] = dims[i];
  if (!args_ok(d, root, dims, n)) return r;  // empty by_rank: verify_route says why

  r.by_rank.assign(d.nodes(), ClassEntry{});
  for (const Coord& g : route_roots(r)) {
    r.at(g).accept = kClassFromLocal;
    std::vector<Coord> reached{g};
    for (int s = 0; s < n; ++s) {
      const int dim = dims[s];
      const uint32_t size = d.n[dim];
      // Stage s: from every node reached so far, out both ways along dim.
      const size_t sources = reached.size();
      for (size_t i = 0; i < sources; ++i) {
        const Coord src = reached[i];  // copy: reached grows below
        expand(&r, src, dir_of(dim, true), size / 2, &reached);         // ceil((n-1)/2)
        expand(&r, src, dir_of(dim, false), (size - 1) / 2, &reached);  // floor((n-1)/2)
      }
    }
  }
  return r;
}

}  // namespace

const char* kind_name(ClassRoute::Kind k) {
  switch (k) {
    case ClassRoute::Kind::kLine: return "line";
    case ClassRoute::Kind::kPlane: return "plane";
    case ClassRoute::Kind::kBox: return "box";
    case ClassRoute::Kind::kTree: return "tree";
  }
  return "?";
}

std::string class_mask_name(uint8_t mask) {
  if (mask == 0) return "none";
  std::string s;
  for (int i = 0; i < 8; ++i) {
    if (!(mask & (1u << i))) continue;
    if (!s.empty()) s += "|";
    if (i < kNumDirs) s += dir_name(static_cast<Dir>(i));
    else if ((1u << i) == kClassFromLocal) s += "local";
    else s += "bit" + std::to_string(i);
  }
  return s;
}

std::vector<Dir> dirs_in(uint8_t mask) {
  std::vector<Dir> v;
  for (int i = 0; i < kNumDirs; ++i)
    if (mask & (1u << i)) v.push_back(static_cast<Dir>(i));
  return v;
}

Status ClassTable::set(uint8_t cls, const ClassEntry& e) {
  if (cls == 0 || cls >= kMaxClasses)
    return error(Code::kInvalid, "class table: class id %u outside 1..%d", cls, kMaxClasses - 1);
  e_[cls] = e;
  return Status::ok();
}

Status ClassTable::install(uint8_t cls, const ClassRoute& r, const Coord& me) {
  if (r.by_rank.size() != r.dims.nodes())
    return error(Code::kInvalid, "class table: class %u: %s route has %zu entries for %u nodes", cls,
                 kind_name(r.kind), r.by_rank.size(), r.dims.nodes());
  for (int i = 0; i < kDims; ++i)
    if (me.c[i] >= r.dims.n[i])
      return error(Code::kInvalid, "class table: class %u: node %s outside %s", cls,
                   me.to_string().c_str(), r.dims.to_string().c_str());
  return set(cls, r.at(me));
}

ClassRoute make_line_route(const Dims& d, const Coord& root, int dim) {
  const int dims[1] = {dim};
  return make_route(ClassRoute::Kind::kLine, d, root, dims, 1);
}

ClassRoute make_plane_route(const Dims& d, const Coord& root, int dim1, int dim2) {
  const int dims[2] = {dim1, dim2};
  return make_route(ClassRoute::Kind::kPlane, d, root, dims, 2);
}

ClassRoute make_box_route(const Dims& d, const Coord& root, const std::array<int, kDims>& order) {
  return make_route(ClassRoute::Kind::kBox, d, root, order.data(), kDims);
}

ClassRoute make_tree_route(const Dims& d, const Coord& root, const std::array<int, kDims>& order) {
  // The box route already is a tree: one accept dir per non-root node.
  return make_route(ClassRoute::Kind::kTree, d, root, order.data(), kDims);
}

bool same_group(const ClassRoute& r, const Coord& a, const Coord& b) {
  for (int i = 0; i < kDims; ++i)
    if (!spanned(r, i) && a.c[i] != b.c[i]) return false;
  return true;
}

Coord root_for(const ClassRoute& r, const Coord& c) {
  Coord g = c;
  for (int i = 0; i < kDims; ++i)
    if (spanned(r, i)) g.c[i] = r.root.c[i];
  return g;
}

std::vector<Coord> route_roots(const ClassRoute& r) {
  std::vector<Coord> roots;
  const uint32_t nodes = r.dims.nodes();
  for (uint32_t k = 0; k < nodes; ++k) {
    const Coord c = coord_of(k, r.dims);
    if (root_for(r, c) == c) roots.push_back(c);
  }
  return roots;
}

uint32_t route_depth(const ClassRoute& r) {
  if (r.by_rank.size() != r.dims.nodes()) return 0;
  std::vector<bool> seen(r.by_rank.size(), false);
  uint32_t depth = 0;
  for (const Coord& g : route_roots(r)) {
    std::deque<std::pair<Coord, uint32_t>> q{{g, 0}};
    seen[rank_of(g, r.dims)] = true;
    while (!q.empty()) {
      auto [c, h] = q.front();
      q.pop_front();
      if (h > depth) depth = h;
      for (Dir t : dirs_in(r.at(c).out)) {
        if (!has_link(t, r.dims)) continue;
        const Coord m = neighbour(c, t, r.dims);
        const uint32_t k = rank_of(m, r.dims);
        if (seen[k] || !(r.by_rank[k].accept & dir_bit(opposite(t)))) continue;
        seen[k] = true;
        q.push_back({m, h + 1});
      }
    }
  }
  return depth;
}

std::optional<Dir> tree_up(const ClassRoute& r, const Coord& c) { return tree_entry_up(r.at(c)); }

std::optional<Dir> tree_entry_up(const ClassEntry& e) {
  if (e.accept & ~kClassDirMask) return std::nullopt;
  const std::vector<Dir> up = dirs_in(e.accept);
  if (up.size() != 1) return std::nullopt;
  return up[0];
}

std::vector<Dir> tree_down(const ClassRoute& r, const Coord& c) { return dirs_in(r.at(c).out); }

}  // namespace toroid
