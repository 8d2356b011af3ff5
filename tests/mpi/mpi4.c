/* The MPI 4.0 functions the library provides ahead of the version (MPI_VERSION
 * stays 3): MPI_Isendrecv, MPI_Isendrecv_replace (MPI 4.0 3.10),
 * MPI_Comm_idup_with_info (7.4.2), MPI_Info_get_string (10.2),
 * MPI_Info_create_env (11.2.2), and the info calls before MPI_Init and after
 * MPI_Finalize (11.4.1). Written from the MPI 4.0 standard's text. */
#include <unistd.h>

#include "mpitest.h"

/* Info checks that hold at any time: before MPI_Init, during, after MPI_Finalize. */
static int info_anytime(int argc, char** argv, MPI_Info env_before) {
  int bad = 0;
  MPI_Info i;
  if (MPI_Info_create(&i) != MPI_SUCCESS) return 1;
  MPI_Info_set(i, "key", "twelve chars");
  char v[32];
  int len = (int)sizeof v, flag = 0;
  bad += MPI_Info_get_string(i, "key", &len, v, &flag) != MPI_SUCCESS || !flag || len != 13 || strcmp(v, "twelve chars");
  len = 5; /* a short buffer: cut to len - 1 characters, the size needed in len */
  bad += MPI_Info_get_string(i, "key", &len, v, &flag) != MPI_SUCCESS || !flag || len != 13 || strcmp(v, "twel");
  len = 0; /* a zero-length buffer: the size only, the value untouched */
  v[0] = 'x';
  bad += MPI_Info_get_string(i, "key", &len, v, &flag) != MPI_SUCCESS || !flag || len != 13 || v[0] != 'x';
  len = 7; /* a missing key: flag false, buflen unchanged */
  bad += MPI_Info_get_string(i, "nokey", &len, v, &flag) != MPI_SUCCESS || flag || len != 7;
  MPI_Info d;
  bad += MPI_Info_dup(i, &d) != MPI_SUCCESS;
  MPI_Info_free(&i);
  bad += i != MPI_INFO_NULL;
  len = (int)sizeof v;
  bad += MPI_Info_get_string(d, "key", &len, v, &flag) != MPI_SUCCESS || !flag || strcmp(v, "twelve chars");
  MPI_Info_free(&d);
  /* The environment's info is the same whenever it is made. */
  MPI_Info env;
  bad += MPI_Info_create_env(argc, argv, &env) != MPI_SUCCESS;
  int n1 = -1, n2 = -2;
  MPI_Info_get_nkeys(env, &n1);
  MPI_Info_get_nkeys(env_before, &n2);
  bad += n1 != n2 || n1 < 1;
  for (int k = 0; k < n1; ++k) {
    char key[MPI_MAX_INFO_KEY + 1], a[MPI_MAX_INFO_VAL + 1], b[MPI_MAX_INFO_VAL + 1];
    int la = (int)sizeof a, lb = (int)sizeof b, fa = 0, fb = 0;
    MPI_Info_get_nthkey(env, k, key);
    MPI_Info_get_string(env, key, &la, a, &fa);
    MPI_Info_get_string(env_before, key, &lb, b, &fb);
    bad += !fa || !fb || strcmp(a, b);
  }
  MPI_Info_free(&env);
  return bad;
}

static void env_keys(int argc, char** argv, MPI_Info env) {
  char v[MPI_MAX_INFO_VAL + 1], cwd[4096];
  int len = (int)sizeof v, flag = 0;
  MPI_Info_get_string(env, "command", &len, v, &flag);
  CHECK(flag && strcmp(v, argv[0]) == 0);
  len = (int)sizeof v;
  MPI_Info_get_string(env, "argv", &len, v, &flag);
  char want[MPI_MAX_INFO_VAL + 1] = "";
  for (int k = 1; k < argc; ++k) {
    if (k > 1) strcat(want, " ");
    strncat(want, argv[k], sizeof want - strlen(want) - 2);
  }
  CHECK_MSG(argc > 1 ? flag && strcmp(v, want) == 0 : !flag, "argv '%s', want '%s'", flag ? v : "(none)", want);
  len = (int)sizeof v;
  MPI_Info_get_string(env, "wdir", &len, v, &flag);
  CHECK(flag && getcwd(cwd, sizeof cwd) && strcmp(v, cwd) == 0);
  len = (int)sizeof v;
  MPI_Info_get_string(env, "thread_level", &len, v, &flag);
  int provided = -1;
  MPI_Query_thread(&provided);
  CHECK_MSG(flag && strcmp(v, "MPI_THREAD_FUNNELED") == 0 && provided <= MPI_THREAD_FUNNELED,
            "thread_level '%s', MPI_Query_thread %d", flag ? v : "(none)", provided);
}

/* A ring exchange with MPI_Isendrecv: a strided send type, a contiguous receive. */
static void isendrecv_ring(void) {
  SECTION("4.0 3.10 MPI_Isendrecv");
  const int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
  int out[20], in[10];
  for (int i = 0; i < 20; ++i) out[i] = mt_rank * 1000 + i;
  MPI_Datatype every_other;
  MPI_Type_vector(10, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  for (int i = 0; i < 10; ++i) in[i] = -1;
  MPI_Request r;
  CHECK_RC(MPI_Isendrecv(out, 1, every_other, right, 7, in, 10, MPI_INT, left, 7, MPI_COMM_WORLD, &r));
  MPI_Type_free(&every_other); /* the request keeps it */
  int flag = 0;
  MPI_Status st;
  while (!flag) MPI_Request_get_status(r, &flag, &st);
  CHECK_INT(st.MPI_SOURCE, left);
  CHECK_INT(st.MPI_TAG, 7);
  CHECK_RC(MPI_Wait(&r, &st));
  CHECK(r == MPI_REQUEST_NULL);
  CHECK_INT(st.MPI_SOURCE, left);
  CHECK_INT(st.MPI_TAG, 7);
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_INT(n, 10);
  for (int i = 0; i < 10; ++i) CHECK_INT(in[i], left * 1000 + 2 * i);
  /* Several at once, completed by MPI_Waitall in reverse; any source and tag. */
  int a[4], b[4];
  MPI_Request rs[4];
  for (int k = 0; k < 4; ++k) {
    a[k] = mt_rank * 10 + k;
    b[k] = -1;
    CHECK_RC(MPI_Isendrecv(&a[k], 1, MPI_INT, left, 20 + k, &b[k], 1, MPI_INT, MPI_ANY_SOURCE, 20 + k, MPI_COMM_WORLD,
                           &rs[3 - k]));
  }
  MPI_Status sts[4];
  CHECK_RC(MPI_Waitall(4, rs, sts));
  for (int k = 0; k < 4; ++k) {
    CHECK_INT(b[k], right * 10 + k);
    CHECK_INT(sts[3 - k].MPI_SOURCE, right);
    CHECK_INT(sts[3 - k].MPI_TAG, 20 + k);
  }
  /* MPI_PROC_NULL on both sides: completes at once with the null status. */
  CHECK_RC(MPI_Isendrecv(a, 1, MPI_INT, MPI_PROC_NULL, 0, b, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
  flag = 0;
  CHECK_RC(MPI_Test(&r, &flag, &st));
  CHECK(flag);
  CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
  CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
  /* Bad arguments are refused and leave no request. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  r = MPI_REQUEST_NULL;
  CHECK_CLASS(MPI_Isendrecv(a, 1, MPI_INT, mt_size, 0, b, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
  CHECK(r == MPI_REQUEST_NULL);
  CHECK_CLASS(MPI_Isendrecv(a, 1, MPI_INT, right, 0, b, -1, MPI_INT, left, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  CHECK(r == MPI_REQUEST_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_Isendrecv_replace: a shift in place of a strided buffer. */
static void isendrecv_replace_shift(void) {
  SECTION("4.0 3.10 MPI_Isendrecv_replace");
  const int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
  double buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = i % 2 ? -1.0 : mt_rank + i / 100.0;
  MPI_Datatype even;
  MPI_Type_vector(8, 1, 2, MPI_DOUBLE, &even);
  MPI_Type_commit(&even);
  MPI_Request r;
  CHECK_RC(MPI_Isendrecv_replace(buf, 1, even, right, 3, left, 3, MPI_COMM_WORLD, &r));
  MPI_Status st;
  CHECK_RC(MPI_Wait(&r, &st));
  CHECK_INT(st.MPI_SOURCE, left);
  for (int i = 0; i < 16; ++i)
    CHECK_MSG(buf[i] == (i % 2 ? -1.0 : left + i / 100.0), "buf[%d] = %g", i, buf[i]);
  MPI_Type_free(&even);
}

/* MPI_Comm_idup_with_info: the copy works and carries the hints. */
static void idup_with_info(void) {
  SECTION("4.0 7.4.2 MPI_Comm_idup_with_info");
  MPI_Info hints;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "toroid_repro", "exact");
  MPI_Info_set(hints, "note", "kept");
  MPI_Comm dup = MPI_COMM_WORLD;
  MPI_Request r;
  CHECK_RC(MPI_Comm_idup_with_info(MPI_COMM_WORLD, hints, &dup, &r));
  MPI_Info_free(&hints); /* the call took its pairs */
  CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD);
  int result = -1;
  MPI_Comm_compare(dup, MPI_COMM_WORLD, &result);
  CHECK_INT(result, MPI_CONGRUENT);
  MPI_Info got;
  CHECK_RC(MPI_Comm_get_info(dup, &got));
  char v[MPI_MAX_INFO_VAL + 1];
  int len = (int)sizeof v, flag = 0;
  MPI_Info_get_string(got, "note", &len, v, &flag);
  CHECK(flag && strcmp(v, "kept") == 0);
  MPI_Info_free(&got);
  /* Exact sums: the same bits whatever the order of the addends. */
  double x = mt_rank == 0 ? 1e16 : mt_rank == 1 ? -1e16 : 1.0, sum = 0;
  CHECK_RC(MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, dup));
  CHECK_MSG(sum == (double)(mt_size - 2), "sum %.17g, exact %d", sum, mt_size - 2);
  MPI_Comm plain;
  CHECK_RC(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &plain, &r));
  CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_RC(MPI_Comm_free(&plain));
  CHECK_RC(MPI_Comm_free(&dup));
}

int main(int argc, char** argv) {
  SECTION("4.0 11.4.1 info before MPI_Init");
  MPI_Info env_before = MPI_INFO_NULL;
  const int rc_env = MPI_Info_create_env(argc, argv, &env_before);
  const int bad_before = info_anytime(argc, argv, env_before);
  mt_init(&argc, &argv);
  CHECK_INT(rc_env, MPI_SUCCESS);
  CHECK_INT(bad_before, 0);
  SECTION("4.0 10.2, 11.2.2 info while initialized");
  CHECK_INT(info_anytime(argc, argv, env_before), 0);
  env_keys(argc, argv, env_before);
  isendrecv_ring();
  isendrecv_replace_shift();
  idup_with_info();
  const int rc = mt_finish("mpi4");
  /* After MPI_Finalize (no one to tell but this process). */
  const int bad_after = info_anytime(argc, argv, env_before);
  MPI_Info_free(&env_before);
  if (bad_after) fprintf(stderr, "FAIL [4.0 11.4.1 info after MPI_Finalize] %d checks failed\n", bad_after);
  return rc || bad_after ? 1 : 0;
}
