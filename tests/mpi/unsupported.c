/* The chapters toroid-mpi does not provide (docs/mpi.md): one-sided
 * communication, I/O and dynamic processes. Each call links and raises
 * MPI_ERR_UNSUPPORTED_OPERATION (here returned: MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD, where errors not tied to a communicator go, 8.3). */
#include "mpitest.h"

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  SECTION("10, 11, 13 not provided");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int buf[4];
  MPI_Win win = MPI_WIN_NULL;
  CHECK_CLASS(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win),
              MPI_ERR_UNSUPPORTED_OPERATION);
  CHECK_CLASS(MPI_Win_allocate(16, 4, MPI_INFO_NULL, MPI_COMM_WORLD, buf, &win), MPI_ERR_UNSUPPORTED_OPERATION);
  MPI_File f = MPI_FILE_NULL;
  CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, "/tmp/x", MPI_MODE_RDONLY, MPI_INFO_NULL, &f),
              MPI_ERR_UNSUPPORTED_OPERATION);
  MPI_Comm child;
  CHECK_CLASS(MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child, MPI_ERRCODES_IGNORE),
              MPI_ERR_UNSUPPORTED_OPERATION);
  MPI_Comm parent = MPI_COMM_WORLD;
  CHECK_RC(MPI_Comm_get_parent(&parent));
  CHECK(parent == MPI_COMM_NULL);
  char port[MPI_MAX_PORT_NAME];
  CHECK_CLASS(MPI_Open_port(MPI_INFO_NULL, port), MPI_ERR_UNSUPPORTED_OPERATION);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  return mt_finish("unsupported");
}
