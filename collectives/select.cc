#include "collectives/select.h"

#include <initializer_list>
#include <vector>

#include "collectives/arith/tree_arith.h"

namespace toroid {

namespace {

constexpr uint64_t kSmall = 2048;        // bytes per node: latency-bound below
constexpr uint64_t kTreeMax = 64 * 1024; // the combine network wins up to here
constexpr uint64_t kBruckMax = 256;      // bytes per alltoall block

// At most five preferences: a fixed array, no allocation per operation.
struct Prefs {
  const char* names[5] = {};
  int n = 0;
  Prefs(std::initializer_list<const char*> l) {
    for (const char* x : l)
      if (n < 5) names[n++] = x;
  }
  const char* const* begin() const { return names; }
  const char* const* end() const { return names + n; }
};

// Two nodes: one exchange each way at once beats the combine network's two
// hops one after the other (up to the root, back down), and its per-packet
// work. Medians on 2x1x1 memif, 9000-byte frames (docs/collectives.md):
// allreduce 8 B torus-ring 1.21 against tree 2.09 us, 1 KiB 1.47 against
// 3.73, 8 KiB 3.26 against rabenseifner's 4.38 and tree's 15.4; bcast 8 B
// line-multicast 1.49 against tree 1.99; reduce 1 KiB binomial 2.40 against
// tree 3.73; allgather 1 KiB recursive-doubling 1.61 against tree 2.32.
Prefs two_nodes(const CollArgs& a, uint64_t bytes) {
  switch (a.kind) {
    case CollKind::kAllreduce:
      if (bytes <= kTreeMax) return {"torus-ring", "recursive-doubling", "rabenseifner", "ring", "tree"};
      return {"ring", "rabenseifner", "torus-fixed-order", "tree"};
    case CollKind::kReduce: return {"binomial", "tree"};
    case CollKind::kBcast: return {"line-multicast", "binomial", "tree"};
    case CollKind::kAllgather: return {"recursive-doubling", "ring", "tree"};
    case CollKind::kBarrier: return {"torus-ring", "dissemination", "barrier-network"};
    default: return {};
  }
}

// The 2x2x2 cube: every partner of recursive doubling and halving is a
// direct neighbour, and one torus hop reaches every line. (On 2x2x1 the
// same runs were mixed: the table's choices stay.) Medians on 2x2x2 memif,
// 9000-byte frames, two or more runs each (docs/collectives.md): allreduce 8 B
// torus-tree 27 against tree 52-59 us, 16 KiB 53-57 against cube400's
// 120-136 and rabenseifner's 88-91, 64 KiB rabenseifner 137-144 against
// cube400's 241-262, 1 MiB 1.98 against 2.83-3.17 ms, 4 MiB 10.5-11.8
// against 12.6-13.0; bcast line-multicast 6-18 us against tree's 30-77 at
// 8 B to 16 KiB; allgather recursive-doubling 52-54 us against ring's
// 204-222 at 16 KiB, 4.1-4.3 against 6.3-6.7 ms at 4 MiB; alltoall of
// 512 KiB blocks pairwise 6.8-6.9 against random-order's 8.0-8.1 ms (64 and
// 128 KiB blocks: within each other's spread; 8 KiB: random-order 120-139
// against 178-185 us). On a second machine (2026-11-28, docs/collectives.md),
// alternating runs: 128 KiB blocks pairwise 3.69-3.90 against 4.00-4.74 ms
// (6 of 6), 64 KiB 1.85-2.63 against 1.97-2.20 ms (7 of 8, medians 1.95
// against 2.06), 32 KiB random-order 0.80-0.91 against 0.85-0.97 ms (6 of 6):
// pairwise from 64 KiB. The barrier stays the network's: torus-ring won
// three runs of four in one series and lost three of four in the next.
constexpr uint64_t kCubeSmall = 16 * 1024;
constexpr uint64_t kCubePairwiseMin = 64 * 1024;  // bytes per alltoall block
bool cube(const CommInfo& c) {
  return c.box && c.shape.n[0] == 2 && c.shape.n[1] == 2 && c.shape.n[2] == 2;
}

Prefs cube_prefs(const CollArgs& a, uint64_t bytes) {
  switch (a.kind) {
    case CollKind::kAllreduce:
      if (bytes <= kCubeSmall) return {"torus-tree", "tree", "recursive-doubling", "rabenseifner", "ring"};
      return {"rabenseifner", "cube400", "ring", "torus-fixed-order", "tree"};
    case CollKind::kBcast: return {"line-multicast", "binomial", "tree"};
    case CollKind::kAllgather: return {"recursive-doubling", "ring", "tree"};
    case CollKind::kAlltoall:
      if (bytes >= kCubePairwiseMin && !a.in_place()) return {"pairwise", "random-order"};
      return {};
    default: return {};
  }
}

Prefs base_preferences(const CommInfo& c, const CollArgs& a) {
  const uint64_t bytes = a.count * a.esize;
  if (c.size == 2) {
    const Prefs p = two_nodes(a, bytes);
    if (p.n > 0) return p;
  }
  if (cube(c)) {
    const Prefs p = cube_prefs(a, bytes);
    if (p.n > 0) return p;
  }
  switch (a.kind) {
    case CollKind::kAllreduce:
      if (bytes <= kSmall) return {"tree", "recursive-doubling", "torus-fixed-order", "ring"};
      if (bytes <= kTreeMax) return {"cube400", "rabenseifner", "tree", "ring"};
      return {"cube400", "ring", "rabenseifner", "torus-fixed-order", "tree"};
    case CollKind::kReduce: return {"tree", "binomial"};
    case CollKind::kBcast:
      if (bytes <= kTreeMax) return {"tree", "binomial", "line-multicast"};
      return {"line-multicast", "binomial", "tree"};
    case CollKind::kGather: return {"binomial"};
    case CollKind::kScatter: return {"binomial"};
    case CollKind::kAllgather:
      if (bytes * c.size <= kTreeMax) return {"tree", "recursive-doubling", "ring"};
      return {"ring", "recursive-doubling", "tree"};
    case CollKind::kReduceScatter: return {"recursive-halving", "ring"};
    case CollKind::kAlltoall:
      if (bytes <= kBruckMax) return {"bruck", "pairwise"};
      if (a.in_place()) return {"xor-inplace", "pairwise"};
      return {"random-order", "pairwise"};
    case CollKind::kBarrier:
      // Two nodes: two_nodes above (torus-ring). From 8 nodes the network's
      // tree wins (2x2x2: 41 against 95 us for dissemination).
      return {"barrier-network", "dissemination"};
  }
  return {};
}

// Exact float sums of more than kSmall bytes: each rank rounds only its
// own share (repro_exact_share.h) instead of every rank decoding every
// value; below, ExactSum over the usual choice. Medians on memif, 9000-byte
// frames (docs/collectives.md): 2x1x1 512 B ExactSum over torus-ring 1.18
// against 1.47 us, 4 KiB 2.76 against 1.69, 64 KiB 34.8 against 8.75;
// 2x2x2 4 KiB 106 against 73 us, 64 KiB 449 against 240. Only where every
// rank's share holds a whole block: on a large partition a short vector
// would travel mostly as padding (ExactSum's two passes over the tree
// move only the data).
Prefs preferences(const CommInfo& c, const CollArgs& a) {
  const Prefs base = base_preferences(c, a);
  if (a.kind != CollKind::kAllreduce || a.repro != Repro::kExact || a.op != ROp::kSum || !dtype_is_float(a.dtype) ||
      a.count * a.esize <= kSmall || c.size < 2 || a.count < uint64_t{c.size} * arith::kFloatSumBlock)
    return base;
  Prefs p{"exact-share"};
  for (const char* name : base)
    if (p.n < 5) p.names[p.n++] = name;
  return p;
}

}  // namespace

std::string algo_unusable(const AlgoInfo& a, const CommInfo& c, const CollArgs& args) {
  std::string why = a.applicable ? a.applicable(c, args) : std::string();
  if (!why.empty()) return why;
  if (args.repro == Repro::kFixedOrder && coll_reduces(args.kind) && dtype_is_float(args.dtype) &&
      !a.fixed_order)
    return std::string(a.name) + " combines floats in a different order on different nodes (fixed-order asked)";
  return "";
}

Result<const AlgoInfo*> select_algo(const CommInfo& c, const CollArgs& args) {
  for (const char* name : preferences(c, args)) {
    const AlgoInfo* a = find_algo(args.kind, name);
    if (a && algo_unusable(*a, c, args).empty()) return a;
  }
  std::string reasons;
  for (const AlgoInfo& a : algorithms()) {
    if (a.kind != args.kind) continue;
    const std::string why = algo_unusable(a, c, args);
    if (why.empty()) return &a;
    reasons += std::string(reasons.empty() ? "" : "; ") + a.name + ": " + why;
  }
  return error(Code::kUnsupported, "no %s algorithm can run this operation (%s)", coll_kind_name(args.kind),
               reasons.empty() ? "none registered" : reasons.c_str());
}

}  // namespace toroid
