/* MPI 3.1 chapter 4, datatypes: every constructor (4.1.2, 4.1.3 subarray,
 * 4.1.4 darray, 4.1.7 resized, 4.1.10 dup), size, extent, true extent and
 * bounds (4.1.5-4.1.8), envelope and contents (4.1.13), names (6.8),
 * sends and receives of non-contiguous data and partial elements
 * (4.1.11), pack and unpack (4.2), external32 (4.3). */
#include <stddef.h>
#include <stdint.h>

#include "mpitest.h"

static void extents(void) {
  SECTION("4.1.5-4.1.8 size, extent, true extent");
  MPI_Aint lb, ext, tlb, text;
  int size;
  MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext);
  struct { double d; int i; } di;
  CHECK_INT(ext, sizeof di);
  MPI_Type_size(MPI_DOUBLE_INT, &size);
  CHECK_INT(size, sizeof(double) + sizeof(int));
  MPI_Datatype v, hv, idx, hidx, blk, hblk, st, res, dup, cont;
  MPI_Type_vector(3, 2, 4, MPI_INT, &v); /* xx..xx..xx */
  MPI_Type_size(v, &size);
  CHECK_INT(size, 6 * 4);
  MPI_Type_get_extent(v, &lb, &ext);
  CHECK_INT(lb, 0);
  CHECK_INT(ext, (2 * 4 + 2) * 4);
  MPI_Type_create_hvector(2, 1, 100, MPI_DOUBLE, &hv);
  MPI_Type_get_extent(hv, &lb, &ext);
  CHECK_INT(ext, 112); /* 108, rounded up to double's alignment (4.1.6) */
  int bl[3] = {1, 2, 1}, disp[3] = {5, 0, 9};
  MPI_Type_indexed(3, bl, disp, MPI_INT, &idx);
  MPI_Type_get_extent(idx, &lb, &ext);
  CHECK_INT(lb, 0);
  CHECK_INT(ext, 10 * 4);
  MPI_Aint hd[2] = {-8, 16};
  int hbl[2] = {1, 1};
  MPI_Type_create_hindexed(2, hbl, hd, MPI_INT, &hidx);
  MPI_Type_get_extent(hidx, &lb, &ext);
  CHECK_INT(lb, -8);
  CHECK_INT(ext, 28);
  int bd[2] = {0, 3};
  MPI_Type_create_indexed_block(2, 2, bd, MPI_SHORT, &blk);
  MPI_Type_size(blk, &size);
  CHECK_INT(size, 8);
  MPI_Aint bhd[2] = {0, 12};
  MPI_Type_create_hindexed_block(2, 1, bhd, MPI_FLOAT, &hblk);
  MPI_Type_get_extent(hblk, &lb, &ext);
  CHECK_INT(ext, 16);
  /* struct { char c; double d; }: the extent is padded to double's alignment. */
  struct { char c; double d; } cd;
  int sbl[2] = {1, 1};
  MPI_Aint sd[2] = {offsetof(__typeof__(cd), c), offsetof(__typeof__(cd), d)};
  MPI_Datatype stt[2] = {MPI_CHAR, MPI_DOUBLE};
  MPI_Type_create_struct(2, sbl, sd, stt, &st);
  MPI_Type_get_extent(st, &lb, &ext);
  CHECK_INT(ext, sizeof cd);
  MPI_Type_size(st, &size);
  CHECK_INT(size, 9);
  MPI_Type_get_true_extent(st, &tlb, &text);
  CHECK_INT(tlb, 0);
  CHECK_INT(text, 16);
  MPI_Type_create_resized(MPI_INT, -4, 20, &res);
  MPI_Type_get_extent(res, &lb, &ext);
  CHECK_INT(lb, -4);
  CHECK_INT(ext, 20);
  MPI_Type_get_true_extent(res, &tlb, &text);
  CHECK_INT(tlb, 0);
  CHECK_INT(text, 4);
  MPI_Type_dup(v, &dup);
  MPI_Type_get_extent(dup, &lb, &ext);
  CHECK_INT(ext, 40);
  MPI_Type_contiguous(0, MPI_INT, &cont);
  MPI_Type_size(cont, &size);
  CHECK_INT(size, 0);
  MPI_Count csize, clb, cext;
  MPI_Type_size_x(v, &csize);
  CHECK_INT(csize, 24);
  MPI_Type_get_extent_x(hidx, &clb, &cext);
  CHECK_INT(clb, -8);
  MPI_Type_get_true_extent_x(v, &clb, &cext);
  CHECK_INT(cext, 40);
  MPI_Datatype all[] = {v, hv, idx, hidx, blk, hblk, st, res, dup, cont};
  for (int i = 0; i < 10; ++i) {
    CHECK_RC(MPI_Type_free(&all[i]));
    CHECK(all[i] == MPI_DATATYPE_NULL);
  }
}

static void envelope(void) {
  SECTION("4.1.13 envelope and contents");
  int ni, na, nd, comb;
  MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
  CHECK_INT(comb, MPI_COMBINER_NAMED);
  MPI_Datatype v;
  MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &v);
  MPI_Type_get_envelope(v, &ni, &na, &nd, &comb);
  CHECK_INT(comb, MPI_COMBINER_VECTOR);
  CHECK_INT(ni, 3);
  CHECK_INT(na, 0);
  CHECK_INT(nd, 1);
  int ints[3];
  MPI_Aint aints[1];
  MPI_Datatype types[1];
  CHECK_RC(MPI_Type_get_contents(v, 3, 0, 1, ints, aints, types));
  CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_DOUBLE);
  MPI_Datatype s;
  int bl[2] = {2, 1};
  MPI_Aint d[2] = {0, 64};
  MPI_Datatype t[2] = {v, MPI_INT};
  MPI_Type_create_struct(2, bl, d, t, &s);
  MPI_Type_get_envelope(s, &ni, &na, &nd, &comb);
  CHECK_INT(comb, MPI_COMBINER_STRUCT);
  CHECK(ni == 3 && na == 2 && nd == 2);
  int si[3];
  MPI_Aint sa[2];
  MPI_Datatype sdt[2];
  MPI_Type_get_contents(s, 3, 2, 2, si, sa, sdt);
  CHECK(si[0] == 2 && si[1] == 2 && si[2] == 1 && sa[1] == 64 && sdt[1] == MPI_INT);
  int vi;
  MPI_Type_get_envelope(sdt[0], &vi, &na, &nd, &comb);
  CHECK_INT(comb, MPI_COMBINER_VECTOR);
  MPI_Type_free(&sdt[0]); /* a derived type from get_contents is the program's to free */
  MPI_Datatype r;
  MPI_Type_create_resized(MPI_INT, 0, 16, &r);
  MPI_Type_get_envelope(r, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_RESIZED && na == 2 && nd == 1);
  MPI_Datatype du;
  MPI_Type_dup(MPI_FLOAT, &du);
  MPI_Type_get_envelope(du, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_DUP && nd == 1);
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_Type_get_name(MPI_DOUBLE, name, &len);
  CHECK(!strcmp(name, "MPI_DOUBLE"));
  /* Synonymous layouts keep their own names (MPICH's datatype/typename). */
  MPI_Type_get_name(MPI_C_COMPLEX, name, &len);
  CHECK(!strcmp(name, "MPI_C_COMPLEX"));
  MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len);
  CHECK(!strcmp(name, "MPI_C_FLOAT_COMPLEX"));
  MPI_Type_get_name(MPI_CXX_LONG_DOUBLE_COMPLEX, name, &len);
  CHECK(!strcmp(name, "MPI_CXX_LONG_DOUBLE_COMPLEX"));
  MPI_Aint sz_a, sz_b;
  MPI_Type_get_extent(MPI_CXX_DOUBLE_COMPLEX, &sz_b, &sz_a);
  CHECK(sz_a == 2 * (MPI_Aint)sizeof(double));
  MPI_Type_set_name(v, "six doubles");
  MPI_Type_get_name(v, name, &len);
  CHECK(!strcmp(name, "six doubles") && len == 11);
  MPI_Type_free(&v);
  MPI_Type_free(&s);
  MPI_Type_free(&r);
  MPI_Type_free(&du);
}

static void arrays(void) {
  SECTION("4.1.3-4.1.4 subarray and darray");
  /* A 2x3 block at (1, 2) of a 4x6 array of ints, C order. */
  int sizes[2] = {4, 6}, sub[2] = {2, 3}, start[2] = {1, 2};
  MPI_Datatype sa;
  MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &sa);
  MPI_Type_commit(&sa);
  MPI_Aint lb, ext;
  MPI_Type_get_extent(sa, &lb, &ext);
  CHECK_INT(ext, 4 * 6 * 4);
  int a[24], packed[6], pos = 0;
  for (int i = 0; i < 24; ++i) a[i] = i;
  MPI_Pack(a, 1, sa, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK_INT(pos, 24);
  int want[6] = {8, 9, 10, 14, 15, 16};
  for (int i = 0; i < 6; ++i) CHECK_INT(packed[i], want[i]);
  /* Fortran order: the first index is fastest. */
  MPI_Datatype fa;
  int fs[2] = {6, 4}, fsub[2] = {3, 2}, fst[2] = {2, 1};
  MPI_Type_create_subarray(2, fs, fsub, fst, MPI_ORDER_FORTRAN, MPI_INT, &fa);
  MPI_Type_commit(&fa);
  pos = 0;
  MPI_Pack(a, 1, fa, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  for (int i = 0; i < 6; ++i) CHECK_INT(packed[i], want[i]);
  /* darray: 8 elements over 2 processes, block and cyclic. */
  int g[1] = {8}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
  MPI_Datatype db, dc;
  MPI_Type_create_darray(2, 1, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &db);
  MPI_Type_commit(&db);
  pos = 0;
  MPI_Pack(a, 1, db, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK_INT(pos, 16);
  for (int i = 0; i < 4; ++i) CHECK_INT(packed[i], 4 + i);
  dist[0] = MPI_DISTRIBUTE_CYCLIC;
  MPI_Type_create_darray(2, 1, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &dc);
  MPI_Type_commit(&dc);
  pos = 0;
  MPI_Pack(a, 1, dc, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  for (int i = 0; i < 4; ++i) CHECK_INT(packed[i], 1 + 2 * i);
  MPI_Type_get_extent(dc, &lb, &ext);
  CHECK_INT(ext, 32);
  MPI_Type_free(&sa);
  MPI_Type_free(&fa);
  MPI_Type_free(&db);
  MPI_Type_free(&dc);
}

static void transfer(void) {
  SECTION("4.1.11 non-contiguous sends and receives, partial elements");
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  /* Row of a 5x5 matrix sent as a column of the receiver's. */
  double m[25], r[25];
  for (int i = 0; i < 25; ++i) {
    m[i] = mt_rank * 100 + i;
    r[i] = -1;
  }
  MPI_Datatype col;
  MPI_Type_vector(5, 1, 5, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  MPI_Request q;
  MPI_Irecv(r + 2, 1, col, prev, 1, MPI_COMM_WORLD, &q);
  MPI_Send(m + 5, 5, MPI_DOUBLE, next, 1, MPI_COMM_WORLD);
  MPI_Status st;
  MPI_Wait(&q, &st);
  for (int i = 0; i < 5; ++i) CHECK(r[2 + 5 * i] == prev * 100 + 5 + i);
  CHECK(r[0] == -1 && r[3] == -1);
  int n;
  MPI_Get_count(&st, col, &n);
  CHECK_INT(n, 1);
  /* A struct of (int, double) pairs, and a partial element. */
  struct P {
    int i;
    double d;
  } ps[4], pr[4];
  int bl[2] = {1, 1};
  MPI_Aint dp[2] = {offsetof(struct P, i), offsetof(struct P, d)};
  MPI_Datatype tt[2] = {MPI_INT, MPI_DOUBLE}, pt;
  MPI_Type_create_struct(2, bl, dp, tt, &pt);
  MPI_Type_commit(&pt);
  for (int k = 0; k < 4; ++k) {
    ps[k].i = mt_rank + k;
    ps[k].d = mt_rank + k + 0.25;
  }
  MPI_Sendrecv(ps, 4, pt, next, 2, pr, 4, pt, prev, 2, MPI_COMM_WORLD, &st);
  for (int k = 0; k < 4; ++k) CHECK(pr[k].i == prev + k && pr[k].d == prev + k + 0.25);
  /* 5 ints into a type of (int, int) pairs: 2 whole pairs and a half. */
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_INT, &two);
  MPI_Type_commit(&two);
  int five[5] = {1, 2, 3, 4, 5}, six[6] = {0};
  MPI_Sendrecv(five, 5, MPI_INT, next, 3, six, 3, two, prev, 3, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, two, &n);
  CHECK_INT(n, MPI_UNDEFINED);
  MPI_Get_elements(&st, two, &n);
  CHECK_INT(n, 5);
  MPI_Count cn;
  MPI_Get_elements_x(&st, MPI_INT, &cn);
  CHECK_INT(cn, 5);
  CHECK_INT(six[4], 5);
  MPI_Type_free(&col);
  MPI_Type_free(&pt);
  MPI_Type_free(&two);
}

static void packing(void) {
  SECTION("4.2-4.3 pack, unpack, external32");
  char buf[256];
  int pos = 0, size = 0;
  int a[3] = {1, 2, 3};
  double d = 2.5;
  MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &size);
  CHECK(size >= 12);
  CHECK_RC(MPI_Pack(a, 3, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  CHECK_RC(MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  /* Packed data travels as MPI_PACKED and unpacks in the same order. */
  const int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
  char in[256];
  MPI_Status st;
  MPI_Sendrecv(buf, pos, MPI_PACKED, next, 4, in, sizeof in, MPI_PACKED, prev, 4, MPI_COMM_WORLD, &st);
  int got = 0;
  MPI_Get_count(&st, MPI_PACKED, &got);
  CHECK_INT(got, pos);
  int b[3];
  double e;
  int upos = 0;
  CHECK_RC(MPI_Unpack(in, got, &upos, b, 3, MPI_INT, MPI_COMM_WORLD));
  CHECK_RC(MPI_Unpack(in, got, &upos, &e, 1, MPI_DOUBLE, MPI_COMM_WORLD));
  CHECK(b[2] == 3 && e == 2.5);
  /* external32 is big-endian. */
  MPI_Aint ep = 0, esz = 0;
  int x = 0x01020304;
  unsigned char ext[8];
  MPI_Pack_external_size("external32", 1, MPI_INT, &esz);
  CHECK_INT(esz, 4);
  CHECK_RC(MPI_Pack_external("external32", &x, 1, MPI_INT, ext, sizeof ext, &ep));
  CHECK(ext[0] == 1 && ext[3] == 4 && ep == 4);
  int y = 0;
  ep = 0;
  CHECK_RC(MPI_Unpack_external("external32", ext, 4, &ep, &y, 1, MPI_INT));
  CHECK_INT(y, x);
}

static void addresses(void) {
  SECTION("4.1.5 addresses");
  int arr[10];
  MPI_Aint a0, a5;
  MPI_Get_address(&arr[0], &a0);
  MPI_Get_address(&arr[5], &a5);
  CHECK_INT(MPI_Aint_diff(a5, a0), 5 * sizeof(int));
  CHECK(MPI_Aint_add(a0, 20) == a5);
  /* Absolute addresses with MPI_BOTTOM. */
  MPI_Datatype abs;
  int bl[2] = {1, 1};
  MPI_Aint d[2] = {a0, a5};
  MPI_Type_create_hindexed(2, bl, d, MPI_INT, &abs);
  MPI_Type_commit(&abs);
  arr[0] = 11;
  arr[5] = 55;
  int out[2], pos = 0;
  MPI_Pack(MPI_BOTTOM, 1, abs, out, sizeof out, &pos, MPI_COMM_WORLD);
  CHECK(out[0] == 11 && out[1] == 55);
  MPI_Type_free(&abs);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  extents();
  envelope();
  arrays();
  transfer();
  packing();
  addresses();
  return mt_finish("datatypes");
}
