/* Reproducible floating-point reductions (Toroid's extension, docs/mpi.md):
 * with TOROID_REPRO=exact, or the info key toroid_repro=exact on a
 * communicator, MPI_SUM on MPI_DOUBLE and MPI_FLOAT is correctly rounded
 * (the exact sum, rounded once), so it is bit-identical whatever the
 * partition's shape or the algorithm; fixed-order gives every rank the same
 * bits. Under exact, MAX is exact anyway and a float product runs in fixed
 * order (every rank the same bits). The inputs are built so that summation
 * order changes the result;
 * the reference is the exact sum in 128-bit integers, rounded by the C
 * conversion (to nearest). */
#include <math.h>
#include <stdint.h>

#include "mpitest.h"

#define N 64
#define NL 5000 /* not a multiple of 64 x ranks: the last share padded */

/* Every value is an integer multiple of 2^-40 below 2^85: the exact sum of
 * a few thousand of them fits an __int128 of those units. */
static double value(int rank, int i) {
  uint64_t x = (uint64_t)(rank + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(i + 7) * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  const double mant = (double)(int64_t)(x >> 11) * (x & 1 ? 1 : -1); /* 53-bit integer, either sign */
  const int e = (int)((x >> 3) % 60) - 40;                          /* 2^-40 .. 2^19 */
  return ldexp(mant, e);
}

static double exact_sum(int size, int i) {
  __int128 acc = 0;
  for (int r = 0; r < size; ++r) acc += (__int128)ldexp(value(r, i), 40);
  return ldexp((double)acc, -40);
}

static int same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static void check_exact(MPI_Comm c, const char* how) {
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  double in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = value(rank, i);
  CHECK_RC(MPI_Allreduce(in, out, N, MPI_DOUBLE, MPI_SUM, c));
  long bad = 0;
  for (int i = 0; i < N; ++i) bad += !same_bits(out[i], exact_sum(size, i));
  CHECK_MSG(bad == 0, "%s: MPI_Allreduce: %ld of %d sums not correctly rounded", how, bad, N);
  const int root = size - 1;
  memset(out, 0, sizeof out);
  CHECK_RC(MPI_Reduce(in, out, N, MPI_DOUBLE, MPI_SUM, root, c));
  if (rank == root) {
    bad = 0;
    for (int i = 0; i < N; ++i) bad += !same_bits(out[i], exact_sum(size, i));
    CHECK_MSG(bad == 0, "%s: MPI_Reduce: %ld sums not correctly rounded", how, bad);
  }
  /* A long vector: above 2 KiB each rank rounds its own share (the library's
   * exact-share), in place too. */
  static double lin[NL], lout[NL];
  for (int i = 0; i < NL; ++i) lin[i] = value(rank, i);
  CHECK_RC(MPI_Allreduce(lin, lout, NL, MPI_DOUBLE, MPI_SUM, c));
  bad = 0;
  for (int i = 0; i < NL; ++i) bad += !same_bits(lout[i], exact_sum(size, i));
  CHECK_MSG(bad == 0, "%s: MPI_Allreduce of %d: %ld sums not correctly rounded", how, NL, bad);
  CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, lin, NL, MPI_DOUBLE, MPI_SUM, c));
  bad = 0;
  for (int i = 0; i < NL; ++i) bad += !same_bits(lin[i], exact_sum(size, i));
  CHECK_MSG(bad == 0, "%s: MPI_Allreduce of %d in place: %ld sums not correctly rounded", how, NL, bad);
  /* Reduce_scatter_block: N / size elements (rounded down) to each rank. */
  const int per = N / size;
  double part[N];
  CHECK_RC(MPI_Reduce_scatter_block(in, part, per, MPI_DOUBLE, MPI_SUM, c));
  bad = 0;
  for (int k = 0; k < per; ++k) bad += !same_bits(part[k], exact_sum(size, rank * per + k));
  CHECK_MSG(bad == 0, "%s: MPI_Reduce_scatter_block: %ld sums not correctly rounded", how, bad);
  int counts[64];
  for (int r = 0; r < size; ++r) counts[r] = r == size - 1 ? N - per * (size - 1) : per;
  CHECK_RC(MPI_Reduce_scatter(in, part, counts, MPI_DOUBLE, MPI_SUM, c));
  bad = 0;
  for (int k = 0; k < counts[rank]; ++k) bad += !same_bits(part[k], exact_sum(size, rank * per + k));
  CHECK_MSG(bad == 0, "%s: MPI_Reduce_scatter: %ld sums not correctly rounded", how, bad);
  /* Single precision too. */
  float fin[N], fout[N];
  for (int i = 0; i < N; ++i) fin[i] = (float)ldexp(value(rank, i), -30);
  CHECK_RC(MPI_Allreduce(fin, fout, N, MPI_FLOAT, MPI_SUM, c));
  bad = 0;
  for (int i = 0; i < N; ++i) {
    __int128 acc = 0;
    for (int r = 0; r < size; ++r) acc += (__int128)ldexp((double)(float)ldexp(value(r, i), -30), 70);
    /* Round the exact sum to float once: through double only when exact there. */
    long double l = ldexpl((long double)acc, -70);
    float want = (float)l;
    bad += memcmp(&fout[i], &want, sizeof want) != 0;
  }
  CHECK_MSG(bad == 0, "%s: MPI_Allreduce float: %ld sums not correctly rounded", how, bad);
  /* Other float operations still run: MIN and MAX are exact in any order; a
   * product (no exact algorithm) runs in fixed order, the same bits on every
   * rank, instead of failing the program. */
  double pin[N], pout[N], pall[N * 64];
  for (int i = 0; i < N; ++i) pin[i] = 1.0 + ldexp(value(rank, i), -60);
  CHECK_RC(MPI_Allreduce(pin, pout, N, MPI_DOUBLE, MPI_PROD, c));
  CHECK_RC(MPI_Allgather(pout, N, MPI_DOUBLE, pall, N, MPI_DOUBLE, c));
  long differ = 0;
  for (int r = 0; r < size; ++r) differ += memcmp(pall + r * N, pout, sizeof pout) != 0;
  CHECK_MSG(differ == 0, "%s: MPI_PROD: %ld ranks got other bits", how, differ);
  CHECK_RC(MPI_Allreduce(in, out, N, MPI_DOUBLE, MPI_MAX, c));
  bad = 0;
  for (int i = 0; i < N; ++i) {
    double want = value(0, i);
    for (int r = 1; r < size; ++r) want = fmax(want, value(r, i));
    bad += !same_bits(out[i], want);
  }
  CHECK_MSG(bad == 0, "%s: MPI_MAX: %ld wrong", how, bad);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  SECTION("toroid: reproducible float sums");
  const char* env = getenv("TOROID_REPRO");
  if (env && !strcmp(env, "exact")) check_exact(MPI_COMM_WORLD, "TOROID_REPRO=exact");
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "toroid_repro", "exact");
  MPI_Comm ex;
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &ex);
  check_exact(ex, "toroid_repro=exact");
  /* A sub-communicator in reversed order keeps exactness (it inherits the hint). */
  MPI_Comm rev;
  MPI_Comm_split(ex, 0, mt_size - mt_rank, &rev);
  check_exact(rev, "toroid_repro=exact, reversed");
  /* fixed-order: every rank gets the same bits. */
  MPI_Info_set(info, "toroid_repro", "fixed-order");
  MPI_Comm fo;
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &fo);
  double in[N], out[N], all[N * 64];
  for (int i = 0; i < N; ++i) in[i] = value(mt_rank, i);
  CHECK_RC(MPI_Allreduce(in, out, N, MPI_DOUBLE, MPI_SUM, fo));
  MPI_Allgather(out, N, MPI_DOUBLE, all, N, MPI_DOUBLE, fo);
  long differ = 0;
  for (int r = 0; r < mt_size; ++r) differ += memcmp(all + r * N, out, sizeof out) != 0;
  CHECK_MSG(differ == 0, "fixed-order: %ld ranks got other bits", differ);
  MPI_Info_set(info, "toroid_repro", "sometimes");
  MPI_Comm_set_errhandler(fo, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Comm_set_info(fo, info), MPI_ERR_INFO_VALUE);
  MPI_Info_free(&info);
  MPI_Comm_free(&ex);
  MPI_Comm_free(&rev);
  MPI_Comm_free(&fo);
  return mt_finish("repro");
}
