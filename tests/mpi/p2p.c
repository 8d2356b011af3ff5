/* MPI 3.1 chapter 3, point-to-point communication: every send mode,
 * blocking and not; receive wildcards and the non-overtaking rule (3.5);
 * MPI_PROC_NULL (3.11); probes and matched probes (3.8); status queries;
 * completion in its one/any/all/some forms (3.7.5); persistent requests
 * (3.9); cancellation of receives (3.8.4); buffered mode (3.6); truncation;
 * large messages; Ssend's completion rule. */
#include "mpitest.h"

static void modes(void) {
  SECTION("3.2-3.4 send modes");
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  for (int mode = 0; mode < 4; ++mode) {
    int out[16], in[16];
    for (int i = 0; i < 16; ++i) out[i] = mt_rank * 100 + mode * 16 + i;
    MPI_Request r;
    MPI_Status st;
    CHECK_RC(MPI_Irecv(in, 16, MPI_INT, prev, 40 + mode, MPI_COMM_WORLD, &r));
    /* Every receive is posted before any ready send starts. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (mode == 0) CHECK_RC(MPI_Send(out, 16, MPI_INT, next, 40, MPI_COMM_WORLD));
    if (mode == 1) CHECK_RC(MPI_Ssend(out, 16, MPI_INT, next, 41, MPI_COMM_WORLD));
    if (mode == 2) CHECK_RC(MPI_Rsend(out, 16, MPI_INT, next, 42, MPI_COMM_WORLD));
    if (mode == 3) {
      int size = 0;
      MPI_Pack_size(16, MPI_INT, MPI_COMM_WORLD, &size);
      size += MPI_BSEND_OVERHEAD;
      void* buf = malloc((size_t)size);
      CHECK_RC(MPI_Buffer_attach(buf, size));
      CHECK_RC(MPI_Bsend(out, 16, MPI_INT, next, 43, MPI_COMM_WORLD));
      out[0] = -1; /* the buffer holds the message: the user buffer may change */
      void* back = NULL;
      int bsize = 0;
      CHECK_RC(MPI_Buffer_detach(&back, &bsize));
      CHECK(back == buf);
      CHECK_INT(bsize, size);
      free(buf);
    }
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_INT(st.MPI_SOURCE, prev);
    CHECK_INT(st.MPI_TAG, 40 + mode);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK_INT(n, 16);
    for (int i = 0; i < 16; ++i) CHECK_INT(in[i], prev * 100 + mode * 16 + i);
  }
  /* Immediate forms, all four. */
  int out[4][8], in[4][8];
  MPI_Request rs[8];
  for (int m = 0; m < 4; ++m) {
    for (int i = 0; i < 8; ++i) out[m][i] = mt_rank * 1000 + m * 10 + i;
    MPI_Irecv(in[m], 8, MPI_INT, prev, 50 + m, MPI_COMM_WORLD, &rs[m]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int bsize = 8 * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
  void* bbuf = malloc((size_t)bsize);
  MPI_Buffer_attach(bbuf, bsize);
  CHECK_RC(MPI_Isend(out[0], 8, MPI_INT, next, 50, MPI_COMM_WORLD, &rs[4]));
  CHECK_RC(MPI_Issend(out[1], 8, MPI_INT, next, 51, MPI_COMM_WORLD, &rs[5]));
  CHECK_RC(MPI_Irsend(out[2], 8, MPI_INT, next, 52, MPI_COMM_WORLD, &rs[6]));
  CHECK_RC(MPI_Ibsend(out[3], 8, MPI_INT, next, 53, MPI_COMM_WORLD, &rs[7]));
  CHECK_RC(MPI_Waitall(8, rs, MPI_STATUSES_IGNORE));
  for (int m = 0; m < 4; ++m)
    for (int i = 0; i < 8; ++i) CHECK_INT(in[m][i], prev * 1000 + m * 10 + i);
  void* back;
  MPI_Buffer_detach(&back, &bsize);
  free(bbuf);
}

/* 3.4: an MPI_Issend completes only once the matching receive started. */
static void synchronous(void) {
  SECTION("3.4 synchronous completion");
  if (mt_rank == 1) {
    int x = 77, flag = 1, go = 1;
    MPI_Request r;
    MPI_Issend(&x, 1, MPI_INT, 0, 60, MPI_COMM_WORLD, &r);
    for (int i = 0; i < 50; ++i) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    CHECK_MSG(!flag, "MPI_Issend completed before its receive was posted");
    MPI_Send(&go, 1, MPI_INT, 0, 61, MPI_COMM_WORLD);
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
  } else if (mt_rank == 0) {
    int go = 0, x = 0;
    MPI_Recv(&go, 1, MPI_INT, 1, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&x, 1, MPI_INT, 1, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_INT(x, 77);
  }
}

/* 3.5: messages of one sender to one receiver are not overtaken, and
 * wildcards match the earliest message that fits. */
static void ordering(void) {
  SECTION("3.5 non-overtaking, MPI_ANY_SOURCE, MPI_ANY_TAG");
  if (mt_rank != 0) {
    for (int k = 0; k < 20; ++k) {
      int v[2] = {mt_rank, k};
      MPI_Send(v, 2, MPI_INT, 0, k % 3, MPI_COMM_WORLD);
    }
  } else {
    int last[64];
    for (int i = 0; i < 64; ++i) last[i] = -1;
    for (int m = 0; m < 20 * (mt_size - 1); ++m) {
      int v[2];
      MPI_Status st;
      CHECK_RC(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
      CHECK_INT(st.MPI_SOURCE, v[0]);
      CHECK_INT(st.MPI_TAG, v[1] % 3);
      CHECK_MSG(v[1] == last[v[0]] + 1, "from rank %d message %d after %d: overtaken", v[0], v[1], last[v[0]]);
      last[v[0]] = v[1];
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* A specific tag skips earlier messages of other tags, which stay in order. */
  if (mt_rank == 1) {
    for (int k = 0; k < 6; ++k) MPI_Send(&k, 1, MPI_INT, 0, k < 3 ? 7 : 8, MPI_COMM_WORLD);
  } else if (mt_rank == 0) {
    int x;
    for (int k = 3; k < 6; ++k) {
      MPI_Recv(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK_INT(x, k);
    }
    for (int k = 0; k < 3; ++k) {
      MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK_INT(x, k);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void proc_null(void) {
  SECTION("3.11 MPI_PROC_NULL");
  int x = 5;
  MPI_Status st;
  CHECK_RC(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  CHECK_RC(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  CHECK_INT(x, 5);
  CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
  CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_INT(n, 0);
  MPI_Request r;
  CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
  int flag = 0;
  MPI_Test(&r, &flag, &st);
  CHECK(flag);
  CHECK_RC(MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
}

static void probes(void) {
  SECTION("3.8 probe and matched probe");
  if (mt_rank == 1) {
    double d[10];
    for (int i = 0; i < 10; ++i) d[i] = i + 0.5;
    MPI_Send(d, 10, MPI_DOUBLE, 0, 70, MPI_COMM_WORLD);
    MPI_Send(d, 3, MPI_DOUBLE, 0, 71, MPI_COMM_WORLD);
    MPI_Send(d, 4, MPI_DOUBLE, 0, 72, MPI_COMM_WORLD);
  } else if (mt_rank == 0) {
    MPI_Status st;
    CHECK_RC(MPI_Probe(1, 70, MPI_COMM_WORLD, &st));
    int n = 0;
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    CHECK_INT(n, 10);
    CHECK_INT(st.MPI_SOURCE, 1);
    double* buf = malloc((size_t)n * sizeof(double));
    MPI_Recv(buf, n, MPI_DOUBLE, 1, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(buf[9] == 9.5);
    free(buf);
    int flag = 0;
    while (!flag) CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 71, MPI_COMM_WORLD, &flag, &st));
    CHECK_INT(st.MPI_TAG, 71);
    MPI_Message msg;
    CHECK_RC(MPI_Mprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
    CHECK_INT(st.MPI_TAG, 71); /* the earliest of rank 1's messages still there */
    /* Once matched, a message is not seen by other probes or receives. */
    MPI_Message msg2;
    flag = 0;
    while (!flag) MPI_Improbe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg2, &st);
    CHECK_INT(st.MPI_TAG, 72);
    double got[4] = {0};
    CHECK_RC(MPI_Mrecv(got, 3, MPI_DOUBLE, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL);
    CHECK(got[2] == 2.5);
    MPI_Request r;
    CHECK_RC(MPI_Imrecv(got, 4, MPI_DOUBLE, &msg2, &r));
    CHECK_RC(MPI_Wait(&r, &st));
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    CHECK_INT(n, 4);
    CHECK(got[3] == 3.5);
    CHECK_RC(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC);
    CHECK_RC(MPI_Mrecv(got, 1, MPI_DOUBLE, &msg, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void completion(void) {
  SECTION("3.7.5 wait and test: any, all, some");
  /* Each rank sends one message to every other; receives complete in any order. */
  const int n = mt_size;
  int* in = calloc((size_t)n, sizeof(int));
  MPI_Request* r = malloc(2 * (size_t)n * sizeof(MPI_Request));
  int k = 0;
  for (int p = 0; p < n; ++p) {
    if (p == mt_rank) continue;
    MPI_Irecv(&in[p], 1, MPI_INT, p, 80, MPI_COMM_WORLD, &r[k++]);
  }
  const int nrecv = k;
  for (int p = 0; p < n; ++p)
    if (p != mt_rank) MPI_Isend(&mt_rank, 1, MPI_INT, p, 80, MPI_COMM_WORLD, &r[k++]);
  int done = 0, index = -1;
  MPI_Status st;
  CHECK_RC(MPI_Waitany(nrecv, r, &index, &st));
  CHECK(index >= 0 && index < nrecv);
  CHECK(r[index] == MPI_REQUEST_NULL);
  CHECK_INT(in[st.MPI_SOURCE], st.MPI_SOURCE);
  ++done;
  int idx[64], outcount = 0;
  MPI_Status sts[64];
  while (done < nrecv) {
    CHECK_RC(MPI_Waitsome(nrecv, r, &outcount, idx, sts));
    CHECK(outcount >= 1 && outcount != MPI_UNDEFINED);
    for (int i = 0; i < outcount; ++i) CHECK_INT(in[sts[i].MPI_SOURCE], sts[i].MPI_SOURCE);
    done += outcount;
  }
  CHECK_RC(MPI_Waitsome(nrecv, r, &outcount, idx, sts));
  CHECK_INT(outcount, MPI_UNDEFINED); /* every request is null now */
  int flag = 0;
  while (!flag) CHECK_RC(MPI_Testall(k - nrecv, r + nrecv, &flag, MPI_STATUSES_IGNORE));
  CHECK_RC(MPI_Waitany(k, r, &index, &st));
  CHECK_INT(index, MPI_UNDEFINED);
  CHECK_INT(st.MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_RC(MPI_Testany(k, r, &index, &flag, &st));
  CHECK(flag && index == MPI_UNDEFINED);
  /* MPI_Request_get_status does not free the request. */
  MPI_Request g;
  int v = -1;
  MPI_Irecv(&v, 1, MPI_INT, mt_rank, 81, MPI_COMM_WORLD, &g);
  MPI_Send(&mt_rank, 1, MPI_INT, mt_rank, 81, MPI_COMM_WORLD);
  flag = 0;
  while (!flag) MPI_Request_get_status(g, &flag, &st);
  CHECK(g != MPI_REQUEST_NULL);
  CHECK_INT(st.MPI_SOURCE, mt_rank);
  MPI_Wait(&g, MPI_STATUS_IGNORE);
  CHECK_INT(v, mt_rank);
  free(in);
  free(r);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI leaves open which ready request MPI_Waitany and MPI_Testany complete
   (3.7.5); this library takes the one started first, so receives of any
   source posted at once are handed over in the order their messages came
   (docs/mpi.md). Rank 0 posts into slot 1 before slot 0; rank 1's first
   message therefore lands in slot 1, its second in slot 0. */
static void any_takes_the_oldest(void) {
  SECTION("3.7.5 MPI_Waitany and MPI_Testany: the oldest ready request");
  int in[2] = {-1, -1};
  MPI_Request r[2];
  if (mt_rank == 0) {
    MPI_Irecv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]);
    MPI_Irecv(&in[0], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (mt_rank == 1) {
    const int first = 100, second = 200;
    MPI_Send(&first, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    MPI_Send(&second, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
  }
  if (mt_rank == 0) {
    int flag = 0;
    MPI_Status st;
    while (!flag) MPI_Request_get_status(r[0], &flag, &st); /* both ready now */
    CHECK_INT(in[1], 100);
    CHECK_INT(in[0], 200);
    int index = -1;
    CHECK_RC(MPI_Testany(2, r, &index, &flag, &st));
    CHECK(flag);
    CHECK_INT(index, 1);
    CHECK_INT(st.MPI_TAG, 5);
    CHECK_RC(MPI_Waitany(2, r, &index, &st));
    CHECK_INT(index, 0);
    CHECK_INT(st.MPI_TAG, 6);
    /* The same with Waitany first: slot 0 posted first this time. */
    MPI_Irecv(&in[0], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &r[1]);
    MPI_Send(&mt_rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    const int two = 2;
    MPI_Send(&two, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    flag = 0;
    while (!flag) MPI_Request_get_status(r[1], &flag, &st);
    CHECK_RC(MPI_Waitany(2, r, &index, &st));
    CHECK_INT(index, 0);
    CHECK_INT(in[0], 0);
    CHECK_RC(MPI_Waitany(2, r, &index, &st));
    CHECK_INT(index, 1);
    CHECK_INT(in[1], 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void persistent(void) {
  SECTION("3.9 persistent requests");
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  int out = 0, in = -1;
  MPI_Request r[2];
  CHECK_RC(MPI_Recv_init(&in, 1, MPI_INT, prev, 90, MPI_COMM_WORLD, &r[0]));
  CHECK_RC(MPI_Send_init(&out, 1, MPI_INT, next, 90, MPI_COMM_WORLD, &r[1]));
  MPI_Status st[2];
  CHECK_RC(MPI_Waitall(2, r, st)); /* inactive: completes at once, empty statuses (3.7.3) */
  CHECK_INT(st[0].MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_INT(st[0].MPI_TAG, MPI_ANY_TAG);
  for (int round = 0; round < 5; ++round) {
    out = mt_rank * 10 + round;
    CHECK_RC(MPI_Startall(2, r));
    CHECK_RC(MPI_Waitall(2, r, st));
    CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL);
    CHECK_INT(in, prev * 10 + round);
  }
  MPI_Request s;
  CHECK_RC(MPI_Ssend_init(&out, 1, MPI_INT, next, 91, MPI_COMM_WORLD, &s));
  MPI_Request q;
  MPI_Recv_init(&in, 1, MPI_INT, prev, 91, MPI_COMM_WORLD, &q);
  MPI_Start(&q);
  MPI_Start(&s);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  CHECK_INT(in, prev * 10 + 4);
  CHECK_RC(MPI_Request_free(&r[0]));
  CHECK_RC(MPI_Request_free(&r[1]));
  MPI_Request_free(&s);
  MPI_Request_free(&q);
  CHECK(r[0] == MPI_REQUEST_NULL);
}

static void cancel(void) {
  SECTION("3.8.4 cancelling a receive");
  int x = 0, flag = 0;
  MPI_Request r;
  MPI_Status st;
  MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &r);
  CHECK_RC(MPI_Cancel(&r));
  CHECK_RC(MPI_Wait(&r, &st));
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag);
  MPI_Barrier(MPI_COMM_WORLD); /* no message of tag 99 existed while the receive was posted */
  /* A message to the tag goes to the next receive, not the cancelled one. */
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  int v = mt_rank;
  MPI_Sendrecv(&v, 1, MPI_INT, next, 99, &x, 1, MPI_INT, prev, 99, MPI_COMM_WORLD, &st);
  CHECK_INT(x, prev);
  MPI_Test_cancelled(&st, &flag);
  CHECK(!flag);
}

/* A send whose data has left is cancelled unless a receive took it (MPICH's
   scancel tests rely on this for messages nobody receives). */
static void cancel_send(void) {
  SECTION("3.8.4 cancelling a send");
  if (mt_size < 2) return;
  const int sizes[3] = {4, 10000, 1 << 20};
  char* buf = malloc((size_t)sizes[2]);
  memset(buf, 7, (size_t)sizes[2]);
  for (int k = 0; k < 3; ++k) {
    int flag = -1, n = -1;
    MPI_Status st;
    if (mt_rank == 0) {
      MPI_Request r;
      CHECK_RC(MPI_Isend(buf, sizes[k], MPI_CHAR, 1, 500 + k, MPI_COMM_WORLD, &r));
      CHECK_RC(MPI_Cancel(&r));
      CHECK_RC(MPI_Wait(&r, &st));
      MPI_Test_cancelled(&st, &flag);
      CHECK_MSG(flag, "a %d-byte send nobody receives was not cancelled", sizes[k]);
      /* A synchronous one too (it would wait for a receive forever). */
      CHECK_RC(MPI_Issend(buf, sizes[k], MPI_CHAR, 1, 600 + k, MPI_COMM_WORLD, &r));
      CHECK_RC(MPI_Cancel(&r));
      CHECK_RC(MPI_Wait(&r, &st));
      MPI_Test_cancelled(&st, &flag);
      CHECK_MSG(flag, "a %d-byte synchronous send nobody receives was not cancelled", sizes[k]);
      /* One the other rank receives: the cancel fails, the send completes. */
      CHECK_RC(MPI_Isend(buf, sizes[k], MPI_CHAR, 1, 700 + k, MPI_COMM_WORLD, &r));
      MPI_Barrier(MPI_COMM_WORLD);
      CHECK_RC(MPI_Cancel(&r));
      CHECK_RC(MPI_Wait(&r, &st));
      MPI_Test_cancelled(&st, &flag);
      CHECK_MSG(!flag, "a received %d-byte send was cancelled", sizes[k]);
    } else if (mt_rank == 1) {
      char* in = malloc((size_t)sizes[k]);
      CHECK_RC(MPI_Recv(in, sizes[k], MPI_CHAR, 0, 700 + k, MPI_COMM_WORLD, &st));
      MPI_Get_count(&st, MPI_CHAR, &n);
      CHECK_INT(n, sizes[k]);
      MPI_Barrier(MPI_COMM_WORLD);
      free(in);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* The cancelled messages are nowhere to be received. */
    if (mt_rank == 1) {
      MPI_Iprobe(0, 500 + k, MPI_COMM_WORLD, &flag, &st);
      CHECK_MSG(!flag, "a cancelled %d-byte message can still be received", sizes[k]);
      MPI_Iprobe(0, 600 + k, MPI_COMM_WORLD, &flag, &st);
      CHECK_MSG(!flag, "a cancelled %d-byte synchronous message can still be received", sizes[k]);
    }
  }
  free(buf);
}

static void sendrecv(void) {
  SECTION("3.10 send-receive");
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  long a[100], b[100];
  for (int i = 0; i < 100; ++i) a[i] = mt_rank * 1000 + i;
  MPI_Status st;
  CHECK_RC(MPI_Sendrecv(a, 100, MPI_LONG, next, 3, b, 100, MPI_LONG, prev, 3, MPI_COMM_WORLD, &st));
  CHECK(b[99] == prev * 1000 + 99);
  CHECK_RC(MPI_Sendrecv_replace(a, 100, MPI_LONG, next, 4, prev, 4, MPI_COMM_WORLD, &st));
  CHECK(a[0] == prev * 1000 && a[50] == prev * 1000 + 50);
  CHECK_INT(st.MPI_SOURCE, prev);
  /* To oneself. */
  CHECK_RC(MPI_Sendrecv(a, 10, MPI_LONG, mt_rank, 5, b, 10, MPI_LONG, mt_rank, 5, MPI_COMM_WORLD, &st));
  CHECK(b[9] == a[9]);
}

static void large(void) {
  SECTION("3.2 large messages");
  const int n = 1 << 20; /* 4 MiB of ints */
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  int* out = malloc((size_t)n * sizeof(int));
  int* in = malloc((size_t)n * sizeof(int));
  for (int i = 0; i < n; ++i) out[i] = i ^ (mt_rank << 24);
  MPI_Request r;
  MPI_Irecv(in, n, MPI_INT, prev, 6, MPI_COMM_WORLD, &r);
  CHECK_RC(MPI_Send(out, n, MPI_INT, next, 6, MPI_COMM_WORLD));
  MPI_Status st;
  CHECK_RC(MPI_Wait(&r, &st));
  long bad = 0;
  for (int i = 0; i < n; ++i) bad += in[i] != (i ^ (prev << 24));
  CHECK_INT(bad, 0);
  int c = 0;
  MPI_Get_count(&st, MPI_INT, &c);
  CHECK_INT(c, n);
  free(out);
  free(in);
}

static void truncation(void) {
  SECTION("3.2.4 truncation and status");
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  int out[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[4] = {0};
  MPI_Request r;
  MPI_Isend(out, 8, MPI_INT, next, 7, c, &r);
  MPI_Status st;
  int rc = MPI_Recv(in, 4, MPI_INT, prev, 7, c, &st);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK_INT(cls, MPI_ERR_TRUNCATE);
  CHECK_INT(in[3], 4);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  /* A shorter message than the buffer: the status counts what came. */
  MPI_Isend(out, 3, MPI_INT, next, 8, c, &r);
  MPI_Recv(in, 4, MPI_INT, prev, 8, c, &st);
  int n = 0;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_INT(n, 3);
  MPI_Get_elements(&st, MPI_INT, &n);
  CHECK_INT(n, 3);
  MPI_Get_count(&st, MPI_DOUBLE, &n);
  CHECK_INT(n, MPI_UNDEFINED); /* 12 bytes are not whole doubles */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Comm_free(&c);
}

/* 3.2.5: the error field of a status is written only by the calls that
   return several statuses, and only when they return MPI_ERR_IN_STATUS. */
static void error_field(void) {
  SECTION("3.2.5 the status error field");
  const int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
  int out = mt_rank, in = -1;
  MPI_Status st;
  MPI_Message m;
  MPI_Request rq[2];
  MPI_Status sts[2];
  st.MPI_ERROR = MPI_ERR_DIMS;
  MPI_Sendrecv(&out, 1, MPI_INT, right, 40, &in, 1, MPI_INT, left, 40, MPI_COMM_WORLD, &st);
  CHECK_INT(st.MPI_ERROR, MPI_ERR_DIMS);
  MPI_Send(&out, 1, MPI_INT, right, 41, MPI_COMM_WORLD);
  MPI_Probe(left, 41, MPI_COMM_WORLD, &st);
  CHECK_INT(st.MPI_ERROR, MPI_ERR_DIMS);
  MPI_Mprobe(left, 41, MPI_COMM_WORLD, &m, &st);
  CHECK_INT(st.MPI_ERROR, MPI_ERR_DIMS);
  MPI_Mrecv(&in, 1, MPI_INT, &m, &st);
  CHECK_INT(st.MPI_ERROR, MPI_ERR_DIMS);
  CHECK_INT(in, left);
  MPI_Irecv(&in, 1, MPI_INT, left, 42, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(&out, 1, MPI_INT, right, 42, MPI_COMM_WORLD, &rq[1]);
  MPI_Wait(&rq[1], &st);
  CHECK_INT(st.MPI_ERROR, MPI_ERR_DIMS);
  sts[0].MPI_ERROR = sts[1].MPI_ERROR = MPI_ERR_DIMS;
  rq[1] = MPI_REQUEST_NULL;
  MPI_Waitall(2, rq, sts);
  CHECK_INT(sts[0].MPI_ERROR, MPI_ERR_DIMS);
  CHECK_INT(sts[1].MPI_ERROR, MPI_ERR_DIMS);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  if (mt_size < 2) {
    if (mt_rank == 0) printf("p2p: needs 2 ranks\n");
    return mt_finish("p2p");
  }
  modes();
  synchronous();
  ordering();
  proc_null();
  probes();
  completion();
  any_takes_the_oldest();
  persistent();
  cancel();
  cancel_send();
  sendrecv();
  large();
  truncation();
  error_field();
  return mt_finish("p2p");
}
