// What every file of the MPI library shares: the definition macro (each
// function is PMPI_<name>, and MPI_<name> a weak alias of it, so profiling
// tools can interpose MPI_<name>), the call name used in error messages,
// error raising through the communicator's handler, and the argument checks
// that give MPI's error classes.
#pragma once
#include <mpi.h>

#include <cstdarg>
#include <string>

#include "mpi/objects.h"
#include "mpi/runtime.h"

#define TOROID_MPI_API(ret, name, params)                                      \
  extern "C" ret MPI_##name params __attribute__((weak, alias("PMPI_" #name))); \
  extern "C" ret PMPI_##name params

namespace toroid::mpi {

// ---- the call being served ----
extern const char* g_call;
struct CallScope {
  const char* saved;
  explicit CallScope(const char* name) : saved(g_call) { g_call = name; }
  ~CallScope() { g_call = saved; }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
};
// A call before MPI_Init or after MPI_Finalize: says so naming the call,
// then aborts (or returns MPI_ERR_OTHER with TOROID_MPI_ERRORS=return).
int not_up();

#define MPI_ENTER(name)                            \
  ::toroid::mpi::CallScope call_scope_(name);      \
  if (!::toroid::mpi::rt().up()) return ::toroid::mpi::not_up()
// For calls MPI allows at any time (MPI_Initialized, MPI_Get_version, ...).
#define MPI_ENTER_ANYTIME(name) ::toroid::mpi::CallScope call_scope_(name)

// ---- errors ----
// Formats "<call>: <text>", remembers it for MPI_Error_string, and invokes
// comm's error handler (MPI_COMM_WORLD's when comm is not valid); returns
// the class for the call to return.
int raise(MPI_Comm comm, int cls, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
int vraise(MPI_Comm comm, int cls, const char* fmt, va_list ap);
// MPI's class for a library status (collective or message failures).
int class_of(const Status& st);
// raise() with a library status: "<call>: <status message>".
int raise_status(MPI_Comm comm, const Status& st);
const char* class_name(int cls);  // "MPI_ERR_RANK"
std::string comm_label(MPI_Comm comm);  // "MPI_COMM_WORLD", "communicator 'name'", ...
// Handlers (errors.cc).
void errhandler_retain(MPI_Errhandler h);
void errhandler_release(MPI_Errhandler h);

// ---- handle checks: 0, or the raised class ----
inline bool valid(MPI_Comm c) { return c && c->magic == kMagicComm; }
inline bool valid(MPI_Group g) { return g && g->magic == kMagicGroup; }
inline bool valid(MPI_Datatype t) { return t && t->magic == kMagicType; }
inline bool valid(MPI_Op o) { return o && o->magic == kMagicOp; }
inline bool valid(MPI_Request r) { return r && r->magic == kMagicRequest; }
inline bool valid(MPI_Errhandler e) { return e && e->magic == kMagicErrh; }
inline bool valid(MPI_Info i) { return i && i->magic == kMagicInfo; }

int check_comm(MPI_Comm c);
int check_intra(MPI_Comm c);  // and not an intercommunicator (collectives, topologies)
int check_count(MPI_Comm c, int count);
int check_type(MPI_Comm c, MPI_Datatype t);          // valid and committed
int check_buf(MPI_Comm c, const void* buf, int count, MPI_Datatype t);
int check_send_rank(MPI_Comm c, int dest);           // a rank of the (remote) group or MPI_PROC_NULL
int check_recv_rank(MPI_Comm c, int source);         // ... or MPI_ANY_SOURCE
int check_send_tag(MPI_Comm c, int tag);             // 0..MPI_TAG_UB
int check_recv_tag(MPI_Comm c, int tag);             // ... or MPI_ANY_TAG
int check_root(MPI_Comm c, int root);
// The bytes a buffer side touches: `count` elements of t at buf, or with
// counts/displs (extents of t; bytes when `bytes`) one block per entry of
// n. Empty (lo == hi) when nothing is touched or buf is MPI_IN_PLACE.
struct ByteSpan {
  const char* lo = nullptr;
  const char* hi = nullptr;
};
ByteSpan span_of(const void* buf, MPI_Count count, MPI_Datatype t);
ByteSpan span_of_blocks(const void* buf, int n, const int* counts, const int* displs, MPI_Datatype t,
                        const MPI_Datatype* types = nullptr, bool bytes = false);
// MPI_ERR_BUFFER when the send and receive sides overlap (MPI 3.1 2.5.1:
// an output argument aliases no other argument; MPI_IN_PLACE is the way
// to work in place). Checked locally, before the operation starts.
int check_no_alias(MPI_Comm c, ByteSpan send, ByteSpan recv);
int check_op(MPI_Comm c, MPI_Op op);
int check_group(MPI_Group g);
int check_info(MPI_Info i);

constexpr int kTagUb = 0x7fffffff;
// Tags of the library's own messages on a communicator's point-to-point
// context (intercommunicator set-up, context agreement): never a user tag.
constexpr uint32_t kInternalTagBase = 0x80000000u;

// The empty status (MPI 3.1 3.7.3: a null or inactive request): source
// MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0.
void empty_status(MPI_Status* st);
// A receive from MPI_PROC_NULL (3.11): source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0.
void proc_null_status(MPI_Status* st);
// Copies a status out, all but its error field: MPI 3.1 3.2.5 lets only the
// calls that return several statuses write that field, and only when they
// return MPI_ERR_IN_STATUS (mark_in_status).
inline void set_status(MPI_Status* dst, const MPI_Status& src) {
  if (dst == MPI_STATUS_IGNORE) return;
  const int keep = dst->MPI_ERROR;
  *dst = src;
  dst->MPI_ERROR = keep;
}

// Live communicators, freed in MPI_Finalize before the node goes (comm.cc).
void comm_register(MPI_Comm c);
void comm_unregister(MPI_Comm c);
void comm_free_all();
// Reference counts of groups, datatypes and operations (groups.cc, datatype.cc, op.cc).
void group_retain(MPI_Group g);
void group_release(MPI_Group g);
MPI_Group group_new(std::vector<uint32_t> world);
void type_retain(MPI_Datatype t);
void type_release(MPI_Datatype t);
void op_retain(MPI_Op op);
void op_release(MPI_Op op);

}  // namespace toroid::mpi
