#include "collectives/coll.h"

namespace toroid {

namespace {
const char* const kKindNames[] = {"allreduce", "reduce",         "bcast",    "gather", "scatter",
                                  "allgather", "reduce-scatter", "alltoall", "barrier"};
}

const char* coll_kind_name(CollKind k) {
  const auto i = static_cast<size_t>(k);
  return i < static_cast<size_t>(kCollKinds) ? kKindNames[i] : "?";
}

Result<CollKind> parse_coll_kind(const std::string& s) {
  for (int i = 0; i < kCollKinds; ++i)
    if (s == kKindNames[i]) return static_cast<CollKind>(i);
  if (s == "broadcast") return CollKind::kBcast;
  return error(Code::kInvalid,
               "unknown collective '%s' (known: allreduce, reduce, bcast, gather, scatter, allgather, reduce-scatter, "
               "alltoall, barrier)",
               s.c_str());
}

bool coll_reduces(CollKind k) {
  return k == CollKind::kAllreduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}

const std::vector<AlgoInfo>& algorithms() {
  static const std::vector<AlgoInfo> all = [] {
    std::vector<AlgoInfo> v;
    register_tree_algos(v);
    register_torus_algos(v);
    register_seed_algos(v);
    register_generic_algos(v);
    return v;
  }();
  return all;
}

namespace {
// Built before main(), so that no test sees the registry's allocation as
// its own (and no operation pays for it).
[[maybe_unused]] const bool kRegistryBuilt = !algorithms().empty();
}  // namespace

const AlgoInfo* find_algo(CollKind kind, std::string_view name) {
  for (const AlgoInfo& a : algorithms())
    if (a.kind == kind && name == a.name) return &a;
  return nullptr;
}

std::string algo_names(CollKind kind) {
  std::string s;
  for (const AlgoInfo& a : algorithms()) {
    if (a.kind != kind) continue;
    if (!s.empty()) s += ", ";
    s += a.name;
  }
  return s;
}

}  // namespace toroid

