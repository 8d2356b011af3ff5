// Data-moving collectives (MPI 3.1 sections 5.5-5.8): gather, scatter,
// allgather and alltoall with one count on the library's algorithms (by
// bytes; packing around them for non-contiguous datatypes), the vector
// and w forms as this library's exchange plans (one step, a message per
// pair; allgatherv with equal blocks in rank order uses the library's).
#include <cstring>
#include <memory>

#include "mpi/coll_reduce.h"
#include "mpi/datatype.h"
#include "mpi/intercomm_coll.h"

namespace toroid::mpi {

namespace {

enum class DKind { kGather, kScatter, kAllgather, kAlltoall };

int check_side(MPI_Comm c, const void* buf, int count, MPI_Datatype t) { return check_buf(c, buf, count, t); }

// One-count forms on the library: blocks of `block` bytes.
int setup_data(MPI_Comm c, DKind kind, const void* send, int scount, MPI_Datatype stype, void* recv, int rcount,
               MPI_Datatype rtype, int root, CallOp& call) {
  const bool rooted = kind == DKind::kGather || kind == DKind::kScatter;
  if (rooted)
    if (int e = check_root(c, root)) return e;
  const bool is_root = !rooted || c->rank == root;
  const auto n = static_cast<uint64_t>(c->size);
  const uint64_t me = static_cast<uint64_t>(c->rank);
  // Which sides this rank uses (MPI ignores the others' arguments).
  const bool send_in_place = send == MPI_IN_PLACE;
  const bool recv_in_place = recv == MPI_IN_PLACE;
  if (send_in_place && (kind == DKind::kScatter || (kind == DKind::kGather && !is_root)))
    return raise(c, MPI_ERR_BUFFER, "MPI_IN_PLACE as the send buffer is not allowed here");
  if (recv_in_place && !(kind == DKind::kScatter && is_root))
    return raise(c, MPI_ERR_BUFFER, "MPI_IN_PLACE as the receive buffer is only the scatter root's");
  const bool uses_send = !send_in_place && (kind != DKind::kScatter || is_root);
  const bool uses_recv = kind != DKind::kGather || is_root;
  if (uses_send)
    if (int e = check_side(c, send, scount, stype)) return e;
  if (uses_recv && !recv_in_place)
    if (int e = check_side(c, recv, rcount, rtype)) return e;
  // Bytes of one rank's block, as this rank sees it.
  uint64_t block;
  if (kind == DKind::kScatter) block = is_root && recv_in_place ? static_cast<uint64_t>(scount * stype->size)
                                                               : static_cast<uint64_t>(rcount * rtype->size);
  else if (kind == DKind::kGather && !is_root) block = static_cast<uint64_t>(scount * stype->size);
  else block = send_in_place || !uses_send ? static_cast<uint64_t>(rcount * rtype->size)
                                           : static_cast<uint64_t>(scount * stype->size);
  if (uses_send && uses_recv && !send_in_place && !recv_in_place) {
    const bool send_all = kind == DKind::kScatter || kind == DKind::kAlltoall;
    const bool recv_all = kind != DKind::kScatter;
    if (int e = check_no_alias(c, span_of(send, MPI_Count{scount} * (send_all ? c->size : 1), stype),
                               span_of(recv, MPI_Count{rcount} * (recv_all ? c->size : 1), rtype)))
      return e;
    const uint64_t sb = static_cast<uint64_t>(scount * stype->size), rb = static_cast<uint64_t>(rcount * rtype->size);
    if (sb != rb) {
      call.local = error(Code::kOutOfRange, "this rank sends %llu bytes per block but receives %llu",
                         static_cast<unsigned long long>(sb), static_cast<unsigned long long>(rb));
      call.chosen = &call.lib;
      return MPI_SUCCESS;
    }
  }
  LibStagedOp& l = call.lib;
  CollArgs& a = l.args;
  a.kind = kind == DKind::kGather ? CollKind::kGather
           : kind == DKind::kScatter ? CollKind::kScatter
           : kind == DKind::kAllgather ? CollKind::kAllgather : CollKind::kAlltoall;
  a.dtype = DType::kUint8;
  a.count = block;
  a.root = static_cast<uint32_t>(root);
  // Send side: n blocks (scatter root, alltoall) or one.
  const uint64_t send_blocks = kind == DKind::kScatter || kind == DKind::kAlltoall ? n : 1;
  if (uses_send) {
    if (stype->contig) {
      a.send = contig_base(send, stype);
    } else {
      l.in.resize(block * send_blocks);
      pack(send, scount * static_cast<MPI_Count>(send_blocks), stype, l.in.data());
      a.send = l.in.data();
    }
  } else {
    a.send = nullptr;
  }
  // Receive side: n blocks (gather root, allgather, alltoall) or one.
  const uint64_t recv_blocks = kind == DKind::kScatter ? 1 : n;
  if (recv_in_place) {
    // Scatter root keeping its block in the send buffer: receive "into" it.
    a.recv = const_cast<void*>(static_cast<const void*>(static_cast<const uint8_t*>(a.send) + me * block));
  } else if (!uses_recv) {
    a.recv = nullptr;
  } else if (rtype->contig) {
    a.recv = contig_base(recv, rtype);
  } else {
    l.out.resize(block * recv_blocks);
    // In place, the own block (allgather, gather root) or the whole input
    // (alltoall) is already in the receive buffer: pack it into the stage.
    if (send_in_place) pack(recv, rcount * static_cast<MPI_Count>(recv_blocks), rtype, l.out.data());
    a.recv = l.out.data();
    l.active_unpack = true;
    l.unpack_to = recv;
    l.unpack_count = rcount * static_cast<MPI_Count>(recv_blocks);
    l.unpack_type = rtype;
  }
  if (send_in_place && kind == DKind::kAlltoall) a.send = nullptr;
  call.chosen = &l;
  return MPI_SUCCESS;
}

int data(const char* name, DKind kind, const void* send, int scount, MPI_Datatype stype, void* recv, int rcount,
         MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (int e = check_comm(comm)) return e;
  if (comm->inter) {
    static const InterData kinds[] = {InterData::kGather, InterData::kScatter, InterData::kAllgather, InterData::kAlltoall};
    InterSide s, r;
    s.buf = send, s.count = scount, s.type = stype;
    r.buf = recv, r.count = rcount, r.type = rtype;
    return inter_data(name, kinds[static_cast<int>(kind)], s, r, root, comm, request);
  }
  if (request) {
    auto call = std::make_unique<CallOp>();
    call->name = name;
    if (int e = setup_data(comm, kind, send, scount, stype, recv, rcount, rtype, root, *call)) return e;
    return run_call(comm, call.release(), request);
  }
  CallOp call;
  call.name = name;
  if (int e = setup_data(comm, kind, send, scount, stype, recv, rcount, rtype, root, call)) return e;
  return run_call(comm, &call, nullptr);
}

// ---- vector and w forms ----

const uint8_t* at(const void* buf, MPI_Aint bytes) { return static_cast<const uint8_t*>(buf) + bytes; }

int check_counts(MPI_Comm c, const int* counts, const char* what) {
  if (!counts) return raise(c, MPI_ERR_ARG, "%s is NULL", what);
  for (int r = 0; r < c->size; ++r)
    if (counts[r] < 0) return raise(c, MPI_ERR_COUNT, "%s[%d] = %d is negative", what, r, counts[r]);
  return 0;
}

int run_exchange(const char* name, Exchange& x, CollKind kind, MPI_Comm comm, MPI_Request* request) {
  auto call = std::make_unique<CallOp>();
  call->name = name;
  if (int e = x.build(&call->plan(), kind)) return e;
  call->chosen = &call->plan();
  if (request) return run_call(comm, call.release(), request);
  return run_call(comm, call.get(), nullptr);
}

int gatherv(const char* name, const void* send, int scount, MPI_Datatype stype, void* recv, const int* rcounts,
            const int* displs, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (int e = check_comm(comm)) return e;
  if (comm->inter) {
    InterSide s, r;
    s.buf = send, s.count = scount, s.type = stype;
    r.buf = recv, r.type = rtype, r.counts = rcounts, r.displs = displs;
    if (root == MPI_ROOT && (!rcounts || !displs)) return raise(comm, MPI_ERR_ARG, "recvcounts or displs is NULL");
    return inter_data(name, InterData::kGather, s, r, root, comm, request);
  }
  if (int e = check_root(comm, root)) return e;
  Exchange x(comm);
  const bool is_root = comm->rank == root;
  if (!is_root || send != MPI_IN_PLACE) {
    if (send == MPI_IN_PLACE) return raise(comm, MPI_ERR_BUFFER, "MPI_IN_PLACE is the root's");
    if (int e = check_buf(comm, send, scount, stype)) return e;
    x.send(root, send, scount, stype);
  }
  if (is_root) {
    if (int e = check_counts(comm, rcounts, "recvcounts")) return e;
    if (!displs) return raise(comm, MPI_ERR_ARG, "displs is NULL");
    if (int e = check_type(comm, rtype)) return e;
    if (send != MPI_IN_PLACE)
      if (int e = check_no_alias(comm, span_of(send, scount, stype), span_of_blocks(recv, comm->size, rcounts, displs, rtype)))
        return e;
    for (int r = 0; r < comm->size; ++r) {
      if (r == root && send == MPI_IN_PLACE) continue;
      x.recv(r, const_cast<uint8_t*>(at(recv, displs[r] * rtype->extent())), rcounts[r], rtype);
    }
  }
  return run_exchange(name, x, CollKind::kGather, comm, request);
}

int scatterv(const char* name, const void* send, const int* scounts, const int* displs, MPI_Datatype stype, void* recv,
             int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (int e = check_comm(comm)) return e;
  if (comm->inter) {
    InterSide s, r;
    s.buf = send, s.type = stype, s.counts = scounts, s.displs = displs;
    r.buf = recv, r.count = rcount, r.type = rtype;
    if (root == MPI_ROOT && (!scounts || !displs)) return raise(comm, MPI_ERR_ARG, "sendcounts or displs is NULL");
    return inter_data(name, InterData::kScatter, s, r, root, comm, request);
  }
  if (int e = check_root(comm, root)) return e;
  Exchange x(comm);
  const bool is_root = comm->rank == root;
  if (is_root) {
    if (int e = check_counts(comm, scounts, "sendcounts")) return e;
    if (!displs) return raise(comm, MPI_ERR_ARG, "displs is NULL");
    if (int e = check_type(comm, stype)) return e;
    for (int r = 0; r < comm->size; ++r) {
      if (r == root && recv == MPI_IN_PLACE) continue;
      x.send(r, at(send, displs[r] * stype->extent()), scounts[r], stype);
    }
  }
  if (!is_root || recv != MPI_IN_PLACE) {
    if (recv == MPI_IN_PLACE) return raise(comm, MPI_ERR_BUFFER, "MPI_IN_PLACE is the root's");
    if (int e = check_buf(comm, recv, rcount, rtype)) return e;
    if (is_root)
      if (int e = check_no_alias(comm, span_of_blocks(send, comm->size, scounts, displs, stype), span_of(recv, rcount, rtype)))
        return e;
    x.recv(root, recv, rcount, rtype);
  }
  return run_exchange(name, x, CollKind::kScatter, comm, request);
}

int allgatherv(const char* name, const void* send, int scount, MPI_Datatype stype, void* recv, const int* rcounts,
               const int* displs, MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  if (int e = check_comm(comm)) return e;
  if (comm->inter) {
    InterSide s, r;
    s.buf = send, s.count = scount, s.type = stype;
    r.buf = recv, r.type = rtype, r.counts = rcounts, r.displs = displs;
    if (!rcounts || !displs) return raise(comm, MPI_ERR_ARG, "recvcounts or displs is NULL");
    return inter_data(name, InterData::kAllgather, s, r, 0, comm, request);
  }
  if (int e = check_counts(comm, rcounts, "recvcounts")) return e;
  if (!displs) return raise(comm, MPI_ERR_ARG, "displs is NULL");
  if (int e = check_type(comm, rtype)) return e;
  // Equal blocks in rank order, back to back: the library's allgather.
  bool regular = true;
  for (int r = 0; r < comm->size; ++r) regular &= rcounts[r] == rcounts[0] && displs[r] == r * rcounts[0];
  if (regular)
    return data(name, DKind::kAllgather, send, scount, stype, recv, rcounts[0], rtype, 0, comm, request);
  Exchange x(comm);
  const void* mine = send;
  int mcount = scount;
  MPI_Datatype mtype = stype;
  if (send == MPI_IN_PLACE) {
    mine = at(recv, displs[comm->rank] * rtype->extent());
    mcount = rcounts[comm->rank];
    mtype = rtype;
  } else if (int e = check_buf(comm, send, scount, stype)) {
    return e;
  } else if (int e2 = check_no_alias(comm, span_of(send, scount, stype),
                                     span_of_blocks(recv, comm->size, rcounts, displs, rtype))) {
    return e2;
  }
  for (int r = 0; r < comm->size; ++r) {
    if (r == comm->rank && send == MPI_IN_PLACE) continue;
    x.send(r, mine, mcount, mtype);
    x.recv(r, const_cast<uint8_t*>(at(recv, displs[r] * rtype->extent())), rcounts[r], rtype);
  }
  return run_exchange(name, x, CollKind::kAllgather, comm, request);
}

// Alltoallv and alltoallw: displacements in elements of the block's type
// (v) or in bytes (w).
int alltoallw(const char* name, const void* send, const int* scounts, const int* sdispls, const MPI_Datatype* stypes,
              void* recv, const int* rcounts, const int* rdispls, const MPI_Datatype* rtypes, bool bytes,
              MPI_Comm comm, MPI_Request* request) {
  if (int e = check_comm(comm)) return e;
  if (comm->inter) {
    if (!scounts || !sdispls || !rcounts || !rdispls || !stypes || !rtypes)
      return raise(comm, MPI_ERR_ARG, "a count, displacement or type array is NULL");
    InterSide s, r;
    s.buf = send, s.counts = scounts, s.displs = sdispls, s.bytes = bytes;
    r.buf = recv, r.counts = rcounts, r.displs = rdispls, r.bytes = bytes;
    if (bytes) s.types = stypes, r.types = rtypes;
    else s.type = stypes[0], r.type = rtypes[0];
    return inter_data(name, InterData::kAlltoall, s, r, 0, comm, request);
  }
  if (int e = check_counts(comm, rcounts, "recvcounts")) return e;
  if (!rdispls) return raise(comm, MPI_ERR_ARG, "rdispls is NULL");
  const bool in_place = send == MPI_IN_PLACE;
  if (!in_place) {
    if (int e = check_counts(comm, scounts, "sendcounts")) return e;
    if (!sdispls) return raise(comm, MPI_ERR_ARG, "sdispls is NULL");
  }
  for (int r = 0; r < comm->size; ++r) {
    if (int e = check_type(comm, rtypes[bytes ? r : 0])) return e;
    if (!in_place)
      if (int e = check_type(comm, stypes[bytes ? r : 0])) return e;
  }
  if (!in_place)
    if (int e = check_no_alias(comm, span_of_blocks(send, comm->size, scounts, sdispls, stypes[0], bytes ? stypes : nullptr, bytes),
                               span_of_blocks(recv, comm->size, rcounts, rdispls, rtypes[0], bytes ? rtypes : nullptr, bytes)))
      return e;
  Exchange x(comm);
  for (int r = 0; r < comm->size; ++r) {
    MPI_Datatype rt = rtypes[bytes ? r : 0];  // types checked above
    const MPI_Aint roff = bytes ? rdispls[r] : rdispls[r] * rt->extent();
    if (in_place) {
      x.send(r, at(recv, roff), rcounts[r], rt);
    } else {
      MPI_Datatype st = stypes[bytes ? r : 0];
      x.send(r, at(send, bytes ? sdispls[r] : sdispls[r] * st->extent()), scounts[r], st);
    }
    x.recv(r, const_cast<uint8_t*>(at(recv, roff)), rcounts[r], rt);
  }
  if (in_place) x.stage_sends();
  return run_exchange(name, x, CollKind::kAlltoall, comm, request);
}

int need_request(MPI_Comm comm, MPI_Request* request) {
  return request ? 0 : raise(comm, MPI_ERR_ARG, "request is NULL");
}

}  // namespace

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

#define TOROID_DATA(Name, IName, kind, nb)                                                                                   \
  TOROID_MPI_API(int, Name, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, \
                             MPI_Datatype recvtype, MPI_Comm comm)) {                                               \
    MPI_ENTER("MPI_" #Name);                                                                                        \
    return data("MPI_" #Name, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm, nullptr); \
  }                                                                                                                 \
  TOROID_MPI_API(int, IName, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,           \
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {       \
    MPI_ENTER("MPI_I" nb);                                                                                          \
    if (int e = need_request(comm, request)) return e;                                                            \
    return data("MPI_I" nb, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm, request);  \
  }
TOROID_DATA(Allgather, Iallgather, DKind::kAllgather, "allgather")
TOROID_DATA(Alltoall, Ialltoall, DKind::kAlltoall, "alltoall")
#undef TOROID_DATA

TOROID_MPI_API(int, Gather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  MPI_ENTER("MPI_Gather");
  return data("MPI_Gather", DKind::kGather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
              nullptr);
}

TOROID_MPI_API(int, Igather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Igather");
  if (int e = need_request(comm, request)) return e;
  return data("MPI_Igather", DKind::kGather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
              request);
}

TOROID_MPI_API(int, Scatter, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  MPI_ENTER("MPI_Scatter");
  return data("MPI_Scatter", DKind::kScatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
              nullptr);
}

TOROID_MPI_API(int, Iscatter, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Iscatter");
  if (int e = need_request(comm, request)) return e;
  return data("MPI_Iscatter", DKind::kScatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
              request);
}

TOROID_MPI_API(int, Gatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                              MPI_Comm comm)) {
  MPI_ENTER("MPI_Gatherv");
  return gatherv("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, nullptr);
}

TOROID_MPI_API(int, Igatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Igatherv");
  if (int e = need_request(comm, request)) return e;
  return gatherv("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
}

TOROID_MPI_API(int, Scatterv, (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  MPI_ENTER("MPI_Scatterv");
  return scatterv("MPI_Scatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
}

TOROID_MPI_API(int, Iscatterv, (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                MPI_Request* request)) {
  MPI_ENTER("MPI_Iscatterv");
  if (int e = need_request(comm, request)) return e;
  return scatterv("MPI_Iscatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  request);
}

TOROID_MPI_API(int, Allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)) {
  MPI_ENTER("MPI_Allgatherv");
  return allgatherv("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nullptr);
}

TOROID_MPI_API(int, Iallgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Request* request)) {
  MPI_ENTER("MPI_Iallgatherv");
  if (int e = need_request(comm, request)) return e;
  return allgatherv("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
}

TOROID_MPI_API(int, Alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                MPI_Comm comm)) {
  MPI_ENTER("MPI_Alltoallv");
  return alltoallw("MPI_Alltoallv", sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts, rdispls, &recvtype,
                   false, comm, nullptr);
}

TOROID_MPI_API(int, Ialltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Ialltoallv");
  if (int e = need_request(comm, request)) return e;
  return alltoallw("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts, rdispls, &recvtype,
                   false, comm, request);
}

TOROID_MPI_API(int, Alltoallw, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)) {
  MPI_ENTER("MPI_Alltoallw");
  return alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                   true, comm, nullptr);
}

TOROID_MPI_API(int, Ialltoallw, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                 const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Request* request)) {
  MPI_ENTER("MPI_Ialltoallw");
  if (int e = need_request(comm, request)) return e;
  return alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                   true, comm, request);
}
