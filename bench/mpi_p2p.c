/* mpi_p2p: point-to-point latency and streaming rate between ranks 0 and 1,
 * plain MPI, so the same source builds with any mpicc (bench/mpi_p2p_compare.sh
 * runs it with toroid-mpicc and with Open MPI's).
 *
 *   mpi_p2p [-s SIZES] [-w WINDOW] [-t SECONDS]
 *
 * For each size (bytes; K and M suffixes; default 8,4K,64K,1M,4M):
 *   latency: blocking MPI_Send/MPI_Recv ping-pong, half the round trip;
 *   stream:  rank 0 posts WINDOW (default 64) MPI_Isends, rank 1 as many
 *            MPI_Irecvs, both MPI_Waitall, then a 1-byte reply; bytes moved
 *            per second and time per message.
 * Each test runs once untimed (warm-up), then for about SECONDS (default 0.3)
 * of repetitions sized from the warm-up. Every message carries a pattern of
 * its size and repetition that the receiver checks after each timed loop; a
 * mismatch is reported and the program exits 1.
 * Output (rank 0): "latency BYTES US" and "stream BYTES GBPS NS_PER_MSG".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

/* Byte i of an n-byte message number rep. */
static unsigned char pattern(size_t i, size_t n, long rep) { return (unsigned char)(i * 31u + (size_t)rep * 7u + n); }

static void fill(unsigned char* b, size_t n, long rep) {
  for (size_t i = 0; i < n; ++i) b[i] = pattern(i, n, rep);
}

static long check(const unsigned char* b, size_t n, long rep) {
  long bad = 0;
  for (size_t i = 0; i < n; ++i) bad += b[i] != pattern(i, n, rep);
  return bad;
}

/* Bytes of "N", "NK" or "NM"; -1 for anything else, or over 1 GiB (counts are ints). */
static long long parse_size(const char* s) {
  char* end;
  double v = strtod(s, &end);
  if (end == s || v < 0) return -1;
  if (*end == 'K' || *end == 'k') v *= 1024, ++end;
  else if (*end == 'M' || *end == 'm') v *= 1024 * 1024, ++end;
  if (*end != '\0' || v > (double)(1 << 30)) return -1;
  return (long long)v;
}

/* reps ping-pongs of n bytes; with bad, this rank checks what it holds at the end. */
static double pingpong(unsigned char* buf, size_t n, long reps, long* bad) {
  double t0 = MPI_Wtime();
  for (long i = 0; i < reps; ++i) {
    if (rank == 0) {
      MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  }
  double t = MPI_Wtime() - t0;
  if (bad) *bad += check(buf, n, 0);
  return t;
}

static double stream(unsigned char* src, unsigned char* dst, size_t n, int window, long reps, MPI_Request* req,
                     long* bad) {
  double t0 = MPI_Wtime();
  for (long i = 0; i < reps; ++i) {
    for (int k = 0; k < window; ++k) {
      if (rank == 0) MPI_Isend(src + (size_t)k * n, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[k]);
      else if (rank == 1) MPI_Irecv(dst + (size_t)k * n, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[k]);
    }
    if (rank < 2) MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
    if (rank == 0) MPI_Recv(dst, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (rank == 1) MPI_Send(dst, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
  }
  double t = MPI_Wtime() - t0;
  if (bad && rank == 1)
    for (int k = 0; k < window; ++k) *bad += check(dst + (size_t)k * n, n, k);
  return t;
}

static long reps_for(double once, double seconds) {
  double r = once > 0 ? seconds / once : 1e6;
  if (r < 3) r = 3;
  if (r > 1e6) r = 1e6;
  long v = (long)r;
  MPI_Bcast(&v, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return v;
}

int main(int argc, char** argv) {
  const char* sizes = "8,4K,64K,1M,4M";
  int window = 64;
  double seconds = 0.3;
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-s") && i + 1 < argc) sizes = argv[++i];
    else if (!strcmp(argv[i], "-w") && i + 1 < argc) window = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-t") && i + 1 < argc) seconds = atof(argv[++i]);
    else {
      if (rank == 0) fprintf(stderr, "usage: mpi_p2p [-s SIZES] [-w WINDOW] [-t SECONDS] (at least 2 ranks)\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (size < 2 || window < 1 || window > 1024 || seconds <= 0) {
    if (rank == 0) fprintf(stderr, "mpi_p2p: needs 2 ranks or more, a window of 1..1024 and a positive time\n");
    MPI_Finalize();
    return 2;
  }
  char* list = strdup(sizes);
  int failed = 0;
  for (char* tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    const long long parsed = parse_size(tok);
    if (parsed < 0) {
      if (rank == 0) fprintf(stderr, "mpi_p2p: '%s' is not a size (bytes, or with K or M; at most 1 GiB)\n", tok);
      failed = 1;
      break;
    }
    const size_t n = (size_t)parsed;
    /* Large messages stream in windows of 4: the buffers stay within 16 MiB. */
    const int w = n >= (1u << 20) ? (window < 4 ? window : 4) : window;
    unsigned char* buf = malloc(n ? n : 1);
    unsigned char* src = malloc((size_t)w * (n ? n : 1));
    unsigned char* dst = malloc((size_t)w * (n ? n : 1));
    MPI_Request* req = malloc(sizeof(MPI_Request) * (size_t)w);
    if (!buf || !src || !dst || !req) {
      fprintf(stderr, "mpi_p2p: rank %d: out of memory for %zu-byte messages\n", rank, n);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long bad = 0;
    fill(buf, n, 0);
    for (int k = 0; k < w; ++k) fill(src + (size_t)k * n, n, k);

    MPI_Barrier(MPI_COMM_WORLD);
    double once = pingpong(buf, n, 1, NULL);
    long reps = reps_for(once, seconds);
    if (rank == 1) memset(buf, 0, n);  /* what rank 1 holds afterwards came from rank 0 */
    MPI_Barrier(MPI_COMM_WORLD);
    double t = pingpong(buf, n, reps, rank < 2 ? &bad : NULL);
    if (rank == 0) printf("latency %zu %.3f\n", n, t / (double)reps / 2 * 1e6);

    memset(dst, 0, (size_t)w * n);
    MPI_Barrier(MPI_COMM_WORLD);
    once = stream(src, dst, n, w, 1, req, NULL);
    reps = reps_for(once, seconds);
    memset(dst, 0, (size_t)w * n);
    MPI_Barrier(MPI_COMM_WORLD);
    t = stream(src, dst, n, w, reps, req, &bad);
    const double msgs = (double)reps * w;
    if (rank == 0) printf("stream %zu %.3f %.1f\n", n, (double)n * msgs / t / 1e9, t / msgs * 1e9);

    long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all) {
      if (bad) fprintf(stderr, "mpi_p2p: rank %d: %zu-byte messages: %ld bytes received wrong\n", rank, n, bad);
      failed = 1;
    }
    fflush(stdout);
    free(buf);
    free(src);
    free(dst);
    free(req);
  }
  free(list);
  MPI_Finalize();
  return failed;
}
