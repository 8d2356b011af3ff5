/* What programs written for other MPI implementations take for granted
 * (the idioms of benchmark and test suites such as OSU's and MPICH's):
 * built with -Wall -Wextra -Werror as C99 and as C++ (tests/mpi/meson.build),
 * then run. Nothing here is Toroid's own: no TOROID_ macro is used. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(MPI_VERSION) || MPI_VERSION < 3 || !defined(MPI_SUBVERSION)
#error "MPI_VERSION and MPI_SUBVERSION are preprocessor constants (MPI 3.1 8.1.1)"
#endif
#if MPI_VERSION == 3 && MPI_SUBVERSION >= 1
#define HAVE_MPI_3_1 1
#endif
#ifndef HAVE_MPI_3_1
#error "an MPI 3.1 library"
#endif

/* OSU's error check. */
#define MPI_CHECK(stmt)                                                            \
  do {                                                                             \
    int mpi_errno = (stmt);                                                        \
    if (MPI_SUCCESS != mpi_errno) {                                                \
      fprintf(stderr, "[%s:%d] MPI call failed with %d\n", __FILE__, __LINE__, mpi_errno); \
      exit(EXIT_FAILURE);                                                          \
    }                                                                              \
  } while (0)

/* Handles are usable in static initializers, and compared with ==. */
static MPI_Datatype g_types[] = {MPI_CHAR, MPI_INT, MPI_LONG, MPI_DOUBLE, MPI_BYTE, MPI_INT64_T};
static MPI_Comm g_comm = MPI_COMM_NULL;
static MPI_Op g_ops[] = {MPI_SUM, MPI_MAX, MPI_MINLOC};

struct particle {
  double x[3];
  int id;
  char tag;
};

static void my_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((const int*)in)[i];
}

static long failures;
#define EXPECT(c)                                                    \
  do {                                                               \
    if (!(c)) {                                                      \
      ++failures;                                                    \
      fprintf(stderr, "portable.c:%d: FAIL %s\n", __LINE__, #c);     \
    }                                                                \
  } while (0)

int main(int argc, char** argv) {
  (void)argc;
  (void)argv;
  int flag = 1;
  MPI_Initialized(&flag);
  EXPECT(!flag);
  MPI_CHECK(MPI_Init(NULL, NULL)); /* NULL argc/argv are allowed */
  int rank, size, len, version, subversion;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  g_comm = MPI_COMM_WORLD;
  EXPECT(g_comm != MPI_COMM_NULL && g_types[1] == MPI_INT && g_ops[0] == MPI_SUM);

  char lib[MPI_MAX_LIBRARY_VERSION_STRING], host[MPI_MAX_PROCESSOR_NAME];
  MPI_CHECK(MPI_Get_library_version(lib, &len));
  MPI_CHECK(MPI_Get_processor_name(host, &len));
  MPI_CHECK(MPI_Get_version(&version, &subversion));
  EXPECT(version == MPI_VERSION && subversion == MPI_SUBVERSION);

  /* MPI_Wtime/MPI_Wtick as benchmarks time with them. */
  const double t0 = MPI_Wtime(), tick = MPI_Wtick();
  EXPECT(tick > 0 && tick < 1e-3 && MPI_Wtime() >= t0);

  /* MPI_Aint arithmetic: displacements from addresses. */
  struct particle p[2];
  MPI_Aint base, disp[3];
  MPI_CHECK(MPI_Get_address(&p[0], &base));
  MPI_CHECK(MPI_Get_address(&p[0].id, &disp[1]));
  MPI_CHECK(MPI_Get_address(&p[0].tag, &disp[2]));
  disp[0] = 0;
  disp[1] -= base;
  disp[2] = MPI_Aint_diff(disp[2], base);
  EXPECT(disp[1] == (MPI_Aint)offsetof(struct particle, id));
  EXPECT(disp[2] == (MPI_Aint)offsetof(struct particle, tag));
  EXPECT(MPI_Aint_add(base, disp[1]) == base + disp[1]);
  int blens[3] = {3, 1, 1};
  MPI_Datatype types[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR}, ptype, resized;
  MPI_CHECK(MPI_Type_create_struct(3, blens, disp, types, &ptype));
  MPI_CHECK(MPI_Type_create_resized(ptype, 0, (MPI_Aint)sizeof(struct particle), &resized));
  MPI_CHECK(MPI_Type_commit(&resized));
  MPI_Aint lb, extent;
  MPI_Count size_x;
  MPI_CHECK(MPI_Type_get_extent(resized, &lb, &extent));
  MPI_CHECK(MPI_Type_size_x(resized, &size_x));
  EXPECT(lb == 0 && extent == (MPI_Aint)sizeof(struct particle) && size_x == 3 * 8 + 4 + 1);

  /* Point-to-point with the ignore constants, a ring as OSU's latency test. */
  memset(p, 0, sizeof p);
  p[0].id = rank;
  p[0].tag = 'a' + (char)(rank % 26);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_CHECK(MPI_Sendrecv(&p[0], 1, resized, right, 7, &p[1], 1, resized, left, 7, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
  EXPECT(p[1].id == left && p[1].tag == 'a' + (char)(left % 26));
  MPI_Request reqs[2];
  int a = rank, b = -1;
  MPI_CHECK(MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[0]));
  MPI_CHECK(MPI_Isend(&a, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[1]));
  MPI_CHECK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
  EXPECT(b == left);
  MPI_CHECK(MPI_Send(&a, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));

  /* Collectives: IN_PLACE, a user op, MPI_2INT with MINLOC. */
  int v = rank + 1, sum = 0;
  MPI_Op op;
  MPI_CHECK(MPI_Op_create(my_sum, 1, &op));
  MPI_CHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, op, MPI_COMM_WORLD));
  EXPECT(sum == size * (size + 1) / 2);
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  EXPECT(v == sum);
  struct {
    int val, rank;
  } in = {100 - rank, rank}, out = {0, 0};
  MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
  EXPECT(out.val == 100 - (size - 1) && out.rank == size - 1);
  MPI_CHECK(MPI_Op_free(&op));

  /* A node-local communicator, as OSU's multi-pair tests make. */
  MPI_Comm node;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int node_size = 0;
  MPI_CHECK(MPI_Comm_size(node, &node_size));
  EXPECT(node_size >= 1);
  MPI_CHECK(MPI_Comm_free(&node));

  /* Matched probe (MPI 3.0), as the MPICH suite uses. */
  MPI_Message msg;
  MPI_Status st;
  MPI_CHECK(MPI_Isend(&a, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &reqs[1]));
  MPI_CHECK(MPI_Mprobe(left, 9, MPI_COMM_WORLD, &msg, &st));
  MPI_CHECK(MPI_Get_count(&st, MPI_INT, &len));
  EXPECT(len == 1 && st.MPI_SOURCE == left && st.MPI_TAG == 9);
  MPI_CHECK(MPI_Mrecv(&b, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
  MPI_CHECK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
  EXPECT(b == left && msg == MPI_MESSAGE_NULL);

  /* Fortran handles exist in a Fortran-less build. */
  MPI_Fint f = MPI_Comm_c2f(MPI_COMM_WORLD);
  EXPECT(MPI_Comm_f2c(f) == MPI_COMM_WORLD);

  MPI_CHECK(MPI_Type_free(&resized));
  MPI_CHECK(MPI_Type_free(&ptype));
  long all = 0;
  MPI_CHECK(MPI_Reduce(&failures, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  if (rank == 0) printf("portable: %d ranks, %ld failed (%s)\n", size, all, lib);
  MPI_CHECK(MPI_Finalize());
  MPI_Finalized(&flag);
  return flag && all == 0 ? 0 : 1;
}
