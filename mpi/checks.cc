// Argument checks shared by every call: each returns 0, or raises MPI's
// error class (through the communicator's handler) with a message naming
// the argument, and returns it.
#include <algorithm>

#include "mpi/impl.h"

namespace toroid::mpi {

int check_comm(MPI_Comm c) {
  if (c == MPI_COMM_NULL) return raise(MPI_COMM_WORLD, MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  if (!valid(c)) return raise(MPI_COMM_WORLD, MPI_ERR_COMM, "not a valid communicator (freed, or not a communicator)");
  return 0;
}

int check_intra(MPI_Comm c) {
  if (int e = check_comm(c)) return e;
  if (c->inter)
    return raise(c, MPI_ERR_COMM,
                 "%s: this operation needs an intracommunicator, not an intercommunicator (make one with "
                 "MPI_Intercomm_merge)",
                 comm_label(c).c_str());
  return 0;
}

int check_count(MPI_Comm c, int count) {
  if (count < 0) return raise(c, MPI_ERR_COUNT, "count %d is negative", count);
  return 0;
}

int check_type(MPI_Comm c, MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return raise(c, MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL");
  if (!valid(t)) return raise(c, MPI_ERR_TYPE, "not a valid datatype (freed, or not a datatype)");
  if (!t->committed) return raise(c, MPI_ERR_TYPE, "datatype '%s' is not committed (MPI_Type_commit)", t->name.c_str());
  if (t == MPI_LB || t == MPI_UB) return raise(c, MPI_ERR_TYPE, "MPI_LB and MPI_UB are markers, not types of data");
  return 0;
}

int check_buf(MPI_Comm c, const void* buf, int count, MPI_Datatype t) {
  if (int e = check_count(c, count)) return e;
  if (int e = check_type(c, t)) return e;
  if (!buf && count > 0 && t->size > 0 && t->predefined)
    return raise(c, MPI_ERR_BUFFER, "the buffer is NULL for %d elements of %s", count, t->name.c_str());
  return 0;
}

int check_send_rank(MPI_Comm c, int dest) {
  if (dest == MPI_PROC_NULL) return 0;
  const int n = c->peer_size();
  if (dest < 0 || dest >= n)
    return raise(c, MPI_ERR_RANK, "rank %d is not in %s (%d ranks%s)", dest, comm_label(c).c_str(), n,
                 c->inter ? " in its remote group" : "");
  return 0;
}

int check_recv_rank(MPI_Comm c, int source) {
  if (source == MPI_ANY_SOURCE) return 0;
  return check_send_rank(c, source);
}

int check_send_tag(MPI_Comm c, int tag) {
  if (tag < 0 || tag > kTagUb)
    return raise(c, MPI_ERR_TAG, "tag %d is outside 0..MPI_TAG_UB (%d)%s", tag, kTagUb,
                 tag == MPI_ANY_TAG ? ": MPI_ANY_TAG is for receives" : "");
  return 0;
}

int check_recv_tag(MPI_Comm c, int tag) {
  if (tag == MPI_ANY_TAG) return 0;
  return check_send_tag(c, tag);
}

ByteSpan span_of(const void* buf, MPI_Count count, MPI_Datatype t) {
  ByteSpan s;
  if (buf == MPI_IN_PLACE || buf == nullptr || count <= 0 || t == nullptr || t->size == 0) return s;
  const char* b = static_cast<const char*>(buf);
  const MPI_Aint last = (count - 1) * t->extent();
  s.lo = b + std::min(t->true_lb, last + t->true_lb);
  s.hi = b + std::max(t->true_ub, last + t->true_ub);
  return s;
}

ByteSpan span_of_blocks(const void* buf, int n, const int* counts, const int* displs, MPI_Datatype t,
                        const MPI_Datatype* types, bool bytes) {
  ByteSpan all;
  if (buf == MPI_IN_PLACE || buf == nullptr || !counts || !displs) return all;
  for (int r = 0; r < n; ++r) {
    MPI_Datatype bt = types ? types[r] : t;
    if (!bt || counts[r] <= 0) continue;
    const MPI_Aint off = bytes ? displs[r] : displs[r] * bt->extent();
    const ByteSpan s = span_of(static_cast<const char*>(buf) + off, counts[r], bt);
    if (s.lo == s.hi) continue;
    if (all.lo == all.hi) all = s;
    all.lo = std::min(all.lo, s.lo);
    all.hi = std::max(all.hi, s.hi);
  }
  return all;
}

int check_no_alias(MPI_Comm c, ByteSpan send, ByteSpan recv) {
  if (send.lo == send.hi || recv.lo == recv.hi) return 0;
  if (send.lo < recv.hi && recv.lo < send.hi)
    return raise(c, MPI_ERR_BUFFER,
                 "the send and receive buffers overlap (MPI_IN_PLACE is the way to work in place)");
  return 0;
}

int check_root(MPI_Comm c, int root) {
  if (root < 0 || root >= c->size)
    return raise(c, MPI_ERR_ROOT, "root %d is not a rank of %s (%d ranks)", root, comm_label(c).c_str(), c->size);
  return 0;
}

int check_op(MPI_Comm c, MPI_Op op) {
  if (op == MPI_OP_NULL) return raise(c, MPI_ERR_OP, "the operation is MPI_OP_NULL");
  if (!valid(op)) return raise(c, MPI_ERR_OP, "not a valid operation (freed, or not an operation)");
  return 0;
}

int check_group(MPI_Group g) {
  if (g == MPI_GROUP_NULL) return raise(MPI_COMM_WORLD, MPI_ERR_GROUP, "the group is MPI_GROUP_NULL");
  if (!valid(g)) return raise(MPI_COMM_WORLD, MPI_ERR_GROUP, "not a valid group (freed, or not a group)");
  return 0;
}

int check_info(MPI_Info i) {
  if (i == MPI_INFO_NULL) return raise(MPI_COMM_WORLD, MPI_ERR_INFO, "the info object is MPI_INFO_NULL");
  if (!valid(i)) return raise(MPI_COMM_WORLD, MPI_ERR_INFO, "not a valid info object (freed, or not an info object)");
  return 0;
}

void empty_status(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->toroid_cancelled = 0;
  st->toroid_bytes = 0;
}

void proc_null_status(MPI_Status* st) {
  empty_status(st);
  if (st != MPI_STATUS_IGNORE) st->MPI_SOURCE = MPI_PROC_NULL;
}

}  // namespace toroid::mpi
