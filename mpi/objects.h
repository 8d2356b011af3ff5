// The objects behind MPI's opaque handles. A handle is a pointer to one of
// these; the predefined ones are static objects the library exports (their
// addresses are the constants in mpi.h). Every object starts with a magic
// word that names its kind and is cleared when it is freed, so a freed or
// foreign handle is refused with MPI's error class instead of being used
// (freed objects are kept on free lists, never returned to the allocator
// while the library runs, so reading the word stays safe).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/comm.h"
#include "collectives/dtype.h"
#include "netstack/p2p.h"

namespace toroid::mpi {

enum Magic : uint32_t {
  kMagicComm = 0x636f6d6d,
  kMagicGroup = 0x67727570,
  kMagicType = 0x74797065,
  kMagicOp = 0x6f706572,
  kMagicRequest = 0x72657175,
  kMagicErrh = 0x65727268,
  kMagicInfo = 0x696e666f,
  kMagicMessage = 0x6d657367,
};

// Attributes cached on a communicator, datatype or window: (keyval, value).
struct Attr {
  int keyval;
  void* value;
};
using AttrList = std::vector<Attr>;

// ---- datatypes ----

// The primitive C (and Fortran) types a type map is made of.
enum class Prim : uint8_t {
  kNone,
  kChar, kSChar, kUChar, kShort, kUShort, kInt, kUInt, kLong, kULong, kLongLong, kULongLong,
  kFloat, kDouble, kLongDouble, kWChar, kCBool, kCxxBool,
  kInt8, kInt16, kInt32, kInt64, kUInt8, kUInt16, kUInt32, kUInt64, kAint, kOffset, kCount,
  kCFloatComplex, kCDoubleComplex, kCLongDoubleComplex, kByte, kPacked,
  kCharacter, kLogical, kInteger, kReal, kDoublePrecision, kComplex, kDoubleComplex,
  kInteger1, kInteger2, kInteger4, kInteger8, kReal4, kReal8, kReal16, kComplex8, kComplex16, kComplex32,
};

// The predefined (value, index) pair types of MINLOC/MAXLOC.
enum class Pair : uint8_t { kNone, kFloatInt, kDoubleInt, kLongInt, k2Int, kShortInt, kLongDoubleInt, k2Real,
                            k2DoublePrecision, k2Integer };

struct Block {
  MPI_Aint disp;  // from the element's origin
  MPI_Aint len;   // bytes
};
struct SigRun {
  Prim prim;
  MPI_Count n;
};

}  // namespace toroid::mpi

struct toroid_mpi_datatype {
  uint32_t magic = 0;
  bool predefined = false;
  bool committed = false;
  int refs = 1;  // the handle, plus every derived type and operation using it
  int combiner = MPI_COMBINER_NAMED;
  MPI_Count size = 0;                  // bytes of data in one element
  MPI_Aint lb = 0, ub = 0;             // extent = ub - lb
  MPI_Aint true_lb = 0, true_ub = 0;   // where the data really lies
  bool lb_marker = false, ub_marker = false;  // bounds set by MPI_LB/MPI_UB or create_resized (sticky)
  std::vector<toroid::mpi::Block> blocks;     // one element's data, in type-map order, adjacent ones merged
  bool contig = false;                 // one block, size == extent: elements lie back to back
  toroid::mpi::Prim prim = toroid::mpi::Prim::kNone;  // every primitive is this one (kNone: mixed)
  toroid::mpi::Pair pair = toroid::mpi::Pair::kNone;  // a predefined pair type
  std::vector<toroid::mpi::SigRun> sig;  // one element's type signature
  MPI_Count prims = 0;                 // primitives in one element
  MPI_Aint align = 1;                  // the largest primitive alignment (struct extents are padded to it)
  // What made it (MPI_Type_get_envelope / get_contents).
  std::vector<int> ints;
  std::vector<MPI_Aint> aints;
  std::vector<MPI_Datatype> types;
  std::string name;
  toroid::mpi::AttrList attrs;
  MPI_Aint extent() const { return ub - lb; }
};

struct toroid_mpi_group {
  uint32_t magic = 0;
  bool predefined = false;
  int refs = 1;
  std::vector<uint32_t> world;  // rank -> partition rank
  int rank = MPI_UNDEFINED;     // this process's rank in it
  std::vector<std::pair<uint32_t, int>> index;  // (partition rank, rank), sorted
  int size() const { return static_cast<int>(world.size()); }
  // The group's rank of a partition rank, or MPI_UNDEFINED.
  int rank_of(uint32_t world_rank) const;
  void build_index();
};

struct toroid_mpi_errhandler {
  uint32_t magic = 0;
  bool predefined = false;
  int refs = 1;
  enum Kind : uint8_t { kFatal, kReturn, kComm, kWin, kFile } kind = kFatal;
  MPI_Comm_errhandler_function* comm_fn = nullptr;
  MPI_Win_errhandler_function* win_fn = nullptr;
  MPI_File_errhandler_function* file_fn = nullptr;
};

struct toroid_mpi_info {
  uint32_t magic = 0;
  bool predefined = false;
  std::vector<std::pair<std::string, std::string>> kv;  // in insertion order
  const std::string* find(const std::string& key) const;
};

struct toroid_mpi_op {
  uint32_t magic = 0;
  bool predefined = false;
  int refs = 1;
  int which = 0;               // toroid::mpi::OpKind
  MPI_User_function* fn = nullptr;
  bool commute = true;
  const char* name = "";
};

namespace toroid::mpi {
struct Topology;
struct CollOp;
}

struct toroid_mpi_comm {
  uint32_t magic = 0;
  bool predefined = false;
  bool inter = false;
  // MPI_Comm_free marks it; it goes when the last request on it is
  // recycled (MPI 3.1 6.4.3: pending operations complete normally).
  bool user_freed = false;
  uint32_t requests = 0;  // requests (pending or persistent) that name it
  toroid::Comm* coll = nullptr;              // intra: the library communicator
  std::unique_ptr<toroid::Comm> owned;       // ... when it is this object's
  MPI_Group group = nullptr;                 // the local group
  MPI_Group remote = nullptr;                // intercommunicator: the remote group
  uint16_t p2p_ctx = 0;                      // context of its point-to-point messages
  // Intercommunicator: `coll` spans both groups; local rank i is its rank
  // local_base + i, remote rank j its rank remote_base + j.
  uint32_t local_base = 0, remote_base = 0;
  int rank = 0, size = 0;
  std::string name;
  MPI_Errhandler errh = nullptr;
  toroid::mpi::AttrList attrs;
  std::unique_ptr<toroid::mpi::Topology> topo;
  toroid::Repro repro = toroid::Repro::kNone;  // TOROID_REPRO or the info key toroid_repro
  std::vector<std::pair<std::string, std::string>> hints;  // MPI_Comm_set_info
  // Non-blocking collectives not finished yet, in start order (one runs at a time).
  toroid::mpi::CollOp* queue_head = nullptr;
  toroid::mpi::CollOp* queue_tail = nullptr;
  MPI_Comm next_active = nullptr;  // on the progress engine's list while queue_head != nullptr
  bool on_active = false;
  uint32_t internal_tag = 0;  // tags of the library's own exchanges on its point-to-point context
  // Failure reports (coll_engine.cc): a member whose collective failed tells
  // the others, so they fail the same operation at once instead of waiting
  // for its deadline.
  toroid::RecvReq report_rr;
  uint8_t report_in[512];
  std::vector<uint8_t> report_out;
  std::vector<uint64_t> report_sends;  // handles of our report's messages
  bool report_posted = false;
  uint32_t reported_tag = 1;  // the operation (tag group: a multiple of 65536, never 1) a report already failed
  // The partition rank of one of its ranks (intra: of its group; inter: of the remote group).
  uint32_t peer_world(int r) const { return (inter ? remote : group)->world[static_cast<size_t>(r)]; }
  int peer_size() const { return inter ? remote->size() : size; }
};

namespace toroid::mpi {

enum class ReqKind : uint8_t { kNone, kSend, kRecv, kColl, kGeneralized, kDone, kPair };

// How a buffer of `count` elements of a datatype meets the network: in place
// (contiguous data, `base` points at its first byte) or through `pack`.
struct Staging {
  uint8_t* base = nullptr;     // contiguous bytes sent or received
  MPI_Count bytes = 0;
  std::vector<uint8_t> pack;   // non-contiguous: the packed bytes
  bool packed = false;
};

}  // namespace toroid::mpi

struct toroid_mpi_request {
  uint32_t magic = 0;
  toroid::mpi::ReqKind kind = toroid::mpi::ReqKind::kNone;
  bool done = false;
  bool persistent = false;
  bool active = false;       // persistent: started and not yet completed
  bool user_freed = false;   // MPI_Request_free on an active request: freed when it completes
  bool cancelled = false;
  int error = MPI_SUCCESS;
  uint64_t start_seq = 0;    // when it was (last) started: Waitany/Testany take the oldest ready one
  MPI_Status status{};
  MPI_Comm comm = nullptr;
  // point-to-point
  const void* user_buf = nullptr;
  int count = 0;
  MPI_Datatype type = nullptr;
  int peer = 0;  // destination / source (comm rank), MPI_ANY_SOURCE, MPI_PROC_NULL
  int tag = 0;
  int send_mode = 0;  // 0 standard, 1 synchronous, 2 buffered, 3 ready
  uint64_t handle = 0;  // messenger send handle
  toroid::RecvReq rr;
  toroid::mpi::Staging stage;
  void* bsend_slot = nullptr;  // buffered send: its place in the attached buffer
  // collectives
  toroid::mpi::CollOp* coll = nullptr;
  // MPI_Isendrecv: its send and receive (kPair)
  toroid_mpi_request* pair_send = nullptr;
  toroid_mpi_request* pair_recv = nullptr;
  // generalized requests
  MPI_Grequest_query_function* gq = nullptr;
  MPI_Grequest_free_function* gf = nullptr;
  MPI_Grequest_cancel_function* gc = nullptr;
  void* gstate = nullptr;
  toroid_mpi_request* next_free = nullptr;
};

struct toroid_mpi_message {
  uint32_t magic = 0;
  bool no_proc = false;
  MPI_Comm comm = nullptr;
  toroid::RecvReq rr;
  std::vector<uint8_t> data;
  MPI_Status status{};
};

struct toroid_mpi_win {
  uint32_t magic;
};
struct toroid_mpi_file {
  uint32_t magic;
};
