/* grid3d.h: a 3-D grid split into blocks over a Cartesian communicator, for
 * the examples (heat3d.c, cg.c); portable MPI.
 *
 * Each rank holds its block with a one-cell halo on every side. Halos are
 * exchanged with the six neighbours found by MPI_Cart_shift, by
 * MPI_Sendrecv of subarray datatypes (the faces are sent straight from the
 * array, no packing by hand); a neighbour beyond the grid's edge is
 * MPI_PROC_NULL, which leaves that halo at 0 (a Dirichlet boundary). */
#ifndef TOROID_EXAMPLES_GRID3D_H
#define TOROID_EXAMPLES_GRID3D_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int g[3];        /* the whole grid */
  int n[3];        /* this block's interior cells */
  int off[3];      /* global index of its first cell */
  MPI_Comm cart;   /* MPI_COMM_NULL for a serial block covering the grid */
  int lo[3], hi[3];
  MPI_Datatype send_lo[3], send_hi[3], recv_lo[3], recv_hi[3], interior;
} Grid;

#define AT(gr, i, j, k) ((((size_t)(i)) * ((gr)->n[1] + 2) + (size_t)(j)) * ((gr)->n[2] + 2) + (size_t)(k))

static size_t grid_cells(const Grid* gr) { return (size_t)(gr->n[0] + 2) * (gr->n[1] + 2) * (gr->n[2] + 2); }

static void grid_split(int g, int parts, int me, int* n, int* off) {
  const int base = g / parts, extra = g % parts;
  *n = base + (me < extra);
  *off = me * base + (me < extra ? me : extra);
}

static MPI_Datatype grid_box(const int sizes[3], const int sub[3], const int start[3]) {
  MPI_Datatype t;
  MPI_Type_create_subarray(3, (int*)sizes, (int*)sub, (int*)start, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

/* The layer `at` along dim d of the block's array (interior extent). */
static MPI_Datatype grid_face(const Grid* gr, int d, int at) {
  int sizes[3] = {gr->n[0] + 2, gr->n[1] + 2, gr->n[2] + 2}, sub[3], start[3];
  for (int e = 0; e < 3; ++e) {
    sub[e] = e == d ? 1 : gr->n[e];
    start[e] = e == d ? at : 1;
  }
  return grid_box(sizes, sub, start);
}

/* A serial grid: one block, no communicator. */
static void grid_serial(Grid* gr, const int g[3]) {
  memset(gr, 0, sizeof *gr);
  for (int d = 0; d < 3; ++d) gr->n[d] = gr->g[d] = g[d];
  gr->cart = MPI_COMM_NULL;
}

/* The parallel grid over every rank of comm: MPI_Dims_create's process grid,
 * MPI_Cart_create with reorder. Aborts when a dimension has fewer cells
 * than ranks. */
static void grid_create(Grid* gr, const int g[3], MPI_Comm comm, const char* who) {
  int size, dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3], rank;
  memset(gr, 0, sizeof *gr);
  MPI_Comm_size(comm, &size);
  MPI_Dims_create(size, 3, dims);
  for (int d = 0; d < 3; ++d) {
    gr->g[d] = g[d];
    if (g[d] < dims[d]) {
      fprintf(stderr, "%s: a %dx%dx%d grid is too small for the %dx%dx%d process grid\n", who, g[0], g[1], g[2],
              dims[0], dims[1], dims[2]);
      MPI_Abort(comm, 2);
    }
  }
  MPI_Cart_create(comm, 3, dims, periods, 1, &gr->cart);
  MPI_Comm_rank(gr->cart, &rank);
  MPI_Cart_coords(gr->cart, rank, 3, coords);
  for (int d = 0; d < 3; ++d) grid_split(g[d], dims[d], coords[d], &gr->n[d], &gr->off[d]);
  for (int d = 0; d < 3; ++d) {
    MPI_Cart_shift(gr->cart, d, 1, &gr->lo[d], &gr->hi[d]);
    gr->send_lo[d] = grid_face(gr, d, 1);
    gr->send_hi[d] = grid_face(gr, d, gr->n[d]);
    gr->recv_lo[d] = grid_face(gr, d, 0);
    gr->recv_hi[d] = grid_face(gr, d, gr->n[d] + 1);
  }
  int sizes[3] = {gr->n[0] + 2, gr->n[1] + 2, gr->n[2] + 2}, one[3] = {1, 1, 1};
  gr->interior = grid_box(sizes, gr->n, one);
}

/* Fills u's halos from the neighbours (a serial grid's stay 0). */
static void grid_halo(const Grid* gr, double* u) {
  if (gr->cart == MPI_COMM_NULL) return;
  for (int d = 0; d < 3; ++d) {
    MPI_Sendrecv(u, 1, gr->send_hi[d], gr->hi[d], d, u, 1, gr->recv_lo[d], gr->lo[d], d, gr->cart,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(u, 1, gr->send_lo[d], gr->lo[d], 3 + d, u, 1, gr->recv_hi[d], gr->hi[d], 3 + d, gr->cart,
                 MPI_STATUS_IGNORE);
  }
}

/* Every block's interior of u into whole (a serial grid's array) on rank 0;
 * the other ranks send theirs. */
static void grid_gather(const Grid* gr, const double* u, double* whole) {
  int rank, size;
  MPI_Comm_rank(gr->cart, &rank);
  MPI_Comm_size(gr->cart, &size);
  if (rank != 0) {
    MPI_Send(u, 1, gr->interior, 0, 99, gr->cart);
    return;
  }
  int dims[3], periods[3], mine[3], gsz[3] = {gr->g[0] + 2, gr->g[1] + 2, gr->g[2] + 2};
  MPI_Cart_get(gr->cart, 3, dims, periods, mine);
  for (int r = 0; r < size; ++r) {
    int c[3], n[3], off[3];
    MPI_Cart_coords(gr->cart, r, 3, c);
    for (int d = 0; d < 3; ++d) {
      grid_split(gr->g[d], dims[d], c[d], &n[d], &off[d]);
      off[d] += 1;
    }
    MPI_Datatype into = grid_box(gsz, n, off);
    if (r == 0)
      MPI_Sendrecv(u, 1, gr->interior, 0, 99, whole, 1, into, 0, 99, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    else
      MPI_Recv(whole, 1, into, r, 99, gr->cart, MPI_STATUS_IGNORE);
    MPI_Type_free(&into);
  }
}

static void grid_free(Grid* gr) {
  if (gr->cart == MPI_COMM_NULL) return;
  for (int d = 0; d < 3; ++d) {
    MPI_Type_free(&gr->send_lo[d]);
    MPI_Type_free(&gr->send_hi[d]);
    MPI_Type_free(&gr->recv_lo[d]);
    MPI_Type_free(&gr->recv_hi[d]);
  }
  MPI_Type_free(&gr->interior);
  MPI_Comm_free(&gr->cart);
}

/* Counts the cells whose bits differ between two serial-grid arrays. */
static long grid_differ(const Grid* whole, const double* a, const double* b) {
  long bad = 0;
  for (int i = 1; i <= whole->n[0]; ++i)
    for (int j = 1; j <= whole->n[1]; ++j)
      for (int k = 1; k <= whole->n[2]; ++k)
        bad += memcmp(&a[AT(whole, i, j, k)], &b[AT(whole, i, j, k)], sizeof(double)) != 0;
  return bad;
}

#endif
