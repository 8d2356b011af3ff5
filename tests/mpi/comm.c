/* MPI 3.1 chapter 6, groups, contexts, communicators and caching: group
 * operations (6.3), communicator constructors and accessors (6.4),
 * intercommunicators (6.6), attributes with copy and delete callbacks
 * (6.7), names (6.8); contexts never shared by two live communicators,
 * over thousands of communicators made and freed. */
#include "mpitest.h"

static void groups(void) {
  SECTION("6.3 groups");
  MPI_Group world, evens, odds, u, in, diff, rng, rx, empty;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int size, rank;
  MPI_Group_size(world, &size);
  MPI_Group_rank(world, &rank);
  CHECK_INT(size, mt_size);
  CHECK_INT(rank, mt_rank);
  int ev[64], ne = 0;
  for (int p = 0; p < mt_size; p += 2) ev[ne++] = p;
  CHECK_RC(MPI_Group_incl(world, ne, ev, &evens));
  CHECK_RC(MPI_Group_excl(world, ne, ev, &odds));
  MPI_Group_size(odds, &size);
  CHECK_INT(size, mt_size - ne);
  MPI_Group_rank(evens, &rank);
  CHECK_INT(rank, mt_rank % 2 ? MPI_UNDEFINED : mt_rank / 2);
  CHECK_RC(MPI_Group_union(odds, evens, &u));
  int cmp;
  MPI_Group_compare(u, world, &cmp);
  CHECK_INT(cmp, mt_size > 1 ? MPI_SIMILAR : MPI_IDENT);
  MPI_Group_compare(world, world, &cmp);
  CHECK_INT(cmp, MPI_IDENT);
  MPI_Group_intersection(evens, odds, &in);
  CHECK(in == MPI_GROUP_EMPTY);
  MPI_Group_difference(world, odds, &diff);
  MPI_Group_compare(diff, evens, &cmp);
  CHECK_INT(cmp, MPI_IDENT);
  int range[1][3] = {{mt_size - 1, 0, -1}};
  CHECK_RC(MPI_Group_range_incl(world, 1, range, &rng)); /* every rank, reversed */
  int r0 = 0, tr = -1;
  MPI_Group_translate_ranks(rng, 1, &r0, world, &tr);
  CHECK_INT(tr, mt_size - 1);
  int pn = MPI_PROC_NULL;
  MPI_Group_translate_ranks(rng, 1, &pn, world, &tr);
  CHECK_INT(tr, MPI_PROC_NULL);
  int r1[1][3] = {{0, mt_size - 1, 2}};
  MPI_Group_range_excl(world, 1, r1, &rx);
  MPI_Group_compare(rx, odds, &cmp);
  CHECK_INT(cmp, MPI_IDENT);
  int all[64];
  for (int p = 0; p < mt_size; ++p) all[p] = p;
  int out[64];
  MPI_Group_translate_ranks(world, mt_size, all, evens, out);
  for (int p = 0; p < mt_size; ++p) CHECK_INT(out[p], p % 2 ? MPI_UNDEFINED : p / 2);
  MPI_Group_excl(world, 0, NULL, &empty);
  MPI_Group_compare(empty, world, &cmp);
  CHECK_INT(cmp, MPI_IDENT);
  MPI_Group gs[] = {world, evens, odds, u, in, diff, rng, rx, empty};
  for (int i = 0; i < 9; ++i) {
    CHECK_RC(MPI_Group_free(&gs[i]));
    CHECK(gs[i] == MPI_GROUP_NULL);
  }
}

/* Messages on one communicator never meet another's receives, whatever the
 * tags: each rank sends on `two` first, yet each receive gets its own. */
static void apart(MPI_Comm one, MPI_Comm two, int tag) {
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  int a = 1, b = 2, ga = 0, gb = 0;
  MPI_Request q[4];
  MPI_Irecv(&ga, 1, MPI_INT, prev, tag, one, &q[0]);
  MPI_Irecv(&gb, 1, MPI_INT, prev, tag, two, &q[1]);
  MPI_Isend(&b, 1, MPI_INT, next, tag, two, &q[2]);
  MPI_Isend(&a, 1, MPI_INT, next, tag, one, &q[3]);
  MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
  CHECK(ga == 1 && gb == 2);
}

static void constructors(void) {
  SECTION("6.4 communicator constructors");
  MPI_Comm d, s, e, cg, t, dd;
  int cmp, size, rank;
  CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  MPI_Comm_compare(d, MPI_COMM_WORLD, &cmp);
  CHECK_INT(cmp, MPI_CONGRUENT);
  MPI_Comm_compare(d, d, &cmp);
  CHECK_INT(cmp, MPI_IDENT);
  /* Split by thirds, keys reversing the order. */
  CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 3, mt_size - mt_rank, &s));
  MPI_Comm_size(s, &size);
  MPI_Comm_rank(s, &rank);
  CHECK_INT(size, (mt_size - mt_rank % 3 + 2) / 3);
  CHECK_INT(rank, (mt_size - 1 - mt_rank) / 3);
  int sum = 0;
  MPI_Allreduce(&mt_rank, &sum, 1, MPI_INT, MPI_SUM, s);
  int want = 0;
  for (int p = mt_rank % 3; p < mt_size; p += 3) want += p;
  CHECK_INT(sum, want);
  /* MPI_UNDEFINED gets MPI_COMM_NULL. */
  MPI_Comm_split(MPI_COMM_WORLD, mt_rank == 0 ? MPI_UNDEFINED : 1, 0, &e);
  CHECK((mt_rank == 0) == (e == MPI_COMM_NULL));
  if (e != MPI_COMM_NULL) MPI_Comm_free(&e);
  /* Comm_create from the reversed group: the same processes, new ranks. */
  MPI_Group w, rev;
  MPI_Comm_group(MPI_COMM_WORLD, &w);
  int r[1][3] = {{mt_size - 1, 0, -1}};
  MPI_Group_range_incl(w, 1, r, &rev);
  CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, rev, &t));
  MPI_Comm_rank(t, &rank);
  CHECK_INT(rank, mt_size - 1 - mt_rank);
  MPI_Comm_compare(t, MPI_COMM_WORLD, &cmp);
  CHECK_INT(cmp, mt_size > 1 ? MPI_SIMILAR : MPI_CONGRUENT);
  /* Comm_create_group: only the group's members call it. */
  int ev[64], ne = 0;
  for (int p = 0; p < mt_size; p += 2) ev[ne++] = p;
  MPI_Group evens;
  MPI_Group_incl(w, ne, ev, &evens);
  cg = MPI_COMM_NULL;
  if (mt_rank % 2 == 0) {
    CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 17, &cg));
    int x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, cg);
    CHECK_INT(y, ne);
    MPI_Comm_free(&cg);
  }
  /* split_type shared: the processes that can share memory with this one
     (on Toroid each rank is its own node: itself only). */
  MPI_Comm sh;
  CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh));
  MPI_Comm_size(sh, &size);
  MPI_Comm_rank(sh, &rank);
  CHECK(size >= 1 && size <= mt_size && rank >= 0 && rank < size);
#ifdef TOROID_MPI
  CHECK_INT(size, 1);
#endif
  MPI_Comm_free(&sh);
#ifdef MPI_COMM_TYPE_HW_GUIDED
  /* MPI 4.0 7.4.2, guided: the level named by mpi_hw_resource_type;
     MPI_COMM_NULL without the key, or for a level that is not there. */
  MPI_Info hw;
  MPI_Info_create(&hw);
  CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &sh));
  CHECK(sh == MPI_COMM_NULL);
  CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &sh));
  CHECK(sh == MPI_COMM_NULL);
  MPI_Info_set(hw, "mpi_hw_resource_type", "no-such-level");
  CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &sh));
  CHECK(sh == MPI_COMM_NULL);
  /* the reserved mpi_shared_memory: as MPI_COMM_TYPE_SHARED */
  MPI_Info_set(hw, "mpi_hw_resource_type", "mpi_shared_memory");
  CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hw, &sh));
  CHECK(sh != MPI_COMM_NULL);
  if (sh != MPI_COMM_NULL) {
    MPI_Comm_size(sh, &size);
#ifdef TOROID_MPI
    CHECK_INT(size, 1);
#endif
    MPI_Comm_free(&sh);
  }
  MPI_Info_free(&hw);
  /* unguided: strict subsets, the level named in the info argument and in
     the new communicator's info; a single process cannot be split. */
  MPI_Info_create(&hw);
  CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, hw, &sh));
  if (mt_size > 1) CHECK(sh != MPI_COMM_NULL);
  if (sh != MPI_COMM_NULL) {
    char level[64] = "";
    int found = 0;
    MPI_Comm_size(sh, &size);
    CHECK(size < mt_size);
    MPI_Info_get(hw, "mpi_hw_resource_type", sizeof level - 1, level, &found);
    CHECK(found && level[0]);
    MPI_Info used;
    MPI_Comm_get_info(sh, &used);
    found = 0;
    MPI_Info_get(used, "mpi_hw_resource_type", sizeof level - 1, level, &found);
    CHECK(found && level[0]);
    MPI_Info_free(&used);
    /* one level down there is nothing left to split */
    MPI_Comm below;
    CHECK_RC(MPI_Comm_split_type(sh, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &below));
    if (size == 1) CHECK(below == MPI_COMM_NULL);
    if (below != MPI_COMM_NULL) MPI_Comm_free(&below);
    MPI_Comm_free(&sh);
  }
  MPI_Info_free(&hw);
#endif
  /* idup, with a collective on the parent started before it. */
  MPI_Request rq[2];
  int x = mt_rank, y = 0;
  MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_MAX, d, &rq[0]);
  CHECK_RC(MPI_Comm_idup(d, &dd, &rq[1]));
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  CHECK_INT(y, mt_size - 1);
  MPI_Comm_compare(dd, d, &cmp);
  CHECK_INT(cmp, MPI_CONGRUENT);
  int flag = 1;
  MPI_Comm_test_inter(dd, &flag);
  CHECK(!flag);
  apart(d, dd, 5);
  MPI_Comm fs[] = {d, s, t, dd};
  for (int i = 0; i < 4; ++i) {
    CHECK_RC(MPI_Comm_free(&fs[i]));
    CHECK(fs[i] == MPI_COMM_NULL);
  }
  MPI_Group_free(&w);
  MPI_Group_free(&rev);
  MPI_Group_free(&evens);
}

/* Works on c: an allreduce over it and a message around its ring. */
static void works(MPI_Comm c, const char* what) {
  int n = 0, r = 0, sum = 0;
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &r);
  CHECK_RC(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK_MSG(sum == n * (n - 1) / 2, "%s: allreduce gave %d", what, sum);
  int got = -1;
  CHECK_RC(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 3, &got, 1, MPI_INT, (r + n - 1) % n, 3, c, MPI_STATUS_IGNORE));
  CHECK_MSG(got == (r + n - 1) % n, "%s: got %d from the previous rank", what, got);
}

static void idups_at_once(void) {
  SECTION("6.4.2 MPI_Comm_idup of several communicators at once, in any order");
  /* Two communicators of the same members, duplicated in opposite orders
   * on even and odd ranks: both agreements run at once on every node. */
  MPI_Comm a, b, a2 = MPI_COMM_NULL, b2 = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  MPI_Request rq[2];
  if (mt_rank % 2 == 0) {
    CHECK_RC(MPI_Comm_idup(a, &a2, &rq[0]));
    CHECK_RC(MPI_Comm_idup(b, &b2, &rq[1]));
  } else {
    CHECK_RC(MPI_Comm_idup(b, &b2, &rq[1]));
    CHECK_RC(MPI_Comm_idup(a, &a2, &rq[0]));
  }
  CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  if (a2 != MPI_COMM_NULL && b2 != MPI_COMM_NULL) {
    works(a2, "the idup of a");
    works(b2, "the idup of b");
    apart(a2, b2, 9);  /* distinct contexts */
    MPI_Comm_free(&a2);
    MPI_Comm_free(&b2);
  }
  /* A ring of two-member communicators, each rank in two of them (its own
   * and its left neighbour's), every one duplicated at once. */
  if (mt_size > 2) {
    MPI_Group w, pair;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Comm mine = MPI_COMM_NULL, left = MPI_COMM_NULL, mine2 = MPI_COMM_NULL, left2 = MPI_COMM_NULL;
    for (int i = 0; i < mt_size; ++i) {
      int ranks[2] = {i, (i + 1) % mt_size};
      if (mt_rank != ranks[0] && mt_rank != ranks[1]) continue;
      MPI_Group_incl(w, 2, ranks, &pair);
      CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, pair, i, mt_rank == i ? &mine : &left));
      MPI_Group_free(&pair);
    }
    CHECK_RC(MPI_Comm_idup(mine, &mine2, &rq[0]));
    CHECK_RC(MPI_Comm_idup(left, &left2, &rq[1]));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    if (mine2 != MPI_COMM_NULL && left2 != MPI_COMM_NULL) {
      /* in the order of the pairs (blocking collectives on a ring of
       * communicators taken in any other order would wait in a cycle) */
      if (mt_rank == 0) works(mine2, "the idup of this rank's pair");
      works(left2, "the idup of the left neighbour's pair");
      if (mt_rank != 0) works(mine2, "the idup of this rank's pair");
      MPI_Comm_free(&mine2);
      MPI_Comm_free(&left2);
    }
    MPI_Comm_free(&mine);
    MPI_Comm_free(&left);
    MPI_Group_free(&w);
  }
  /* An idup in flight on odd ranks while every rank makes a communicator
   * with MPI_Comm_create_group (blocking); even ranks start the idup after. */
  MPI_Group all;
  MPI_Comm_group(MPI_COMM_WORLD, &all);
  MPI_Comm g = MPI_COMM_NULL, d = MPI_COMM_NULL;
  if (mt_rank % 2) CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq[0]));
  CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, all, 0, &g));
  if (mt_rank % 2 == 0) CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq[0]));
  CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
  if (g != MPI_COMM_NULL && d != MPI_COMM_NULL) {
    works(g, "the group's communicator");
    works(d, "the idup of MPI_COMM_WORLD");
    MPI_Comm_free(&g);
    MPI_Comm_free(&d);
  }
  MPI_Group_free(&all);
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

static void many(int count) {
  SECTION("6.4 contexts: many communicators made and freed");
  /* At most 64 alive at once; every live one keeps working. */
  MPI_Comm live[64];
  int n = 0;
  long made = 0;
  for (int i = 0; i < count; ++i) {
    if (n == 64 || (n > 0 && i % 3 == 2)) {
      int x = i, y = 0;
      MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, live[n - 1]);
      CHECK_INT(y, i * mt_size);
      MPI_Comm_free(&live[--n]);
    } else {
      MPI_Comm parent = n ? live[n - 1] : MPI_COMM_WORLD;
      CHECK_RC(MPI_Comm_dup(parent, &live[n]));
      ++n;
      ++made;
    }
  }
  while (n) MPI_Comm_free(&live[--n]);
  CHECK(made >= count / 2);
}

static void intercomms(void) {
  SECTION("6.6 intercommunicators");
  if (mt_size < 2) return;
  /* Evens and odds, leaders 0 and 1, joined over MPI_COMM_WORLD. */
  MPI_Comm half, inter, merged, merged2, idup;
  MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half);
  CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, mt_rank % 2 ? 0 : 1, 33, &inter));
  int flag = 0, rsize = 0, size = 0;
  MPI_Comm_test_inter(inter, &flag);
  CHECK(flag);
  MPI_Comm_remote_size(inter, &rsize);
  MPI_Comm_size(inter, &size);
  const int nev = (mt_size + 1) / 2, nodd = mt_size / 2;
  CHECK_INT(size, mt_rank % 2 ? nodd : nev);
  CHECK_INT(rsize, mt_rank % 2 ? nev : nodd);
  MPI_Group rg;
  MPI_Comm_remote_group(inter, &rg);
  int r0 = 0, w = -1;
  MPI_Group wg;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_translate_ranks(rg, 1, &r0, wg, &w);
  CHECK_INT(w, mt_rank % 2 ? 0 : 1);
  /* Point-to-point across: local rank i talks to remote rank i (if there). */
  int lrank;
  MPI_Comm_rank(inter, &lrank);
  if (lrank < rsize) {
    int out = mt_rank, in = -1;
    MPI_Status st;
    MPI_Sendrecv(&out, 1, MPI_INT, lrank, 9, &in, 1, MPI_INT, lrank, 9, inter, &st);
    CHECK_INT(in, mt_rank % 2 ? 2 * lrank : 2 * lrank + 1);
    CHECK_INT(st.MPI_SOURCE, lrank);
  }
  /* 5.11: scans are defined on intracommunicators only. */
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  int scanned = 0;
  CHECK_CLASS(MPI_Scan(&mt_rank, &scanned, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
  /* Merged: odds high, so evens come first. */
  CHECK_RC(MPI_Intercomm_merge(inter, mt_rank % 2, &merged));
  int mrank, msize;
  MPI_Comm_rank(merged, &mrank);
  MPI_Comm_size(merged, &msize);
  CHECK_INT(msize, mt_size);
  CHECK_INT(mrank, mt_rank % 2 ? nev + mt_rank / 2 : mt_rank / 2);
  int sum = 0;
  MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
  CHECK_INT(sum, mt_size * (mt_size - 1) / 2);
  CHECK_RC(MPI_Intercomm_merge(inter, !(mt_rank % 2), &merged2));
  MPI_Comm_rank(merged2, &mrank);
  CHECK_INT(mrank, mt_rank % 2 ? mt_rank / 2 : nodd + mt_rank / 2);
  CHECK_RC(MPI_Comm_dup(inter, &idup));
  MPI_Comm_test_inter(idup, &flag);
  CHECK(flag);
  MPI_Comm_free(&idup);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&merged2);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Group_free(&rg);
  MPI_Group_free(&wg);
}

static int copies, deletes;
static int copy_fn(MPI_Comm c, int kv, void* extra, void* in, void* out, int* flag) {
  (void)c;
  (void)kv;
  ++copies;
  *(void**)out = (char*)in + *(int*)extra; /* the copy's value differs */
  *flag = 1;
  return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int kv, void* val, void* extra) {
  (void)c;
  (void)kv;
  (void)val;
  (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}

static void attributes(void) {
  SECTION("6.7 attributes");
  int* tag_ub;
  int flag = 0;
  CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && *tag_ub >= 32767);
  int* host;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &host, &flag);
  CHECK(flag && (*host == MPI_PROC_NULL || (*host >= 0 && *host < mt_size)));
  int* io;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &io, &flag);
  CHECK(flag && (*io == MPI_ANY_SOURCE || *io == MPI_PROC_NULL || (*io >= 0 && *io < mt_size)));
  int* wg;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wg, &flag);
  CHECK(!flag || *wg == 0 || *wg == 1);
  int step = 8, kv, kv2;
  CHECK_RC(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, &step));
  CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv2, NULL));
  MPI_Comm c, c2;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  static char base[64];
  CHECK_RC(MPI_Comm_set_attr(c, kv, base));
  CHECK_RC(MPI_Comm_set_attr(c, kv2, base + 1));
  void* v;
  MPI_Comm_get_attr(c, kv, &v, &flag);
  CHECK(flag && v == base);
  copies = deletes = 0;
  MPI_Comm_dup(c, &c2);
  CHECK_INT(copies, 1);
  MPI_Comm_get_attr(c2, kv, &v, &flag);
  CHECK(flag && v == base + 8);
  MPI_Comm_get_attr(c2, kv2, &v, &flag);
  CHECK(!flag); /* the null copy function does not copy */
  CHECK_RC(MPI_Comm_set_attr(c2, kv, base + 2)); /* replacing deletes the old value */
  CHECK_INT(deletes, 1);
  CHECK_RC(MPI_Comm_delete_attr(c2, kv));
  CHECK_INT(deletes, 2);
  MPI_Comm_get_attr(c2, kv, &v, &flag);
  CHECK(!flag);
  MPI_Comm_free(&c2);
  MPI_Comm_free(&c); /* deletes its attribute */
  CHECK_INT(deletes, 3);
  CHECK_RC(MPI_Comm_free_keyval(&kv));
  CHECK_INT(kv, MPI_KEYVAL_INVALID);
  MPI_Comm_free_keyval(&kv2);
  /* On datatypes too. */
  int tkv;
  MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &tkv, NULL);
  MPI_Datatype t, t2;
  MPI_Type_contiguous(2, MPI_INT, &t);
  MPI_Type_set_attr(t, tkv, base + 5);
  MPI_Type_dup(t, &t2);
  MPI_Type_get_attr(t2, tkv, &v, &flag);
  CHECK(flag && v == base + 5);
  MPI_Type_free(&t);
  MPI_Type_free(&t2);
  MPI_Type_free_keyval(&tkv);
}

static void names(void) {
  SECTION("6.8 names");
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14);
  MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
  CHECK(!strcmp(name, "MPI_COMM_SELF"));
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Comm_get_name(d, name, &len);
  CHECK_INT(len, 0);
  MPI_Comm_set_name(d, "mine");
  MPI_Comm_get_name(d, name, &len);
  CHECK(!strcmp(name, "mine") && len == 4);
  MPI_Comm_free(&d);
  int size;
  MPI_Comm_size(MPI_COMM_SELF, &size);
  CHECK_INT(size, 1);
  int x = 3, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
  CHECK_INT(y, 3);
}

/* MPI 3.1 6.4.3: MPI_Comm_free marks the communicator; operations pending
   on it complete normally. Rank 1 frees a communicator with a receive
   posted on it, and only then lets rank 0 send (MPICH's comm/cmfree2). */
static void free_with_pending(void) {
  SECTION("6.4.3 a freed communicator's pending receive completes");
  if (mt_size < 2) return;
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  int v = -1;
  if (mt_rank == 1) {
    MPI_Request req;
    MPI_Irecv(&v, 1, MPI_INT, 0, 4, c, &req);
    CHECK_RC(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_INT(v, 42);
    CHECK_INT(st.MPI_SOURCE, 0);
  } else if (mt_rank == 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    v = 42;
    CHECK_RC(MPI_Ssend(&v, 1, MPI_INT, 1, 4, c));
    MPI_Comm_free(&c);
  } else {
    MPI_Comm_free(&c);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int count = argc > 1 ? atoi(argv[1]) : 3000;
  groups();
  constructors();
  intercomms();
  attributes();
  names();
  free_with_pending();
  idups_at_once();
  many(count);
  return mt_finish("comm");
}
