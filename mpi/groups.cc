// Groups (MPI 3.1 section 6.3): ordered sets of processes, here lists of
// partition ranks. Group objects are reference counted (a communicator
// holds its group); freed ones are recycled, never returned to the
// allocator, so a stale handle reads as invalid.
#include <algorithm>
#include <set>
#include <vector>

#include "mpi/impl.h"

toroid_mpi_group toroid_mpi_group_empty;

namespace toroid::mpi {

namespace {

std::vector<toroid_mpi_group*>& free_groups() {
  static auto* v = new std::vector<toroid_mpi_group*>();
  return *v;
}

struct EmptyGroup {
  EmptyGroup() {
    toroid_mpi_group_empty.magic = kMagicGroup;
    toroid_mpi_group_empty.predefined = true;
  }
} g_empty_group;

int result(MPI_Group* out, std::vector<uint32_t> world) {
  *out = world.empty() ? MPI_GROUP_EMPTY : group_new(std::move(world));
  return MPI_SUCCESS;
}

}  // namespace


}  // namespace toroid::mpi

int toroid_mpi_group::rank_of(uint32_t world_rank) const {
  auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(world_rank, -1));
  return it != index.end() && it->first == world_rank ? it->second : MPI_UNDEFINED;
}

void toroid_mpi_group::build_index() {
  index.clear();
  index.reserve(world.size());
  for (size_t r = 0; r < world.size(); ++r) index.emplace_back(world[r], static_cast<int>(r));
  std::sort(index.begin(), index.end());
  rank = toroid::mpi::rt().up() || toroid::mpi::rt().phase() == toroid::mpi::Runtime::Phase::kBefore
             ? rank_of(toroid::mpi::rt().rank())
             : MPI_UNDEFINED;
}

namespace toroid::mpi {

MPI_Group group_new(std::vector<uint32_t> world) {
  toroid_mpi_group* g;
  if (!free_groups().empty()) {
    g = free_groups().back();
    free_groups().pop_back();
  } else {
    g = new toroid_mpi_group();
  }
  g->magic = kMagicGroup;
  g->predefined = false;
  g->refs = 1;
  g->world = std::move(world);
  g->build_index();
  return g;
}

void group_retain(MPI_Group g) {
  if (valid(g) && !g->predefined) ++g->refs;
}

void group_release(MPI_Group g) {
  if (!valid(g) || g->predefined) return;
  if (--g->refs > 0) return;
  g->magic = 0;
  g->world.clear();
  g->world.shrink_to_fit();
  g->index.clear();
  g->index.shrink_to_fit();
  free_groups().push_back(g);
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Group_size, (MPI_Group group, int* size)) {
  MPI_ENTER("MPI_Group_size");
  if (int e = check_group(group)) return e;
  if (!size) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "size is NULL");
  *size = group->size();
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Group_rank, (MPI_Group group, int* rank)) {
  MPI_ENTER("MPI_Group_rank");
  if (int e = check_group(group)) return e;
  if (!rank) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "rank is NULL");
  *rank = group->rank;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])) {
  MPI_ENTER("MPI_Group_translate_ranks");
  if (int e = check_group(group1)) return e;
  if (int e = check_group(group2)) return e;
  if (n < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "n %d is negative", n);
  if (n > 0 && (!ranks1 || !ranks2)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "ranks1 or ranks2 is NULL");
  for (int i = 0; i < n; ++i) {
    const int r = ranks1[i];
    if (r == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (r < 0 || r >= group1->size())
      return raise(MPI_COMM_WORLD, MPI_ERR_RANK, "ranks1[%d] = %d is not a rank of group1 (%d ranks)", i, r,
                   group1->size());
    ranks2[i] = group2->rank_of(group1->world[static_cast<size_t>(r)]);
  }
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Group_compare, (MPI_Group group1, MPI_Group group2, int* result)) {
  MPI_ENTER("MPI_Group_compare");
  if (int e = check_group(group1)) return e;
  if (int e = check_group(group2)) return e;
  if (!result) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "result is NULL");
  if (group1->world == group2->world) {
    *result = MPI_IDENT;
  } else if (group1->size() == group2->size() &&
             std::equal(group1->index.begin(), group1->index.end(), group2->index.begin(),
                        [](const auto& a, const auto& b) { return a.first == b.first; })) {
    *result = MPI_SIMILAR;
  } else {
    *result = MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup)) {
  MPI_ENTER("MPI_Group_union");
  if (int e = check_group(group1)) return e;
  if (int e = check_group(group2)) return e;
  if (!newgroup) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newgroup is NULL");
  std::vector<uint32_t> w = group1->world;
  for (uint32_t x : group2->world)
    if (group1->rank_of(x) == MPI_UNDEFINED) w.push_back(x);
  return result(newgroup, std::move(w));
}

TOROID_MPI_API(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup)) {
  MPI_ENTER("MPI_Group_intersection");
  if (int e = check_group(group1)) return e;
  if (int e = check_group(group2)) return e;
  if (!newgroup) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newgroup is NULL");
  std::vector<uint32_t> w;
  for (uint32_t x : group1->world)
    if (group2->rank_of(x) != MPI_UNDEFINED) w.push_back(x);
  return result(newgroup, std::move(w));
}

TOROID_MPI_API(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup)) {
  MPI_ENTER("MPI_Group_difference");
  if (int e = check_group(group1)) return e;
  if (int e = check_group(group2)) return e;
  if (!newgroup) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newgroup is NULL");
  std::vector<uint32_t> w;
  for (uint32_t x : group1->world)
    if (group2->rank_of(x) == MPI_UNDEFINED) w.push_back(x);
  return result(newgroup, std::move(w));
}

namespace {

// The ranks a list names, each once and inside the group.
int checked_ranks(MPI_Group g, int n, const int ranks[], std::vector<char>* seen) {
  if (n < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "n %d is negative", n);
  if (n > g->size()) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "n %d is larger than the group (%d ranks)", n, g->size());
  if (n > 0 && !ranks) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "ranks is NULL");
  seen->assign(static_cast<size_t>(g->size()), 0);
  for (int i = 0; i < n; ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= g->size())
      return raise(MPI_COMM_WORLD, MPI_ERR_RANK, "ranks[%d] = %d is not a rank of the group (%d ranks)", i, r, g->size());
    if ((*seen)[static_cast<size_t>(r)])
      return raise(MPI_COMM_WORLD, MPI_ERR_RANK, "rank %d is listed twice", r);
    (*seen)[static_cast<size_t>(r)] = 1;
  }
  return 0;
}

// The ranks of (first, last, stride) triplets, in order, each once.
int range_ranks(MPI_Group g, int n, int ranges[][3], std::vector<int>* out) {
  if (n < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "n %d is negative", n);
  if (n > 0 && !ranges) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "ranges is NULL");
  std::vector<char> seen(static_cast<size_t>(g->size()), 0);
  out->clear();
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "range %d has stride 0", i);
    if (first < 0 || first >= g->size() || last < 0 || last >= g->size())
      return raise(MPI_COMM_WORLD, MPI_ERR_RANK, "range %d (%d, %d, %d) leaves the group (%d ranks)", i, first, last,
                   stride, g->size());
    if ((stride > 0 && first > last) || (stride < 0 && first < last))
      return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "range %d (%d, %d, %d) is empty", i, first, last, stride);
    for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (seen[static_cast<size_t>(r)]) return raise(MPI_COMM_WORLD, MPI_ERR_RANK, "rank %d is named twice", r);
      seen[static_cast<size_t>(r)] = 1;
      out->push_back(r);
    }
  }
  return 0;
}

}  // namespace

TOROID_MPI_API(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup)) {
  MPI_ENTER("MPI_Group_incl");
  if (int e = check_group(group)) return e;
  if (!newgroup) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newgroup is NULL");
  std::vector<char> seen;
  if (int e = checked_ranks(group, n, ranks, &seen)) return e;
  std::vector<uint32_t> w;
  for (int i = 0; i < n; ++i) w.push_back(group->world[static_cast<size_t>(ranks[i])]);
  return result(newgroup, std::move(w));
}

TOROID_MPI_API(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup)) {
  MPI_ENTER("MPI_Group_excl");
  if (int e = check_group(group)) return e;
  if (!newgroup) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newgroup is NULL");
  std::vector<char> seen;
  if (int e = checked_ranks(group, n, ranks, &seen)) return e;
  std::vector<uint32_t> w;
  for (size_t r = 0; r < group->world.size(); ++r)
    if (!seen[r]) w.push_back(group->world[r]);
  return result(newgroup, std::move(w));
}

TOROID_MPI_API(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup)) {
  MPI_ENTER("MPI_Group_range_incl");
  if (int e = check_group(group)) return e;
  if (!newgroup) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newgroup is NULL");
  std::vector<int> ranks;
  if (int e = range_ranks(group, n, ranges, &ranks)) return e;
  std::vector<uint32_t> w;
  for (int r : ranks) w.push_back(group->world[static_cast<size_t>(r)]);
  return result(newgroup, std::move(w));
}

TOROID_MPI_API(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup)) {
  MPI_ENTER("MPI_Group_range_excl");
  if (int e = check_group(group)) return e;
  if (!newgroup) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newgroup is NULL");
  std::vector<int> ranks;
  if (int e = range_ranks(group, n, ranges, &ranks)) return e;
  std::vector<char> out(group->world.size(), 0);
  for (int r : ranks) out[static_cast<size_t>(r)] = 1;
  std::vector<uint32_t> w;
  for (size_t r = 0; r < group->world.size(); ++r)
    if (!out[r]) w.push_back(group->world[r]);
  return result(newgroup, std::move(w));
}

TOROID_MPI_API(int, Group_free, (MPI_Group * group)) {
  MPI_ENTER("MPI_Group_free");
  if (!group) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "group is NULL");
  if (int e = check_group(*group)) return e;
  group_release(*group);  // predefined groups stay
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}
