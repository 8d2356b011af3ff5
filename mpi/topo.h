// Process topologies attached to a communicator (MPI 3.1 chapter 7).
#pragma once
#include <memory>
#include <vector>

#include "mpi/impl.h"

namespace toroid::mpi {

struct Topology {
  int kind = MPI_CART;  // MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH
  // Cartesian: dims and periods; a rank's coordinates are row-major.
  std::vector<int> dims, periods;
  // Graph: MPI_Graph_create's index and edges.
  std::vector<int> index, edges;
  // Distributed graph: this rank's in- and out-neighbours and weights.
  std::vector<int> sources, source_weights, destinations, dest_weights;
  bool weighted = false;
  // Neighbours in the order of the neighbourhood collectives' blocks.
  void in_neighbours(int rank, std::vector<int>* out) const;
  void out_neighbours(int rank, std::vector<int>* out) const;
  // The order to post the receives of n in-neighbour blocks in, so that
  // each process's messages (taken in its send order) land in the right
  // block when it is a neighbour twice.
  void recv_order(size_t n, std::vector<size_t>* order) const;
};

// MPI_Dims_create's balanced factorisation (MPI_SUCCESS or MPI_ERR_DIMS).
int dims_create(int nnodes, int ndims, int* dims);
// A new communicator of comm's first `n` ranks (a torus order when reorder
// and the grid matches the torus) carrying topology t; MPI_COMM_NULL for
// the ranks outside it. Collective over comm.
int topo_comm(MPI_Comm comm, int n, bool reorder, std::unique_ptr<Topology> t, MPI_Comm* out);
// MPI_Cart_map's answer for this process.
bool cart_map_rank(MPI_Comm comm, const std::vector<int>& dims, int* newrank);
// Cartesian helpers.
void cart_coords(const Topology& t, int rank, int* coords);
int cart_rank(const Topology& t, const int* coords);  // coords already inside the grid

}  // namespace toroid::mpi
