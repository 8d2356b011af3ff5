/* MPI 3.1 8.7: calling MPI before MPI_Init is erroneous. Toroid names the
 * call and stops (MPI_ERR_OTHER), or, with TOROID_MPI_ERRORS=return,
 * returns MPI_ERR_OTHER; after MPI_Finalize the same. */
#include "mpitest.h"

int main(int argc, char** argv) {
  int rank = -1;
  const int rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank); /* stops here without TOROID_MPI_ERRORS=return */
  mt_init(&argc, &argv);
  SECTION("8.7 calls before MPI_Init");
  CHECK_INT(rc, MPI_ERR_OTHER);
  CHECK_INT(rank, -1);
  int flag = 1;
  MPI_Finalized(&flag);
  CHECK(!flag);
  return mt_finish("before_init");
}
