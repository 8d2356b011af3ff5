// Topology queries and the other topology constructors (MPI 3.1 sections
// 7.5.3-7.5.7): Cartesian coordinates, shifts and sub-grids, graphs and
// distributed graphs.
#include <algorithm>
#include <vector>

#include "mpi/comm_internal.h"
#include "mpi/topo.h"

int toroid_mpi_unweighted[1], toroid_mpi_weights_empty[1];  // MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY: addresses only

using namespace toroid;
using namespace toroid::mpi;

namespace {

int check_cart(MPI_Comm comm) {
  if (int e = check_comm(comm)) return e;
  if (!comm->topo || comm->topo->kind != MPI_CART)
    return raise(comm, MPI_ERR_TOPOLOGY, "%s has no Cartesian topology", comm_label(comm).c_str());
  return 0;
}

int check_graph(MPI_Comm comm, int kind) {
  if (int e = check_comm(comm)) return e;
  if (!comm->topo || comm->topo->kind != kind)
    return raise(comm, MPI_ERR_TOPOLOGY, "%s has no %s topology", comm_label(comm).c_str(),
                 kind == MPI_GRAPH ? "graph" : "distributed graph");
  return 0;
}

}  // namespace

TOROID_MPI_API(int, Topo_test, (MPI_Comm comm, int* status)) {
  MPI_ENTER("MPI_Topo_test");
  if (int e = check_comm(comm)) return e;
  if (!status) return raise(comm, MPI_ERR_ARG, "status is NULL");
  *status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cartdim_get, (MPI_Comm comm, int* ndims)) {
  MPI_ENTER("MPI_Cartdim_get");
  if (int e = check_cart(comm)) return e;
  if (!ndims) return raise(comm, MPI_ERR_ARG, "ndims is NULL");
  *ndims = static_cast<int>(comm->topo->dims.size());
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])) {
  MPI_ENTER("MPI_Cart_get");
  if (int e = check_cart(comm)) return e;
  const Topology& t = *comm->topo;
  const int n = static_cast<int>(t.dims.size());
  if (maxdims < n) return raise(comm, MPI_ERR_ARG, "maxdims %d is less than the %d dimensions", maxdims, n);
  std::copy(t.dims.begin(), t.dims.end(), dims);
  std::copy(t.periods.begin(), t.periods.end(), periods);
  cart_coords(t, comm->rank, coords);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cart_rank, (MPI_Comm comm, const int coords[], int* rank)) {
  MPI_ENTER("MPI_Cart_rank");
  if (int e = check_cart(comm)) return e;
  if (!rank || (!coords && !comm->topo->dims.empty())) return raise(comm, MPI_ERR_ARG, "coords or rank is NULL");
  const Topology& t = *comm->topo;
  std::vector<int> c(t.dims.size());
  for (size_t d = 0; d < t.dims.size(); ++d) {
    int x = coords[d];
    if (x < 0 || x >= t.dims[d]) {
      if (!t.periods[d])
        return raise(comm, MPI_ERR_ARG, "coordinate %d of dimension %zu is outside 0..%d (not periodic)", x, d, t.dims[d] - 1);
      x = ((x % t.dims[d]) + t.dims[d]) % t.dims[d];
    }
    c[d] = x;
  }
  *rank = cart_rank(t, c.data());
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[])) {
  MPI_ENTER("MPI_Cart_coords");
  if (int e = check_cart(comm)) return e;
  if (rank < 0 || rank >= comm->size) return raise(comm, MPI_ERR_RANK, "rank %d is not in the grid (%d ranks)", rank, comm->size);
  if (maxdims < static_cast<int>(comm->topo->dims.size()))
    return raise(comm, MPI_ERR_ARG, "maxdims %d is less than the %zu dimensions", maxdims, comm->topo->dims.size());
  cart_coords(*comm->topo, rank, coords);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest)) {
  MPI_ENTER("MPI_Cart_shift");
  if (int e = check_cart(comm)) return e;
  const Topology& t = *comm->topo;
  if (direction < 0 || direction >= static_cast<int>(t.dims.size()))
    return raise(comm, MPI_ERR_DIMS, "direction %d is not a dimension (0..%zu)", direction, t.dims.size() - 1);
  if (!rank_source || !rank_dest) return raise(comm, MPI_ERR_ARG, "rank_source or rank_dest is NULL");
  std::vector<int> c(t.dims.size());
  auto at = [&](int shift) {
    cart_coords(t, comm->rank, c.data());
    const auto d = static_cast<size_t>(direction);
    int x = c[d] + shift;
    if (x < 0 || x >= t.dims[d]) {
      if (!t.periods[d]) return MPI_PROC_NULL;
      x = ((x % t.dims[d]) + t.dims[d]) % t.dims[d];
    }
    c[d] = x;
    return cart_rank(t, c.data());
  };
  *rank_dest = at(disp);
  *rank_source = at(-disp);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm)) {
  MPI_ENTER("MPI_Cart_sub");
  if (int e = check_cart(comm)) return e;
  if (!newcomm || (!remain_dims && !comm->topo->dims.empty())) return raise(comm, MPI_ERR_ARG, "remain_dims or newcomm is NULL");
  const Topology& t = *comm->topo;
  std::vector<int> c(t.dims.size());
  cart_coords(t, comm->rank, c.data());
  // Ranks with the same coordinates in the dropped dimensions form one
  // sub-grid; inside it they keep the grid's order.
  int color = 0, key = 0;
  auto sub = std::make_unique<Topology>();
  sub->kind = MPI_CART;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    if (remain_dims[d]) {
      key = key * t.dims[d] + c[d];
      sub->dims.push_back(t.dims[d]);
      sub->periods.push_back(t.periods[d]);
    } else {
      color = color * t.dims[d] + c[d];
    }
  }
  MPI_Comm out = MPI_COMM_NULL;
  if (int e = PMPI_Comm_split(comm, color, key, &out)) return e;
  out->topo = std::move(sub);
  *newcomm = out;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank)) {
  MPI_ENTER("MPI_Cart_map");
  (void)periods;
  if (int e = check_intra(comm)) return e;
  if (ndims < 0 || (ndims > 0 && !dims) || !newrank) return raise(comm, MPI_ERR_ARG, "ndims, dims or newrank");
  long n = 1;
  for (int i = 0; i < ndims; ++i) n *= dims[i];
  if (n > comm->size) return raise(comm, MPI_ERR_DIMS, "the grid has %ld ranks, more than the communicator (%d)", n, comm->size);
  cart_map_rank(comm, std::vector<int>(dims, dims + ndims), newrank);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                                   MPI_Comm* comm_graph)) {
  MPI_ENTER("MPI_Graph_create");
  if (int e = check_intra(comm_old)) return e;
  if (nnodes < 0 || nnodes > comm_old->size || !comm_graph || (nnodes > 0 && (!index || !edges)))
    return raise(comm_old, MPI_ERR_ARG, "nnodes %d, or index, edges or comm_graph NULL", nnodes);
  auto t = std::make_unique<Topology>();
  t->kind = MPI_GRAPH;
  t->index.assign(index, index + nnodes);
  const int nedges = nnodes ? index[nnodes - 1] : 0;
  t->edges.assign(edges, edges + nedges);
  for (int e : t->edges)
    if (e < 0 || e >= nnodes) return raise(comm_old, MPI_ERR_ARG, "edge to %d is not a node of the graph", e);
  return topo_comm(comm_old, nnodes, reorder != 0, std::move(t), comm_graph);
}

TOROID_MPI_API(int, Graphdims_get, (MPI_Comm comm, int* nnodes, int* nedges)) {
  MPI_ENTER("MPI_Graphdims_get");
  if (int e = check_graph(comm, MPI_GRAPH)) return e;
  *nnodes = static_cast<int>(comm->topo->index.size());
  *nedges = static_cast<int>(comm->topo->edges.size());
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])) {
  MPI_ENTER("MPI_Graph_get");
  if (int e = check_graph(comm, MPI_GRAPH)) return e;
  const Topology& t = *comm->topo;
  std::copy(t.index.begin(), t.index.begin() + std::min<size_t>(t.index.size(), static_cast<size_t>(std::max(maxindex, 0))), index);
  std::copy(t.edges.begin(), t.edges.begin() + std::min<size_t>(t.edges.size(), static_cast<size_t>(std::max(maxedges, 0))), edges);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int* nneighbors)) {
  MPI_ENTER("MPI_Graph_neighbors_count");
  if (int e = check_graph(comm, MPI_GRAPH)) return e;
  if (rank < 0 || rank >= comm->size) return raise(comm, MPI_ERR_RANK, "rank %d", rank);
  std::vector<int> n;
  comm->topo->in_neighbours(rank, &n);
  *nneighbors = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[])) {
  MPI_ENTER("MPI_Graph_neighbors");
  if (int e = check_graph(comm, MPI_GRAPH)) return e;
  if (rank < 0 || rank >= comm->size) return raise(comm, MPI_ERR_RANK, "rank %d", rank);
  std::vector<int> n;
  comm->topo->in_neighbours(rank, &n);
  std::copy(n.begin(), n.begin() + std::min<size_t>(n.size(), static_cast<size_t>(std::max(maxneighbors, 0))), neighbors);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank)) {
  MPI_ENTER("MPI_Graph_map");
  (void)index;
  (void)edges;
  if (int e = check_intra(comm)) return e;
  if (!newrank) return raise(comm, MPI_ERR_ARG, "newrank is NULL");
  *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

namespace {

int dist_graph(MPI_Comm comm, std::vector<int> sources, std::vector<int> sw, std::vector<int> dests,
               std::vector<int> dw, bool weighted, MPI_Comm* out) {
  for (int s : sources)
    if (s < 0 || s >= comm->size) return raise(comm, MPI_ERR_RANK, "source %d is not a rank", s);
  for (int d : dests)
    if (d < 0 || d >= comm->size) return raise(comm, MPI_ERR_RANK, "destination %d is not a rank", d);
  auto t = std::make_unique<Topology>();
  t->kind = MPI_DIST_GRAPH;
  t->sources = std::move(sources);
  t->source_weights = std::move(sw);
  t->destinations = std::move(dests);
  t->dest_weights = std::move(dw);
  t->weighted = weighted;
  return topo_comm(comm, comm->size, false, std::move(t), out);
}

}  // namespace

TOROID_MPI_API(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int sources[],
                                                 const int sourceweights[], int outdegree, const int destinations[],
                                                 const int destweights[], MPI_Info info, int reorder,
                                                 MPI_Comm* comm_dist_graph)) {
  MPI_ENTER("MPI_Dist_graph_create_adjacent");
  (void)info;
  (void)reorder;
  if (int e = check_intra(comm_old)) return e;
  if (indegree < 0 || outdegree < 0 || !comm_dist_graph) return raise(comm_old, MPI_ERR_ARG, "degrees or comm_dist_graph");
  const bool weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
  std::vector<int> s(sources, sources + indegree), d(destinations, destinations + outdegree), sw, dw;
  if (weighted) {
    if (indegree && sourceweights != MPI_WEIGHTS_EMPTY) sw.assign(sourceweights, sourceweights + indegree);
    if (outdegree && destweights != MPI_WEIGHTS_EMPTY) dw.assign(destweights, destweights + outdegree);
  }
  return dist_graph(comm_old, s, sw, d, dw, weighted, comm_dist_graph);
}

TOROID_MPI_API(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                        const int destinations[], const int weights[], MPI_Info info, int reorder,
                                        MPI_Comm* comm_dist_graph)) {
  MPI_ENTER("MPI_Dist_graph_create");
  (void)info;
  (void)reorder;
  if (int e = check_intra(comm_old)) return e;
  if (n < 0 || !comm_dist_graph) return raise(comm_old, MPI_ERR_ARG, "n %d or comm_dist_graph NULL", n);
  const bool weighted = weights != MPI_UNWEIGHTED;
  // Every rank's edges (source, destination, weight), gathered everywhere;
  // each keeps those that touch it, in the order the edges were given.
  std::vector<int> mine;
  for (int i = 0, k = 0; i < n; ++i)
    for (int j = 0; j < degrees[i]; ++j, ++k)
      mine.insert(mine.end(), {sources[i], destinations[k], weighted && weights != MPI_WEIGHTS_EMPTY ? weights[k] : 1});
  const int size = comm_old->size;
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  int my_count = static_cast<int>(mine.size());
  if (int e = PMPI_Allgather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_old)) return e;
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<size_t>(r)] = total;
    total += counts[static_cast<size_t>(r)];
  }
  std::vector<int> all(static_cast<size_t>(std::max(total, 1)));
  if (int e = PMPI_Allgatherv(mine.data(), my_count, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, comm_old))
    return e;
  std::vector<int> s, sw, d, dw;
  for (int k = 0; k + 2 < total; k += 3) {
    if (all[static_cast<size_t>(k) + 1] == comm_old->rank) {
      s.push_back(all[static_cast<size_t>(k)]);
      sw.push_back(all[static_cast<size_t>(k) + 2]);
    }
    if (all[static_cast<size_t>(k)] == comm_old->rank) {
      d.push_back(all[static_cast<size_t>(k) + 1]);
      dw.push_back(all[static_cast<size_t>(k) + 2]);
    }
  }
  if (!weighted) {
    sw.clear();
    dw.clear();
  }
  return dist_graph(comm_old, s, sw, d, dw, weighted, comm_dist_graph);
}

TOROID_MPI_API(int, Dist_graph_neighbors_count, (MPI_Comm comm, int* indegree, int* outdegree, int* weighted)) {
  MPI_ENTER("MPI_Dist_graph_neighbors_count");
  if (int e = check_graph(comm, MPI_DIST_GRAPH)) return e;
  *indegree = static_cast<int>(comm->topo->sources.size());
  *outdegree = static_cast<int>(comm->topo->destinations.size());
  *weighted = comm->topo->weighted;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                           int maxoutdegree, int destinations[], int destweights[])) {
  MPI_ENTER("MPI_Dist_graph_neighbors");
  if (int e = check_graph(comm, MPI_DIST_GRAPH)) return e;
  const Topology& t = *comm->topo;
  const size_t ni = std::min<size_t>(t.sources.size(), static_cast<size_t>(std::max(maxindegree, 0)));
  const size_t no = std::min<size_t>(t.destinations.size(), static_cast<size_t>(std::max(maxoutdegree, 0)));
  std::copy(t.sources.begin(), t.sources.begin() + ni, sources);
  std::copy(t.destinations.begin(), t.destinations.begin() + no, destinations);
  if (t.weighted && sourceweights != MPI_UNWEIGHTED && !t.source_weights.empty())
    std::copy(t.source_weights.begin(), t.source_weights.begin() + ni, sourceweights);
  if (t.weighted && destweights != MPI_UNWEIGHTED && !t.dest_weights.empty())
    std::copy(t.dest_weights.begin(), t.dest_weights.begin() + no, destweights);
  return MPI_SUCCESS;
}
