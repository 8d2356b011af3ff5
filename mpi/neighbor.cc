// Neighbourhood collectives (MPI 3.1 section 7.6), blocking and not, on
// Cartesian and (distributed) graph topologies: one exchange step with the
// topology's neighbours (blocks to and from MPI_PROC_NULL neighbours stay
// untouched), run as this library's plans.
#include <memory>
#include <vector>

#include "mpi/coll_reduce.h"
#include "mpi/topo.h"

using namespace toroid;
using namespace toroid::mpi;

namespace {

int neighbours(MPI_Comm comm, std::vector<int>* in, std::vector<int>* out) {
  if (int e = check_intra(comm)) return e;
  if (!comm->topo)
    return raise(comm, MPI_ERR_TOPOLOGY, "%s has no topology (neighbourhood collectives need one)", comm_label(comm).c_str());
  comm->topo->in_neighbours(comm->rank, in);
  comm->topo->out_neighbours(comm->rank, out);
  return 0;
}

int run(const char* name, Exchange& x, MPI_Comm comm, MPI_Request* request) {
  auto call = std::make_unique<CallOp>();
  call->name = name;
  if (int e = x.build(&call->plan(), CollKind::kAlltoall)) return e;
  call->chosen = &call->plan();
  if (request) return run_call(comm, call.release(), request);
  return run_call(comm, call.get(), nullptr);
}

const uint8_t* at(const void* p, MPI_Aint off) { return static_cast<const uint8_t*>(p) + off; }

std::vector<size_t> order(MPI_Comm comm, size_t n) {
  std::vector<size_t> o;
  comm->topo->recv_order(n, &o);
  return o;
}

int allgather(const char* name, const void* sbuf, int sc, MPI_Datatype st, void* rbuf, int rc, MPI_Datatype rt,
              MPI_Comm comm, MPI_Request* request) {
  std::vector<int> in, out;
  if (int e = neighbours(comm, &in, &out)) return e;
  if (int e = check_buf(comm, sbuf, sc, st)) return e;
  if (int e = check_buf(comm, rbuf, rc, rt)) return e;
  Exchange x(comm);
  for (int d : out) x.send(d, sbuf, sc, st);
  for (size_t i : order(comm, in.size()))
    x.recv(in[i], const_cast<uint8_t*>(at(rbuf, static_cast<MPI_Aint>(i) * rc * rt->extent())), rc, rt);
  return run(name, x, comm, request);
}

int allgatherv(const char* name, const void* sbuf, int sc, MPI_Datatype st, void* rbuf, const int* rcs,
               const int* displs, MPI_Datatype rt, MPI_Comm comm, MPI_Request* request) {
  std::vector<int> in, out;
  if (int e = neighbours(comm, &in, &out)) return e;
  if (int e = check_buf(comm, sbuf, sc, st)) return e;
  if (int e = check_type(comm, rt)) return e;
  if (!in.empty() && (!rcs || !displs)) return raise(comm, MPI_ERR_ARG, "recvcounts or displs is NULL");
  Exchange x(comm);
  for (int d : out) x.send(d, sbuf, sc, st);
  for (size_t i : order(comm, in.size())) x.recv(in[i], const_cast<uint8_t*>(at(rbuf, displs[i] * rt->extent())), rcs[i], rt);
  return run(name, x, comm, request);
}

int alltoall(const char* name, const void* sbuf, int sc, MPI_Datatype st, void* rbuf, int rc, MPI_Datatype rt,
             MPI_Comm comm, MPI_Request* request) {
  std::vector<int> in, out;
  if (int e = neighbours(comm, &in, &out)) return e;
  if (int e = check_buf(comm, sbuf, sc, st)) return e;
  if (int e = check_buf(comm, rbuf, rc, rt)) return e;
  Exchange x(comm);
  for (size_t i = 0; i < out.size(); ++i) x.send(out[i], at(sbuf, static_cast<MPI_Aint>(i) * sc * st->extent()), sc, st);
  for (size_t i : order(comm, in.size()))
    x.recv(in[i], const_cast<uint8_t*>(at(rbuf, static_cast<MPI_Aint>(i) * rc * rt->extent())), rc, rt);
  return run(name, x, comm, request);
}

// v: displacements in elements of the one type; w: in bytes, a type per block.
int alltoallw(const char* name, const void* sbuf, const int* scs, const MPI_Aint* sdispls, const MPI_Datatype* sts,
              void* rbuf, const int* rcs, const MPI_Aint* rdispls, const MPI_Datatype* rts, bool bytes, MPI_Comm comm,
              MPI_Request* request) {
  std::vector<int> in, out;
  if (int e = neighbours(comm, &in, &out)) return e;
  if ((!out.empty() && (!scs || !sdispls || !sts)) || (!in.empty() && (!rcs || !rdispls || !rts)))
    return raise(comm, MPI_ERR_ARG, "a count, displacement or type array is NULL");
  Exchange x(comm);
  for (size_t i = 0; i < out.size(); ++i) {
    MPI_Datatype t = sts[bytes ? i : 0];
    if (int e = check_type(comm, t)) return e;
    x.send(out[i], at(sbuf, bytes ? sdispls[i] : sdispls[i] * t->extent()), scs[i], t);
  }
  for (size_t i : order(comm, in.size())) {
    MPI_Datatype t = rts[bytes ? i : 0];
    if (int e = check_type(comm, t)) return e;
    x.recv(in[i], const_cast<uint8_t*>(at(rbuf, bytes ? rdispls[i] : rdispls[i] * t->extent())), rcs[i], t);
  }
  return run(name, x, comm, request);
}

std::vector<MPI_Aint> widen(const int* v, size_t n) { return v ? std::vector<MPI_Aint>(v, v + n) : std::vector<MPI_Aint>(); }

int degree(MPI_Comm comm, bool in) {
  if (!valid(comm) || !comm->topo) return 0;
  std::vector<int> v;
  if (in) comm->topo->in_neighbours(comm->rank, &v);
  else comm->topo->out_neighbours(comm->rank, &v);
  return static_cast<int>(v.size());
}

int need(MPI_Comm comm, MPI_Request* r) { return r ? 0 : raise(comm, MPI_ERR_ARG, "request is NULL"); }

}  // namespace

TOROID_MPI_API(int, Neighbor_allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm)) {
  MPI_ENTER("MPI_Neighbor_allgather");
  return allgather("MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}

TOROID_MPI_API(int, Ineighbor_allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Ineighbor_allgather");
  if (int e = need(comm, request)) return e;
  return allgather("MPI_Ineighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

TOROID_MPI_API(int, Neighbor_allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                          MPI_Comm comm)) {
  MPI_ENTER("MPI_Neighbor_allgatherv");
  return allgatherv("MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                    comm, nullptr);
}

TOROID_MPI_API(int, Ineighbor_allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                           MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Ineighbor_allgatherv");
  if (int e = need(comm, request)) return e;
  return allgatherv("MPI_Ineighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                    comm, request);
}

TOROID_MPI_API(int, Neighbor_alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm)) {
  MPI_ENTER("MPI_Neighbor_alltoall");
  return alltoall("MPI_Neighbor_alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}

TOROID_MPI_API(int, Ineighbor_alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Ineighbor_alltoall");
  if (int e = need(comm, request)) return e;
  return alltoall("MPI_Ineighbor_alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

TOROID_MPI_API(int, Neighbor_alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                         MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)) {
  MPI_ENTER("MPI_Neighbor_alltoallv");
  const auto sd = widen(sdispls, static_cast<size_t>(degree(comm, false)));
  const auto rd = widen(rdispls, static_cast<size_t>(degree(comm, true)));
  return alltoallw("MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls ? sd.data() : nullptr, &sendtype, recvbuf,
                   recvcounts, rdispls ? rd.data() : nullptr, &recvtype, false, comm, nullptr);
}

TOROID_MPI_API(int, Ineighbor_alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                          MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                          MPI_Request* request)) {
  MPI_ENTER("MPI_Ineighbor_alltoallv");
  if (int e = need(comm, request)) return e;
  const auto sd = widen(sdispls, static_cast<size_t>(degree(comm, false)));
  const auto rd = widen(rdispls, static_cast<size_t>(degree(comm, true)));
  return alltoallw("MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls ? sd.data() : nullptr, &sendtype, recvbuf,
                   recvcounts, rdispls ? rd.data() : nullptr, &recvtype, false, comm, request);
}

TOROID_MPI_API(int, Neighbor_alltoallw, (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)) {
  MPI_ENTER("MPI_Neighbor_alltoallw");
  return alltoallw("MPI_Neighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, true, comm, nullptr);
}

TOROID_MPI_API(int, Ineighbor_alltoallw, (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                          const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                          MPI_Request* request)) {
  MPI_ENTER("MPI_Ineighbor_alltoallw");
  if (int e = need(comm, request)) return e;
  return alltoallw("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, true, comm, request);
}
