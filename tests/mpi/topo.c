/* MPI 3.1 chapter 7, process topologies: MPI_Dims_create (7.5.2),
 * Cartesian grids and their queries, shifts and sub-grids (7.5.1, 7.5.4-
 * 7.5.6), graphs (7.5.3, 7.5.5), distributed graphs (7.5.4), topology
 * tests (7.5.5), and the neighbourhood collectives, blocking and not, on
 * both (7.6-7.7). */
#include "mpitest.h"

static void dims(void) {
  SECTION("7.5.2 MPI_Dims_create");
  int d[3] = {0, 0, 0};
  MPI_Dims_create(8, 3, d);
  CHECK(d[0] == 2 && d[1] == 2 && d[2] == 2);
  int e[2] = {0, 0};
  MPI_Dims_create(12, 2, e);
  CHECK(e[0] == 4 && e[1] == 3);
  int f[3] = {0, 3, 0};
  MPI_Dims_create(6, 3, f);
  CHECK(f[0] == 2 && f[1] == 3 && f[2] == 1);
  int g[2] = {0, 0};
  MPI_Dims_create(7, 2, g);
  CHECK(g[0] == 7 && g[1] == 1);
  /* As close to each other as possible (MPICH's topo/dims5): 72 in 2-D
     is 9 x 8, not the 12 x 6 of handing out prime factors greedily. */
  int k[2] = {0, 0};
  MPI_Dims_create(72, 2, k);
  CHECK(k[0] == 9 && k[1] == 8);
  MPI_Dims_create(180, 2, (k[0] = k[1] = 0, k));
  CHECK(k[0] == 15 && k[1] == 12);
  int m[3] = {0, 0, 0};
  MPI_Dims_create(64 * 27, 3, m);
  CHECK(m[0] == 12 && m[1] == 12 && m[2] == 12);
  /* The smallest spread, not the smallest largest factor: 34425 in 3-D is
     51 x 27 x 25 (26 apart), not 45 x 45 x 17 (28); of equal spreads the
     largest smallest factor (5040: 21 x 16 x 15, not 20 x 18 x 14), then the
     largest second smallest (218736 in 5-D: 31 x 14 x 9 x 8 x 7, not
     31 x 12 x 12 x 7 x 7). */
  int s[5] = {0, 0, 0, 0, 0};
  MPI_Dims_create(34425, 3, s);
  CHECK_MSG(s[0] == 51 && s[1] == 27 && s[2] == 25, "34425: %d x %d x %d", s[0], s[1], s[2]);
  s[0] = s[1] = s[2] = 0;
  MPI_Dims_create(5040, 3, s);
  CHECK_MSG(s[0] == 21 && s[1] == 16 && s[2] == 15, "5040: %d x %d x %d", s[0], s[1], s[2]);
  s[0] = s[1] = s[2] = 0;
  MPI_Dims_create(218736, 5, s);
  CHECK_MSG(s[0] == 31 && s[1] == 14 && s[2] == 9 && s[3] == 8 && s[4] == 7, "218736: %d x %d x %d x %d x %d", s[0],
            s[1], s[2], s[3], s[4]);
  int h[3] = {0, 0, 0};
  MPI_Dims_create(mt_size, 3, h);
  CHECK(h[0] * h[1] * h[2] == mt_size && h[0] >= h[1] && h[1] >= h[2]);
}

static void cart(void) {
  SECTION("7.5.1, 7.5.4-7.5.6 Cartesian topologies");
  int d[3] = {0, 0, 0}, per[3] = {1, 1, 0};
  MPI_Dims_create(mt_size, 3, d);
  MPI_Comm c;
  CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 3, d, per, 1, &c));
  int status = -1;
  MPI_Topo_test(c, &status);
  CHECK_INT(status, MPI_CART);
  MPI_Topo_test(MPI_COMM_WORLD, &status);
  CHECK_INT(status, MPI_UNDEFINED);
  int nd = 0;
  MPI_Cartdim_get(c, &nd);
  CHECK_INT(nd, 3);
  int rank, gd[3], gp[3], co[3];
  MPI_Comm_rank(c, &rank);
  MPI_Cart_get(c, 3, gd, gp, co);
  CHECK(gd[0] == d[0] && gd[1] == d[1] && gd[2] == d[2] && gp[0] == 1 && gp[2] == 0);
  int cc[3], back = -1;
  MPI_Cart_coords(c, rank, 3, cc);
  CHECK(cc[0] == co[0] && cc[1] == co[1] && cc[2] == co[2]);
  MPI_Cart_rank(c, co, &back);
  CHECK_INT(back, rank);
  /* Row-major: the last coordinate varies fastest. */
  CHECK_INT(rank, (co[0] * d[1] + co[1]) * d[2] + co[2]);
  /* Shifts: periodic dimensions wrap, the others end in MPI_PROC_NULL. */
  for (int dim = 0; dim < 3; ++dim) {
    int src, dst;
    MPI_Cart_shift(c, dim, 1, &src, &dst);
    int up[3] = {co[0], co[1], co[2]}, down[3] = {co[0], co[1], co[2]};
    up[dim] += 1;
    down[dim] -= 1;
    int want_dst = MPI_PROC_NULL, want_src = MPI_PROC_NULL;
    if (per[dim] || up[dim] < d[dim]) MPI_Cart_rank(c, up, &want_dst);
    if (per[dim] || down[dim] >= 0) MPI_Cart_rank(c, down, &want_src);
    CHECK_INT(dst, want_dst);
    CHECK_INT(src, want_src);
    /* A halo exchange along the dimension moves each rank's number one step. */
    int in = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, dst, dim, &in, 1, MPI_INT, src, dim, c, MPI_STATUS_IGNORE);
    CHECK_INT(in, src == MPI_PROC_NULL ? -1 : src);
  }
  int wrap[3] = {co[0] + d[0], co[1] - d[1], co[2]};
  MPI_Cart_rank(c, wrap, &back);
  CHECK_INT(back, rank);
  /* Sub-grids: the lines along dimension 0, and the planes of dims 1 and 2. */
  int keep0[3] = {1, 0, 0}, keep12[3] = {0, 1, 1};
  MPI_Comm line, plane;
  CHECK_RC(MPI_Cart_sub(c, keep0, &line));
  CHECK_RC(MPI_Cart_sub(c, keep12, &plane));
  int ls, lr, ps, pr;
  MPI_Comm_size(line, &ls);
  MPI_Comm_rank(line, &lr);
  MPI_Comm_size(plane, &ps);
  MPI_Comm_rank(plane, &pr);
  CHECK_INT(ls, d[0]);
  CHECK_INT(lr, co[0]);
  CHECK_INT(ps, d[1] * d[2]);
  CHECK_INT(pr, co[1] * d[2] + co[2]);
  MPI_Cartdim_get(line, &nd);
  CHECK_INT(nd, 1);
  int sum = 0, want = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, line);
  for (int x = 0; x < d[0]; ++x) want += (x * d[1] + co[1]) * d[2] + co[2];
  CHECK_INT(sum, want);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, plane);
  want = 0;
  for (int y = 0; y < d[1]; ++y)
    for (int z = 0; z < d[2]; ++z) want += (co[0] * d[1] + y) * d[2] + z;
  CHECK_INT(sum, want);
  /* Non-blocking collectives on the line and the plane at once. */
  MPI_Request r[2];
  int a = 1, b = 1, sa = 0, sb = 0;
  MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, line, &r[0]);
  MPI_Iallreduce(&b, &sb, 1, MPI_INT, MPI_SUM, plane, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  CHECK(sa == ls && sb == ps);
  int none[3] = {0, 0, 0};
  MPI_Comm point;
  MPI_Cart_sub(c, none, &point);
  MPI_Comm_size(point, &ls);
  CHECK_INT(ls, 1);
  int nr = -1;
  MPI_Cart_map(MPI_COMM_WORLD, 3, d, per, &nr);
  CHECK(nr >= 0 && nr < mt_size);
  MPI_Comm_free(&point);
  MPI_Comm_free(&line);
  MPI_Comm_free(&plane);
  MPI_Comm_free(&c);
  /* A grid smaller than the communicator: the others get MPI_COMM_NULL. */
  if (mt_size > 1) {
    int one[1] = {mt_size - 1}, p1[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, one, p1, 0, &c);
    CHECK((mt_rank == mt_size - 1) == (c == MPI_COMM_NULL));
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
}

static void neighbours_cart(void) {
  SECTION("7.6 neighbourhood collectives on a Cartesian grid");
  /* A ring (periodic 1-D) and a non-periodic line of the same ranks. */
  for (int periodic = 0; periodic < 2; ++periodic) {
    int d[1] = {mt_size}, p[1] = {periodic};
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, 1, d, p, 0, &c);
    int rank;
    MPI_Comm_rank(c, &rank);
    int src, dst;
    MPI_Cart_shift(c, 0, 1, &src, &dst);
    /* Neighbours in order: the -1 side, then the +1 side. */
    int got[2] = {-7, -7};
    CHECK_RC(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, c));
    CHECK_INT(got[0], src == MPI_PROC_NULL ? -7 : src);
    CHECK_INT(got[1], dst == MPI_PROC_NULL ? -7 : dst);
    /* alltoall: block 0 goes to the -1 neighbour, which receives it in its +1 block. */
    int out[2] = {rank * 10, rank * 10 + 1}, in[2] = {-7, -7};
    MPI_Request r;
    CHECK_RC(MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c, &r));
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_INT(in[0], src == MPI_PROC_NULL ? -7 : src * 10 + 1);
    CHECK_INT(in[1], dst == MPI_PROC_NULL ? -7 : dst * 10);
    int cnt[2] = {1, 2}, dsp[2] = {0, 1}, v[3] = {-7, -7, -7};
    int two[2] = {rank, rank};
    int rc2[2] = {2, 2}, rd2[2] = {0, 2}, w[4] = {-7, -7, -7, -7};
    (void)cnt;
    (void)dsp;
    (void)v;
    CHECK_RC(MPI_Neighbor_allgatherv(two, 2, MPI_INT, w, rc2, rd2, MPI_INT, c));
    if (src != MPI_PROC_NULL) CHECK(w[0] == src && w[1] == src);
    if (dst != MPI_PROC_NULL) CHECK(w[2] == dst && w[3] == dst);
    int sc[2] = {1, 1}, sd[2] = {0, 1}, rcn[2] = {1, 1}, rdn[2] = {1, 0};
    int o2[2] = {rank * 10, rank * 10 + 1}, i2[2] = {-7, -7};
    CHECK_RC(MPI_Neighbor_alltoallv(o2, sc, sd, MPI_INT, i2, rcn, rdn, MPI_INT, c));
    CHECK_INT(i2[1], src == MPI_PROC_NULL ? -7 : src * 10 + 1);
    CHECK_INT(i2[0], dst == MPI_PROC_NULL ? -7 : dst * 10);
    MPI_Aint sdw[2] = {0, sizeof(int)}, rdw[2] = {0, sizeof(double)};
    MPI_Datatype st[2] = {MPI_INT, MPI_INT}, rt[2] = {MPI_INT, MPI_INT};
    double iw[2] = {0, 0};
    int* iwp = (int*)iw;
    iwp[0] = iwp[2] = -7;
    CHECK_RC(MPI_Neighbor_alltoallw(o2, sc, sdw, st, iw, rcn, rdw, rt, c));
    CHECK_INT(iwp[0], src == MPI_PROC_NULL ? -7 : src * 10 + 1);
    CHECK_INT(iwp[2], dst == MPI_PROC_NULL ? -7 : dst * 10);
    /* The non-blocking v and w forms, all three in flight together. */
    int nw[4] = {-7, -7, -7, -7}, ni2[2] = {-7, -7};
    double niw[2] = {0, 0};
    int* niwp = (int*)niw;
    niwp[0] = niwp[2] = -7;
    MPI_Request nr[3];
    CHECK_RC(MPI_Ineighbor_allgatherv(two, 2, MPI_INT, nw, rc2, rd2, MPI_INT, c, &nr[0]));
    CHECK_RC(MPI_Ineighbor_alltoallv(o2, sc, sd, MPI_INT, ni2, rcn, rdn, MPI_INT, c, &nr[1]));
    CHECK_RC(MPI_Ineighbor_alltoallw(o2, sc, sdw, st, niw, rcn, rdw, rt, c, &nr[2]));
    CHECK_RC(MPI_Waitall(3, nr, MPI_STATUSES_IGNORE));
    CHECK(!memcmp(nw, w, sizeof w) && !memcmp(ni2, i2, sizeof i2));
    CHECK_INT(niwp[0], iwp[0]);
    CHECK_INT(niwp[2], iwp[2]);
    MPI_Comm_free(&c);
  }
}

static void graphs(void) {
  SECTION("7.5.3-7.5.5, 7.6 graphs and distributed graphs");
  /* A graph where every node links to the next two (a directed ring of chords). */
  const int n = mt_size;
  int* index = malloc((size_t)n * sizeof(int));
  int* edges = malloc((size_t)(2 * n) * sizeof(int));
  for (int p = 0; p < n; ++p) {
    index[p] = 2 * (p + 1);
    edges[2 * p] = (p + 1) % n;
    edges[2 * p + 1] = (p + 2) % n;
  }
  MPI_Comm g;
  CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
  int status, nn, ne, cnt, nb[2];
  MPI_Topo_test(g, &status);
  CHECK_INT(status, MPI_GRAPH);
  MPI_Graphdims_get(g, &nn, &ne);
  CHECK(nn == n && ne == 2 * n);
  MPI_Graph_neighbors_count(g, mt_rank, &cnt);
  CHECK_INT(cnt, 2);
  MPI_Graph_neighbors(g, mt_rank, 2, nb);
  CHECK(nb[0] == (mt_rank + 1) % n && nb[1] == (mt_rank + 2) % n);
  int gi[64], ge[128];
  MPI_Graph_get(g, n, 2 * n, gi, ge);
  CHECK(gi[n - 1] == 2 * n && ge[1] == 2 % n);
  MPI_Comm_free(&g);
  /* The same edges as a distributed graph, each rank naming its own. */
  int srcs[2] = {(mt_rank + n - 1) % n, (mt_rank + n - 2) % n};
  int dsts[2] = {(mt_rank + 1) % n, (mt_rank + 2) % n};
  int sw[2] = {1, 2}, dw[2] = {1, 2};
  MPI_Comm dg;
  CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, sw, 2, dsts, dw, MPI_INFO_NULL, 0, &dg));
  int indeg, outdeg, weighted;
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  CHECK(indeg == 2 && outdeg == 2 && weighted);
  int s2[2], d2[2], sw2[2], dw2[2];
  MPI_Dist_graph_neighbors(dg, 2, s2, sw2, 2, d2, dw2);
  CHECK(s2[0] == srcs[0] && d2[1] == dsts[1] && sw2[1] == 2);
  /* Each rank sends (rank, k) to destination k; receives from its sources. */
  int out[2] = {mt_rank * 10, mt_rank * 10 + 1}, in[2] = {-1, -1};
  CHECK_RC(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, dg));
  CHECK_INT(in[0], srcs[0] * 10);
  CHECK_INT(in[1], srcs[1] * 10 + 1);
  int all[2];
  MPI_Request r;
  MPI_Ineighbor_allgather(&mt_rank, 1, MPI_INT, all, 1, MPI_INT, dg, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK(all[0] == srcs[0] && all[1] == srcs[1]);
  MPI_Comm_free(&dg);
  /* General form: rank 0 names every edge; the others none. */
  int ne2 = mt_rank == 0 ? n : 0;
  int* gs = malloc((size_t)(n + 1) * sizeof(int));
  int* gd = malloc((size_t)(n + 1) * sizeof(int));
  int* gdeg = malloc((size_t)(n + 1) * sizeof(int));
  for (int p = 0; p < n; ++p) {
    gs[p] = p;
    gdeg[p] = 1;
    gd[p] = (p + 1) % n;
  }
  CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, ne2, gs, gdeg, gd, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  CHECK(indeg == 1 && outdeg == 1 && !weighted);
  int s1, d1;
  MPI_Dist_graph_neighbors(dg, 1, &s1, MPI_UNWEIGHTED, 1, &d1, MPI_UNWEIGHTED);
  CHECK(s1 == (mt_rank + n - 1) % n && d1 == (mt_rank + 1) % n);
  MPI_Comm_free(&dg);
  free(gs);
  free(gd);
  free(gdeg);
  free(index);
  free(edges);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  dims();
  cart();
  neighbours_cart();
  graphs();
  return mt_finish("topo");
}
