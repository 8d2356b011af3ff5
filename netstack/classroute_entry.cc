// One node's class-route entry in closed form, from its coordinates, the
// partition and the route's parameters alone: O(1) per node, so a node of a
// 65,536-node partition boots without building (or verifying) the whole
// table. It gives exactly what the expansion generators of classroute.cc
// give that node (the unit tests compare the two on every shape, root and
// order they cover; verify_route checks the generators' tables).
//
// Why the closed form holds: the generators expand stage by stage, dims[0]
// first. A node c whose coordinates differ from its group root g in the
// spanned dims is reached in the last stage s whose dimension differs (the
// earlier stages reach c's projections), from the side its ring offset says
// (plus for offsets 1 .. floor(n/2), minus for the rest), and forwards along
// that direction unless it is the last node of that run. In every later stage
// it is itself a source, sending both ways where the ring has nodes left.
#include "netstack/classroute.h"

namespace toroid {

ClassEntry class_entry(const ClassRoute& shape, const Coord& me) {
  ClassEntry e;
  const Dims& d = shape.dims;
  const int n = shape.n_spanned;
  if (n < 0 || n > kDims) return e;
  for (int i = 0; i < kDims; ++i)
    if (d.n[i] < 1 || d.n[i] > static_cast<uint32_t>(kMaxDimSize) || me.c[i] >= d.n[i] ||
        shape.root.c[i] >= d.n[i])
      return e;
  for (int s = 0; s < n; ++s) {
    const int dim = shape.dims_spanned[s];
    if (dim < 0 || dim >= kDims) return e;
    for (int t = 0; t < s; ++t)
      if (shape.dims_spanned[t] == dim) return e;
  }
  // The root of my line/plane: the route's root in the spanned dims.
  int last = -1;  // the stage that reaches me (-1: I am a root)
  for (int s = 0; s < n; ++s) {
    const int dim = shape.dims_spanned[s];
    if (me.c[dim] != shape.root.c[dim]) last = s;
  }
  if (last < 0) {
    e.accept = kClassFromLocal;
  } else {
    const int dim = shape.dims_spanned[last];
    const uint32_t size = d.n[dim];
    const uint32_t offset = (me.c[dim] + size - shape.root.c[dim]) % size;
    const uint32_t plus_run = size / 2, minus_run = (size - 1) / 2;
    const Dir plus = dir_of(dim, true), minus = dir_of(dim, false);
    e.deposit = true;
    if (offset <= plus_run) {  // reached going plus, from my minus side
      e.accept = dir_bit(minus);
      if (offset < plus_run) e.out |= dir_bit(plus);
    } else {
      e.accept = dir_bit(plus);
      if (size - offset < minus_run) e.out |= dir_bit(minus);
    }
  }
  for (int s = last + 1; s < n; ++s) {
    const int dim = shape.dims_spanned[s];
    const uint32_t size = d.n[dim];
    if (size / 2 > 0) e.out |= dir_bit(dir_of(dim, true));
    if ((size - 1) / 2 > 0) e.out |= dir_bit(dir_of(dim, false));
  }
  return e;
}

ClassEntry tree_entry(const Dims& d, const Coord& root, const Coord& me, const std::array<int, kDims>& order) {
  ClassRoute shape;
  shape.kind = ClassRoute::Kind::kTree;
  shape.dims = d;
  shape.root = root;
  shape.dims_spanned = order;
  shape.n_spanned = kDims;
  return class_entry(shape, me);
}

}  // namespace toroid
