// Error classes, codes and strings; error handlers (MPI 3.1 section 8.3-8.5).
//
// Every error a call raises carries a message that names the call and what
// was wrong ("MPI_Send: rank 9 is not in MPI_COMM_WORLD (8 ranks)"). The
// communicator's handler decides: MPI_ERRORS_ARE_FATAL prints it with the
// class and stops the job (the launcher stops every rank), MPI_ERRORS_RETURN
// returns the class, a user handler is called with it. MPI_Error_string
// gives the class's text followed by the last message of that class.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "mpi/impl.h"
#include "mpi/launch_protocol.h"

toroid_mpi_errhandler toroid_mpi_errors_are_fatal, toroid_mpi_errors_return;

namespace toroid::mpi {

const char* g_call = "MPI";

namespace {

struct ClassText {
  int cls;
  const char* name;
  const char* text;
};
const ClassText kClasses[] = {
    {MPI_SUCCESS, "MPI_SUCCESS", "no error"},
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER", "invalid buffer pointer"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT", "invalid count argument"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE", "invalid datatype"},
    {MPI_ERR_TAG, "MPI_ERR_TAG", "invalid tag"},
    {MPI_ERR_COMM, "MPI_ERR_COMM", "invalid communicator"},
    {MPI_ERR_RANK, "MPI_ERR_RANK", "invalid rank"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST", "invalid request"},
    {MPI_ERR_ROOT, "MPI_ERR_ROOT", "invalid root"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP", "invalid group"},
    {MPI_ERR_OP, "MPI_ERR_OP", "invalid operation"},
    {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY", "invalid topology"},
    {MPI_ERR_DIMS, "MPI_ERR_DIMS", "invalid dimension argument"},
    {MPI_ERR_ARG, "MPI_ERR_ARG", "invalid argument"},
    {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN", "unknown error"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", "message truncated"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER", "other error"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN", "internal error"},
    {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS", "error code is in status"},
    {MPI_ERR_PENDING, "MPI_ERR_PENDING", "pending request"},
    {MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL", "invalid keyval"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "out of memory"},
    {MPI_ERR_BASE, "MPI_ERR_BASE", "invalid base address"},
    {MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY", "info key too long"},
    {MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE", "info value too long"},
    {MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY", "no such info key"},
    {MPI_ERR_SPAWN, "MPI_ERR_SPAWN", "spawn error"},
    {MPI_ERR_PORT, "MPI_ERR_PORT", "invalid port name"},
    {MPI_ERR_SERVICE, "MPI_ERR_SERVICE", "invalid service name"},
    {MPI_ERR_NAME, "MPI_ERR_NAME", "invalid name"},
    {MPI_ERR_WIN, "MPI_ERR_WIN", "invalid window"},
    {MPI_ERR_SIZE, "MPI_ERR_SIZE", "invalid size"},
    {MPI_ERR_DISP, "MPI_ERR_DISP", "invalid displacement"},
    {MPI_ERR_INFO, "MPI_ERR_INFO", "invalid info object"},
    {MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE", "invalid lock type"},
    {MPI_ERR_ASSERT, "MPI_ERR_ASSERT", "invalid assert"},
    {MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT", "conflicting one-sided accesses"},
    {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC", "wrong one-sided synchronisation"},
    {MPI_ERR_FILE, "MPI_ERR_FILE", "invalid file handle"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME", "collective arguments not the same on every process"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE", "invalid access mode"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE", "no such file"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS", "file exists"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE", "invalid file name"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS", "permission denied"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE", "no space left"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA", "quota exceeded"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY", "read-only file or file system"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE", "file in use"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP", "data representation already defined"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION", "conversion error"},
    {MPI_ERR_IO, "MPI_ERR_IO", "I/O error"},
    {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE", "target memory out of range"},
    {MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
    {MPI_T_ERR_MEMORY, "MPI_T_ERR_MEMORY", "tool interface: out of memory"},
    {MPI_T_ERR_NOT_INITIALIZED, "MPI_T_ERR_NOT_INITIALIZED", "tool interface not initialized"},
    {MPI_T_ERR_CANNOT_INIT, "MPI_T_ERR_CANNOT_INIT", "tool interface cannot be initialized"},
    {MPI_T_ERR_INVALID_INDEX, "MPI_T_ERR_INVALID_INDEX", "tool interface: invalid index"},
    {MPI_T_ERR_INVALID_ITEM, "MPI_T_ERR_INVALID_ITEM", "tool interface: invalid item"},
    {MPI_T_ERR_INVALID_HANDLE, "MPI_T_ERR_INVALID_HANDLE", "tool interface: invalid handle"},
    {MPI_T_ERR_OUT_OF_HANDLES, "MPI_T_ERR_OUT_OF_HANDLES", "tool interface: out of handles"},
    {MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T_ERR_OUT_OF_SESSIONS", "tool interface: out of sessions"},
    {MPI_T_ERR_INVALID_SESSION, "MPI_T_ERR_INVALID_SESSION", "tool interface: invalid session"},
    {MPI_T_ERR_CVAR_SET_NOT_NOW, "MPI_T_ERR_CVAR_SET_NOT_NOW", "control variable cannot be set now"},
    {MPI_T_ERR_CVAR_SET_NEVER, "MPI_T_ERR_CVAR_SET_NEVER", "control variable cannot be set"},
    {MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T_ERR_PVAR_NO_STARTSTOP", "performance variable cannot be started"},
    {MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_ERR_PVAR_NO_WRITE", "performance variable cannot be written"},
    {MPI_T_ERR_PVAR_NO_ATOMIC, "MPI_T_ERR_PVAR_NO_ATOMIC", "performance variable cannot be read atomically"},
    {MPI_T_ERR_INVALID_NAME, "MPI_T_ERR_INVALID_NAME", "tool interface: invalid name"},
    {MPI_T_ERR_INVALID, "MPI_T_ERR_INVALID", "tool interface: invalid use"},
};
static_assert(sizeof(kClasses) / sizeof(kClasses[0]) == MPI_ERR_LASTCODE);

// User error classes and codes (MPI_Add_error_class/code/string).
struct UserCode {
  int cls;
  std::string text;
};
std::map<int, UserCode>& user_codes() {
  static auto* m = new std::map<int, UserCode>();
  return *m;
}
int g_last_code = MPI_ERR_LASTCODE;
std::map<int, std::string>& last_message() {
  static auto* m = new std::map<int, std::string>();
  return *m;
}

bool errors_return_before_init() {
  const char* v = std::getenv(kEnvErrors);
  return v && std::strcmp(v, "return") == 0;
}

struct PredefinedHandlers {
  PredefinedHandlers() {
    for (auto* h : {&toroid_mpi_errors_are_fatal, &toroid_mpi_errors_return}) {
      h->magic = kMagicErrh;
      h->predefined = true;
    }
    toroid_mpi_errors_are_fatal.kind = toroid_mpi_errhandler::kFatal;
    toroid_mpi_errors_return.kind = toroid_mpi_errhandler::kReturn;
  }
} g_predefined_handlers;

}  // namespace

int last_used_code() { return g_last_code; }

const char* class_name(int cls) {
  if (cls >= 0 && cls < MPI_ERR_LASTCODE) return kClasses[cls].name;
  return "a user error class";
}

int not_up() {
  const bool before = rt().phase() == Runtime::Phase::kBefore;
  fprintf(stderr, "toroid-mpi: %s called %s (MPI_ERR_OTHER)\n", g_call, before ? "before MPI_Init" : "after MPI_Finalize");
  fflush(stderr);
  if (errors_return_before_init()) return MPI_ERR_OTHER;
  std::exit(MPI_ERR_OTHER);
}

std::string comm_label(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return "MPI_COMM_WORLD";
  if (comm == MPI_COMM_SELF) return "MPI_COMM_SELF";
  if (!valid(comm)) return "an invalid communicator";
  if (!comm->name.empty()) return "communicator '" + comm->name + "'";
  return comm->inter ? "an intercommunicator" : "a communicator";
}

int class_of(const Status& st) {
  switch (st.code()) {
    case Code::kOk: return MPI_SUCCESS;
    case Code::kInvalid: return st.message().find("mismatch") != std::string::npos ? MPI_ERR_TRUNCATE : MPI_ERR_ARG;
    case Code::kOutOfRange: return MPI_ERR_TRUNCATE;
    case Code::kUnsupported: return MPI_ERR_UNSUPPORTED_OPERATION;
    case Code::kInternal: return MPI_ERR_INTERN;
    case Code::kBusy: return MPI_ERR_PENDING;
    default: return MPI_ERR_OTHER;  // timeouts, link down, aborted messages, I/O
  }
}

int vraise(MPI_Comm comm, int cls, const char* fmt, va_list ap) {
  char text[1024];
  vsnprintf(text, sizeof text, fmt, ap);
  const std::string msg = std::string(g_call) + ": " + text;
  last_message()[cls] = msg;
  MPI_Comm target = valid(comm) ? comm : MPI_COMM_WORLD;
  MPI_Errhandler h = valid(target) && target->errh ? target->errh : MPI_ERRORS_ARE_FATAL;
  switch (h->kind) {
    case toroid_mpi_errhandler::kReturn: break;
    case toroid_mpi_errhandler::kComm:
      if (h->comm_fn) {
        int code = cls;
        h->comm_fn(&target, &code);
      }
      break;
    default: {
      char line[1200];
      snprintf(line, sizeof line, "%s (%s)", msg.c_str(), class_name(cls));
      rt().abort(cls, line);
    }
  }
  return cls;
}

int raise(MPI_Comm comm, int cls, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int r = vraise(comm, cls, fmt, ap);
  va_end(ap);
  return r;
}

int raise_status(MPI_Comm comm, const Status& st) { return raise(comm, class_of(st), "%s", st.message().c_str()); }

void errhandler_retain(MPI_Errhandler h) {
  if (valid(h) && !h->predefined) ++h->refs;
}

void errhandler_release(MPI_Errhandler h) {
  if (!valid(h) || h->predefined) return;
  if (--h->refs == 0) h->magic = 0;  // kept allocated: a stale handle must still read as invalid
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

// ---- error codes and strings ----

TOROID_MPI_API(int, Error_class, (int errorcode, int* errorclass)) {
  MPI_ENTER_ANYTIME("MPI_Error_class");
  if (!errorclass) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "errorclass is NULL");
  if (errorcode >= 0 && errorcode < MPI_ERR_LASTCODE) {
    *errorclass = errorcode;
    return MPI_SUCCESS;
  }
  auto it = user_codes().find(errorcode);
  if (it == user_codes().end()) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%d is not an error code", errorcode);
  *errorclass = it->second.cls;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Error_string, (int errorcode, char* string, int* resultlen)) {
  MPI_ENTER_ANYTIME("MPI_Error_string");
  if (!string || !resultlen) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "string or resultlen is NULL");
  std::string text;
  if (errorcode >= 0 && errorcode < MPI_ERR_LASTCODE) {
    text = std::string(kClasses[errorcode].name) + ": " + kClasses[errorcode].text;
    auto it = last_message().find(errorcode);
    if (it != last_message().end()) text += " (last: " + it->second + ")";
  } else {
    auto it = user_codes().find(errorcode);
    if (it == user_codes().end()) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%d is not an error code", errorcode);
    text = it->second.text;
  }
  const size_t n = std::min<size_t>(text.size(), MPI_MAX_ERROR_STRING - 1);
  std::memcpy(string, text.data(), n);
  string[n] = 0;
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Add_error_class, (int* errorclass)) {
  MPI_ENTER("MPI_Add_error_class");
  if (!errorclass) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "errorclass is NULL");
  const int c = ++g_last_code;
  user_codes()[c] = UserCode{c, ""};
  *errorclass = c;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Add_error_code, (int errorclass, int* errorcode)) {
  MPI_ENTER("MPI_Add_error_code");
  if (!errorcode) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "errorcode is NULL");
  auto it = user_codes().find(errorclass);
  const bool predefined = errorclass >= 0 && errorclass < MPI_ERR_LASTCODE;
  if (!predefined && (it == user_codes().end() || it->second.cls != errorclass))
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%d is not an error class", errorclass);
  const int c = ++g_last_code;
  user_codes()[c] = UserCode{errorclass, ""};
  *errorcode = c;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Add_error_string, (int errorcode, const char* string)) {
  MPI_ENTER("MPI_Add_error_string");
  if (!string) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "string is NULL");
  if (std::strlen(string) >= MPI_MAX_ERROR_STRING)
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "the string is longer than MPI_MAX_ERROR_STRING - 1");
  auto it = user_codes().find(errorcode);
  if (it == user_codes().end())
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "%d is not a user error code or class (predefined ones keep their text)",
                 errorcode);
  it->second.text = string;
  return MPI_SUCCESS;
}

// ---- error handlers ----

TOROID_MPI_API(int, Comm_create_errhandler, (MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler)) {
  MPI_ENTER("MPI_Comm_create_errhandler");
  if (!fn || !errhandler) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "function or errhandler is NULL");
  auto* h = new toroid_mpi_errhandler();
  h->magic = kMagicErrh;
  h->kind = toroid_mpi_errhandler::kComm;
  h->comm_fn = fn;
  *errhandler = h;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Errhandler_create, (MPI_Handler_function* fn, MPI_Errhandler* errhandler)) {
  return PMPI_Comm_create_errhandler(fn, errhandler);
}

TOROID_MPI_API(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler)) {
  MPI_ENTER("MPI_Comm_set_errhandler");
  if (int e = check_comm(comm)) return e;
  if (!valid(errhandler) || (errhandler->kind != toroid_mpi_errhandler::kComm && !errhandler->predefined))
    return raise(comm, MPI_ERR_ARG, "not a communicator error handler");
  errhandler_retain(errhandler);
  errhandler_release(comm->errh);
  comm->errh = errhandler;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler)) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}

TOROID_MPI_API(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler* errhandler)) {
  MPI_ENTER("MPI_Comm_get_errhandler");
  if (int e = check_comm(comm)) return e;
  if (!errhandler) return raise(comm, MPI_ERR_ARG, "errhandler is NULL");
  *errhandler = comm->errh ? comm->errh : MPI_ERRORS_ARE_FATAL;
  errhandler_retain(*errhandler);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler* errhandler)) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}

TOROID_MPI_API(int, Errhandler_free, (MPI_Errhandler* errhandler)) {
  MPI_ENTER("MPI_Errhandler_free");
  if (!errhandler || !valid(*errhandler)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "not a valid error handler");
  errhandler_release(*errhandler);
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode)) {
  MPI_ENTER("MPI_Comm_call_errhandler");
  if (int e = check_comm(comm)) return e;
  int cls = errorcode;
  if (!(errorcode >= 0 && errorcode < MPI_ERR_LASTCODE)) {
    auto it = user_codes().find(errorcode);
    if (it != user_codes().end()) cls = it->second.cls;
  }
  MPI_Errhandler h = comm->errh ? comm->errh : MPI_ERRORS_ARE_FATAL;
  if (h->kind == toroid_mpi_errhandler::kComm && h->comm_fn) {
    int code = errorcode;
    h->comm_fn(&comm, &code);
    return MPI_SUCCESS;
  }
  if (h->kind == toroid_mpi_errhandler::kFatal) {
    char line[256];
    snprintf(line, sizeof line, "MPI_Comm_call_errhandler: error code %d (%s) on %s", errorcode, class_name(cls),
             comm_label(comm).c_str());
    rt().abort(errorcode, line);
  }
  return MPI_SUCCESS;
}
