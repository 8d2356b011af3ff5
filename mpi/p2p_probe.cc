// Probes and matched probes (MPI 3.1 3.8.1-3.8.3) on the node's messenger:
// a probe looks at the earliest matching message that has begun to arrive;
// a matched probe takes it at once with a receive into the message
// object's buffer, from which MPI_Mrecv / MPI_Imrecv unpack it.
#include <algorithm>

#include "mpi/datatype.h"
#include "mpi/request.h"

toroid_mpi_message toroid_mpi_message_no_proc;  // MPI_MESSAGE_NO_PROC: a matched probe of MPI_PROC_NULL

using namespace toroid;
using namespace toroid::mpi;

// ---- probes ----

namespace {

int probe_once(int source, int tag, MPI_Comm comm, MsgEnvelope* env) {
  const int32_t src = source == MPI_ANY_SOURCE ? kAnySource : static_cast<int32_t>(comm->peer_world(source));
  return rt().msgr().probe(src, comm->p2p_ctx, tag == MPI_ANY_TAG ? 0 : static_cast<uint32_t>(tag), tag == MPI_ANY_TAG,
                           env);
}

void probe_status(MPI_Comm comm, const MsgEnvelope& env, MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = (comm->inter ? comm->remote : comm->group)->rank_of(env.source);
  status->MPI_TAG = static_cast<int>(env.tag);
  status->toroid_cancelled = 0;
  status->toroid_bytes = static_cast<MPI_Count>(env.length);
}

// Iprobe and Improbe: a look, and after one round of progress a second.
bool probe_now(int source, int tag, MPI_Comm comm, MsgEnvelope* env) {
  if (probe_once(source, tag, comm, env)) return true;
  rt().progress();
  return probe_once(source, tag, comm, env);
}

// Probe and Mprobe: wait (bounded by the wait timeout) for a match.
int probe_wait(const char* call, int source, int tag, MPI_Comm comm, MsgEnvelope* env) {
  Status st = rt().wait([&] { return probe_once(source, tag, comm, env); }, call);
  if (!st) return raise(comm, MPI_ERR_OTHER, "%s (source %d, tag %d)", st.message().c_str(), source, tag);
  return MPI_SUCCESS;
}

int check_probe(int source, int tag, MPI_Comm comm) {
  if (int e = check_comm(comm)) return e;
  if (int e = check_recv_rank(comm, source)) return e;
  return check_recv_tag(comm, tag);
}

}  // namespace

TOROID_MPI_API(int, Iprobe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status)) {
  MPI_ENTER("MPI_Iprobe");
  if (int e = check_probe(source, tag, comm)) return e;
  if (!flag) return raise(comm, MPI_ERR_ARG, "flag is NULL");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  MsgEnvelope env;
  *flag = probe_now(source, tag, comm, &env);
  if (*flag) probe_status(comm, env, status);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status)) {
  MPI_ENTER("MPI_Probe");
  if (int e = check_probe(source, tag, comm)) return e;
  if (source == MPI_PROC_NULL) {
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  MsgEnvelope env;
  if (int e = probe_wait("MPI_Probe: a matching message", source, tag, comm, &env)) return e;
  probe_status(comm, env, status);
  return MPI_SUCCESS;
}

// Matched probes: the message found is taken at once by a receive into the
// message object's buffer (so no other receive can match it), and handed
// to MPI_Mrecv from there.
namespace {

int claim(MPI_Comm comm, const MsgEnvelope& env, MPI_Message* message, MPI_Status* status) {
  auto* m = new toroid_mpi_message();
  m->magic = kMagicMessage;
  m->comm = comm;
  m->data.resize(env.length);
  m->rr.src = static_cast<int32_t>(env.source);
  m->rr.context = comm->p2p_ctx;
  m->rr.tag = env.tag;
  m->rr.buf = m->data.data();
  m->rr.cap = env.length;
  if (Status st = rt().msgr().post(&m->rr); !st) {
    delete m;
    return raise_status(comm, st);
  }
  probe_status(comm, env, &m->status);
  set_status(status, m->status);
  *message = m;
  return MPI_SUCCESS;
}

}  // namespace

TOROID_MPI_API(int, Improbe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                              MPI_Status* status)) {
  MPI_ENTER("MPI_Improbe");
  if (int e = check_probe(source, tag, comm)) return e;
  if (!flag || !message) return raise(comm, MPI_ERR_ARG, "flag or message is NULL");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  MsgEnvelope env;
  *flag = probe_now(source, tag, comm, &env);
  if (!*flag) return MPI_SUCCESS;
  return claim(comm, env, message, status);
}

TOROID_MPI_API(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status)) {
  MPI_ENTER("MPI_Mprobe");
  if (int e = check_probe(source, tag, comm)) return e;
  if (!message) return raise(comm, MPI_ERR_ARG, "message is NULL");
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  MsgEnvelope env;
  if (int e = probe_wait("MPI_Mprobe: a matching message", source, tag, comm, &env)) return e;
  return claim(comm, env, message, status);
}

TOROID_MPI_API(int, Mrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status)) {
  MPI_ENTER("MPI_Mrecv");
  if (!message) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "message is NULL");
  if (*message == MPI_MESSAGE_NO_PROC) {
    proc_null_status(status);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  MPI_Message m = *message;
  if (!m || m->magic != kMagicMessage)
    return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a valid message handle (MPI_Mprobe gives one)");
  if (int e = check_buf(m->comm, buf, count, datatype)) return e;
  Status st = rt().wait([&] { return m->rr.done(); }, "MPI_Mrecv: the rest of the message");
  if (!st) return raise(m->comm, MPI_ERR_OTHER, "%s", st.message().c_str());
  const MPI_Count cap = static_cast<MPI_Count>(count) * datatype->size;
  const MPI_Count got = std::min<MPI_Count>(cap, static_cast<MPI_Count>(m->data.size()));
  unpack(m->data.data(), got, buf, count, datatype);
  m->status.toroid_bytes = got;
  int err = MPI_SUCCESS;
  if (!m->rr.status()) err = raise_status(m->comm, m->rr.status());
  else if (static_cast<MPI_Count>(m->data.size()) > cap)
    err = raise(m->comm, MPI_ERR_TRUNCATE, "a message of %zu bytes does not fit the %lld-byte receive", m->data.size(),
                static_cast<long long>(cap));
  set_status(status, m->status);
  m->magic = 0;
  delete m;
  *message = MPI_MESSAGE_NULL;
  return err;
}

TOROID_MPI_API(int, Imrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request)) {
  MPI_ENTER("MPI_Imrecv");
  if (!request) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "request is NULL");
  // The message's data is already taken by its receive: complete it now.
  MPI_Comm comm = message && *message && *message != MPI_MESSAGE_NO_PROC && (*message)->magic == kMagicMessage
                      ? (*message)->comm
                      : MPI_COMM_WORLD;
  MPI_Status st;
  const int rc = PMPI_Mrecv(buf, count, datatype, message, &st);
  MPI_Request r = request_new(ReqKind::kDone, comm);
  r->status = st;
  r->done = true;
  r->error = rc;
  *request = r;
  return rc;
}
