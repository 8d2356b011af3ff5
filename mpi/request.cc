// Requests (MPI 3.1 sections 3.7-3.9, 12.2): completion (wait and test in
// their one, any, all and some forms), cancellation, persistent requests,
// generalized requests. Waits drive the node's event loop until a request
// completes, bounded by TOROID_MPI_TIMEOUT. Request objects are pooled.
#include <algorithm>
#include <vector>

#include "mpi/coll_engine.h"
#include "mpi/request.h"

namespace toroid::mpi {

namespace {

std::vector<MPI_Request>& pool() {
  static auto* v = new std::vector<MPI_Request>();
  return *v;
}
// Requests freed by MPI_Request_free while still active: recycled when done.
std::vector<MPI_Request>& orphans() {
  static auto* v = new std::vector<MPI_Request>();
  return *v;
}

// A request freed by the program, ready: its completion's work (unpacking
// a receive, a generalized request's free_fn) with nobody to tell, then back
// to the pool.
void release_unobserved(MPI_Request r) {
  switch (r->kind) {
    case ReqKind::kSend:
    case ReqKind::kRecv: (void)p2p_complete(r); break;
    case ReqKind::kPair: (void)pair_complete(r); break;
    case ReqKind::kGeneralized:
      if (r->gf) (void)r->gf(r->gstate);
      break;
    default: break;
  }
  request_recycle(r);
}

void reap_orphans() {
  auto& o = orphans();
  for (size_t i = 0; i < o.size();) {
    if (!request_ready(o[i])) {
      ++i;
      continue;
    }
    MPI_Request r = o[i];
    o[i] = o.back();
    o.pop_back();
    release_unobserved(r);
  }
}

bool inactive(MPI_Request r) { return r == MPI_REQUEST_NULL || (r->persistent && !r->active); }

uint64_t g_start_seq = 0;

// Of the active requests that are ready, the one started first; -1 if none.
// MPI leaves the choice of MPI_Waitany and MPI_Testany open (3.7.5); the
// oldest keeps what several receives posted at once took in the order it
// arrived, as programs that end on a "finished" message expect (HPCC's MPI
// RandomAccess posts 4 receives of any source and tag and stops at the last
// "finished": by index, an update in a later slot was dropped after it).
int oldest_ready(int count, MPI_Request reqs[]) {
  int found = -1;
  for (int i = 0; i < count; ++i) {
    MPI_Request r = reqs[i];
    if (inactive(r) || !request_ready(r)) continue;
    if (found < 0 || r->start_seq < reqs[found]->start_seq) found = i;
  }
  return found;
}

}  // namespace

void bsend_release(MPI_Request r);  // bsend.cc

MPI_Request request_new(ReqKind kind, MPI_Comm comm) {
  MPI_Request r;
  if (!pool().empty()) {
    r = pool().back();
    pool().pop_back();
  } else {
    r = new toroid_mpi_request();
  }
  r->magic = kMagicRequest;
  r->kind = kind;
  r->done = false;
  r->persistent = false;
  r->active = false;
  r->user_freed = false;
  r->cancelled = false;
  r->error = MPI_SUCCESS;
  r->status = MPI_Status{};
  r->start_seq = ++g_start_seq;
  r->comm = comm;
  if (comm) ++comm->requests;
  r->handle = 0;
  r->coll = nullptr;
  r->bsend_slot = nullptr;
  r->type = nullptr;
  r->stage.packed = false;
  r->stage.pack.clear();
  r->pair_send = r->pair_recv = nullptr;
  return r;
}

void request_recycle(MPI_Request r) {
  if (r->kind == ReqKind::kPair) pair_release(r);
  if (r->coll) coll_request_free(r);
  if (r->bsend_slot) bsend_release(r);
  if (r->type) type_release(r->type);
  r->type = nullptr;
  if (r->comm) comm_release_request(r->comm);
  r->comm = nullptr;
  r->magic = 0;
  if (r->stage.pack.capacity() > (1u << 20)) std::vector<uint8_t>().swap(r->stage.pack);
  pool().push_back(r);
}

bool request_ready(MPI_Request r) {
  switch (r->kind) {
    case ReqKind::kSend:
    case ReqKind::kRecv: return p2p_ready(r);
    case ReqKind::kColl: return r->coll && r->coll->finished;
    case ReqKind::kPair: return pair_ready(r);
    default: return r->done;
  }
}

int request_finish(MPI_Request* handle, MPI_Status* st) {
  MPI_Request r = *handle;
  int err = MPI_SUCCESS;
  switch (r->kind) {
    case ReqKind::kSend:
    case ReqKind::kRecv:
      err = p2p_complete(r);
      break;
    case ReqKind::kColl:
      r->status = MPI_Status{};
      r->status.MPI_SOURCE = MPI_ANY_SOURCE;
      r->status.MPI_TAG = MPI_ANY_TAG;
      if (r->coll && !r->coll->result) err = raise_status(r->comm, r->coll->result);
      break;
    case ReqKind::kGeneralized:
      r->status.MPI_ERROR = MPI_SUCCESS;
      err = r->gq ? r->gq(r->gstate, &r->status) : MPI_SUCCESS;
      break;
    case ReqKind::kPair:
      err = pair_complete(r);
      break;
    default:
      err = r->error;
      break;
  }
  r->status.MPI_ERROR = err;
  set_status(st, r->status);
  if (r->persistent) {
    r->active = false;
    if (r->bsend_slot) bsend_release(r);
    return err;
  }
  if (r->kind == ReqKind::kGeneralized && r->gf) {
    const int ferr = r->gf(r->gstate);
    if (!err) err = ferr;
  }
  request_recycle(r);
  *handle = MPI_REQUEST_NULL;
  return err;
}

int bsend_start_persistent(MPI_Request r);  // bsend.cc

int request_start(MPI_Request r) {
  if (!valid(r) || !r->persistent) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a persistent request");
  if (r->active) return raise(r->comm, MPI_ERR_REQUEST, "the persistent request is already active");
  r->active = true;
  r->start_seq = ++g_start_seq;
  if (r->kind == ReqKind::kRecv) return p2p_start_recv(r);
  if (r->send_mode == 2) return bsend_start_persistent(r);
  return p2p_start_send(r);
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

namespace {

int check_request_array(int count, MPI_Request reqs[]) {
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, "count %d is negative", count);
  if (count > 0 && !reqs) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "the request array is NULL");
  for (int i = 0; i < count; ++i)
    if (reqs[i] != MPI_REQUEST_NULL && !valid(reqs[i]))
      return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "request %d is not a valid request", i);
  return 0;
}

// MPI_ERR_IN_STATUS: every status of the call gets its request's error
// (MPI_SUCCESS for those that completed).
void mark_in_status(MPI_Status* statuses, const std::vector<int>& errs) {
  for (size_t i = 0; i < errs.size(); ++i) statuses[i].MPI_ERROR = errs[i];
}

MPI_Status* status_at(MPI_Status* statuses, int i) { return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]; }

// Every request of a ready array finished: statuses, errors in them.
int finish_all(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  int failed = 0;
  MPI_Comm where = MPI_COMM_WORLD;
  std::vector<int> errs;  // made on the first failure only
  for (int i = 0; i < count; ++i) {
    MPI_Status* s = status_at(array_of_statuses, i);
    if (inactive(array_of_requests[i])) {
      empty_status(s);
      continue;
    }
    MPI_Comm c = array_of_requests[i]->comm;
    MPI_Status tmp;
    const int e = request_finish(&array_of_requests[i], s == MPI_STATUS_IGNORE ? &tmp : s);
    if (e) {
      if (errs.empty()) errs.assign(static_cast<size_t>(count), MPI_SUCCESS);
      errs[static_cast<size_t>(i)] = e;
      ++failed;
      where = c;
    }
  }
  if (!failed) return MPI_SUCCESS;
  if (array_of_statuses == MPI_STATUSES_IGNORE) return MPI_ERR_IN_STATUS;
  mark_in_status(array_of_statuses, errs);
  return raise(where, MPI_ERR_IN_STATUS, "%d of %d requests failed", failed, count);
}

// A blocking wait that completes a non-blocking collective returns once
// this rank's frames of it have left, as a blocking collective does
// (coll_engine.h); the Test calls never wait for that.
void drain_after_collectives(int count, const MPI_Request* reqs) {
  for (int i = 0; i < count; ++i) {
    const MPI_Request r = reqs[i];
    if (!inactive(r) && r->kind == ReqKind::kColl && r->coll && r->coll->finished && r->coll->result) {
      drain_after_collective();
      return;
    }
  }
}

}  // namespace

TOROID_MPI_API(int, Wait, (MPI_Request * request, MPI_Status* status)) {
  MPI_ENTER("MPI_Wait");
  if (!request) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "request is NULL");
  MPI_Request r = *request;
  if (r != MPI_REQUEST_NULL && !valid(r)) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a valid request");
  if (inactive(r)) {
    empty_status(status);
    return MPI_SUCCESS;
  }
  if (!request_ready(r)) {
    Status st = rt().wait([&] { return request_ready(r); }, "MPI_Wait: its request");
    if (!st) return raise(r->comm, MPI_ERR_OTHER, "%s", st.message().c_str());
  }
  drain_after_collectives(1, request);
  return request_finish(request, status);
}

TOROID_MPI_API(int, Test, (MPI_Request * request, int* flag, MPI_Status* status)) {
  MPI_ENTER("MPI_Test");
  if (!request || !flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "request or flag is NULL");
  MPI_Request r = *request;
  if (r != MPI_REQUEST_NULL && !valid(r)) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a valid request");
  if (inactive(r)) {
    *flag = 1;
    empty_status(status);
    return MPI_SUCCESS;
  }
  if (!request_ready(r)) rt().progress();
  *flag = request_ready(r);
  return *flag ? request_finish(request, status) : MPI_SUCCESS;
}

TOROID_MPI_API(int, Request_get_status, (MPI_Request request, int* flag, MPI_Status* status)) {
  MPI_ENTER("MPI_Request_get_status");
  if (!flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "flag is NULL");
  if (request != MPI_REQUEST_NULL && !valid(request)) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a valid request");
  if (inactive(request)) {
    *flag = 1;
    empty_status(status);
    return MPI_SUCCESS;
  }
  if (!request_ready(request)) rt().progress();
  *flag = request_ready(request);
  if (!*flag) return MPI_SUCCESS;
  // The status without freeing the request: a receive's fields are read, not consumed.
  MPI_Status s{};
  // An MPI_Isendrecv's status is its receive's.
  MPI_Request q = request->kind == ReqKind::kPair ? request->pair_recv : request;
  if (q->kind == ReqKind::kRecv && q->peer != MPI_PROC_NULL && !q->cancelled) {
    MPI_Group from = q->comm->inter ? q->comm->remote : q->comm->group;
    s.MPI_SOURCE = from->rank_of(q->rr.source());
    s.MPI_TAG = static_cast<int>(q->rr.msg_tag());
    s.toroid_bytes = static_cast<MPI_Count>(std::min<uint64_t>(q->rr.length(), q->rr.cap));
  } else if (q->kind == ReqKind::kGeneralized && q->gq) {
    (void)q->gq(q->gstate, &s);
  } else if (q->kind == ReqKind::kRecv) {
    s.MPI_SOURCE = q->cancelled ? q->peer : MPI_PROC_NULL;
    s.MPI_TAG = q->cancelled ? q->tag : MPI_ANY_TAG;
  }
  s.toroid_cancelled = q->cancelled;
  set_status(status, s);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])) {
  MPI_ENTER("MPI_Waitall");
  if (int e = check_request_array(count, array_of_requests)) return e;
  auto all_ready = [&] {
    for (int i = 0; i < count; ++i)
      if (!inactive(array_of_requests[i]) && !request_ready(array_of_requests[i])) return false;
    return true;
  };
  if (!all_ready()) {
    Status st = rt().wait(all_ready, "MPI_Waitall: its requests");
    if (!st) return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s", st.message().c_str());
  }
  drain_after_collectives(count, array_of_requests);
  return finish_all(count, array_of_requests, array_of_statuses);
}

TOROID_MPI_API(int, Testall, (int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[])) {
  MPI_ENTER("MPI_Testall");
  if (int e = check_request_array(count, array_of_requests)) return e;
  if (!flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "flag is NULL");
  auto all_ready = [&] {
    for (int i = 0; i < count; ++i)
      if (!inactive(array_of_requests[i]) && !request_ready(array_of_requests[i])) return false;
    return true;
  };
  if (!all_ready()) rt().progress();
  *flag = all_ready();
  if (!*flag) return MPI_SUCCESS;
  return finish_all(count, array_of_requests, array_of_statuses);
}

TOROID_MPI_API(int, Waitany, (int count, MPI_Request array_of_requests[], int* index, MPI_Status* status)) {
  MPI_ENTER("MPI_Waitany");
  if (int e = check_request_array(count, array_of_requests)) return e;
  if (!index) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "index is NULL");
  int found = -1;
  bool any_active = false;
  for (int i = 0; i < count; ++i) any_active |= !inactive(array_of_requests[i]);
  if (!any_active) {
    *index = MPI_UNDEFINED;
    empty_status(status);
    return MPI_SUCCESS;
  }
  auto pick = [&] {
    found = oldest_ready(count, array_of_requests);
    return found >= 0;
  };
  if (!pick()) {
    Status st = rt().wait(pick, "MPI_Waitany: one of its requests");
    if (!st) return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s", st.message().c_str());
  }
  *index = found;
  drain_after_collectives(1, &array_of_requests[found]);
  return request_finish(&array_of_requests[found], status);
}

TOROID_MPI_API(int, Testany, (int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status)) {
  MPI_ENTER("MPI_Testany");
  if (int e = check_request_array(count, array_of_requests)) return e;
  if (!index || !flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "index or flag is NULL");
  bool any_active = false;
  for (int i = 0; i < count; ++i) any_active |= !inactive(array_of_requests[i]);
  if (!any_active) {
    *flag = 1;
    *index = MPI_UNDEFINED;
    empty_status(status);
    return MPI_SUCCESS;
  }
  for (int pass = 0; pass < 2; ++pass) {
    const int i = oldest_ready(count, array_of_requests);
    if (i >= 0) {
      *flag = 1;
      *index = i;
      return request_finish(&array_of_requests[i], status);
    }
    if (pass == 0) rt().progress();
  }
  *flag = 0;
  *index = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

namespace {

int finish_some(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  int n = 0, failed = 0;
  MPI_Comm where = MPI_COMM_WORLD;
  std::vector<int> errs;  // made on the first failure only
  for (int i = 0; i < incount; ++i) {
    if (inactive(reqs[i]) || !request_ready(reqs[i])) continue;
    MPI_Comm c = reqs[i]->comm;
    MPI_Status tmp;
    MPI_Status* s = statuses == MPI_STATUSES_IGNORE ? &tmp : &statuses[n];
    if (const int e = request_finish(&reqs[i], s)) {
      if (errs.empty()) errs.assign(static_cast<size_t>(incount), MPI_SUCCESS);
      errs[static_cast<size_t>(n)] = e;
      ++failed;
      where = c;
    }
    indices[n++] = i;
  }
  *outcount = n;
  if (!failed) return MPI_SUCCESS;
  if (statuses == MPI_STATUSES_IGNORE) return MPI_ERR_IN_STATUS;
  errs.resize(static_cast<size_t>(n));
  mark_in_status(statuses, errs);
  return raise(where, MPI_ERR_IN_STATUS, "%d of %d requests failed", failed, n);
}

}  // namespace

TOROID_MPI_API(int, Waitsome, (int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                               MPI_Status array_of_statuses[])) {
  MPI_ENTER("MPI_Waitsome");
  if (int e = check_request_array(incount, array_of_requests)) return e;
  if (!outcount || (incount > 0 && !array_of_indices)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "outcount or indices is NULL");
  bool any_active = false;
  for (int i = 0; i < incount; ++i) any_active |= !inactive(array_of_requests[i]);
  if (!any_active) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  auto some = [&] {
    for (int i = 0; i < incount; ++i)
      if (!inactive(array_of_requests[i]) && request_ready(array_of_requests[i])) return true;
    return false;
  };
  if (!some()) {
    Status st = rt().wait(some, "MPI_Waitsome: one of its requests");
    if (!st) return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s", st.message().c_str());
  }
  drain_after_collectives(incount, array_of_requests);
  return finish_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

TOROID_MPI_API(int, Testsome, (int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                               MPI_Status array_of_statuses[])) {
  MPI_ENTER("MPI_Testsome");
  if (int e = check_request_array(incount, array_of_requests)) return e;
  if (!outcount || (incount > 0 && !array_of_indices)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "outcount or indices is NULL");
  bool any_active = false;
  for (int i = 0; i < incount; ++i) any_active |= !inactive(array_of_requests[i]);
  if (!any_active) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  rt().progress();
  return finish_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

TOROID_MPI_API(int, Request_free, (MPI_Request * request)) {
  MPI_ENTER("MPI_Request_free");
  if (!request || !valid(*request)) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a valid request");
  MPI_Request r = *request;
  *request = MPI_REQUEST_NULL;
  const bool running = (!r->persistent || r->active) && !request_ready(r);
  if (!running) {
    release_unobserved(r);
    return MPI_SUCCESS;
  }
  r->user_freed = true;
  orphans().push_back(r);
  reap_orphans();
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Cancel, (MPI_Request * request)) {
  MPI_ENTER("MPI_Cancel");
  if (!request || !valid(*request)) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a valid request");
  MPI_Request r = *request;
  switch (r->kind) {
    case ReqKind::kSend:
    case ReqKind::kRecv:
      (void)p2p_cancel(r);  // may fail: the request then completes normally (MPI 3.1 3.8.4)
      return MPI_SUCCESS;
    case ReqKind::kGeneralized:
      return r->gc ? r->gc(r->gstate, r->done) : MPI_SUCCESS;
    case ReqKind::kPair:
      return MPI_SUCCESS;  // a cancel may fail (MPI 3.1 3.8.4): it completes as it would have
    default:
      return raise(r->comm, MPI_ERR_REQUEST, "a collective's request cannot be cancelled");
  }
}

TOROID_MPI_API(int, Start, (MPI_Request * request)) {
  MPI_ENTER("MPI_Start");
  if (!request) return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "request is NULL");
  return request_start(*request);
}

TOROID_MPI_API(int, Startall, (int count, MPI_Request array_of_requests[])) {
  MPI_ENTER("MPI_Startall");
  if (int e = check_request_array(count, array_of_requests)) return e;
  for (int i = 0; i < count; ++i)
    if (int e = request_start(array_of_requests[i])) return e;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Grequest_start, (MPI_Grequest_query_function * query_fn, MPI_Grequest_free_function* free_fn,
                                     MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request)) {
  MPI_ENTER("MPI_Grequest_start");
  if (!request) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "request is NULL");
  MPI_Request r = request_new(ReqKind::kGeneralized, MPI_COMM_WORLD);
  r->gq = query_fn;
  r->gf = free_fn;
  r->gc = cancel_fn;
  r->gstate = extra_state;
  *request = r;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Grequest_complete, (MPI_Request request)) {
  MPI_ENTER("MPI_Grequest_complete");
  if (!valid(request) || request->kind != ReqKind::kGeneralized)
    return raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a generalized request");
  request->done = true;
  return MPI_SUCCESS;
}

namespace toroid::mpi {
void requests_progress() { reap_orphans(); }
}  // namespace toroid::mpi
