/* MPI 3.1 8.7: MPI_Abort ends every process of the job; the launcher
 * returns its errorcode as the job's status and names the rank. The last
 * rank aborts while the others wait in a barrier that never completes. */
#include "mpitest.h"

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  if (mt_rank == mt_size - 1) MPI_Abort(MPI_COMM_WORLD, 7);
  MPI_Barrier(MPI_COMM_WORLD);
  return mt_finish("abort"); /* not reached */
}
