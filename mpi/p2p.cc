// Point-to-point communication (MPI 3.1 chapter 3) on the node's messenger:
// one send path (the communicator's post_send), receives posted with the
// messenger (matched in MPI's order: per source in send order, posted
// receives in post order, wildcards never taking the library's own tags),
// contiguous data sent from and received into the user's buffer directly,
// other layouts packed. Blocking calls drive the event loop until done,
// bounded by TOROID_MPI_TIMEOUT. Probes and matched probes: p2p_probe.cc.
#include <algorithm>
#include <cstring>

#include "mpi/datatype.h"
#include "mpi/request.h"

namespace toroid::mpi {

namespace {

Messenger& msgr() { return rt().msgr(); }

Result<uint64_t> post(MPI_Comm c, int peer, int tag, const void* data, uint64_t len, bool sync) {
  MsgSendOptions opt;
  opt.sync = sync;
  if (!c->inter) return c->coll->post_send(static_cast<uint32_t>(peer), true, static_cast<uint32_t>(tag), data, len, opt);
  return msgr().send_rank(c->peer_world(peer), c->p2p_ctx, static_cast<uint32_t>(tag), data, len, opt);
}

}  // namespace

int p2p_start_send(MPI_Request r) {
  r->done = false;
  r->cancelled = false;
  r->error = MPI_SUCCESS;
  r->handle = 0;
  if (r->peer == MPI_PROC_NULL) {
    r->done = true;
    return MPI_SUCCESS;
  }
  stage_send(r->user_buf, r->count, r->type, &r->stage);
  auto h = post(r->comm, r->peer, r->tag, r->stage.base, static_cast<uint64_t>(r->stage.bytes), r->send_mode == 1);
  if (!h) {
    r->done = true;
    return raise_status(r->comm, h.status());
  }
  r->handle = *h;
  return MPI_SUCCESS;
}

int p2p_start_recv(MPI_Request r) {
  r->done = false;
  r->cancelled = false;
  r->error = MPI_SUCCESS;
  if (r->peer == MPI_PROC_NULL) {
    r->done = true;
    return MPI_SUCCESS;
  }
  stage_recv(const_cast<void*>(r->user_buf), r->count, r->type, &r->stage);
  RecvReq& q = r->rr;
  q = RecvReq{};
  q.src = r->peer == MPI_ANY_SOURCE ? kAnySource : static_cast<int32_t>(r->comm->peer_world(r->peer));
  q.context = r->comm->p2p_ctx;
  q.any_tag = r->tag == MPI_ANY_TAG;
  q.tag = q.any_tag ? 0 : static_cast<uint32_t>(r->tag);
  q.buf = r->stage.base;
  q.cap = static_cast<uint64_t>(r->stage.bytes);
  if (Status st = msgr().post(&q); !st) {
    r->done = true;
    return raise_status(r->comm, st);
  }
  return MPI_SUCCESS;
}

bool p2p_ready(MPI_Request r) {
  if (r->done) return true;
  if (r->kind == ReqKind::kRecv) return r->rr.done();
  // A cancel asked of the receiver (p2p_cancel): done with its answer.
  switch (msgr().cancel_result(r->handle)) {
    case Messenger::CancelState::kPending:
      return !msgr().status();
    case Messenger::CancelState::kCancelled:
      r->cancelled = true;
      return true;
    default:
      break;
  }
  return msgr().send_done(r->handle) || !msgr().status();
}

int p2p_complete(MPI_Request r) {
  if (r->kind == ReqKind::kSend && r->handle) msgr().forget_cancel(r->handle);
  MPI_Status& s = r->status;
  s.MPI_ERROR = MPI_SUCCESS;
  s.toroid_cancelled = r->cancelled;
  if (r->peer == MPI_PROC_NULL || r->cancelled) {
    s.MPI_SOURCE = r->cancelled ? r->peer : MPI_PROC_NULL;
    s.MPI_TAG = r->cancelled ? r->tag : MPI_ANY_TAG;
    s.toroid_bytes = 0;
    return MPI_SUCCESS;
  }
  if (r->kind == ReqKind::kSend) {
    s.MPI_SOURCE = r->comm->rank;
    s.MPI_TAG = r->tag;
    s.toroid_bytes = r->stage.bytes;
    if (!msgr().status() && !msgr().send_done(r->handle))
      return raise(r->comm, MPI_ERR_OTHER, "send to rank %d (tag %d): %s", r->peer, r->tag,
                   msgr().status().message().c_str());
    return MPI_SUCCESS;
  }
  const RecvReq& q = r->rr;
  MPI_Group from = r->comm->inter ? r->comm->remote : r->comm->group;
  s.MPI_SOURCE = from->rank_of(q.source());
  s.MPI_TAG = static_cast<int>(q.msg_tag());
  const uint64_t got = std::min<uint64_t>(q.length(), q.cap);
  s.toroid_bytes = static_cast<MPI_Count>(got);
  stage_finish(r->stage, static_cast<MPI_Count>(got), const_cast<void*>(r->user_buf), r->count, r->type);
  if (!q.status()) {
    const int cls = q.status().code() == Code::kOutOfRange ? MPI_ERR_TRUNCATE : class_of(q.status());
    s.MPI_ERROR = cls;
    if (cls == MPI_ERR_TRUNCATE)
      return raise(r->comm, cls, "a message of %llu bytes from rank %d (tag %d) does not fit the %d-element receive "
                   "(%lld bytes)", static_cast<unsigned long long>(q.length()), s.MPI_SOURCE, s.MPI_TAG, r->count,
                   static_cast<long long>(r->stage.bytes));
    return raise(r->comm, cls, "receive from rank %d: %s", r->peer, q.status().message().c_str());
  }
  return MPI_SUCCESS;
}

bool p2p_cancel(MPI_Request r) {
  if (r->done || r->cancelled) return false;
  if (r->kind == ReqKind::kRecv) {
    if (!msgr().unpost(&r->rr)) return false;  // a message is landing in it
  } else {
    if (r->peer == MPI_PROC_NULL) return false;
    // Some of it has left: the receiver drops it unless a receive took it,
    // and the request completes with its answer (p2p_ready).
    if (!msgr().cancel_unsent(r->handle)) return msgr().request_cancel(r->handle);
  }
  r->cancelled = true;
  r->done = true;
  return true;
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

namespace {

int check_send(MPI_Comm comm, const void* buf, int count, MPI_Datatype t, int dest, int tag) {
  if (int e = check_comm(comm)) return e;
  if (int e = check_buf(comm, buf, count, t)) return e;
  if (int e = check_send_rank(comm, dest)) return e;
  return check_send_tag(comm, tag);
}

int check_recv(MPI_Comm comm, void* buf, int count, MPI_Datatype t, int source, int tag) {
  if (int e = check_comm(comm)) return e;
  if (int e = check_buf(comm, buf, count, t)) return e;
  if (int e = check_recv_rank(comm, source)) return e;
  return check_recv_tag(comm, tag);
}

void fill(MPI_Request r, const void* buf, int count, MPI_Datatype t, int peer, int tag, int mode) {
  r->user_buf = buf;
  r->count = count;
  r->type = t;
  r->peer = peer;
  r->tag = tag;
  r->send_mode = mode;
}

// A blocking send or receive on a request object of the caller's stack.
int run_now(toroid_mpi_request& r, MPI_Status* status) {
  const int rc = r.kind == ReqKind::kSend ? p2p_start_send(&r) : p2p_start_recv(&r);
  if (rc) return rc;
  if (!p2p_ready(&r)) {
    Status st = rt().wait([&] { return p2p_ready(&r); }, g_call);
    if (!st) {
      if (r.kind == ReqKind::kRecv) rt().msgr().withdraw(&r.rr);
      else rt().msgr().cancel(r.handle);
      return raise(r.comm, MPI_ERR_OTHER, "%s %s rank %d (tag %d) on %s", st.message().c_str(),
                   r.kind == ReqKind::kRecv ? "from" : "to", r.peer, r.tag, comm_label(r.comm).c_str());
    }
  }
  const int err = p2p_complete(&r);
  set_status(status, r.status);
  return err;
}

int blocking_send(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, int mode) {
  if (int e = check_send(comm, buf, count, t, dest, tag)) return e;
  toroid_mpi_request r;
  r.kind = ReqKind::kSend;
  r.comm = comm;
  fill(&r, buf, count, t, dest, tag, mode);
  return run_now(r, MPI_STATUS_IGNORE);
}

}  // namespace

namespace toroid::mpi {

int start_send(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, int mode,
               MPI_Request* request, bool persistent) {
  if (int e = check_send(comm, buf, count, t, dest, tag)) return e;
  if (!request) return raise(comm, MPI_ERR_ARG, "request is NULL");
  MPI_Request r = request_new(ReqKind::kSend, comm);
  fill(r, buf, count, t, dest, tag, mode);
  type_retain(t);
  r->persistent = persistent;
  *request = r;
  if (persistent) return MPI_SUCCESS;
  r->active = true;
  return p2p_start_send(r);
}

int start_recv(void* buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Request* request,
               bool persistent) {
  if (int e = check_recv(comm, buf, count, t, source, tag)) return e;
  if (!request) return raise(comm, MPI_ERR_ARG, "request is NULL");
  MPI_Request r = request_new(ReqKind::kRecv, comm);
  fill(r, buf, count, t, source, tag, 0);
  type_retain(t);
  r->persistent = persistent;
  *request = r;
  if (persistent) return MPI_SUCCESS;
  r->active = true;
  return p2p_start_recv(r);
}

}  // namespace toroid::mpi

namespace toroid::mpi {
int bsend_start(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* request);
}

TOROID_MPI_API(int, Send, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)) {
  MPI_ENTER("MPI_Send");
  return blocking_send(buf, count, datatype, dest, tag, comm, 0);
}

TOROID_MPI_API(int, Ssend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)) {
  MPI_ENTER("MPI_Ssend");
  return blocking_send(buf, count, datatype, dest, tag, comm, 1);
}

TOROID_MPI_API(int, Rsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)) {
  MPI_ENTER("MPI_Rsend");
  return blocking_send(buf, count, datatype, dest, tag, comm, 3);
}

TOROID_MPI_API(int, Bsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)) {
  MPI_ENTER("MPI_Bsend");
  MPI_Request r = MPI_REQUEST_NULL;
  if (int e = bsend_start(buf, count, datatype, dest, tag, comm, &r)) return e;
  return r ? PMPI_Request_free(&r) : MPI_SUCCESS;  // the attached buffer holds the data until it has left
}

TOROID_MPI_API(int, Recv, (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                           MPI_Status* status)) {
  MPI_ENTER("MPI_Recv");
  if (int e = check_recv(comm, buf, count, datatype, source, tag)) return e;
  toroid_mpi_request r;
  r.kind = ReqKind::kRecv;
  r.comm = comm;
  fill(&r, buf, count, datatype, source, tag, 0);
  return run_now(r, status);
}

TOROID_MPI_API(int, Isend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                            MPI_Request* request)) {
  MPI_ENTER("MPI_Isend");
  return start_send(buf, count, datatype, dest, tag, comm, 0, request, false);
}

TOROID_MPI_API(int, Issend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request)) {
  MPI_ENTER("MPI_Issend");
  return start_send(buf, count, datatype, dest, tag, comm, 1, request, false);
}

TOROID_MPI_API(int, Irsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request)) {
  MPI_ENTER("MPI_Irsend");
  return start_send(buf, count, datatype, dest, tag, comm, 3, request, false);
}

TOROID_MPI_API(int, Ibsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request)) {
  MPI_ENTER("MPI_Ibsend");
  if (!request) return raise(comm, MPI_ERR_ARG, "request is NULL");
  return bsend_start(buf, count, datatype, dest, tag, comm, request);
}

TOROID_MPI_API(int, Irecv, (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                            MPI_Request* request)) {
  MPI_ENTER("MPI_Irecv");
  return start_recv(buf, count, datatype, source, tag, comm, request, false);
}

TOROID_MPI_API(int, Send_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                MPI_Request* request)) {
  MPI_ENTER("MPI_Send_init");
  return start_send(buf, count, datatype, dest, tag, comm, 0, request, true);
}

TOROID_MPI_API(int, Ssend_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                 MPI_Request* request)) {
  MPI_ENTER("MPI_Ssend_init");
  return start_send(buf, count, datatype, dest, tag, comm, 1, request, true);
}

TOROID_MPI_API(int, Rsend_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                 MPI_Request* request)) {
  MPI_ENTER("MPI_Rsend_init");
  return start_send(buf, count, datatype, dest, tag, comm, 3, request, true);
}

TOROID_MPI_API(int, Bsend_init, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                 MPI_Request* request)) {
  MPI_ENTER("MPI_Bsend_init");
  return start_send(buf, count, datatype, dest, tag, comm, 2, request, true);
}

TOROID_MPI_API(int, Recv_init, (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                MPI_Request* request)) {
  MPI_ENTER("MPI_Recv_init");
  return start_recv(buf, count, datatype, source, tag, comm, request, true);
}

TOROID_MPI_API(int, Sendrecv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                               MPI_Comm comm, MPI_Status* status)) {
  MPI_ENTER("MPI_Sendrecv");
  if (int e = check_send(comm, sendbuf, sendcount, sendtype, dest, sendtag)) return e;
  if (int e = check_recv(comm, recvbuf, recvcount, recvtype, source, recvtag)) return e;
  toroid_mpi_request rr, sr;
  rr.kind = ReqKind::kRecv;
  rr.comm = comm;
  fill(&rr, recvbuf, recvcount, recvtype, source, recvtag, 0);
  sr.kind = ReqKind::kSend;
  sr.comm = comm;
  fill(&sr, sendbuf, sendcount, sendtype, dest, sendtag, 0);
  if (int e = p2p_start_recv(&rr)) return e;
  if (int e = p2p_start_send(&sr)) {
    rt().msgr().withdraw(&rr.rr);
    return e;
  }
  Status st = rt().wait([&] { return p2p_ready(&rr) && p2p_ready(&sr); }, g_call);
  if (!st) {
    rt().msgr().withdraw(&rr.rr);
    rt().msgr().cancel(sr.handle);
    return raise(comm, MPI_ERR_OTHER, "%s (send to rank %d, receive from rank %d)", st.message().c_str(), dest, source);
  }
  const int es = p2p_complete(&sr);
  const int er = p2p_complete(&rr);
  set_status(status, rr.status);
  return er ? er : es;
}

TOROID_MPI_API(int, Sendrecv_replace, (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                       int recvtag, MPI_Comm comm, MPI_Status* status)) {
  MPI_ENTER("MPI_Sendrecv_replace");
  if (int e = check_send(comm, buf, count, datatype, dest, sendtag)) return e;
  if (int e = check_recv(comm, buf, count, datatype, source, recvtag)) return e;
  // The outgoing data is packed first, so the incoming may land in place.
  std::vector<uint8_t> out(static_cast<size_t>(count * datatype->size));
  pack(buf, count, datatype, out.data());
  return PMPI_Sendrecv(out.data(), static_cast<int>(out.size()), MPI_BYTE, dest, sendtag, buf, count, datatype, source,
                       recvtag, comm, status);
}

// ---- status queries ----

TOROID_MPI_API(int, Get_count, (const MPI_Status* status, MPI_Datatype datatype, int* count)) {
  MPI_ENTER("MPI_Get_count");
  if (!status || !count) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "status or count is NULL");
  if (int e = check_type(MPI_COMM_WORLD, datatype)) return e;
  if (datatype->size == 0) {
    *count = status->toroid_bytes == 0 ? 0 : MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *count = status->toroid_bytes % datatype->size ? MPI_UNDEFINED
                                                 : static_cast<int>(status->toroid_bytes / datatype->size);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Get_elements_x, (const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count)) {
  MPI_ENTER("MPI_Get_elements_x");
  if (!status || !count) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "status or count is NULL");
  if (int e = check_type(MPI_COMM_WORLD, datatype)) return e;
  *count = elements_in(datatype, status->toroid_bytes);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Get_elements, (const MPI_Status* status, MPI_Datatype datatype, int* count)) {
  MPI_ENTER("MPI_Get_elements");
  MPI_Count c = 0;
  if (int e = PMPI_Get_elements_x(status, datatype, &c)) return e;
  *count = c > 0x7fffffff ? MPI_UNDEFINED : static_cast<int>(c);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Test_cancelled, (const MPI_Status* status, int* flag)) {
  MPI_ENTER("MPI_Test_cancelled");
  if (!status || !flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "status or flag is NULL");
  *flag = status->toroid_cancelled;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Status_set_cancelled, (MPI_Status * status, int flag)) {
  MPI_ENTER("MPI_Status_set_cancelled");
  if (!status) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "status is NULL");
  status->toroid_cancelled = flag ? 1 : 0;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Status_set_elements_x, (MPI_Status * status, MPI_Datatype datatype, MPI_Count count)) {
  MPI_ENTER("MPI_Status_set_elements_x");
  if (!status) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "status is NULL");
  if (int e = check_type(MPI_COMM_WORLD, datatype)) return e;
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, "count %lld is negative", static_cast<long long>(count));
  // Whole elements take their size; the rest is counted primitive by primitive.
  const MPI_Count per = datatype->prims ? datatype->prims : 1;
  MPI_Count bytes = count / per * datatype->size;
  MPI_Count rest = count % per;
  for (const SigRun& s : datatype->sig) {
    const MPI_Count take = std::min(rest, s.n);
    bytes += take * static_cast<MPI_Count>(prim_size(s.prim));
    rest -= take;
    if (!rest) break;
  }
  status->toroid_bytes = bytes;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Status_set_elements, (MPI_Status * status, MPI_Datatype datatype, int count)) {
  return PMPI_Status_set_elements_x(status, datatype, count);
}
