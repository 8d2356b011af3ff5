/* MPI 3.1 8.3: under MPI_ERRORS_ARE_FATAL (the default) an error ends the
 * job: rank 0 sends to a rank that does not exist; the message names the
 * call, the argument and the class, every other rank is stopped, and the
 * job's status is the class. */
#include "mpitest.h"

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  int x = 1;
  if (mt_rank == 0) MPI_Send(&x, 1, MPI_INT, mt_size + 90, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  return mt_finish("fatal"); /* not reached: the job ends in rank 0's MPI_Send */
}
