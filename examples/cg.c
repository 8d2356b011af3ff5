/* cg: conjugate gradients for the 3-D Poisson problem -lap(u) = f (the
 * 7-point stencil, u = 0 on the boundary) on a Cartesian communicator.
 *
 *   toroid-mpicc -O2 cg.c -o cg -lm
 *   ./toroid mpirun -n 8 ./cg [NX NY NZ MAXIT]     (default 20 20 20 200)
 *
 * The vectors are split into blocks (grid3d.h); the matrix-vector product
 * exchanges p's halos with the six neighbours first (MPI_Cart_shift,
 * MPI_Sendrecv); the two dot products of each iteration are
 * MPI_Allreduce'd. It stops when |r| <= 1e-10 |b| or after MAXIT.
 *
 * The check: rank 0 runs the same solve serially on the whole grid and
 * compares the iteration count, every iteration's |r|^2 and the solution,
 * bit for bit. The dot products are summed without rounding until the end
 * (exact_sum.h), so alpha and beta, and with them every iterate, carry the
 * same bits whatever the decomposition. Exit status 0 when all match, 1
 * otherwise. Portable MPI: it builds with any mpicc. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact_sum.h"
#include "grid3d.h"

typedef struct {
  double *x, *r, *p, *q;
} Vectors;

static double rhs(int gi, int gj, int gk) { return 1.0 + ((gi * 5 + gj * 3 + gk * 7) % 11) * 0.125; }

static void vectors_init(const Grid* gr, Vectors* v) {
  const size_t n = grid_cells(gr);
  v->x = calloc(n, sizeof(double));
  v->r = calloc(n, sizeof(double));
  v->p = calloc(n, sizeof(double));
  v->q = calloc(n, sizeof(double));
  /* x = 0, so r = p = b. */
  for (int i = 1; i <= gr->n[0]; ++i)
    for (int j = 1; j <= gr->n[1]; ++j)
      for (int k = 1; k <= gr->n[2]; ++k)
        v->r[AT(gr, i, j, k)] = v->p[AT(gr, i, j, k)] =
            rhs(gr->off[0] + i - 1, gr->off[1] + j - 1, gr->off[2] + k - 1);
}

static void vectors_free(Vectors* v) {
  free(v->x);
  free(v->r);
  free(v->p);
  free(v->q);
}

/* a . b over every block's interior, exactly, rounded once. */
static double dot(const Grid* gr, const double* a, const double* b) {
  ExactSum acc;
  exact_sum_init(&acc);
  for (int i = 1; i <= gr->n[0]; ++i)
    for (int j = 1; j <= gr->n[1]; ++j)
      for (int k = 1; k <= gr->n[2]; ++k) exact_sum_add(&acc, a[AT(gr, i, j, k)] * b[AT(gr, i, j, k)]);
  double out;
  if (gr->cart == MPI_COMM_NULL)
    out = exact_sum_value(&acc);
  else
    exact_sum_allreduce(&acc, &out, gr->cart);
  return out;
}

/* q = A p (A = -lap, h = 1), p's halos filled first. */
static void apply(const Grid* gr, double* p, double* q) {
  grid_halo(gr, p);
  for (int i = 1; i <= gr->n[0]; ++i)
    for (int j = 1; j <= gr->n[1]; ++j)
      for (int k = 1; k <= gr->n[2]; ++k) {
        const double s = ((((p[AT(gr, i - 1, j, k)] + p[AT(gr, i + 1, j, k)]) + p[AT(gr, i, j - 1, k)]) +
                           p[AT(gr, i, j + 1, k)]) + p[AT(gr, i, j, k - 1)]) + p[AT(gr, i, j, k + 1)];
        q[AT(gr, i, j, k)] = 6 * p[AT(gr, i, j, k)] - s;
      }
}

/* Solves; rr_hist[it] = |r|^2 after iteration it; returns the iterations. */
static int solve(const Grid* gr, Vectors* v, int maxit, double* rr_hist) {
  double rr = dot(gr, v->r, v->r);
  const double stop = rr * 1e-20;
  int it = 0;
  while (it < maxit && rr > stop) {
    apply(gr, v->p, v->q);
    const double alpha = rr / dot(gr, v->p, v->q);
    for (int i = 1; i <= gr->n[0]; ++i)
      for (int j = 1; j <= gr->n[1]; ++j)
        for (int k = 1; k <= gr->n[2]; ++k) {
          const size_t c = AT(gr, i, j, k);
          v->x[c] += alpha * v->p[c];
          v->r[c] -= alpha * v->q[c];
        }
    const double rr_new = dot(gr, v->r, v->r);
    const double beta = rr_new / rr;
    rr = rr_new;
    for (int i = 1; i <= gr->n[0]; ++i)
      for (int j = 1; j <= gr->n[1]; ++j)
        for (int k = 1; k <= gr->n[2]; ++k) {
          const size_t c = AT(gr, i, j, k);
          v->p[c] = v->r[c] + beta * v->p[c];
        }
    rr_hist[it++] = rr;
  }
  return it;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int g[3] = {20, 20, 20}, maxit = 200, rank, size;
  if (argc >= 4)
    for (int d = 0; d < 3; ++d) g[d] = atoi(argv[1 + d]);
  if (argc >= 5) maxit = atoi(argv[4]);
  if (maxit < 1 || g[0] < 1 || g[1] < 1 || g[2] < 1) {
    fprintf(stderr, "usage: cg [NX NY NZ MAXIT] (all >= 1)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Grid gr;
  grid_create(&gr, g, MPI_COMM_WORLD, "cg");
  MPI_Comm_rank(gr.cart, &rank);
  MPI_Comm_size(gr.cart, &size);
  Vectors v;
  vectors_init(&gr, &v);
  double* hist = malloc(sizeof(double) * (size_t)maxit);
  const double t0 = MPI_Wtime();
  const int iters = solve(&gr, &v, maxit, hist);
  const double secs = MPI_Wtime() - t0;

  Grid whole;
  grid_serial(&whole, g);
  double* got = rank == 0 ? calloc(grid_cells(&whole), sizeof(double)) : NULL;
  grid_gather(&gr, v.x, got);
  int ok = 1;
  if (rank == 0) {
    Vectors s;
    vectors_init(&whole, &s);
    double* shist = malloc(sizeof(double) * (size_t)maxit);
    const int siters = solve(&whole, &s, maxit, shist);
    long bad_hist = 0;
    for (int i = 0; i < iters && i < siters; ++i) bad_hist += memcmp(&hist[i], &shist[i], sizeof(double)) != 0;
    const long bad_cells = grid_differ(&whole, s.x, got);
    ok = iters == siters && bad_hist == 0 && bad_cells == 0;
    printf("cg: %dx%dx%d grid on %d ranks, %d iterations, %.3f s; final |r|^2 %a\n", g[0], g[1], g[2], size, iters,
           secs, iters ? hist[iters - 1] : 0.0);
    printf("cg: against the serial run, bit for bit: %d iterations there, |r|^2 differs in %ld, the solution in %ld "
           "of %d cells: %s\n",
           siters, bad_hist, bad_cells, g[0] * g[1] * g[2], ok ? "MATCH" : "MISMATCH");
    free(shist);
    vectors_free(&s);
    free(got);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, gr.cart);
  grid_free(&gr);
  vectors_free(&v);
  free(hist);
  MPI_Finalize();
  return ok ? 0 : 1;
}
