/* Checks for the MPI conformance programs (tests/mpi/). Each program groups
 * its checks by the section of the MPI 3.1 standard they come from; a
 * failing check prints the section, file, line and rank; mt_finish() sums
 * every rank's counts, rank 0 prints one line the runner reads
 * ("mpitest NAME: C checks on N ranks, F failed"), and the exit status is 1
 * when any check failed on any rank. Written from the standard's text. */
#ifndef TOROID_MPITEST_H
#define TOROID_MPITEST_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long mt_checks __attribute__((unused)), mt_failures __attribute__((unused));
static int mt_rank = -1, mt_size = 0;
static const char* mt_section __attribute__((unused)) = "";

#define SECTION(name) (mt_section = (name))
#define CHECK(cond) CHECK_MSG(cond, "%s", #cond)
#define CHECK_MSG(cond, ...)                                                                   \
  do {                                                                                         \
    ++mt_checks;                                                                               \
    if (!(cond)) {                                                                             \
      ++mt_failures;                                                                           \
      fprintf(stderr, "FAIL [%s] %s:%d rank %d: ", mt_section, __FILE__, __LINE__, mt_rank); \
      fprintf(stderr, __VA_ARGS__);                                                            \
      fprintf(stderr, "\n");                                                                   \
    }                                                                                          \
  } while (0)
#define CHECK_INT(got, want)                                                                      \
  do {                                                                                            \
    long long mt_g = (long long)(got), mt_w = (long long)(want);                                  \
    CHECK_MSG(mt_g == mt_w, "%s is %lld, expected %lld (%s)", #got, mt_g, mt_w, #want);          \
  } while (0)
#define CHECK_RC(call)                                                                 \
  do {                                                                                 \
    int mt_rc = (call);                                                                \
    char mt_s[MPI_MAX_ERROR_STRING];                                                   \
    int mt_l = 0;                                                                      \
    if (mt_rc != MPI_SUCCESS) MPI_Error_string(mt_rc, mt_s, &mt_l);                    \
    mt_s[mt_l] = 0;                                                                    \
    CHECK_MSG(mt_rc == MPI_SUCCESS, "%s returned %d: %s", #call, mt_rc, mt_s);         \
  } while (0)
/* A call that must fail with error class `cls` (the communicator's handler is MPI_ERRORS_RETURN). */
#define CHECK_CLASS(call, cls)                                                             \
  do {                                                                                     \
    int mt_rc = (call), mt_c = -1;                                                         \
    if (mt_rc != MPI_SUCCESS) MPI_Error_class(mt_rc, &mt_c);                               \
    CHECK_MSG(mt_c == (cls), "%s gave class %d, expected %s (%d)", #call, mt_c, #cls, cls); \
  } while (0)

__attribute__((unused)) static void mt_init(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
}

__attribute__((unused)) static int mt_finish(const char* name) {
  long mine[2] = {mt_checks, mt_failures}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (mt_rank == 0) {
    printf("mpitest %s: %ld checks on %d ranks, %ld failed\n", name, all[0], mt_size, all[1]);
    fflush(stdout);
  }
  MPI_Finalize();
  return all[1] ? 1 : 0;
}

#endif
