// MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0 3.10): a send and a
// receive started together under one request (ReqKind::kPair) that
// completes when both have. The replace form sends a packed copy of the
// buffer (the request keeps it), so the receive may land in place at once.
#include <vector>

#include "mpi/datatype.h"
#include "mpi/request.h"

namespace toroid::mpi {

bool pair_ready(MPI_Request r) { return request_ready(r->pair_send) && request_ready(r->pair_recv); }

int pair_complete(MPI_Request r) {
  const int es = p2p_complete(r->pair_send);
  const int er = p2p_complete(r->pair_recv);
  r->status = r->pair_recv->status;
  return er ? er : es;
}

void pair_release(MPI_Request r) {
  for (MPI_Request* sub : {&r->pair_send, &r->pair_recv})
    if (*sub) {
      request_recycle(*sub);
      *sub = nullptr;
    }
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

namespace {

// Both halves started, or neither (an error undoes the receive).
int start_pair(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request r) {
  if (int e = start_recv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r->pair_recv, false)) return e;
  if (int e = start_send(sendbuf, sendcount, sendtype, dest, sendtag, comm, 0, &r->pair_send, false)) {
    rt().msgr().withdraw(&r->pair_recv->rr);
    return e;
  }
  r->active = true;
  return MPI_SUCCESS;
}

int finish_start(int e, MPI_Request r, MPI_Request* request) {
  if (e) {
    request_recycle(r);  // with the halves made (nothing of them is in flight)
    return e;
  }
  *request = r;
  return MPI_SUCCESS;
}

}  // namespace

TOROID_MPI_API(int, Isendrecv,
               (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Isendrecv");
  if (int e = check_comm(comm)) return e;
  if (!request) return raise(comm, MPI_ERR_ARG, "request is NULL");
  MPI_Request r = request_new(ReqKind::kPair, comm);
  const int e = start_pair(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, r);
  return finish_start(e, r, request);
}

TOROID_MPI_API(int, Isendrecv_replace, (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                        int recvtag, MPI_Comm comm, MPI_Request* request)) {
  MPI_ENTER("MPI_Isendrecv_replace");
  if (int e = check_comm(comm)) return e;
  if (!request) return raise(comm, MPI_ERR_ARG, "request is NULL");
  if (int e = check_buf(comm, buf, count, datatype)) return e;
  MPI_Request r = request_new(ReqKind::kPair, comm);
  // The outgoing data is packed first, into the request, so the incoming may
  // land in place while it is still being sent.
  r->stage.pack.resize(static_cast<size_t>(count * datatype->size));
  pack(buf, count, datatype, r->stage.pack.data());
  const int e = start_pair(r->stage.pack.data(), static_cast<int>(r->stage.pack.size()), MPI_BYTE, dest, sendtag, buf,
                           count, datatype, source, recvtag, comm, r);
  return finish_start(e, r, request);
}
