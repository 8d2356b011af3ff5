/* heat3d: explicit 3-D heat diffusion on a Cartesian communicator.
 *
 *   toroid-mpicc -O2 heat3d.c -o heat3d -lm
 *   ./toroid mpirun -n 8 ./heat3d [NX NY NZ STEPS]     (default 24 24 24 60)
 *
 * The grid is split into blocks over MPI_Cart_create's process grid (with
 * reorder, so on Toroid the block neighbours are torus link neighbours;
 * grid3d.h). Each step exchanges the one-cell halos with the six
 * neighbours (MPI_Cart_shift, MPI_Sendrecv), updates every cell from its six
 * neighbours, and reduces the residual: MPI_Allreduce of max |change|
 * (MPI_MAX) and the sum of squared changes (MPI_SUM, exact_sum.h). The
 * boundary is held at 0.
 *
 * The check: every cell is updated with the same arithmetic in the same
 * order whatever the decomposition, so the field and the max residual must
 * be bit-identical to a serial run. Rank 0 gathers the field, runs the same
 * steps serially on the whole grid and compares every bit. The sum
 * residual is compared bit for bit too: it is summed without rounding until
 * the end, so it does not depend on the decomposition. Exit status 0 when
 * all match, 1 otherwise. Portable MPI: it builds with any mpicc. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact_sum.h"
#include "grid3d.h"

static double initial(int gi, int gj, int gk, const int g[3]) {
  /* A smooth bump plus a few hot cells: no libm, the same bits everywhere. */
  const double x = (gi + 0.5) / g[0], y = (gj + 0.5) / g[1], z = (gk + 0.5) / g[2];
  double t = 64.0 * x * (1 - x) * y * (1 - y) * z * (1 - z);
  if ((gi * 7 + gj * 3 + gk) % 29 == 0) t += 1.0;
  return t;
}

static double* field(const Grid* gr) {
  double* u = calloc(grid_cells(gr), sizeof(double));
  for (int i = 1; i <= gr->n[0]; ++i)
    for (int j = 1; j <= gr->n[1]; ++j)
      for (int k = 1; k <= gr->n[2]; ++k)
        u[AT(gr, i, j, k)] = initial(gr->off[0] + i - 1, gr->off[1] + j - 1, gr->off[2] + k - 1, gr->g);
  return u;
}

/* One step: v = u + r (sum of 6 neighbours - 6u) on the interior, halos
 * first; returns max |v - u|, adds every (v - u)^2 to acc; swaps u and v. */
static double step(const Grid* gr, double** u, double** v, ExactSum* acc) {
  const double r = 0.125;
  double mx = 0, *a = *u, *b = *v;
  grid_halo(gr, a);
  for (int i = 1; i <= gr->n[0]; ++i)
    for (int j = 1; j <= gr->n[1]; ++j)
      for (int k = 1; k <= gr->n[2]; ++k) {
        const double c = a[AT(gr, i, j, k)];
        const double s = ((((a[AT(gr, i - 1, j, k)] + a[AT(gr, i + 1, j, k)]) + a[AT(gr, i, j - 1, k)]) +
                           a[AT(gr, i, j + 1, k)]) + a[AT(gr, i, j, k - 1)]) + a[AT(gr, i, j, k + 1)];
        const double nv = c + r * (s - 6 * c);
        const double d = nv - c;
        b[AT(gr, i, j, k)] = nv;
        if (fabs(d) > mx) mx = fabs(d);
        exact_sum_add(acc, d * d);
      }
  *u = b;
  *v = a;
  return mx;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int g[3] = {24, 24, 24}, steps = 60, rank, size;
  if (argc >= 4)
    for (int d = 0; d < 3; ++d) g[d] = atoi(argv[1 + d]);
  if (argc >= 5) steps = atoi(argv[4]);
  if (steps < 1 || g[0] < 1 || g[1] < 1 || g[2] < 1) {
    fprintf(stderr, "usage: heat3d [NX NY NZ STEPS] (all >= 1)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Grid gr;
  grid_create(&gr, g, MPI_COMM_WORLD, "heat3d");
  MPI_Comm_rank(gr.cart, &rank);
  MPI_Comm_size(gr.cart, &size);
  double *u = field(&gr), *v = calloc(grid_cells(&gr), sizeof(double));
  double* max_hist = malloc(sizeof(double) * (size_t)steps);
  double* sum_hist = malloc(sizeof(double) * (size_t)steps);
  const double t0 = MPI_Wtime();
  for (int s = 0; s < steps; ++s) {
    ExactSum acc;
    exact_sum_init(&acc);
    const double mx = step(&gr, &u, &v, &acc);
    MPI_Allreduce(&mx, &max_hist[s], 1, MPI_DOUBLE, MPI_MAX, gr.cart);
    exact_sum_allreduce(&acc, &sum_hist[s], gr.cart);
  }
  const double secs = MPI_Wtime() - t0;

  Grid whole;
  grid_serial(&whole, g);
  double* got = rank == 0 ? calloc(grid_cells(&whole), sizeof(double)) : NULL;
  grid_gather(&gr, u, got);
  int ok = 1;
  if (rank == 0) {
    /* The serial run: the same steps on one block covering the grid. */
    double *su = field(&whole), *sv = calloc(grid_cells(&whole), sizeof(double));
    long bad_max = 0, bad_sum = 0;
    for (int s = 0; s < steps; ++s) {
      ExactSum acc;
      exact_sum_init(&acc);
      const double mx = step(&whole, &su, &sv, &acc);
      const double sum = exact_sum_value(&acc);
      bad_max += memcmp(&mx, &max_hist[s], sizeof mx) != 0;
      bad_sum += memcmp(&sum, &sum_hist[s], sizeof sum) != 0;
    }
    const long bad_cells = grid_differ(&whole, su, got);
    ok = bad_max == 0 && bad_sum == 0 && bad_cells == 0;
    int dims[3], periods[3], coords[3];
    MPI_Cart_get(gr.cart, 3, dims, periods, coords);
    printf("heat3d: %dx%dx%d grid, %d steps on %d ranks (process grid %dx%dx%d), %.3f s; residual max %a sum %a\n",
           g[0], g[1], g[2], steps, size, dims[0], dims[1], dims[2], secs, max_hist[steps - 1],
           sum_hist[steps - 1]);
    printf("heat3d: against the serial run, bit for bit: %ld of %d cells differ, the max residual in %ld and the "
           "sum residual in %ld of %d steps: %s\n",
           bad_cells, g[0] * g[1] * g[2], bad_max, bad_sum, steps, ok ? "MATCH" : "MISMATCH");
    free(su);
    free(sv);
    free(got);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, gr.cart);
  grid_free(&gr);
  free(max_hist);
  free(sum_hist);
  free(u);
  free(v);
  MPI_Finalize();
  return ok ? 0 : 1;
}
