/* MPI 3.1 chapters 8, 9, 12, 14 and 17: the environment (8.1 version,
 * processor name, clocks; 8.2 memory; 8.3-8.5 error handlers, codes,
 * classes and strings; 12.4 threads), info objects (9), generalized
 * requests and status fields (12.2-12.3), the tool interface's start and
 * end (14.3), handle conversion (17.2.4), and the error class of each
 * kind of wrong argument (8.4) with MPI_ERRORS_RETURN. */
#include <unistd.h>

#include "mpitest.h"

static void inquiry(void) {
  SECTION("8.1 version, processor name, clocks");
  int v, sv, flag;
  MPI_Get_version(&v, &sv);
  CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION && v >= 3);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) <= len);
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(name, &len);
  CHECK(len > 0 && (int)strlen(name) == len);
  MPI_Initialized(&flag);
  CHECK(flag);
  MPI_Finalized(&flag);
  CHECK(!flag);
  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  CHECK(tick > 0 && tick < 1e-3);
  usleep(20000);
  double t1 = MPI_Wtime();
  CHECK_MSG(t1 - t0 >= 0.015 && t1 - t0 < 5, "20 ms took %g s", t1 - t0);
  int provided, main;
  MPI_Query_thread(&provided);
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
  MPI_Is_thread_main(&main);
  CHECK(main);
}

static void memory(void) {
  SECTION("8.2 memory allocation");
  double* p = NULL;
  CHECK_RC(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &p));
  CHECK(p != NULL);
  for (int i = 0; i < 1000; ++i) p[i] = i;
  double s = 0;
  MPI_Allreduce(&p[999], &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CHECK(s == 999.0 * mt_size);
  CHECK_RC(MPI_Free_mem(p));
}

static int handler_calls, handler_class;
static void my_handler(MPI_Comm* c, int* code, ...) {
  (void)c;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

static void errors(void) {
  SECTION("8.3-8.5 error handlers, classes, codes and strings");
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Errhandler h;
  MPI_Comm_get_errhandler(c, &h);
  CHECK(h == MPI_ERRORS_ARE_FATAL); /* inherited from MPI_COMM_WORLD */
  MPI_Errhandler_free(&h);
  CHECK_RC(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  int x = 0, cls;
  /* 8.4: each kind of wrong argument has its class; the call returns it. */
  CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, mt_size + 3, 0, c), MPI_ERR_RANK);
  CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, 0, -5, c), MPI_ERR_TAG);
  CHECK_CLASS(MPI_Send(&x, -1, MPI_INT, 0, 0, c), MPI_ERR_COUNT);
  CHECK_CLASS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, c), MPI_ERR_TYPE);
  CHECK_CLASS(MPI_Bcast(&x, 1, MPI_INT, mt_size + 1, c), MPI_ERR_ROOT);
  CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, -7, 0, c, MPI_STATUS_IGNORE), MPI_ERR_RANK);
  MPI_Datatype un;
  MPI_Type_contiguous(2, MPI_INT, &un); /* not committed */
  CHECK_CLASS(MPI_Send(&x, 1, un, 0, 0, c), MPI_ERR_TYPE);
  MPI_Type_free(&un);
  double d = 0;
  CHECK_CLASS(MPI_Allreduce(&d, &d, 1, MPI_DOUBLE, MPI_BXOR, c), MPI_ERR_OP);
  MPI_Request req = MPI_REQUEST_NULL;
  CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE)); /* a null request is fine */
  /* Strings. */
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  CHECK_RC(MPI_Error_string(MPI_ERR_RANK, s, &len));
  CHECK(len > 0 && (int)strlen(s) == len);
  MPI_Error_class(MPI_ERR_TRUNCATE, &cls);
  CHECK_INT(cls, MPI_ERR_TRUNCATE);
  MPI_Error_class(MPI_SUCCESS, &cls);
  CHECK_INT(cls, MPI_SUCCESS);
  /* User classes, codes and strings. */
  int myclass, mycode, *lastused, flag;
  CHECK_RC(MPI_Add_error_class(&myclass));
  CHECK(myclass > MPI_ERR_LASTCODE - 1);
  CHECK_RC(MPI_Add_error_code(myclass, &mycode));
  CHECK_RC(MPI_Add_error_string(mycode, "my own error"));
  MPI_Error_string(mycode, s, &len);
  CHECK(!strcmp(s, "my own error"));
  MPI_Error_class(mycode, &cls);
  CHECK_INT(cls, myclass);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag);
  CHECK(flag && *lastused >= mycode);
  /* A user handler sees the error; MPI_Comm_call_errhandler invokes it. */
  MPI_Errhandler mine;
  CHECK_RC(MPI_Comm_create_errhandler(my_handler, &mine));
  MPI_Comm_set_errhandler(c, mine);
  handler_calls = 0;
  MPI_Send(&x, 1, MPI_INT, 0, -1, c);
  CHECK_INT(handler_calls, 1);
  CHECK_INT(handler_class, MPI_ERR_TAG);
  CHECK_RC(MPI_Comm_call_errhandler(c, mycode));
  CHECK_INT(handler_calls, 2);
  CHECK_INT(handler_class, myclass);
  MPI_Comm_get_errhandler(c, &h);
  CHECK(h == mine);
  MPI_Errhandler_free(&h);
  MPI_Errhandler_free(&mine);
  /* A duplicate inherits the handler (8.3: MPI_COMM_DUP copies it). */
  MPI_Comm c2;
  MPI_Comm_dup(c, &c2);
  handler_calls = 0;
  MPI_Send(&x, 1, MPI_INT, mt_size + 9, 0, c2);
  CHECK_INT(handler_calls, 1);
  MPI_Comm_free(&c2);
  MPI_Comm_free(&c);
}

static void count_mismatch(void) {
  SECTION("5.2, 8.4 a count that differs between ranks");
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  /* Every rank but the root expects one element more than the root sends. */
  int buf[8] = {0};
  int rc = MPI_Bcast(buf, mt_rank == 0 ? 4 : 5, MPI_INT, 0, c), cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
#ifdef TOROID_MPI
  /* The standard calls this erroneous; Toroid detects it on every rank
     (the rank that sees it reports it to the others). */
  if (mt_rank != 0 && mt_size > 1) CHECK_MSG(cls == MPI_ERR_TRUNCATE, "class %d", cls);
#endif
  MPI_Comm_free(&c);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* The same on MPI_COMM_WORLD, whose small reductions run on the combine
   network (the tree algorithms, and the torus-tree's broadcast): after the
   failed operations every rank goes on, and the world's next collectives
   give the right results (MPICH's errors/coll tests do this). */
static void world_count_mismatch(void) {
  SECTION("5.2, 8.4 counts that differ on MPI_COMM_WORLD, then its collectives again");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  long in[3] = {mt_rank, 1, -mt_rank}, out[3] = {0, 0, 0};
  int round;
  for (round = 0; round < 3; ++round) {
    /* The last rank sums one element less; then every rank but the root
       expects one element more than the root sends. */
    int rc = MPI_Allreduce(in, out, mt_rank == mt_size - 1 ? 2 : 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (mt_rank == mt_size - 1 && mt_size > 1)
      CHECK_MSG(rc != MPI_SUCCESS, "round %d: MPI_Allreduce with a short count succeeded", round);
    int buf[8] = {0};
    rc = MPI_Bcast(buf, mt_rank == 0 ? 4 : 5, MPI_INT, 0, MPI_COMM_WORLD);
    if (mt_rank != 0 && mt_size > 1) CHECK_MSG(rc != MPI_SUCCESS, "round %d: MPI_Bcast with differing counts succeeded", round);
    /* Now with the same counts everywhere. */
    CHECK_RC(MPI_Allreduce(in, out, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(out[0], (long)mt_size * (mt_size - 1) / 2);
    CHECK_INT(out[1], mt_size);
    CHECK_INT(out[2], -(long)mt_size * (mt_size - 1) / 2);
    long mx = -1;
    CHECK_RC(MPI_Allreduce(&in[0], &mx, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
    CHECK_INT(mx, mt_size - 1);
    int v[5] = {0, 0, 0, 0, 0};
    if (mt_rank == 0) v[0] = v[4] = 7 + round;
    CHECK_RC(MPI_Bcast(v, 5, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK_INT(v[0] + v[4], 2 * (7 + round));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void info(void) {
  SECTION("9 info objects");
  MPI_Info i, j;
  CHECK_RC(MPI_Info_create(&i));
  int n = -1, flag, len;
  MPI_Info_get_nkeys(i, &n);
  CHECK_INT(n, 0);
  MPI_Info_set(i, "alpha", "1");
  MPI_Info_set(i, "beta", "two");
  MPI_Info_set(i, "alpha", "one"); /* replaces */
  MPI_Info_get_nkeys(i, &n);
  CHECK_INT(n, 2);
  char v[MPI_MAX_INFO_VAL + 1], k[MPI_MAX_INFO_KEY + 1];
  MPI_Info_get(i, "alpha", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && !strcmp(v, "one"));
  MPI_Info_get_valuelen(i, "beta", &len, &flag);
  CHECK(flag && len == 3);
  MPI_Info_get(i, "gamma", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(!flag);
  MPI_Info_get_nthkey(i, 1, k);
  CHECK(!strcmp(k, "beta"));
  MPI_Info_dup(i, &j);
  MPI_Info_delete(i, "alpha");
  MPI_Info_get_nkeys(i, &n);
  CHECK_INT(n, 1);
  MPI_Info_get_nkeys(j, &n);
  CHECK_INT(n, 2);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  CHECK_RC(MPI_Comm_set_info(c, j));
  MPI_Info got;
  CHECK_RC(MPI_Comm_get_info(c, &got)); /* the hints in use: which ones is the implementation's choice */
  MPI_Info_get_nkeys(got, &n);
  CHECK(n >= 0);
#ifdef TOROID_MPI
  MPI_Info_get(got, "beta", MPI_MAX_INFO_VAL, v, &flag);
  CHECK(flag && !strcmp(v, "two"));
#endif
  MPI_Info_free(&got);
  MPI_Comm_free(&c);
  MPI_Info_free(&i);
  MPI_Info_free(&j);
  CHECK(i == MPI_INFO_NULL);
  MPI_Info_get_nkeys(MPI_INFO_ENV, &n);
  CHECK(n >= 0);
}

static int gq_calls, gf_calls;
static int gquery(void* state, MPI_Status* st) {
  ++gq_calls;
  MPI_Status_set_elements(st, MPI_INT, *(int*)state);
  MPI_Status_set_cancelled(st, 0);
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
static int gfree(void* state) {
  (void)state;
  ++gf_calls;
  return MPI_SUCCESS;
}
static int gcancel(void* state, int complete) {
  (void)state;
  (void)complete;
  return MPI_SUCCESS;
}

static void external(void) {
  SECTION("12.2-12.3 generalized requests and status fields");
  static int three = 3;
  MPI_Request r;
  CHECK_RC(MPI_Grequest_start(gquery, gfree, gcancel, &three, &r));
  int flag = 1;
  MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  CHECK(!flag);
  CHECK_RC(MPI_Grequest_complete(r));
  MPI_Status st;
  CHECK_RC(MPI_Wait(&r, &st));
  CHECK(r == MPI_REQUEST_NULL && gq_calls == 1 && gf_calls == 1);
  /* Freed while active (12.2): free_fn runs once it completes, and only then. */
  MPI_Request kept;
  CHECK_RC(MPI_Grequest_start(gquery, gfree, gcancel, &three, &r));
  kept = r;
  CHECK_RC(MPI_Request_free(&r));
  CHECK(r == MPI_REQUEST_NULL);
  CHECK_INT(gf_calls, 1);
  CHECK_RC(MPI_Grequest_complete(kept));
  MPI_Barrier(MPI_COMM_WORLD); /* the library makes progress: the freed request goes */
  CHECK_INT(gf_calls, 2);
  CHECK_INT(gq_calls, 1);
  int n;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_INT(n, 3);
  MPI_Status s2;
  MPI_Status_set_elements(&s2, MPI_DOUBLE, 4);
  MPI_Get_elements(&s2, MPI_DOUBLE, &n);
  CHECK_INT(n, 4);
  MPI_Status_set_cancelled(&s2, 1);
  MPI_Test_cancelled(&s2, &flag);
  CHECK(flag);
}

static void tool(void) {
  SECTION("14.3 tool interface start and end");
  int provided, n = -1;
  CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  CHECK_RC(MPI_T_cvar_get_num(&n));
  CHECK(n >= 0);
  CHECK_RC(MPI_T_pvar_get_num(&n));
  CHECK(n >= 0);
  CHECK_RC(MPI_T_category_get_num(&n));
  CHECK(n >= 0);
  CHECK_RC(MPI_T_finalize());
}

static void interop(void) {
  SECTION("17.2.4 handle conversion");
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Fint f = MPI_Comm_c2f(d);
  CHECK(MPI_Comm_f2c(f) == d);
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);
  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM);
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL);
  MPI_Group g;
  MPI_Comm_group(d, &g);
  CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g);
  MPI_Group_free(&g);
  MPI_Status st, back;
  st.MPI_SOURCE = 3;
  st.MPI_TAG = 4;
  st.MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements(&st, MPI_INT, 7);
  MPI_Fint fs[64];
  MPI_Status_c2f(&st, fs);
#ifdef MPI_F_SOURCE /* MPI 3.0's C names of the Fortran status layout */
  CHECK(fs[MPI_F_SOURCE] == 3 && fs[MPI_F_TAG] == 4 && MPI_F_STATUS_SIZE <= 64);
#endif
  MPI_Status_f2c(fs, &back);
  int n;
  MPI_Get_count(&back, MPI_INT, &n);
  CHECK(back.MPI_SOURCE == 3 && n == 7);
  MPI_Comm_free(&d);
}

/* Progress happens inside MPI calls: a rank that computes for a while
   between them answers nothing on its links meanwhile. Its neighbours must
   wait for it (as long as a blocking call waits), not declare it dead at
   the links' own half-second timeout (MPICH's pt2pt/large_message). */
static void compute_between_calls(void) {
  SECTION("a rank computes 1.5 s between MPI calls");
  MPI_Barrier(MPI_COMM_WORLD);
  if (mt_rank == 0) usleep(1500 * 1000);
  int v = mt_rank, sum = -1;
  CHECK_RC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_INT(sum, mt_size * (mt_size - 1) / 2);
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
  SECTION("12.4 MPI_Init_thread");
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
  inquiry();
  memory();
  errors();
  count_mismatch();
  world_count_mismatch();
  info();
  external();
  tool();
  interop();
  compute_between_calls();
  return mt_finish("env");
}
