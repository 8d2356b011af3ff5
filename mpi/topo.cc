// Process topologies (MPI 3.1 chapter 7). Cartesian grids on the torus:
// with reorder, a grid whose dimensions are the torus's (in any order)
// numbers its ranks by torus coordinates, so grid neighbours are link
// neighbours and MPI_Cart_sub's lines and planes are torus lines and planes
// (box-shaped communicators). Graph and distributed graph topologies keep
// their neighbour lists for the neighbourhood collectives.
#include <algorithm>
#include <numeric>
#include <vector>

#include "mpi/comm_internal.h"
#include "mpi/topo.h"

namespace toroid::mpi {

void cart_coords(const Topology& t, int rank, int* coords) {
  for (size_t d = t.dims.size(); d-- > 0;) {
    coords[d] = rank % t.dims[d];
    rank /= t.dims[d];
  }
}

int cart_rank(const Topology& t, const int* coords) {
  int r = 0;
  for (size_t d = 0; d < t.dims.size(); ++d) r = r * t.dims[d] + coords[d];
  return r;
}

void Topology::in_neighbours(int rank, std::vector<int>* out) const {
  if (kind == MPI_CART) {
    // Cartesian in- and out-neighbours are the same list (7.6).
    out_neighbours(rank, out);
  } else if (kind == MPI_GRAPH) {
    out->clear();
    for (int i = rank ? index[static_cast<size_t>(rank) - 1] : 0; i < index[static_cast<size_t>(rank)]; ++i)
      out->push_back(edges[static_cast<size_t>(i)]);
  } else {
    *out = sources;
  }
}

void Topology::recv_order(size_t n, std::vector<size_t>* order) const {
  order->clear();
  // Cartesian: per dimension the +1 source's block first. Both sources may
  // be one process (a periodic dimension of size 1 or 2), whose messages
  // arrive in its send order (-1 block, then +1 block): its -1 block is
  // the data sent towards us from our +1 side.
  for (size_t i = 0; i < n; ++i) order->push_back(kind == MPI_CART ? (i % 2 ? i - 1 : i + 1) : i);
}

void Topology::out_neighbours(int rank, std::vector<int>* out) const {
  if (kind == MPI_CART) {
    // Per dimension: towards -1, then +1 (7.6: the blocks' order).
    out->clear();
    std::vector<int> c(dims.size());
    for (size_t d = 0; d < dims.size(); ++d)
      for (int disp : {-1, +1}) {
        cart_coords(*this, rank, c.data());
        int x = c[d] + disp;
        if (x < 0 || x >= dims[d]) {
          if (!periods[d]) {
            out->push_back(MPI_PROC_NULL);
            continue;
          }
          x = (x + dims[d]) % dims[d];
        }
        c[d] = x;
        out->push_back(cart_rank(*this, c.data()));
      }
  } else if (kind == MPI_GRAPH) {
    in_neighbours(rank, out);  // a graph's edges count both ways
  } else {
    *out = destinations;
  }
}

std::unique_ptr<Topology> topo_clone(const Topology* t) { return t ? std::make_unique<Topology>(*t) : nullptr; }

namespace {

// The cart rank -> partition rank map of a reordered grid on the torus:
// possible when comm is the whole partition in world order and each grid
// dimension is one torus dimension (the others of size 1).
bool torus_order(MPI_Comm comm, const std::vector<int>& dims, std::vector<uint32_t>* members) {
  const Dims& t = rt().world().net().dims();
  if (comm->size != static_cast<int>(t.nodes()) || comm->group->world.size() != t.nodes()) return false;
  for (uint32_t r = 0; r < t.nodes(); ++r)
    if (comm->group->world[r] != r) return false;
  // Assign grid dimensions to torus dimensions of the same size.
  std::vector<int> of(dims.size(), -1);
  bool used[kDims] = {false, false, false};
  for (size_t i = 0; i < dims.size(); ++i) {
    for (int d = 0; d < kDims && of[i] < 0; ++d)
      if (!used[d] && static_cast<int>(t.n[d]) == dims[i] && dims[i] > 1) {
        of[i] = d;
        used[d] = true;
      }
    if (of[i] < 0 && dims[i] != 1) return false;
  }
  for (int d = 0; d < kDims; ++d)
    if (!used[d] && t.n[d] != 1) return false;
  Topology g;
  g.kind = MPI_CART;
  g.dims = dims;
  members->assign(t.nodes(), 0);
  std::vector<int> c(dims.size());
  for (uint32_t r = 0; r < t.nodes(); ++r) {
    cart_coords(g, static_cast<int>(r), c.data());
    Coord at{{0, 0, 0}};
    for (size_t i = 0; i < dims.size(); ++i)
      if (of[i] >= 0) at.c[of[i]] = static_cast<uint32_t>(c[i]);
    (*members)[r] = rank_of(at, t);
  }
  return true;
}

}  // namespace

// A new communicator of comm's first `n` ranks (or a torus order) carrying
// topology t; ranks outside it get MPI_COMM_NULL. Collective over comm.
int topo_comm(MPI_Comm comm, int n, bool reorder, std::unique_ptr<Topology> t, MPI_Comm* out) {
  std::vector<uint32_t> members;
  if (!(reorder && t->kind == MPI_CART && n == comm->size && torus_order(comm, t->dims, &members)))
    members.assign(comm->group->world.begin(), comm->group->world.begin() + n);
  uint16_t ctx = 0;
  if (Status st = agree_over(comm, &ctx); !st) return raise_status(comm, st);
  if (std::find(members.begin(), members.end(), rt().rank()) == members.end()) {
    rt().world().contexts().release(ctx);
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  MPI_Comm c = comm_new_intra(comm, members, ctx);
  if (!c) return raise(comm, MPI_ERR_INTERN, "could not make the communicator");
  c->topo = std::move(t);
  *out = c;
  return MPI_SUCCESS;
}

bool cart_map_rank(MPI_Comm comm, const std::vector<int>& dims, int* newrank) {
  std::vector<uint32_t> members;
  long n = 1;
  for (int d : dims) n *= d;
  if (comm->rank >= n) {
    *newrank = MPI_UNDEFINED;
    return true;
  }
  if (n == comm->size && torus_order(comm, dims, &members)) {
    *newrank = static_cast<int>(std::find(members.begin(), members.end(), rt().rank()) - members.begin());
    return true;
  }
  *newrank = comm->rank;
  return true;
}

namespace {

// d^k >= m, without overflow.
bool power_reaches(long d, int k, long m) {
  long p = 1;
  for (int i = 0; i < k; ++i) {
    if (p >= (m + d - 1) / d) return true;
    p *= d;
  }
  return p >= m;
}

// The largest d with d^k <= m (k >= 1).
long floor_root(long m, int k) {
  if (k == 1) return m;
  long d = 1;
  while (!power_reaches(d + 1, k, m + 1)) ++d;
  return d;
}

// Dims "as close to each other as possible" (MPI 3.1 7.5.2): of the
// factorizations of m into k non-increasing factors, the one with the
// smallest difference between the largest and the smallest factor, and of
// those the one with the largest smallest factor, then the largest second
// smallest, and so on (72 in 2-D is 9 x 8; 5040 in 3-D is 21 x 16 x 15, not
// 20 x 18 x 14; 218736 in 5-D is 31 x 14 x 9 x 8 x 7, not 31 x 12 x 12 x 7 x
// 7). MPICH decomposes the same way (its test suite's topo/dims5 checks
// 75,000 cases).
struct Factoring {
  std::vector<long> cur, best;
  long best_spread = -1;

  // On a tie of spreads: whether cur + last beats best, smallest factors first.
  bool beats_best(long last) const {
    if (best.back() != last) return last > best.back();
    for (size_t i = cur.size(); i-- > 0;) {
      if (cur[i] != best[i]) return cur[i] > best[i];
    }
    return false;
  }

  // cur holds the factors chosen so far (non-increasing); m is what is left
  // for k more factors, none above cap.
  void search(long m, int k, long cap) {
    if (k == 1) {
      if (m > cap) return;
      const long top = cur.empty() ? m : cur.front();
      const long spread = top - m;
      if (best_spread < 0 || spread < best_spread || (spread == best_spread && beats_best(m))) {
        best = cur;
        best.push_back(m);
        best_spread = spread;
      }
      return;
    }
    long d = 1;
    while (!power_reaches(d, k, m)) ++d;  // the next factor is at least the k-th root
    for (; d <= cap && d <= m; ++d) {
      if (m % d) continue;
      // The smallest factor to come is at most the (k-1)-th root of the rest.
      const long top = cur.empty() ? d : cur.front();
      if (best_spread >= 0 && top - floor_root(m / d, k - 1) > best_spread) {
        if (cur.empty()) break;  // a larger first factor only spreads more
        continue;
      }
      cur.push_back(d);
      search(m / d, k - 1, d);
      cur.pop_back();
    }
  }
};

bool balanced_factors(long m, int k, long cap, std::vector<long>* out) {
  Factoring f;
  f.search(m, k, cap);
  if (f.best_spread < 0) return false;
  out->insert(out->end(), f.best.begin(), f.best.end());
  return true;
}

}  // namespace

int dims_create(int nnodes, int ndims, int* dims) {
  long fixed = 1;
  int free_slots = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return MPI_ERR_DIMS;
    if (dims[i] > 0) fixed *= dims[i];
    else ++free_slots;
  }
  if (fixed == 0 || nnodes % fixed) return MPI_ERR_DIMS;
  long m = nnodes / fixed;
  if (free_slots == 0) return m == 1 ? MPI_SUCCESS : MPI_ERR_DIMS;
  std::vector<long> slot;
  balanced_factors(m, free_slots, m, &slot);  // non-increasing already
  for (int i = 0, k = 0; i < ndims; ++i)
    if (dims[i] == 0) dims[i] = static_cast<int>(slot[static_cast<size_t>(k++)]);
  return MPI_SUCCESS;
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Dims_create, (int nnodes, int ndims, int dims[])) {
  MPI_ENTER("MPI_Dims_create");
  if (nnodes <= 0 || ndims < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "nnodes %d, ndims %d", nnodes, ndims);
  if (ndims > 0 && !dims) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "dims is NULL");
  if (dims_create(nnodes, ndims, dims))
    return raise(MPI_COMM_WORLD, MPI_ERR_DIMS, "the given dimensions do not divide %d nodes", nnodes);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                  MPI_Comm* comm_cart)) {
  MPI_ENTER("MPI_Cart_create");
  if (int e = check_intra(comm_old)) return e;
  if (ndims < 0 || (ndims > 0 && (!dims || !periods)) || !comm_cart)
    return raise(comm_old, MPI_ERR_ARG, "ndims %d, or dims, periods or comm_cart NULL", ndims);
  long n = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return raise(comm_old, MPI_ERR_DIMS, "dims[%d] = %d is not positive", i, dims[i]);
    n *= dims[i];
  }
  if (n > comm_old->size)
    return raise(comm_old, MPI_ERR_DIMS, "the grid has %ld ranks, more than %s (%d)", n, comm_label(comm_old).c_str(), comm_old->size);
  auto t = std::make_unique<Topology>();
  t->kind = MPI_CART;
  t->dims.assign(dims, dims + ndims);
  t->periods.assign(periods, periods + ndims);
  return topo_comm(comm_old, static_cast<int>(n), reorder != 0, std::move(t), comm_cart);
}
