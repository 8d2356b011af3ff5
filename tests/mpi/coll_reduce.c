/* MPI 3.1 chapter 5, reductions: MPI_Reduce, MPI_Allreduce,
 * MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan and MPI_Reduce_local
 * (5.9-5.11); every predefined operation on the types of its group
 * (5.9.2), MINLOC/MAXLOC on the pair types (5.9.4), user operations,
 * commutative and not (5.9.5: rank order), MPI_IN_PLACE wherever 5.2.3
 * allows it, the non-blocking forms (5.12), and MPI_ERR_OP for a pair the
 * standard leaves undefined. Every result is checked against its closed form. */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpitest.h"

#define N 37 /* elements per call: not a power of two, spans several messages on small frames */

/* ---- integer and floating types with SUM, PROD, MAX, MIN ---- */
#define ARITH_TEST(T, MT)                                                                     \
  static void arith_##T(MPI_Comm c, int nb) {                                                 \
    T in[N], out[N];                                                                          \
    int rank, size;                                                                           \
    MPI_Comm_rank(c, &rank);                                                                  \
    MPI_Comm_size(c, &size);                                                                  \
    MPI_Op ops[4] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};                                    \
    for (int o = 0; o < 4; ++o) {                                                             \
      for (int i = 0; i < N; ++i) in[i] = (T)(o == 1 ? 1 + (rank + i) % 2 : (rank + 1) * ((i % 3) + 1)); \
      memset(out, 0, sizeof out);                                                             \
      MPI_Request r;                                                                          \
      if (nb) {                                                                               \
        CHECK_RC(MPI_Iallreduce(in, out, N, MT, ops[o], c, &r));                              \
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));                                            \
      } else {                                                                                \
        CHECK_RC(MPI_Allreduce(in, out, N, MT, ops[o], c));                                   \
      }                                                                                       \
      for (int i = 0; i < N; ++i) {                                                           \
        double want = 0;                                                                      \
        if (o == 0) want = (double)((i % 3) + 1) * size * (size + 1) / 2;                     \
        if (o == 1) {                                                                         \
          want = 1;                                                                           \
          for (int p = 0; p < size; ++p) want *= 1 + (p + i) % 2;                             \
        }                                                                                     \
        if (o == 2) want = (double)size * ((i % 3) + 1);                                      \
        if (o == 3) want = (double)((i % 3) + 1);                                             \
        CHECK_MSG((double)out[i] == want, #T " op %d element %d: %g, expected %g", o, i, (double)out[i], want); \
      }                                                                                       \
    }                                                                                         \
  }
ARITH_TEST(char, MPI_SIGNED_CHAR)
ARITH_TEST(short, MPI_SHORT)
ARITH_TEST(int, MPI_INT)
ARITH_TEST(long, MPI_LONG)
ARITH_TEST(int8_t, MPI_INT8_T)
ARITH_TEST(uint16_t, MPI_UINT16_T)
ARITH_TEST(uint32_t, MPI_UINT32_T)
ARITH_TEST(int64_t, MPI_INT64_T)
ARITH_TEST(uint64_t, MPI_UINT64_T)
typedef long long longlong;
typedef unsigned char uchar;
typedef unsigned long ulong;
typedef unsigned long long ulonglong;
typedef long double longdouble;
ARITH_TEST(longlong, MPI_LONG_LONG)
ARITH_TEST(uchar, MPI_UNSIGNED_CHAR)
ARITH_TEST(ulong, MPI_UNSIGNED_LONG)
ARITH_TEST(ulonglong, MPI_UNSIGNED_LONG_LONG)
ARITH_TEST(float, MPI_FLOAT)
ARITH_TEST(double, MPI_DOUBLE)
ARITH_TEST(longdouble, MPI_LONG_DOUBLE)

static void arith_all(MPI_Comm c, int nb) {
  SECTION("5.9.2 SUM PROD MAX MIN on integer and floating types");
  arith_char(c, nb);
  arith_short(c, nb);
  arith_int(c, nb);
  arith_long(c, nb);
  arith_int8_t(c, nb);
  arith_uint16_t(c, nb);
  arith_uint32_t(c, nb);
  arith_int64_t(c, nb);
  arith_uint64_t(c, nb);
  arith_longlong(c, nb);
  arith_uchar(c, nb);
  arith_ulong(c, nb);
  arith_ulonglong(c, nb);
  arith_float(c, nb);
  arith_double(c, nb);
  arith_longdouble(c, nb);
}

static void logical_bitwise(void) {
  SECTION("5.9.2 logical and bitwise operations");
  int in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = (i % 3 == 0) || (i % 3 == 1 && mt_rank == 0);
  MPI_Allreduce(in, out, N, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) CHECK_INT(out[i], i % 3 == 0 || (i % 3 == 1 && mt_size == 1));
  MPI_Allreduce(in, out, N, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) CHECK_INT(out[i], i % 3 != 2);
  MPI_Allreduce(in, out, N, MPI_INT, MPI_LXOR, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) CHECK_INT(out[i], i % 3 == 0 ? mt_size % 2 : i % 3 == 1 ? 1 : 0);
  /* MPI_AINT, MPI_OFFSET, MPI_COUNT take the logical ops as integers (as
     MPICH and Open MPI do; MPICH's coll/allred tests them). */
  MPI_Aint a = mt_rank == 0 ? 5 : 0, ao = -1;
  MPI_Allreduce(&a, &ao, 1, MPI_AINT, MPI_LOR, MPI_COMM_WORLD);
  CHECK_INT((int)ao, 1);
  MPI_Offset of = 7, oo = -1;
  MPI_Allreduce(&of, &oo, 1, MPI_OFFSET, MPI_LAND, MPI_COMM_WORLD);
  CHECK_INT((int)oo, 1);
  MPI_Count cn = mt_rank == 0 ? 3 : 0, co = -1;
  MPI_Allreduce(&cn, &co, 1, MPI_COUNT, MPI_LXOR, MPI_COMM_WORLD);
  CHECK_INT((int)co, 1);
  bool b = mt_rank % 2 == 0, bo = false;
  MPI_Allreduce(&b, &bo, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD);
  CHECK(bo == (mt_size == 1));
  MPI_Allreduce(&b, &bo, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD);
  CHECK(bo);
  unsigned u[N], uo[N];
  for (int i = 0; i < N; ++i) u[i] = (1u << (mt_rank % 31)) | (unsigned)i << 24;
  MPI_Allreduce(u, uo, N, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD);
  unsigned all = 0;
  for (int p = 0; p < mt_size; ++p) all |= 1u << (p % 31);
  for (int i = 0; i < N; ++i) CHECK_INT(uo[i], all | (unsigned)i << 24);
  MPI_Allreduce(u, uo, N, MPI_UNSIGNED, MPI_BAND, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) CHECK_INT(uo[i], (mt_size == 1 ? 1u : 0u) | (unsigned)i << 24);
  unsigned char bytes[N], bo2[N];
  for (int i = 0; i < N; ++i) bytes[i] = (unsigned char)(mt_rank + i);
  MPI_Allreduce(bytes, bo2, N, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) {
    unsigned char x = 0;
    for (int p = 0; p < mt_size; ++p) x ^= (unsigned char)(p + i);
    CHECK_INT(bo2[i], x);
  }
}

static void complex_sum(void) {
  SECTION("5.9.2 complex SUM and PROD");
  double complex z = (mt_rank + 1) + 1.0 * I, zs = 0;
  MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(creal(zs) == mt_size * (mt_size + 1) / 2.0 && cimag(zs) == mt_size);
  float complex f = I, fp = 0;
  MPI_Allreduce(&f, &fp, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
  float complex want = 1;
  for (int p = 0; p < mt_size; ++p) want *= I;
  CHECK(crealf(fp) == crealf(want) && cimagf(fp) == cimagf(want));
}

/* ---- MINLOC / MAXLOC on every C pair type ---- */
#define LOC_TEST(NAME, VT, MT)                                                                       \
  static void loc_##NAME(void) {                                                                     \
    struct { VT v; int i; } in[3], out[3];                                                           \
    for (int k = 0; k < 3; ++k) {                                                                    \
      in[k].v = (VT)(k == 0 ? mt_rank : k == 1 ? (mt_rank % 2) : -mt_rank);                           \
      in[k].i = mt_rank;                                                                             \
    }                                                                                                \
    MPI_Allreduce(in, out, 3, MT, MPI_MAXLOC, MPI_COMM_WORLD);                                       \
    CHECK_MSG(out[0].v == (VT)(mt_size - 1) && out[0].i == mt_size - 1, #NAME " maxloc 0");          \
    CHECK_MSG(out[1].v == (VT)(mt_size > 1) && out[1].i == (mt_size > 1), #NAME " maxloc tie -> lowest index"); \
    CHECK_MSG(out[2].v == 0 && out[2].i == 0, #NAME " maxloc 2");                                    \
    MPI_Allreduce(in, out, 3, MT, MPI_MINLOC, MPI_COMM_WORLD);                                       \
    CHECK_MSG(out[0].v == 0 && out[0].i == 0, #NAME " minloc 0");                                    \
    CHECK_MSG(out[1].v == 0 && out[1].i == 0, #NAME " minloc tie -> lowest index");                  \
    CHECK_MSG(out[2].v == (VT)-(mt_size - 1) && out[2].i == mt_size - 1, #NAME " minloc 2");         \
  }
LOC_TEST(float_int, float, MPI_FLOAT_INT)
LOC_TEST(double_int, double, MPI_DOUBLE_INT)
LOC_TEST(long_int, long, MPI_LONG_INT)
LOC_TEST(2int, int, MPI_2INT)
LOC_TEST(short_int, short, MPI_SHORT_INT)
LOC_TEST(long_double_int, long double, MPI_LONG_DOUBLE_INT)

static void locs(void) {
  SECTION("5.9.4 MINLOC and MAXLOC");
  loc_float_int();
  loc_double_int();
  loc_long_int();
  loc_2int();
  loc_short_int();
  loc_long_double_int();
}

/* ---- user operations: 2x2 matrix products modulo a prime, not commutative ---- */
#define P 1000003
typedef struct {
  long long m[4];
} Mat;
static MPI_Datatype mat_type;
static void mat_mul(void* invec, void* inoutvec, int* len, MPI_Datatype* dt) {
  (void)dt;
  Mat* a = invec;
  Mat* b = inoutvec;
  for (int k = 0; k < *len; ++k) {
    Mat r;
    r.m[0] = (a[k].m[0] * b[k].m[0] + a[k].m[1] * b[k].m[2]) % P;
    r.m[1] = (a[k].m[0] * b[k].m[1] + a[k].m[1] * b[k].m[3]) % P;
    r.m[2] = (a[k].m[2] * b[k].m[0] + a[k].m[3] * b[k].m[2]) % P;
    r.m[3] = (a[k].m[2] * b[k].m[1] + a[k].m[3] * b[k].m[3]) % P;
    b[k] = r; /* inoutvec = invec op inoutvec */
  }
}
static Mat mat_of(int rank, int k) {
  Mat a = {{rank + 1, k + 2, 3 * rank + k, 1}};
  return a;
}
static Mat mat_prod(int lo, int hi, int k) { /* M_lo * ... * M_hi */
  Mat acc = {{1, 0, 0, 1}};
  for (int p = lo; p <= hi; ++p) {
    Mat in = acc, out = mat_of(p, k);
    int one = 1;
    mat_mul(&in, &out, &one, NULL);
    acc = out;
  }
  return acc;
}
static int mat_eq(Mat a, Mat b) { return !memcmp(&a, &b, sizeof a); }

static void user_ops(void) {
  SECTION("5.9.5 user operations (non-commutative: rank order)");
  MPI_Type_contiguous(4, MPI_LONG_LONG, &mat_type);
  MPI_Type_commit(&mat_type);
  MPI_Op op;
  CHECK_RC(MPI_Op_create(mat_mul, 0, &op));
  int commute = 1;
  MPI_Op_commutative(op, &commute);
  CHECK_INT(commute, 0);
  enum { K = 5 };
  Mat in[K], out[K];
  for (int k = 0; k < K; ++k) in[k] = mat_of(mt_rank, k);
  CHECK_RC(MPI_Allreduce(in, out, K, mat_type, op, MPI_COMM_WORLD));
  for (int k = 0; k < K; ++k) CHECK_MSG(mat_eq(out[k], mat_prod(0, mt_size - 1, k)), "allreduce matrix %d", k);
  const int root = mt_size - 1 > 0 ? 1 : 0;
  memset(out, 0, sizeof out);
  CHECK_RC(MPI_Reduce(in, out, K, mat_type, op, root, MPI_COMM_WORLD));
  if (mt_rank == root)
    for (int k = 0; k < K; ++k) CHECK_MSG(mat_eq(out[k], mat_prod(0, mt_size - 1, k)), "reduce matrix %d", k);
  CHECK_RC(MPI_Scan(in, out, K, mat_type, op, MPI_COMM_WORLD));
  for (int k = 0; k < K; ++k) CHECK_MSG(mat_eq(out[k], mat_prod(0, mt_rank, k)), "scan matrix %d", k);
  memcpy(out, in, sizeof out);
  CHECK_RC(MPI_Exscan(MPI_IN_PLACE, out, K, mat_type, op, MPI_COMM_WORLD));
  if (mt_rank > 0)
    for (int k = 0; k < K; ++k) CHECK_MSG(mat_eq(out[k], mat_prod(0, mt_rank - 1, k)), "exscan matrix %d", k);
  /* Reduce_scatter with varying counts: rank r gets r % 2 + 1 matrices. */
  int counts[64], total = 0;
  for (int p = 0; p < mt_size; ++p) total += counts[p] = p % 2 + 1;
  Mat* big = malloc((size_t)total * sizeof(Mat));
  for (int k = 0; k < total; ++k) big[k] = mat_of(mt_rank, k);
  CHECK_RC(MPI_Reduce_scatter(big, out, counts, mat_type, op, MPI_COMM_WORLD));
  int first = 0;
  for (int p = 0; p < mt_rank; ++p) first += counts[p];
  for (int k = 0; k < counts[mt_rank]; ++k)
    CHECK_MSG(mat_eq(out[k], mat_prod(0, mt_size - 1, first + k)), "reduce_scatter matrix %d", k);
  free(big);
  /* MPI_Reduce_local: inoutbuf = inbuf op inoutbuf. */
  Mat a = mat_of(1, 0), b = mat_of(2, 0);
  CHECK_RC(MPI_Reduce_local(&a, &b, 1, mat_type, op));
  Mat a2 = mat_of(1, 0), b2 = mat_of(2, 0);
  int one = 1;
  mat_mul(&a2, &b2, &one, NULL);
  CHECK(mat_eq(b, b2));
  /* Non-blocking, on a duplicate. */
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Request r;
  CHECK_RC(MPI_Iscan(in, out, K, mat_type, op, d, &r));
  CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
  for (int k = 0; k < K; ++k) CHECK_MSG(mat_eq(out[k], mat_prod(0, mt_rank, k)), "iscan matrix %d", k);
  MPI_Comm_free(&d);
  MPI_Op_free(&op);
  CHECK(op == MPI_OP_NULL);
  MPI_Type_free(&mat_type);
}

static void sum_mod(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] = (((int*)in)[i] + ((int*)inout)[i]) % 1000;
}

static void in_place_and_rooted(void) {
  SECTION("5.9-5.11 roots, MPI_IN_PLACE, reduce-scatter, scans");
  long v[N], w[N];
  for (int root = 0; root < mt_size; root += (mt_size > 3 ? 3 : 1)) {
    for (int i = 0; i < N; ++i) v[i] = mt_rank * 10 + i;
    memset(w, 0, sizeof w);
    if (mt_rank == root) {
      memcpy(w, v, sizeof v);
      CHECK_RC(MPI_Reduce(MPI_IN_PLACE, w, N, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD));
      for (int i = 0; i < N; ++i) CHECK_INT(w[i], 10L * mt_size * (mt_size - 1) / 2 + (long)i * mt_size);
    } else {
      CHECK_RC(MPI_Reduce(v, NULL, N, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD));
    }
  }
  for (int i = 0; i < N; ++i) v[i] = mt_rank + i;
  CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, v, N, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
  for (int i = 0; i < N; ++i) CHECK_INT(v[i], mt_size - 1 + i);
  /* Reduce_scatter_block: block r of the sum to rank r. */
  const int b = 3;
  long* in = malloc((size_t)(b * mt_size) * sizeof(long));
  long out[3];
  for (int i = 0; i < b * mt_size; ++i) in[i] = i + mt_rank;
  CHECK_RC(MPI_Reduce_scatter_block(in, out, b, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  for (int k = 0; k < b; ++k)
    CHECK_INT(out[k], (long)(mt_rank * b + k) * mt_size + (long)mt_size * (mt_size - 1) / 2);
  CHECK_RC(MPI_Reduce_scatter_block(MPI_IN_PLACE, in, b, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  for (int k = 0; k < b; ++k) CHECK_INT(in[k], out[k]);
  /* Reduce_scatter with one count per rank, a commutative user op. */
  MPI_Op m;
  MPI_Op_create(sum_mod, 1, &m);
  int counts[64], total = 0;
  for (int p = 0; p < mt_size; ++p) total += counts[p] = (p * 7) % 4;
  int* iv = malloc((size_t)(total + 1) * sizeof(int));
  int io[8];
  for (int i = 0; i < total; ++i) iv[i] = 999 + i;
  CHECK_RC(MPI_Reduce_scatter(iv, io, counts, MPI_INT, m, MPI_COMM_WORLD));
  int first = 0;
  for (int p = 0; p < mt_rank; ++p) first += counts[p];
  for (int k = 0; k < counts[mt_rank]; ++k) {
    int want = 0;
    for (int p = 0; p < mt_size; ++p) want = (999 + first + k + want) % 1000;
    CHECK_INT(io[k], want);
  }
  MPI_Op_free(&m);
  free(iv);
  free(in);
  /* Scan and Exscan with MPI_SUM. */
  int x = mt_rank + 1, s = 0;
  CHECK_RC(MPI_Scan(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_INT(s, (mt_rank + 1) * (mt_rank + 2) / 2);
  s = -7;
  CHECK_RC(MPI_Exscan(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  if (mt_rank > 0) CHECK_INT(s, mt_rank * (mt_rank + 1) / 2);
  double d = 1.5;
  CHECK_RC(MPI_Scan(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD));
  double want = 1;
  for (int p = 0; p <= mt_rank; ++p) want *= 1.5;
  CHECK(d == want);
}

/* 5.12: the non-blocking forms of the rooted reductions, reduce-scatter and
 * exscan, all in flight at once on their own communicators, completed with
 * MPI_Testsome (3.7.5), against the blocking forms' results. */
static void nonblocking_reductions(void) {
  SECTION("5.12 Ireduce, Ireduce_scatter(_block), Iexscan in flight together; 3.7.5 Testsome");
  enum { K = 4, B = 2 };
  MPI_Comm c[K];
  for (int k = 0; k < K; ++k) MPI_Comm_dup(MPI_COMM_WORLD, &c[k]);
  const int root = mt_size - 1;
  long v[N], red[N], want_red[N];
  for (int i = 0; i < N; ++i) v[i] = mt_rank * 3 + i;
  long* in = malloc((size_t)(B * mt_size) * sizeof(long));
  long rsb[B], want_rsb[B], rs[8], want_rs[8];
  int counts[64];
  for (int p = 0; p < mt_size; ++p) counts[p] = 1 + p % 2;
  for (int i = 0; i < B * mt_size; ++i) in[i] = 5 * i + mt_rank;
  int x = mt_rank + 2, ex = -7, want_ex = -7;
  MPI_Reduce(v, want_red, N, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(in, want_rsb, B, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Reduce_scatter(in, want_rs, counts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(&x, &want_ex, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
  MPI_Request r[K];
  CHECK_RC(MPI_Ireduce(v, red, N, MPI_LONG, MPI_SUM, root, c[0], &r[0]));
  CHECK_RC(MPI_Ireduce_scatter_block(in, rsb, B, MPI_LONG, MPI_MAX, c[1], &r[1]));
  CHECK_RC(MPI_Ireduce_scatter(in, rs, counts, MPI_LONG, MPI_SUM, c[2], &r[2]));
  CHECK_RC(MPI_Iexscan(&x, &ex, 1, MPI_INT, MPI_PROD, c[3], &r[3]));
  int done_count = 0, seen[K] = {0}, idx[K], outcount = 0;
  MPI_Status st[K];
  while (done_count < K) {
    CHECK_RC(MPI_Testsome(K, r, &outcount, idx, st));
    if (outcount == MPI_UNDEFINED) break;
    for (int i = 0; i < outcount; ++i) {
      CHECK(idx[i] >= 0 && idx[i] < K && !seen[idx[i]] && r[idx[i]] == MPI_REQUEST_NULL);
      if (idx[i] >= 0 && idx[i] < K) seen[idx[i]] = 1;
    }
    done_count += outcount;
  }
  CHECK_INT(done_count, K);
  CHECK_RC(MPI_Testsome(K, r, &outcount, idx, st)); /* all inactive now */
  CHECK_INT(outcount, MPI_UNDEFINED);
  if (mt_rank == root) CHECK(!memcmp(red, want_red, sizeof red));
  CHECK(!memcmp(rsb, want_rsb, sizeof rsb));
  CHECK(!memcmp(rs, want_rs, sizeof(long) * (size_t)counts[mt_rank]));
  if (mt_rank > 0) CHECK_INT(ex, want_ex);
  for (int k = 0; k < K; ++k) MPI_Comm_free(&c[k]);
  free(in);
}

static void op_errors(void) {
  SECTION("5.9.2 operations not defined for a type: MPI_ERR_OP");
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  double d = 1, e = 0;
  CHECK_CLASS(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, c), MPI_ERR_OP);
  int i = 1, j = 0;
  CHECK_CLASS(MPI_Allreduce(&i, &j, 1, MPI_INT, MPI_MINLOC, c), MPI_ERR_OP);
  CHECK_CLASS(MPI_Reduce(&d, &e, 1, MPI_DOUBLE, MPI_LXOR, 0, c), MPI_ERR_OP);
  CHECK_CLASS(MPI_Allreduce(&i, &j, 1, MPI_INT, MPI_OP_NULL, c), MPI_ERR_OP);
  /* 2.5.1: an output argument aliases no other one (MPI_IN_PLACE is the
     way to work in place); the check is local, so nothing is left in flight. */
  int buf4[4] = {1, 2, 3, 4}, out1 = 0;
  CHECK_CLASS(MPI_Allreduce(buf4, buf4, 4, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Allreduce(buf4, buf4 + 1, 2, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER);  /* overlapping */
  /* MPI_Reduce_local has no communicator: MPI_COMM_WORLD's handler. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_Reduce_local(buf4, buf4, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Reduce_local(MPI_IN_PLACE, buf4, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
  CHECK_CLASS(MPI_Reduce_local(buf4, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (mt_rank == 0) CHECK_CLASS(MPI_Gather(buf4, 1, MPI_INT, buf4, 1, MPI_INT, 0, c), MPI_ERR_BUFFER);
  /* Adjacent, not overlapping: allowed. */
  CHECK_RC(MPI_Reduce_local(buf4, buf4 + 2, 2, MPI_INT, MPI_SUM));
  CHECK_INT(buf4[2], 4);
  CHECK_INT(buf4[3], 6);
  CHECK_RC(MPI_Allreduce(buf4, &out1, 1, MPI_INT, MPI_SUM, c));
  CHECK_INT(out1, mt_size);
  /* The communicator still works after refused calls. */
  CHECK_RC(MPI_Allreduce(&i, &j, 1, MPI_INT, MPI_SUM, c));
  CHECK_INT(j, mt_size);
#ifdef TOROID_MPI
  /* MPI_CHAR is reduced as the C char it is (as MPICH and Open MPI do:
     benchmark suites sum MPI_CHAR by default), an extension of 5.9.2. */
  char ch[3] = {1, 2, (char)(mt_rank % 2)}, cs[3] = {0, 0, 0};
  CHECK_RC(MPI_Allreduce(ch, cs, 3, MPI_CHAR, MPI_SUM, c));
  CHECK_INT(cs[0], (char)mt_size);
  CHECK_INT(cs[1], (char)(2 * mt_size));
  CHECK_INT(cs[2], mt_size / 2);
  CHECK_RC(MPI_Allreduce(ch, cs, 3, MPI_CHAR, MPI_MAX, c));
  CHECK_INT(cs[2], mt_size > 1 ? 1 : 0);
#endif
  MPI_Comm_free(&c);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  arith_all(MPI_COMM_WORLD, 0);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half);
  arith_all(half, 1); /* non-blocking, on a sub-communicator in reversed order */
  MPI_Comm_free(&half);
  logical_bitwise();
  complex_sum();
  locs();
  user_ops();
  in_place_and_rooted();
  nonblocking_reductions();
  op_errors();
  return mt_finish("coll_reduce");
}
