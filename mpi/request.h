// Requests: one pool of request objects (recycled, never returned to the
// allocator while the library runs), their completion test, and the status
// and error each completion yields.
#pragma once
#include "mpi/impl.h"

namespace toroid::mpi {

// The request names comm until it is recycled (a freed communicator lives
// until its last request goes: comm_release_request, comm.cc).
MPI_Request request_new(ReqKind kind, MPI_Comm comm);
void comm_release_request(MPI_Comm c);
// Back to the pool: the handle becomes invalid.
void request_recycle(MPI_Request r);
// Whether r has completed; moves nothing (the caller drives the loop).
bool request_ready(MPI_Request r);
// r has completed: fills *st (MPI_STATUS_IGNORE allowed), then frees a
// one-shot request (*handle = MPI_REQUEST_NULL) or makes a persistent one
// inactive. Returns the request's error class (not raised).
int request_finish(MPI_Request* handle, MPI_Status* st);
// Starts a persistent request (MPI_Start).
int request_start(MPI_Request r);
// The point-to-point side (p2p.cc): starts a send or receive request.
int p2p_start_send(MPI_Request r);
int p2p_start_recv(MPI_Request r);
// Whether the messenger has finished a point-to-point request.
bool p2p_ready(MPI_Request r);
// Its completion: status, unpack, error class.
int p2p_complete(MPI_Request r);
bool p2p_cancel(MPI_Request r);
// MPI_Isend and friends (mode 0 standard, 1 synchronous, 3 ready; 2 buffered
// persistent only) and MPI_Irecv, with their arguments checked: a new request
// in *request, started unless persistent.
int start_send(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, int mode,
               MPI_Request* request, bool persistent);
int start_recv(void* buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Request* request,
               bool persistent);
// A send and a receive under one request (MPI_Isendrecv, isendrecv.cc):
// ready when both are; its completion completes both (the receive's status,
// the first error); released with it. MPI_Cancel leaves it to complete (MPI
// 3.1 3.8.4 allows a cancel to fail).
bool pair_ready(MPI_Request r);
int pair_complete(MPI_Request r);
void pair_release(MPI_Request r);

}  // namespace toroid::mpi
