/* A rank that dies: rank 1 is killed in the middle of the job while the
 * others are in a collective. Under toroid-mpirun every other rank is
 * stopped at once with a message naming rank 1; with --no-stop the ranks
 * find out themselves (their links to it go down, and the ranks that see
 * it report the failed collective to the others): each gets an error
 * naming the failure from MPI_Barrier within seconds, never a hang. */
#include <signal.h>

#include "mpitest.h"

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  if (mt_rank == 1) raise(SIGKILL);
  const double t0 = MPI_Wtime();
  int rc = MPI_SUCCESS;
  for (int i = 0; i < 1000 && rc == MPI_SUCCESS; ++i) rc = MPI_Barrier(MPI_COMM_WORLD);
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  s[0] = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, s, &len);
  printf("rank %d: MPI_Barrier failed after %.2f s: %s\n", mt_rank, MPI_Wtime() - t0, rc ? s : "(no error)");
  fflush(stdout);
  return rc == MPI_SUCCESS ? 0 : 3;
}
