/* MPI 3.1 chapter 5, data movement: barrier, broadcast, gather(v),
 * scatter(v), allgather(v), alltoall(v/w) (5.3-5.8), MPI_IN_PLACE where
 * 5.2.3 allows it, derived datatypes in collectives (a matrix column of a
 * resized vector type), every non-blocking form (5.12), and several
 * non-blocking collectives in flight at once on different communicators,
 * completed in an order unlike the start order (5.12: they progress
 * independently). */
#include "mpitest.h"

static int val(int from, int to, int i) { return from * 10000 + to * 100 + i; }

static void bcast(MPI_Comm c, int nb) {
  SECTION("5.4 MPI_Bcast");
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  for (int root = 0; root < size; ++root) {
    int buf[50];
    for (int i = 0; i < 50; ++i) buf[i] = rank == root ? root * 1000 + i : -1;
    if (nb) {
      MPI_Request r;
      CHECK_RC(MPI_Ibcast(buf, 50, MPI_INT, root, c, &r));
      CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
      CHECK_RC(MPI_Bcast(buf, 50, MPI_INT, root, c));
    }
    for (int i = 0; i < 50; ++i) CHECK_INT(buf[i], root * 1000 + i);
  }
  /* 1 MiB, and a zero count. */
  const int n = 1 << 18;
  int* big = malloc((size_t)n * sizeof(int));
  for (int i = 0; i < n; ++i) big[i] = rank == 0 ? i * 3 : 0;
  CHECK_RC(MPI_Bcast(big, n, MPI_INT, 0, c));
  long bad = 0;
  for (int i = 0; i < n; ++i) bad += big[i] != i * 3;
  CHECK_INT(bad, 0);
  free(big);
  CHECK_RC(MPI_Bcast(NULL, 0, MPI_INT, 0, c));
}

static void gather_scatter(MPI_Comm c, int nb) {
  SECTION("5.5-5.6 gather and scatter, MPI_IN_PLACE at the root");
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  const int k = 5;
  int* all = malloc((size_t)(k * size) * sizeof(int));
  int mine[5];
  for (int root = 0; root < size; ++root) {
    for (int i = 0; i < k; ++i) mine[i] = val(rank, root, i);
    for (int i = 0; i < k * size; ++i) all[i] = -1;
    MPI_Request r;
    if (nb) MPI_Igather(mine, k, MPI_INT, all, k, MPI_INT, root, c, &r);
    else if (rank == root && root % 2) {
      memcpy(all + k * rank, mine, sizeof mine);
      CHECK_RC(MPI_Gather(MPI_IN_PLACE, k, MPI_INT, all, k, MPI_INT, root, c));
    } else {
      CHECK_RC(MPI_Gather(mine, k, MPI_INT, all, k, MPI_INT, root, c));
    }
    if (nb) MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rank == root)
      for (int p = 0; p < size; ++p)
        for (int i = 0; i < k; ++i) CHECK_INT(all[p * k + i], val(p, root, i));
    /* Scatter back out, shifted by one. */
    if (rank == root)
      for (int p = 0; p < size; ++p)
        for (int i = 0; i < k; ++i) all[p * k + i] = val(root, p, i);
    int got[5] = {0};
    if (nb) {
      MPI_Iscatter(all, k, MPI_INT, got, k, MPI_INT, root, c, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == root && root % 2) {
      CHECK_RC(MPI_Scatter(all, k, MPI_INT, MPI_IN_PLACE, k, MPI_INT, root, c));
      memcpy(got, all + k * rank, sizeof got);
    } else {
      CHECK_RC(MPI_Scatter(all, k, MPI_INT, got, k, MPI_INT, root, c));
    }
    for (int i = 0; i < k; ++i) CHECK_INT(got[i], val(root, rank, i));
  }
  free(all);
}

static void allgather_alltoall(MPI_Comm c, int nb) {
  SECTION("5.7-5.8 allgather and alltoall, MPI_IN_PLACE");
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  const int k = 4;
  int* a = malloc((size_t)(k * size) * sizeof(int));
  int* b = malloc((size_t)(k * size) * sizeof(int));
  int mine[4];
  for (int i = 0; i < k; ++i) mine[i] = val(rank, 0, i);
  MPI_Request r;
  if (nb) {
    MPI_Iallgather(mine, k, MPI_INT, a, k, MPI_INT, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    CHECK_RC(MPI_Allgather(mine, k, MPI_INT, a, k, MPI_INT, c));
  }
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < k; ++i) CHECK_INT(a[p * k + i], val(p, 0, i));
  for (int i = 0; i < k * size; ++i) b[i] = i / k == rank ? val(rank, 0, i % k) : -1;
  CHECK_RC(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, k, MPI_INT, c));
  for (int i = 0; i < k * size; ++i) CHECK_INT(b[i], a[i]);
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < k; ++i) a[p * k + i] = val(rank, p, i);
  if (nb) {
    MPI_Ialltoall(a, k, MPI_INT, b, k, MPI_INT, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    CHECK_RC(MPI_Alltoall(a, k, MPI_INT, b, k, MPI_INT, c));
  }
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < k; ++i) CHECK_INT(b[p * k + i], val(p, rank, i));
  CHECK_RC(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, k, MPI_INT, c));
  for (int i = 0; i < k * size; ++i) CHECK_INT(a[i], b[i]);
  free(a);
  free(b);
}

/* MPI_IN_PLACE all-to-all of blocks larger than a link's window: each
 * block's slot is sent from and received into, so nothing may land in it
 * before it has left (a block that arrived early and waited aside, too). */
static int big_val(int from, int to, int i) { return from * 1000003 + to * 7 + i; }

static void alltoall_in_place_large(MPI_Comm c) {
  SECTION("5.8 alltoall, MPI_IN_PLACE, 1 MiB blocks");
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  const int k = 1 << 18;
  int* a = malloc((size_t)k * (size_t)size * sizeof(int));
  for (int it = 0; it < 4; ++it) {
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < k; ++i) a[(size_t)p * k + i] = big_val(rank, p, i) + it;
    if (it % 2) {
      MPI_Request r;
      CHECK_RC(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, k, MPI_INT, c, &r));
      CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
      CHECK_RC(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, k, MPI_INT, c));
    }
    long bad = 0, first = -1;
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < k; ++i)
        if (a[(size_t)p * k + i] != big_val(p, rank, i) + it) {
          if (first < 0) first = (long)p * k + i;
          ++bad;
        }
    CHECK_MSG(bad == 0, "pass %d: %ld of %ld elements wrong, the first at block %ld element %ld", it, bad,
              (long)k * size, first / k, first % k);
  }
  free(a);
}

/* Vector forms: rank p contributes p % 3 + 1 elements; blocks placed in
 * reverse rank order with a gap, to exercise the displacements. */
static void vector_forms(MPI_Comm c, int nb) {
  SECTION("5.5-5.8 vector forms (v, w), MPI_IN_PLACE");
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  int counts[64], displs[64], total = 0;
  for (int p = size - 1; p >= 0; --p) {
    counts[p] = p % 3 + 1;
    displs[p] = total;
    total += counts[p] + 1;
  }
  int* buf = malloc((size_t)total * sizeof(int));
  int mine[3];
  for (int i = 0; i < counts[rank]; ++i) mine[i] = val(rank, 1, i);
  MPI_Request r;
  for (int root = 0; root < size; root += 2) {
    for (int i = 0; i < total; ++i) buf[i] = -5;
    if (nb) {
      MPI_Igatherv(mine, counts[rank], MPI_INT, buf, counts, displs, MPI_INT, root, c, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == root) {
      memcpy(buf + displs[rank], mine, (size_t)counts[rank] * sizeof(int));
      CHECK_RC(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, buf, counts, displs, MPI_INT, root, c));
    } else {
      CHECK_RC(MPI_Gatherv(mine, counts[rank], MPI_INT, NULL, NULL, NULL, MPI_INT, root, c));
    }
    if (rank == root)
      for (int p = 0; p < size; ++p) {
        for (int i = 0; i < counts[p]; ++i) CHECK_INT(buf[displs[p] + i], val(p, 1, i));
        CHECK_INT(buf[displs[p] + counts[p]], -5); /* the gaps stay untouched */
      }
    int got[3] = {0, 0, 0};
    if (nb) MPI_Iscatterv(buf, counts, displs, MPI_INT, got, counts[rank], MPI_INT, root, c, &r);
    else CHECK_RC(MPI_Scatterv(buf, counts, displs, MPI_INT, got, counts[rank], MPI_INT, root, c));
    if (nb) MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < counts[rank]; ++i) CHECK_INT(got[i], val(rank, 1, i));
  }
  for (int i = 0; i < total; ++i) buf[i] = -5;
  if (nb) {
    MPI_Iallgatherv(mine, counts[rank], MPI_INT, buf, counts, displs, MPI_INT, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    memcpy(buf + displs[rank], mine, (size_t)counts[rank] * sizeof(int));
    CHECK_RC(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_INT, buf, counts, displs, MPI_INT, c));
  }
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < counts[p]; ++i) CHECK_INT(buf[displs[p] + i], val(p, 1, i));
  /* Alltoallv: rank me sends (me + p) % 3 elements to p. */
  int sc[64], sd[64], rc[64], rd[64], st = 0, rt = 0;
  for (int p = 0; p < size; ++p) {
    sc[p] = (rank + p) % 3;
    sd[p] = st;
    st += sc[p];
    rc[p] = (p + rank) % 3;
    rd[p] = rt;
    rt += rc[p];
  }
  int* sb = malloc((size_t)(st + 1) * sizeof(int));
  int* rb = malloc((size_t)(rt + 1) * sizeof(int));
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < sc[p]; ++i) sb[sd[p] + i] = val(rank, p, i);
  if (nb) {
    MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    CHECK_RC(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c));
  }
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < rc[p]; ++i) CHECK_INT(rb[rd[p] + i], val(p, rank, i));
  /* In place: the receive buffer is the input too (symmetric counts here). */
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < rc[p]; ++i) rb[rd[p] + i] = val(rank, p, i) + 7;
  CHECK_RC(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, c));
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < rc[p]; ++i) CHECK_INT(rb[rd[p] + i], val(p, rank, i) + 7);
  /* Alltoallw: to even ranks ints, to odd ranks doubles; byte displacements. */
  int wsc[64], wsd[64], wrc[64], wrd[64];
  MPI_Datatype wst[64], wrt[64];
  char sbuf[64 * 16], rbuf[64 * 16];
  for (int p = 0; p < size; ++p) {
    wsc[p] = wrc[p] = 1;
    wsd[p] = wrd[p] = p * 16;
    wst[p] = p % 2 ? MPI_DOUBLE : MPI_INT;
    wrt[p] = rank % 2 ? MPI_DOUBLE : MPI_INT;
    if (p % 2) *(double*)(sbuf + p * 16) = val(rank, p, 0) + 0.5;
    else *(int*)(sbuf + p * 16) = val(rank, p, 0);
  }
  if (nb) {
    MPI_Ialltoallw(sbuf, wsc, wsd, wst, rbuf, wrc, wrd, wrt, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    CHECK_RC(MPI_Alltoallw(sbuf, wsc, wsd, wst, rbuf, wrc, wrd, wrt, c));
  }
  for (int p = 0; p < size; ++p) {
    if (rank % 2) CHECK(*(double*)(rbuf + p * 16) == val(p, rank, 0) + 0.5);
    else CHECK_INT(*(int*)(rbuf + p * 16), val(p, rank, 0));
  }
  free(sb);
  free(rb);
  free(buf);
}

/* 4.1.7 and 5.5 example: gather one column of each rank's 4x4 matrix into
 * the root's matrix, columns side by side, with a resized vector type. */
static void derived(MPI_Comm c) {
  SECTION("4.1, 5.5 derived datatypes in collectives");
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  const int rows = 4;
  double col[4], *m = malloc((size_t)(rows * size) * sizeof(double));
  for (int i = 0; i < rows; ++i) col[i] = rank * 10 + i;
  MPI_Datatype column, column1;
  MPI_Type_vector(rows, 1, size, MPI_DOUBLE, &column);
  MPI_Type_create_resized(column, 0, sizeof(double), &column1);
  MPI_Type_commit(&column);
  MPI_Type_commit(&column1);
  CHECK_RC(MPI_Gather(col, rows, MPI_DOUBLE, m, 1, column1, 0, c));
  if (rank == 0)
    for (int i = 0; i < rows; ++i)
      for (int p = 0; p < size; ++p) CHECK(m[i * size + p] == p * 10 + i);
  /* Every rank gets the matrix, then a column per rank back. */
  CHECK_RC(MPI_Bcast(m, rows * size, MPI_DOUBLE, 0, c));
  double back[4] = {0};
  CHECK_RC(MPI_Scatter(m, 1, column1, back, rows, MPI_DOUBLE, 0, c));
  for (int i = 0; i < rows; ++i) CHECK(back[i] == col[i]);
  /* Broadcast in the column type: non-contiguous on both ends. */
  for (int i = 0; i < rows * size; ++i) m[i] = rank == 0 ? i : -1;
  CHECK_RC(MPI_Bcast(m, 1, column, 0, c));
  for (int i = 0; i < rows; ++i) CHECK(m[i * size] == i * size);
  if (rank != 0 && size > 1) CHECK(m[1] == -1);
  MPI_Allgather(col, rows, MPI_DOUBLE, m, 1, column1, c);
  for (int i = 0; i < rows; ++i)
    for (int p = 0; p < size; ++p) CHECK(m[i * size + p] == p * 10 + i);
  MPI_Type_free(&column);
  MPI_Type_free(&column1);
  free(m);
}

static void barriers(void) {
  SECTION("5.3, 5.12 barrier");
  CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Request r;
  CHECK_RC(MPI_Ibarrier(MPI_COMM_WORLD, &r));
  int flag = 0;
  CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(r == MPI_REQUEST_NULL);
  /* A barrier orders: what rank 0 sends before it is there after it. */
  int x = 0, f = 0;
  if (mt_rank == 0)
    for (int p = 1; p < mt_size; ++p) MPI_Send(&p, 1, MPI_INT, p, 3, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (mt_rank != 0) {
    MPI_Status st;
    while (!f) MPI_Iprobe(0, 3, MPI_COMM_WORLD, &f, &st);
    MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_INT(x, mt_rank);
  }
  (void)flag;
}

/* 5.12: several non-blocking collectives in flight on different
 * communicators (world, a duplicate, the two halves), completed in
 * reverse and shuffled order. */
static void concurrent(void) {
  SECTION("5.12 non-blocking collectives in flight together");
  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half);
  int hrank, hsize;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  for (int round = 0; round < 4; ++round) {
    long a = mt_rank + round, sa = 0;
    long b[8], sb[8];
    int bc[16] = {0};
    long* ag = malloc((size_t)mt_size * sizeof(long));
    for (int i = 0; i < 8; ++i) b[i] = hrank * 8 + i;
    if (mt_rank == 0)
      for (int i = 0; i < 16; ++i) bc[i] = round * 100 + i;
    MPI_Request r[6];
    MPI_Iallreduce(&a, &sa, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r[0]);
    MPI_Iallreduce(b, sb, 8, MPI_LONG, MPI_MAX, half, &r[1]);
    MPI_Ibcast(bc, 16, MPI_INT, 0, dup, &r[2]);
    MPI_Iallgather(&a, 1, MPI_LONG, ag, 1, MPI_LONG, dup, &r[3]);
    MPI_Ibarrier(half, &r[4]);
    MPI_Ibarrier(MPI_COMM_WORLD, &r[5]);
    int order[6] = {5, 2, 4, 0, 3, 1};
    for (int k = 0; k < 6; ++k) {
      int idx = (order[k] + round) % 6;
      CHECK_RC(MPI_Wait(&r[idx], MPI_STATUS_IGNORE));
    }
    CHECK_INT(sa, (long)mt_size * (mt_size - 1) / 2 + (long)mt_size * round);
    for (int i = 0; i < 8; ++i) CHECK_INT(sb[i], (hsize - 1) * 8 + i);
    for (int i = 0; i < 16; ++i) CHECK_INT(bc[i], round * 100 + i);
    for (int p = 0; p < mt_size; ++p) CHECK_INT(ag[p], p + round);
    free(ag);
  }
  /* Many queued on one communicator, tested (not waited) to completion. */
  enum { M = 12 };
  int in[M], out[M];
  MPI_Request rq[M];
  for (int i = 0; i < M; ++i) {
    in[i] = mt_rank * i;
    MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, dup, &rq[i]);
  }
  int flag = 0;
  while (!flag) MPI_Testall(M, rq, &flag, MPI_STATUSES_IGNORE);
  for (int i = 0; i < M; ++i) CHECK_INT(out[i], i * mt_size * (mt_size - 1) / 2);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  barriers();
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &rev); /* every rank, in reverse order */
  for (int nb = 0; nb < 2; ++nb) {
    MPI_Comm c = nb ? rev : MPI_COMM_WORLD;
    bcast(c, nb);
    gather_scatter(c, nb);
    allgather_alltoall(c, nb);
    vector_forms(c, nb);
  }
  alltoall_in_place_large(MPI_COMM_WORLD);
  derived(MPI_COMM_WORLD);
  derived(rev);
  concurrent();
  MPI_Comm_free(&rev);
  return mt_finish("coll_data");
}
