// Buffered sends (MPI 3.1 section 3.6): the data is copied into the buffer
// the program attached, and sent from there; MPI_Bsend returns at once. Each
// message takes its size plus MPI_BSEND_OVERHEAD of the buffer until it has
// left; a message that does not fit is MPI_ERR_BUFFER.
#include <algorithm>
#include <vector>

#include "mpi/datatype.h"
#include "mpi/request.h"

namespace toroid::mpi {

namespace {

struct Slot {
  size_t off, len;  // len includes the overhead
};
uint8_t* g_buf = nullptr;
size_t g_size = 0;
std::vector<Slot>& used() {
  static auto* v = new std::vector<Slot>();
  return *v;
}

uint8_t* alloc_slot(size_t bytes) {
  const size_t need = bytes + MPI_BSEND_OVERHEAD;
  size_t at = 0;
  auto& u = used();
  for (size_t i = 0; i <= u.size(); ++i) {
    const size_t end = i < u.size() ? u[i].off : g_size;
    if (end >= at && end - at >= need) {
      u.insert(u.begin() + static_cast<ptrdiff_t>(i), Slot{at, need});
      return g_buf + at + MPI_BSEND_OVERHEAD;
    }
    if (i < u.size()) at = u[i].off + u[i].len;
  }
  return nullptr;
}

size_t in_use() {
  size_t n = 0;
  for (const Slot& s : used()) n += s.len;
  return n;
}

// Sends count elements of t at buf from a slot of the attached buffer.
int start_from_slot(MPI_Request r, const void* buf, int count, MPI_Datatype t) {
  const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(t->size);
  uint8_t* slot = alloc_slot(bytes);
  if (!slot)
    return raise(r->comm, MPI_ERR_BUFFER,
                 "the attached buffer (%zu bytes, %zu in use) has no room for %zu bytes plus MPI_BSEND_OVERHEAD "
                 "(MPI_Buffer_attach a larger one)",
                 g_size, in_use(), bytes);
  pack(buf, count, t, slot);
  r->bsend_slot = slot;
  const void* ub = r->user_buf;
  const int uc = r->count;
  MPI_Datatype ut = r->type;
  r->user_buf = slot;
  r->count = static_cast<int>(bytes);
  r->type = MPI_BYTE;
  const int rc = p2p_start_send(r);
  r->user_buf = ub;
  r->count = uc;
  r->type = ut;
  return rc;
}

}  // namespace

void bsend_release(MPI_Request r) {
  const auto* slot = static_cast<uint8_t*>(r->bsend_slot);
  r->bsend_slot = nullptr;
  if (!slot || !g_buf) return;
  const size_t off = static_cast<size_t>(slot - g_buf) - MPI_BSEND_OVERHEAD;
  auto& u = used();
  for (size_t i = 0; i < u.size(); ++i)
    if (u[i].off == off) {
      u.erase(u.begin() + static_cast<ptrdiff_t>(i));
      return;
    }
}

int bsend_start(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  if (int e = check_comm(comm)) return e;
  if (int e = check_buf(comm, buf, count, t)) return e;
  if (int e = check_send_rank(comm, dest)) return e;
  if (int e = check_send_tag(comm, tag)) return e;
  MPI_Request r = request_new(ReqKind::kSend, comm);
  r->user_buf = buf;
  r->count = count;
  r->type = t;
  type_retain(t);
  r->peer = dest;
  r->tag = tag;
  r->send_mode = 2;
  r->active = true;
  if (dest == MPI_PROC_NULL) {
    r->done = true;
    *request = r;
    return MPI_SUCCESS;
  }
  if (int e = start_from_slot(r, buf, count, t)) {
    request_recycle(r);
    return e;
  }
  *request = r;
  return MPI_SUCCESS;
}

int bsend_start_persistent(MPI_Request r) {
  if (r->peer == MPI_PROC_NULL) return p2p_start_send(r);
  return start_from_slot(r, r->user_buf, r->count, r->type);
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Buffer_attach, (void* buffer, int size)) {
  MPI_ENTER("MPI_Buffer_attach");
  if (g_buf) return raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "a buffer is already attached (MPI_Buffer_detach it first)");
  if (size < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "size %d is negative", size);
  if (!buffer && size > 0) return raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "the buffer is NULL");
  g_buf = static_cast<uint8_t*>(buffer);
  g_size = static_cast<size_t>(size);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Buffer_detach, (void* buffer_addr, int* size)) {
  MPI_ENTER("MPI_Buffer_detach");
  if (!buffer_addr || !size) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "buffer_addr or size is NULL");
  // Blocks until every message in the buffer has left.
  if (!used().empty()) {
    Status st = rt().wait([] { return used().empty(); }, "MPI_Buffer_detach: the buffered messages to leave");
    if (!st) return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s", st.message().c_str());
  }
  *static_cast<void**>(buffer_addr) = g_buf;
  *size = static_cast<int>(g_size);
  g_buf = nullptr;
  g_size = 0;
  return MPI_SUCCESS;
}
