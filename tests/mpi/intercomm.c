/* MPI 3.1 on intercommunicators: every collective in its intercommunicator
 * form (5.2.2 and each operation's intercommunicator paragraph: rooted ones
 * with MPI_ROOT / MPI_PROC_NULL in the root's group and the root's rank in
 * the other group, the all-to-all ones moving data between the two groups),
 * the non-blocking forms (5.12), several outstanding at once, MPI_Scan and
 * MPI_Exscan refused (5.11), and MPI_Comm_dup, MPI_Comm_idup,
 * MPI_Comm_create and MPI_Comm_split on an intercommunicator (6.4.2).
 * Two intercommunicators over MPI_COMM_WORLD: world ranks with
 * rank % 3 == 0 against the rest (groups of unequal sizes), and evens
 * against odds. Inputs differ per world rank, reductions use MPI_SUM of
 * per-rank bits and a non-commutative user operation, so a wrong source or
 * a wrong order shows in the result. Any world size from 2 to MAXP; with
 * one rank there is no intercommunicator and nothing is checked. */
#include "mpitest.h"

#define MAXP 32
#define BUF (MAXP * MAXP + 8)
#define V(w, k) (1000 * ((w) + 1) + (k))        /* world rank w's k-th datum */
#define S(w, k) ((1 << ((w) % 16)) + ((k) << 16)) /* summands: the bits name the senders */

typedef struct {
  MPI_Comm comm;
  int side, lrank, lsize, rsize;
  int lw[MAXP], rw[MAXP]; /* the world rank of each local and each remote rank */
} ic_t;

static MPI_Datatype vec2, vec3, pairt;
static MPI_Op cat_op, vsum_op;
static MPI_Request ic_req;
static const char* part_name = "";
static char sec_buf[200];

/* A collective, blocking or its non-blocking form followed by MPI_Wait. */
static int waited(int rc) { return rc != MPI_SUCCESS ? rc : MPI_Wait(&ic_req, MPI_STATUS_IGNORE); }
#define COLL(nb, B, b, ...) ((nb) ? waited(MPI_I##b(__VA_ARGS__, &ic_req)) : MPI_##B(__VA_ARGS__))

static void sec(int nb, const char* blocking, const char* nonblocking) {
  snprintf(sec_buf, sizeof sec_buf, "%s (%s)", nb ? nonblocking : blocking, part_name);
  SECTION(sec_buf);
}

static int first_diff(const int* a, const int* b, int n) {
  for (int i = 0; i < n; ++i)
    if (a[i] != b[i]) return i;
  return -1;
}
#define CHECK_BUF(got, want, n)                                                                 \
  do {                                                                                          \
    int d_ = first_diff(got, want, n);                                                          \
    CHECK_MSG(d_ < 0, "%s[%d] is %d, expected %d", #got, d_, d_ < 0 ? 0 : (got)[d_],           \
              d_ < 0 ? 0 : (want)[d_]);                                                         \
  } while (0)
static void fill(int* a, int n, int v) {
  for (int i = 0; i < n; ++i) a[i] = v;
}

/* a op b: the decimal digits of a followed by those of b. Not commutative. */
typedef struct {
  long long v, scale;
} cat_t;
static void cat_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const cat_t* a = in;
  cat_t* b = inout;
  for (int i = 0; i < *len; ++i) {
    b[i].v = a[i].v * b[i].scale + b[i].v;
    b[i].scale *= a[i].scale;
  }
}
static int digit(int w, int e) { return (w + 3 * e) % 9 + 1; }
/* The remote group's digits in remote rank order, element e. */
static cat_t cat_want(const ic_t* c, int e) {
  cat_t r = {0, 1};
  for (int j = 0; j < c->rsize; ++j) r.v = r.v * 10 + digit(c->rw[j], e), r.scale *= 10;
  return r;
}

/* A sum over vec2 (2 ints with a gap, extent 3 ints): 5.9.5 passes the
   user function the datatype the collective was called with. */
static void vsum_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  const int* a = in;
  int* b = inout;
  if (*dt == MPI_INT) {
    for (int i = 0; i < *len; ++i) b[i] += a[i];
    return;
  }
  for (int e = 0; e < *len; ++e) b[3 * e] += a[3 * e], b[3 * e + 2] += a[3 * e + 2];
}

static int side_of(int part, int w) { return part == 0 ? w % 3 != 0 : w % 2; }

/* 6.6.2: the local groups from MPI_Comm_split, leaders the lowest world rank of each. */
static void ic_make(ic_t* c, int part) {
  c->side = side_of(part, mt_rank);
  c->lsize = c->rsize = c->lrank = 0;
  int leader = -1;
  for (int w = 0; w < mt_size; ++w) {
    if (side_of(part, w) == c->side) {
      if (w == mt_rank) c->lrank = c->lsize;
      c->lw[c->lsize++] = w;
    } else {
      if (leader < 0) leader = w;
      c->rw[c->rsize++] = w;
    }
  }
  MPI_Comm local;
  MPI_Comm_split(MPI_COMM_WORLD, c->side, mt_rank, &local);
  CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, leader, 50 + part, &c->comm));
  MPI_Comm_free(&local);
}

static int gsize(const ic_t* c, int s) { return c->side == s ? c->lsize : c->rsize; }
static int gworld(const ic_t* c, int s, int r) { return c->side == s ? c->lw[r] : c->rw[r]; }
/* The root argument when the root is local rank rl of side rs (5.2.2). */
static int root_arg(const ic_t* c, int rs, int rl) {
  if (c->side != rs) return rl;
  return c->lrank == rl ? MPI_ROOT : MPI_PROC_NULL;
}

static void barrier(ic_t* c, int nb) {
  sec(nb, "5.3 MPI_Barrier on an intercommunicator", "5.12 MPI_Ibarrier on an intercommunicator");
  CHECK_RC(COLL(nb, Barrier, barrier, c->comm));
}

/* Rooted collectives run once with the root in each group, the root being the
   group's last rank (not its leader when the group has more than one). */
static void bcast(ic_t* c, int nb) {
  sec(nb, "5.4 MPI_Bcast on an intercommunicator", "5.12 MPI_Ibcast on an intercommunicator");
  for (int rs = 0; rs < 2; ++rs) {
    int rl = gsize(c, rs) - 1, rw = gworld(c, rs, rl), root = root_arg(c, rs, rl);
    int buf[11], want[11];
    for (int i = 0; i < 11; ++i) {
      buf[i] = root == MPI_ROOT ? V(mt_rank, i) : -1;
      /* 2 x vec3 covers ints 0 2 4 5 7 9 */
      want[i] = root == MPI_ROOT ? V(mt_rank, i) : root >= 0 && i < 10 && i % 5 % 2 == 0 ? V(rw, i) : -1;
    }
    CHECK_RC(COLL(nb, Bcast, bcast, buf, 2, vec3, root, c->comm));
    CHECK_BUF(buf, want, 11);
  }
}

static void gather(ic_t* c, int nb) {
  sec(nb, "5.5 MPI_Gather on an intercommunicator", "5.12 MPI_Igather on an intercommunicator");
  for (int rs = 0; rs < 2; ++rs) {
    int rl = gsize(c, rs) - 1, root = root_arg(c, rs, rl), n = 3 * c->rsize + 1;
    int sb[5], rb[BUF], want[BUF];
    for (int i = 0; i < 5; ++i) sb[i] = V(mt_rank, i);
    fill(rb, n, -1);
    fill(want, n, -1);
    if (root == MPI_ROOT) /* one vec3 from each: ints 0 2 4 */
      for (int j = 0; j < c->rsize; ++j)
        for (int k = 0; k < 3; ++k) want[3 * j + k] = V(c->rw[j], 2 * k);
    CHECK_RC(COLL(nb, Gather, gather, sb, 1, vec3, rb, 3, MPI_INT, root, c->comm));
    CHECK_BUF(rb, want, n);
  }
}

static void gatherv(ic_t* c, int nb) {
  sec(nb, "5.5 MPI_Gatherv on an intercommunicator", "5.12 MPI_Igatherv on an intercommunicator");
  for (int rs = 0; rs < 2; ++rs) {
    int rl = gsize(c, rs) - 1, root = root_arg(c, rs, rl), n = 0;
    int sb[3], rb[BUF], want[BUF], cnt[MAXP], dsp[MAXP];
    for (int j = 0; j < c->rsize; ++j) cnt[j] = j % 3, dsp[j] = n + 1, n += cnt[j] + 1;
    for (int i = 0; i < 3; ++i) sb[i] = V(mt_rank, i);
    fill(rb, n + 1, -1);
    fill(want, n + 1, -1);
    if (root == MPI_ROOT)
      for (int j = 0; j < c->rsize; ++j)
        for (int k = 0; k < cnt[j]; ++k) want[dsp[j] + k] = V(c->rw[j], k);
    CHECK_RC(COLL(nb, Gatherv, gatherv, sb, c->lrank % 3, MPI_INT, rb, cnt, dsp, MPI_INT, root, c->comm));
    CHECK_BUF(rb, want, n + 1);
  }
}

static void scatter(ic_t* c, int nb) {
  sec(nb, "5.6 MPI_Scatter on an intercommunicator", "5.12 MPI_Iscatter on an intercommunicator");
  for (int rs = 0; rs < 2; ++rs) {
    int rl = gsize(c, rs) - 1, rw = gworld(c, rs, rl), root = root_arg(c, rs, rl);
    int sb[2 * MAXP], rb[3] = {-1, -1, -1}, want[3] = {-1, -1, -1};
    for (int j = 0; j < c->rsize; ++j) sb[2 * j] = V(mt_rank, 10 * j), sb[2 * j + 1] = V(mt_rank, 10 * j + 1);
    if (root >= 0) want[0] = V(rw, 10 * c->lrank), want[1] = V(rw, 10 * c->lrank + 1);
    CHECK_RC(COLL(nb, Scatter, scatter, sb, 2, MPI_INT, rb, 2, MPI_INT, root, c->comm));
    CHECK_BUF(rb, want, 3);
  }
}

/* Counts 2 0 1 2 0 ... placed in reverse rank order with a gap after each. */
static int sv_layout(int n, int* cnt, int* dsp) {
  int t = 0;
  for (int j = n - 1; j >= 0; --j) cnt[j] = (j + 2) % 3, dsp[j] = t, t += cnt[j] + 1;
  return t;
}

static void scatterv(ic_t* c, int nb) {
  sec(nb, "5.6 MPI_Scatterv on an intercommunicator", "5.12 MPI_Iscatterv on an intercommunicator");
  for (int rs = 0; rs < 2; ++rs) {
    int rl = gsize(c, rs) - 1, rw = gworld(c, rs, rl), root = root_arg(c, rs, rl);
    int sb[BUF], rb[3] = {-1, -1, -1}, want[3] = {-1, -1, -1}, cnt[MAXP], dsp[MAXP], lc[MAXP] = {0}, ld[MAXP] = {0};
    int t = sv_layout(c->rsize, cnt, dsp); /* as the root sends */
    sv_layout(c->lsize, lc, ld);           /* as the root's remote group receives */
    int rc = root >= 0 ? lc[c->lrank] : 0;
    for (int i = 0; i < t; ++i) sb[i] = V(mt_rank, i);
    for (int k = 0; k < rc; ++k) want[k] = V(rw, ld[c->lrank] + k);
    CHECK_RC(COLL(nb, Scatterv, scatterv, sb, cnt, dsp, MPI_INT, rb, rc, MPI_INT, root, c->comm));
    CHECK_BUF(rb, want, 3);
  }
}

static void allgather(ic_t* c, int nb) {
  sec(nb, "5.7 MPI_Allgather on an intercommunicator", "5.12 MPI_Iallgather on an intercommunicator");
  int sb[2] = {V(mt_rank, 0), V(mt_rank, 1)}, rb[2 * MAXP + 1], want[2 * MAXP + 1], n = 2 * c->rsize + 1;
  fill(rb, n, -1);
  fill(want, n, -1);
  for (int j = 0; j < c->rsize; ++j) want[2 * j] = V(c->rw[j], 0), want[2 * j + 1] = V(c->rw[j], 1);
  CHECK_RC(COLL(nb, Allgather, allgather, sb, 2, MPI_INT, rb, 2, MPI_INT, c->comm));
  CHECK_BUF(rb, want, n);
}

static void allgatherv(ic_t* c, int nb) {
  sec(nb, "5.7 MPI_Allgatherv on an intercommunicator", "5.12 MPI_Iallgatherv on an intercommunicator");
  int sb[2] = {V(mt_rank, 0), V(mt_rank, 1)}, rb[3 * MAXP], want[3 * MAXP], cnt[MAXP], dsp[MAXP];
  int n = 3 * c->rsize;
  fill(rb, n, -1);
  fill(want, n, -1);
  for (int j = 0; j < c->rsize; ++j) {
    cnt[j] = j % 3, dsp[j] = 3 * (c->rsize - 1 - j); /* reverse order, gaps */
    for (int k = 0; k < cnt[j]; ++k) want[dsp[j] + k] = V(c->rw[j], k);
  }
  CHECK_RC(COLL(nb, Allgatherv, allgatherv, sb, c->lrank % 3, MPI_INT, rb, cnt, dsp, MPI_INT, c->comm));
  CHECK_BUF(rb, want, n);
}

/* Block j of the send buffer goes to remote rank j; block j received comes from remote rank j. */
static void alltoall(ic_t* c, int nb) {
  sec(nb, "5.8 MPI_Alltoall on an intercommunicator", "5.12 MPI_Ialltoall on an intercommunicator");
  int sb[2 * MAXP], rb[2 * MAXP + 1], want[2 * MAXP + 1], n = 2 * c->rsize + 1;
  fill(rb, n, -1);
  fill(want, n, -1);
  for (int j = 0; j < c->rsize; ++j)
    for (int k = 0; k < 2; ++k) sb[2 * j + k] = V(mt_rank, 10 * j + k), want[2 * j + k] = V(c->rw[j], 10 * c->lrank + k);
  CHECK_RC(COLL(nb, Alltoall, alltoall, sb, 2, MPI_INT, rb, 2, MPI_INT, c->comm));
  CHECK_BUF(rb, want, n);
}

static void alltoallv(ic_t* c, int nb) {
  sec(nb, "5.8 MPI_Alltoallv on an intercommunicator", "5.12 MPI_Ialltoallv on an intercommunicator");
  int sb[3 * MAXP], rb[3 * MAXP], want[3 * MAXP], sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
  int n = 3 * c->rsize;
  fill(rb, n, -1);
  fill(want, n, -1);
  for (int j = 0; j < c->rsize; ++j) {
    sc[j] = rc[j] = (c->lrank + j) % 3; /* local rank l sends (l + j) % 3 to remote rank j */
    sd[j] = 3 * j, rd[j] = 3 * (c->rsize - 1 - j);
    for (int k = 0; k < 3; ++k) sb[3 * j + k] = V(mt_rank, 10 * j + k);
    for (int k = 0; k < rc[j]; ++k) want[rd[j] + k] = V(c->rw[j], 10 * c->lrank + k);
  }
  CHECK_RC(COLL(nb, Alltoallv, alltoallv, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c->comm));
  CHECK_BUF(rb, want, n);
}

/* To and from odd ranks one vec2 (ints 0 and 2), to and from even ranks 2 MPI_INT. */
static void alltoallw(ic_t* c, int nb) {
  sec(nb, "5.8 MPI_Alltoallw on an intercommunicator", "5.12 MPI_Ialltoallw on an intercommunicator");
  int sb[4 * MAXP], rb[4 * MAXP], want[4 * MAXP], sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
  MPI_Datatype st[MAXP], rt[MAXP];
  int n = 4 * c->rsize, l = c->lrank;
  fill(rb, n, -1);
  fill(want, n, -1);
  for (int j = 0; j < c->rsize; ++j) {
    st[j] = rt[j] = j % 2 ? vec2 : MPI_INT;
    sc[j] = rc[j] = j % 2 ? 1 : 2;
    sd[j] = rd[j] = (int)(4 * j * sizeof(int));
    for (int k = 0; k < 4; ++k) sb[4 * j + k] = V(mt_rank, 10 * j + k);
    /* remote rank j sent me (local rank l) ints 0 1, or 0 2 when l is odd */
    want[4 * j] = V(c->rw[j], 10 * l);
    want[4 * j + (j % 2 ? 2 : 1)] = V(c->rw[j], 10 * l + (l % 2 ? 2 : 1));
  }
  CHECK_RC(COLL(nb, Alltoallw, alltoallw, sb, sc, sd, st, rb, rc, rd, rt, c->comm));
  CHECK_BUF(rb, want, n);
}

/* 5.9.1: the root receives the reduction of the other group's inputs. */
static void reduce(ic_t* c, int nb) {
  sec(nb, "5.9.1 MPI_Reduce on an intercommunicator", "5.12 MPI_Ireduce on an intercommunicator");
  for (int rs = 0; rs < 2; ++rs) {
    int rl = gsize(c, rs) - 1, root = root_arg(c, rs, rl);
    int sb[3], rb[4] = {-1, -1, -1, -1}, want[4] = {-1, -1, -1, -1};
    for (int k = 0; k < 3; ++k) {
      sb[k] = S(mt_rank, k);
      if (root == MPI_ROOT) {
        want[k] = 0;
        for (int j = 0; j < c->rsize; ++j) want[k] += S(c->rw[j], k);
      }
    }
    CHECK_RC(COLL(nb, Reduce, reduce, sb, rb, 3, MPI_INT, MPI_SUM, root, c->comm));
    CHECK_BUF(rb, want, 4);
    /* 5.9.5: a non-commutative operation combines in remote rank order. */
    cat_t cs[2], cr[2] = {{-1, -1}, {-1, -1}};
    for (int e = 0; e < 2; ++e) cs[e].v = digit(mt_rank, e), cs[e].scale = 10;
    CHECK_RC(COLL(nb, Reduce, reduce, cs, cr, 2, pairt, cat_op, root, c->comm));
    for (int e = 0; e < 2; ++e) {
      cat_t w = root == MPI_ROOT ? cat_want(c, e) : (cat_t){-1, -1};
      CHECK_INT(cr[e].v, w.v);
      CHECK_INT(cr[e].scale, w.scale);
    }
  }
}

/* 5.9.6: each group receives the reduction of the other group's inputs. */
static void allreduce(ic_t* c, int nb) {
  sec(nb, "5.9.6 MPI_Allreduce on an intercommunicator", "5.12 MPI_Iallreduce on an intercommunicator");
  int sb[7], rb[7], want[7], sum[7];
  for (int k = 0; k < 7; ++k) {
    sb[k] = S(mt_rank, k), rb[k] = -1, sum[k] = 0;
    for (int j = 0; j < c->rsize; ++j) sum[k] += S(c->rw[j], k);
    want[k] = k < 3 ? sum[k] : -1;
  }
  CHECK_RC(COLL(nb, Allreduce, allreduce, sb, rb, 3, MPI_INT, MPI_SUM, c->comm));
  CHECK_BUF(rb, want, 4);
  cat_t cs[2], cr[2] = {{-1, -1}, {-1, -1}};
  for (int e = 0; e < 2; ++e) cs[e].v = digit(mt_rank, e), cs[e].scale = 10;
  CHECK_RC(COLL(nb, Allreduce, allreduce, cs, cr, 2, pairt, cat_op, c->comm));
  for (int e = 0; e < 2; ++e) {
    CHECK_INT(cr[e].v, cat_want(c, e).v);
    CHECK_INT(cr[e].scale, cat_want(c, e).scale);
  }
  /* 2 x vec2 covers ints 0 2 3 5; ints 1 4 6 stay as they were. */
  for (int k = 0; k < 7; ++k) rb[k] = -1, want[k] = k == 1 || k == 4 || k == 6 ? -1 : sum[k];
  CHECK_RC(COLL(nb, Allreduce, allreduce, sb, rb, 2, vec2, vsum_op, c->comm));
  CHECK_BUF(rb, want, 7);
}

/* 5.10.1: each group gives lsize x recvcount elements, recvcount = the remote
   group's size so the totals agree; local rank l gets block l of the
   reduction of the remote group's vectors. */
static void reduce_scatter_block(ic_t* c, int nb) {
  sec(nb, "5.10.1 MPI_Reduce_scatter_block on an intercommunicator",
      "5.12 MPI_Ireduce_scatter_block on an intercommunicator");
  int sb[BUF], rb[MAXP + 1], want[MAXP + 1], n = c->rsize;
  for (int i = 0; i < c->lsize * n; ++i) sb[i] = S(mt_rank, i);
  fill(rb, n + 1, -1);
  fill(want, n + 1, 0);
  want[n] = -1;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < c->rsize; ++j) want[k] += S(c->rw[j], c->lrank * n + k);
  CHECK_RC(COLL(nb, Reduce_scatter_block, reduce_scatter_block, sb, rb, n, MPI_INT, MPI_SUM, c->comm));
  CHECK_BUF(rb, want, n + 1);
}

/* 5.10.2: both groups reduce 2 x world size elements; the remote group's
   result is scattered over the local group by the local recvcounts
   (1 0 1 1 0 1 ..., the last rank the rest). */
static void reduce_scatter(ic_t* c, int nb) {
  sec(nb, "5.10.2 MPI_Reduce_scatter on an intercommunicator",
      "5.12 MPI_Ireduce_scatter on an intercommunicator");
  int t = 2 * mt_size, cnt[MAXP], sum = 0, off = 0, sb[2 * MAXP], rb[2 * MAXP + 1], want[2 * MAXP + 1];
  for (int i = 0; i < c->lsize; ++i) {
    cnt[i] = i == c->lsize - 1 ? t - sum : i % 3 != 1;
    sum += cnt[i];
    if (i < c->lrank) off += cnt[i];
  }
  int n = cnt[c->lrank];
  for (int k = 0; k < t; ++k) sb[k] = S(mt_rank, k);
  fill(rb, n + 1, -1);
  fill(want, n + 1, 0);
  want[n] = -1;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < c->rsize; ++j) want[k] += S(c->rw[j], off + k);
  CHECK_RC(COLL(nb, Reduce_scatter, reduce_scatter, sb, rb, cnt, MPI_INT, MPI_SUM, c->comm));
  CHECK_BUF(rb, want, n + 1);
}

/* 5.11.1, 5.11.2: "This operation is invalid for intercommunicators." */
static void no_scan(ic_t* c) {
  sec(0, "5.11 MPI_Scan and MPI_Exscan refuse an intercommunicator", "");
  int a = 1, b = 0;
  MPI_Request r;
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Scan(&a, &b, 1, MPI_INT, MPI_SUM, c->comm), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Exscan(&a, &b, 1, MPI_INT, MPI_SUM, c->comm), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Iscan(&a, &b, 1, MPI_INT, MPI_SUM, c->comm, &r), MPI_ERR_COMM);
  CHECK_CLASS(MPI_Iexscan(&a, &b, 1, MPI_INT, MPI_SUM, c->comm, &r), MPI_ERR_COMM);
  CHECK_INT(b, 0);
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_ARE_FATAL);
}

/* 5.12: non-blocking collectives on one communicator match in the order
   issued; four outstanding at once, then one MPI_Waitall, each its own result. */
static void outstanding(ic_t* c) {
  sec(0, "5.12 several non-blocking collectives outstanding on an intercommunicator", "");
  MPI_Request r[4];
  int s1[3], r1[3], w1[3], s2[2 * MAXP], r2[2 * MAXP], w2[2 * MAXP], bb[3], wb[3];
  int root = root_arg(c, 1, 0), rw = gworld(c, 1, 0);
  cat_t cs = {digit(mt_rank, 1), 10}, cr = {-1, -1};
  for (int k = 0; k < 3; ++k) {
    s1[k] = S(mt_rank, k), r1[k] = -1, w1[k] = 0;
    for (int j = 0; j < c->rsize; ++j) w1[k] += S(c->rw[j], k);
    bb[k] = root == MPI_ROOT ? V(mt_rank, k) : -1;
    wb[k] = root == MPI_ROOT ? V(mt_rank, k) : root >= 0 ? V(rw, k) : -1;
  }
  for (int j = 0; j < c->rsize; ++j)
    for (int k = 0; k < 2; ++k)
      s2[2 * j + k] = V(mt_rank, 10 * j + k), r2[2 * j + k] = -1, w2[2 * j + k] = V(c->rw[j], 10 * c->lrank + k);
  CHECK_RC(MPI_Iallreduce(s1, r1, 3, MPI_INT, MPI_SUM, c->comm, &r[0]));
  CHECK_RC(MPI_Iallreduce(&cs, &cr, 1, pairt, cat_op, c->comm, &r[1]));
  CHECK_RC(MPI_Ialltoall(s2, 2, MPI_INT, r2, 2, MPI_INT, c->comm, &r[2]));
  CHECK_RC(MPI_Ibcast(bb, 3, MPI_INT, root, c->comm, &r[3]));
  CHECK_RC(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
  CHECK_BUF(r1, w1, 3);
  CHECK_INT(cr.v, cat_want(c, 1).v);
  CHECK_INT(cr.scale, cat_want(c, 1).scale);
  CHECK_BUF(r2, w2, 2 * c->rsize);
  CHECK_BUF(bb, wb, 3);
}

/* The caller expects (want) an intercommunicator whose local group is world
   ranks mine[0..m) and remote group other[0..o), in that order, the caller
   being mine[me]; or, when !want, MPI_COMM_NULL. Sizes, rank and groups
   are checked first and all of MPI_COMM_WORLD agrees on them before any
   traffic, so a wrong group fails checks rather than hanging. Frees nc. */
static void check_new(MPI_Comm nc, int want, const int* mine, int m, const int* other, int o, int me) {
  int ok = 1, all = 0, idx[MAXP], tw[MAXP], got[MAXP];
  if (!want)
    CHECK(nc == MPI_COMM_NULL);
  else
    CHECK(nc != MPI_COMM_NULL);
  if (want && nc == MPI_COMM_NULL) {
    ok = 0;
  } else if (want) {
    int flag = 0, size = -1, rsize = -1, rank = -1;
    MPI_Comm_test_inter(nc, &flag);
    MPI_Comm_size(nc, &size);
    MPI_Comm_remote_size(nc, &rsize);
    MPI_Comm_rank(nc, &rank);
    CHECK(flag);
    CHECK_INT(size, m);
    CHECK_INT(rsize, o);
    CHECK_INT(rank, me);
    ok = flag && size == m && rsize == o && rank == me;
    if (ok) {
      MPI_Group wg, lg, rg;
      MPI_Comm_group(MPI_COMM_WORLD, &wg);
      MPI_Comm_group(nc, &lg);
      MPI_Comm_remote_group(nc, &rg);
      for (int i = 0; i < MAXP; ++i) idx[i] = i;
      MPI_Group_translate_ranks(lg, m, idx, wg, tw);
      CHECK_BUF(tw, mine, m);
      ok = first_diff(tw, mine, m) < 0;
      MPI_Group_translate_ranks(rg, o, idx, wg, tw);
      CHECK_BUF(tw, other, o);
      ok = ok && first_diff(tw, other, o) < 0;
      MPI_Group_free(&wg);
      MPI_Group_free(&lg);
      MPI_Group_free(&rg);
    }
  }
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all && want) {
    /* Point-to-point: local rank i and remote rank i exchange world ranks. */
    if (me < o) {
      int in = -1;
      MPI_Status st;
      CHECK_RC(MPI_Sendrecv(&mt_rank, 1, MPI_INT, me, 12, &in, 1, MPI_INT, me, 12, nc, &st));
      CHECK_INT(in, other[me]);
      CHECK_INT(st.MPI_SOURCE, me);
    }
    /* Collectives: the remote group's world ranks in its rank order, and their sum. */
    int sum = -1, wsum = 0;
    fill(got, o, -1);
    CHECK_RC(MPI_Allgather(&mt_rank, 1, MPI_INT, got, 1, MPI_INT, nc));
    CHECK_BUF(got, other, o);
    for (int i = 0; i < o; ++i) wsum += other[i];
    CHECK_RC(MPI_Allreduce(&mt_rank, &sum, 1, MPI_INT, MPI_SUM, nc));
    CHECK_INT(sum, wsum);
  }
  if (nc != MPI_COMM_NULL) MPI_Comm_free(&nc);
}

/* 6.4.2 MPI_Comm_dup, MPI_Comm_idup: the same groups, a new context. */
static void dups(ic_t* c) {
  sec(0, "6.4.2 MPI_Comm_dup and MPI_Comm_idup of an intercommunicator", "");
  MPI_Comm d = MPI_COMM_NULL, di = MPI_COMM_NULL;
  MPI_Request r;
  CHECK_RC(MPI_Comm_dup(c->comm, &d));
  CHECK_RC(MPI_Comm_idup(c->comm, &di, &r));
  CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
  /* A message on the duplicate is not received on the original. */
  int ok = d != MPI_COMM_NULL && di != MPI_COMM_NULL, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all && c->lrank == 0) {
    int one = 1, two = 2, in = -1;
    MPI_Request s[2];
    if (c->side == 0) {
      MPI_Isend(&one, 1, MPI_INT, 0, 5, d, &s[0]);
      MPI_Isend(&two, 1, MPI_INT, 0, 5, c->comm, &s[1]);
      MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
    } else {
      MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c->comm, MPI_STATUS_IGNORE);
      CHECK_INT(in, 2);
      MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, MPI_STATUS_IGNORE);
      CHECK_INT(in, 1);
    }
  }
  check_new(d, 1, c->lw, c->lsize, c->rw, c->rsize, c->lrank);
  check_new(di, 1, c->lw, c->lsize, c->rw, c->rsize, c->lrank);
}

/* 6.4.2 MPI_Comm_split: processes of a color on both sides form an
   intercommunicator; a color on one side only, or MPI_UNDEFINED, gives
   MPI_COMM_NULL. Colors by local rank parity, keys reversing world order. */
static int split_color(int side, int l, int w) {
  if (side == 1 && l == 2) return 5; /* only on side 1 */
  if (w % 5 == 3) return MPI_UNDEFINED;
  return l % 2;
}

static void split(ic_t* c) {
  sec(0, "6.4.2 MPI_Comm_split of an intercommunicator", "");
  int wside[MAXP], wl[MAXP], col[MAXP], mine[MAXP], other[MAXP], m = 0, o = 0, me = -1;
  for (int l = 0; l < c->lsize; ++l) wside[c->lw[l]] = c->side, wl[c->lw[l]] = l;
  for (int j = 0; j < c->rsize; ++j) wside[c->rw[j]] = !c->side, wl[c->rw[j]] = j;
  for (int w = 0; w < mt_size; ++w) col[w] = split_color(wside[w], wl[w], w);
  const int my = col[mt_rank];
  for (int w = mt_size - 1; w >= 0; --w) { /* ascending key = descending world rank */
    if (my == MPI_UNDEFINED || col[w] != my) continue;
    if (wside[w] != c->side) other[o++] = w;
    else {
      if (w == mt_rank) me = m;
      mine[m++] = w;
    }
  }
  MPI_Comm nc = MPI_COMM_NULL;
  CHECK_RC(MPI_Comm_split(c->comm, my, mt_size - mt_rank, &nc));
  check_new(nc, my != MPI_UNDEFINED && o > 0, mine, m, other, o, me);
}

/* 6.4.2 MPI_Comm_create: each side names a subgroup of its local group;
   side 0 its ranks in reverse (without rank 1 if it has 3 or more), side 1
   its even ranks. Ranks follow the group's order; processes outside get
   MPI_COMM_NULL, and so does everyone when one side's group is empty. */
static int create_list(int side, int n, int* out) {
  int k = 0;
  if (side == 0) {
    for (int l = n - 1; l >= 0; --l)
      if (l != 1 || n < 3) out[k++] = l;
  } else {
    for (int l = 0; l < n; l += 2) out[k++] = l;
  }
  return k;
}

static void create(ic_t* c) {
  sec(0, "6.4.2 MPI_Comm_create of an intercommunicator", "");
  int ml[MAXP], ol[MAXP], mine[MAXP], other[MAXP], me = -1;
  int m = create_list(c->side, c->lsize, ml), o = create_list(!c->side, c->rsize, ol);
  for (int i = 0; i < m; ++i) {
    mine[i] = c->lw[ml[i]];
    if (ml[i] == c->lrank) me = i;
  }
  for (int i = 0; i < o; ++i) other[i] = c->rw[ol[i]];
  MPI_Group lg, sub;
  MPI_Comm_group(c->comm, &lg);
  CHECK_RC(MPI_Group_incl(lg, m, ml, &sub));
  MPI_Comm nc = MPI_COMM_NULL;
  CHECK_RC(MPI_Comm_create(c->comm, sub, &nc));
  check_new(nc, me >= 0, mine, m, other, o, me);
  nc = MPI_COMM_NULL;
  CHECK_RC(MPI_Comm_create(c->comm, c->side ? MPI_GROUP_EMPTY : sub, &nc));
  check_new(nc, 0, mine, m, other, o, me);
  MPI_Group_free(&sub);
  MPI_Group_free(&lg);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  if (mt_size >= 2 && mt_size <= MAXP) {
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec2);
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec3);
    MPI_Type_contiguous(2, MPI_LONG_LONG, &pairt);
    MPI_Type_commit(&vec2);
    MPI_Type_commit(&vec3);
    MPI_Type_commit(&pairt);
    MPI_Op_create(cat_fn, 0, &cat_op);
    MPI_Op_create(vsum_fn, 1, &vsum_op);
    static const char* names[2] = {"rank % 3 == 0 against the rest", "evens against odds"};
    for (int part = 0; part < 2; ++part) {
      ic_t c;
      part_name = names[part];
      ic_make(&c, part);
      for (int nb = 0; nb < 2; ++nb) {
        barrier(&c, nb);
        bcast(&c, nb);
        gather(&c, nb);
        gatherv(&c, nb);
        scatter(&c, nb);
        scatterv(&c, nb);
        allgather(&c, nb);
        allgatherv(&c, nb);
        alltoall(&c, nb);
        alltoallv(&c, nb);
        alltoallw(&c, nb);
        reduce(&c, nb);
        allreduce(&c, nb);
        reduce_scatter_block(&c, nb);
        reduce_scatter(&c, nb);
      }
      outstanding(&c);
      no_scan(&c);
      dups(&c);
      split(&c);
      create(&c);
      MPI_Comm_free(&c.comm);
    }
    MPI_Op_free(&cat_op);
    MPI_Op_free(&vsum_op);
    MPI_Type_free(&vec2);
    MPI_Type_free(&vec3);
    MPI_Type_free(&pairt);
  }
  return mt_finish("intercomm");
}
