// Class route verifier: runs the multicast of every root through the router
// semantics of classroute.h and demands exactly one copy per target. Routes
// come from generators, hand-made tables and personalities alike; a bad one
// loaded into the routers loses or duplicates packets with no software in
// the path to notice, so the check is strict: anything the pattern does not
// use (a stray accept bit, a non-root accepting local) is an error too.
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "netstack/classroute.h"

namespace toroid {

namespace {

std::string fmt(const char* f, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof(buf), f, ap);
  return buf;
}

std::string describe(const ClassRoute& r) {
  static const char* const kDimNames[kDims] = {"x", "y", "z"};
  std::string s = "class route (";
  s += kind_name(r.kind);
  for (int i = 0; i < r.n_spanned && i < kDims; ++i) {
    s += i == 0 ? " " : ",";
    const int d = r.dims_spanned[i];
    s += d >= 0 && d < kDims ? kDimNames[d] : std::to_string(d);
  }
  s += ", root " + r.root.to_string() + ", " + r.dims.to_string() + ")";
  return s;
}

Status fail(const ClassRoute& r, const char* f, ...) __attribute__((format(printf, 2, 3)));
Status fail(const ClassRoute& r, const char* f, ...) {
  va_list ap;
  va_start(ap, f);
  std::string msg = fmt(f, ap);
  va_end(ap);
  return error(Code::kInvalid, "%s: %s", describe(r).c_str(), msg.c_str());
}

std::string at(const Coord& c) { return c.to_string(); }

int expected_spanned(ClassRoute::Kind k) {
  switch (k) {
    case ClassRoute::Kind::kLine: return 1;
    case ClassRoute::Kind::kPlane: return 2;
    case ClassRoute::Kind::kBox:
    case ClassRoute::Kind::kTree: return kDims;
  }
  return -1;
}

// The arguments a generator was given, and the table's size.
Status check_shape(const ClassRoute& r) {
  const int want = expected_spanned(r.kind);
  if (want < 0) return fail(r, "unknown kind %d", static_cast<int>(r.kind));
  if (r.n_spanned != want)
    return fail(r, "a %s route spans %d dimension(s), not %d", kind_name(r.kind), want, r.n_spanned);
  for (int i = 0; i < kDims; ++i)
    if (r.dims.n[i] < 1 || r.dims.n[i] > static_cast<uint32_t>(kMaxDimSize))
      return fail(r, "dimension %d has size %u (1..%d)", i, r.dims.n[i], kMaxDimSize);
  for (int i = 0; i < r.n_spanned; ++i) {
    const int d = r.dims_spanned[i];
    if (d < 0 || d >= kDims) return fail(r, "spanned dimension %d is not 0..%d", d, kDims - 1);
    for (int j = 0; j < i; ++j)
      if (r.dims_spanned[j] == d) return fail(r, "dimension %d is spanned twice", d);
  }
  for (int i = 0; i < kDims; ++i)
    if (r.root.c[i] >= r.dims.n[i]) return fail(r, "root outside the partition");
  if (r.by_rank.size() != r.dims.nodes())
    return fail(r, "%zu entries for %u nodes", r.by_rank.size(), r.dims.nodes());
  return Status::ok();
}

// Bits that no router has, and links that do not exist.
Status check_entries(const ClassRoute& r) {
  static const char* const kDimNames[kDims] = {"x", "y", "z"};
  for (uint32_t k = 0; k < r.by_rank.size(); ++k) {
    const ClassEntry& e = r.by_rank[k];
    const Coord c = coord_of(k, r.dims);
    const uint8_t bad_accept = e.accept & ~(kClassDirMask | kClassFromLocal);
    if (bad_accept) return fail(r, "node %s has unknown accept bits 0x%02x", at(c).c_str(), bad_accept);
    const uint8_t bad_out = e.out & ~kClassDirMask;
    if (bad_out) return fail(r, "node %s has unknown out bits 0x%02x", at(c).c_str(), bad_out);
    for (Dir t : dirs_in(e.out))
      if (!has_link(t, r.dims))
        return fail(r, "node %s forwards %s but dimension %s has size 1 (no such link)",
                    at(c).c_str(), dir_name(t), kDimNames[dir_dim(t)]);
    for (Dir t : dirs_in(e.accept))
      if (!has_link(t, r.dims))
        return fail(r, "node %s accepts from %s but dimension %s has size 1 (no such link)",
                    at(c).c_str(), dir_name(t), kDimNames[dir_dim(t)]);
  }
  return Status::ok();
}

// Every tree a tree: the root accepts only local, everyone else one up link,
// and up links lead to the root.
Status check_tree(const ClassRoute& r) {
  const uint32_t root = rank_of(r.root, r.dims);
  const uint8_t ra = r.by_rank[root].accept;
  if (ra != kClassFromLocal)
    return fail(r, "tree root %s must accept only local injection, accepts %s", at(r.root).c_str(),
                class_mask_name(ra).c_str());
  const uint32_t nodes = r.dims.nodes();
  for (uint32_t k = 0; k < nodes; ++k) {
    if (k == root) continue;
    const uint8_t a = r.by_rank[k].accept;
    const Coord c = coord_of(k, r.dims);
    if (a & kClassFromLocal)
      return fail(r, "tree node %s accepts local injection; only the root may", at(c).c_str());
    const size_t ups = dirs_in(a).size();
    if (ups != 1)
      return fail(r, "tree node %s has %zu up links (%s); a tree node has exactly one",
                  at(c).c_str(), ups, class_mask_name(a).c_str());
  }
  // 0 = not yet walked, 1 = on the current walk, 2 = known to reach the root.
  std::vector<uint8_t> state(nodes, 0);
  state[root] = 2;
  std::vector<uint32_t> path;
  for (uint32_t k = 0; k < nodes; ++k) {
    path.clear();
    uint32_t cur = k;
    while (state[cur] == 0) {
      state[cur] = 1;
      path.push_back(cur);
      const Dir up = dirs_in(r.by_rank[cur].accept)[0];
      cur = rank_of(neighbour(coord_of(cur, r.dims), up, r.dims), r.dims);
    }
    if (state[cur] == 1)
      return fail(r, "up links from tree node %s run into a cycle at node %s and never reach the root",
                  at(coord_of(k, r.dims)).c_str(), at(coord_of(cur, r.dims)).c_str());
    for (uint32_t p : path) state[p] = 2;
  }
  return Status::ok();
}

}  // namespace

Status verify_route(const ClassRoute& r) {
  if (Status s = check_shape(r); !s) return s;
  if (Status s = check_entries(r); !s) return s;
  if (r.kind == ClassRoute::Kind::kTree)
    if (Status s = check_tree(r); !s) return s;

  const uint32_t nodes = r.dims.nodes();
  std::vector<bool> reached(nodes, false);
  std::vector<uint8_t> arrived(nodes, 0);  // the accept bit each node was reached through
  for (const Coord& g : route_roots(r)) {
    const uint32_t gk = rank_of(g, r.dims);
    const ClassEntry& ge = r.by_rank[gk];
    if (!(ge.accept & kClassFromLocal))
      return fail(r, "root %s does not accept local injection (accepts %s)", at(g).c_str(),
                  class_mask_name(ge.accept).c_str());
    if (ge.deposit) return fail(r, "root %s deposits its own packet", at(g).c_str());
    reached[gk] = true;
    arrived[gk] = kClassFromLocal;
    std::deque<Coord> q{g};
    while (!q.empty()) {
      const Coord c = q.front();
      q.pop_front();
      for (Dir t : dirs_in(r.at(c).out)) {
        const Coord m = neighbour(c, t, r.dims);
        const uint32_t mk = rank_of(m, r.dims);
        const ClassEntry& me = r.by_rank[mk];
        const Dir from = opposite(t);
        if (!(me.accept & dir_bit(from)))
          return fail(r, "node %s forwards %s but node %s does not accept from %s", at(c).c_str(),
                      dir_name(t), at(m).c_str(), dir_name(from));
        if (!same_group(r, m, g))
          return fail(r, "node %s (forwarded %s from node %s) is outside the target set of root %s%s",
                      at(m).c_str(), dir_name(t), at(c).c_str(), at(g).c_str(),
                      me.deposit ? " but deposits" : "");
        if (reached[mk])
          return fail(r, "node %s reached twice (cycle or duplicate path), again %s from node %s",
                      at(m).c_str(), dir_name(t), at(c).c_str());
        reached[mk] = true;
        arrived[mk] = dir_bit(from);
        q.push_back(m);
      }
    }
  }

  for (uint32_t k = 0; k < nodes; ++k) {
    if (reached[k]) continue;
    const Coord c = coord_of(k, r.dims);
    return fail(r, "node %s never reached from root %s", at(c).c_str(), at(root_for(r, c)).c_str());
  }
  for (uint32_t k = 0; k < nodes; ++k) {
    const Coord c = coord_of(k, r.dims);
    const ClassEntry& e = r.by_rank[k];
    if (arrived[k] != kClassFromLocal && !e.deposit)
      return fail(r, "node %s is reached from root %s but does not deposit", at(c).c_str(),
                  at(root_for(r, c)).c_str());
    const uint8_t stray = e.accept & ~arrived[k];
    if (stray & kClassFromLocal)
      return fail(r, "node %s accepts local injection but is not a root", at(c).c_str());
    if (stray)
      return fail(r, "node %s accepts from %s but nothing is ever sent to it that way", at(c).c_str(),
                  dir_name(dirs_in(stray)[0]));
  }
  return Status::ok();
}

Status check_tree_route(const ClassRoute& tree, const Dims& dims) {
  if (tree.kind != ClassRoute::Kind::kTree)
    return error(Code::kInvalid, "a %s route is not a tree", kind_name(tree.kind));
  if (!(tree.dims == dims))
    return error(Code::kInvalid, "tree over %s on a %s partition", tree.dims.to_string().c_str(),
                 dims.to_string().c_str());
  return verify_route(tree);
}

Status verify_table_set(const std::vector<ClassRoute>& routes) {
  if (routes.size() > static_cast<size_t>(kMaxClasses - 1))
    return error(Code::kInvalid, "class route set: %zu routes, at most %d classes", routes.size(),
                 kMaxClasses - 1);
  for (size_t i = 0; i < routes.size(); ++i) {
    if (i > 0 && !(routes[i].dims == routes[0].dims))
      return error(Code::kInvalid, "class route set: route %zu is for %s, route 0 for %s", i,
                   routes[i].dims.to_string().c_str(), routes[0].dims.to_string().c_str());
    if (Status s = verify_route(routes[i]); !s)
      return error(Code::kInvalid, "class route set: route %zu: %s", i, s.message().c_str());
  }
  return Status::ok();
}

}  // namespace toroid
