// The execution environment (MPI 3.1 chapter 8 and section 12.4): start and
// end, version, processor name, clocks, memory, threads.
#include <cstdlib>
#include <cstring>

#include "mpi/impl.h"

namespace toroid::mpi {
void comm_setup();                // comm.cc: MPI_COMM_WORLD, MPI_COMM_SELF
void comm_finalize_self_attrs();  // comm.cc: MPI_COMM_SELF's attributes are deleted first
void engine_start();              // coll_engine.cc
void engine_stop();
}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

namespace {

int do_init(int required, int* provided) {
  if (rt().phase() != Runtime::Phase::kBefore)
    return raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI is already %s", rt().up() ? "initialized" : "finalized");
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "toroid-mpi: %s: thread level %d is not MPI_THREAD_SINGLE..MPI_THREAD_MULTIPLE\n", g_call, required);
    return MPI_ERR_ARG;
  }
  rt().init(required);  // ends the process itself when the node cannot boot
  comm_setup();
  engine_start();
  if (provided) *provided = rt().thread_level();
  return MPI_SUCCESS;
}

}  // namespace

TOROID_MPI_API(int, Init, (int* argc, char*** argv)) {
  MPI_ENTER_ANYTIME("MPI_Init");
  (void)argc;
  (void)argv;
  return do_init(MPI_THREAD_SINGLE, nullptr);
}

TOROID_MPI_API(int, Init_thread, (int* argc, char*** argv, int required, int* provided)) {
  MPI_ENTER_ANYTIME("MPI_Init_thread");
  (void)argc;
  (void)argv;
  return do_init(required, provided);
}

TOROID_MPI_API(int, Initialized, (int* flag)) {
  MPI_ENTER_ANYTIME("MPI_Initialized");
  if (!flag) return MPI_ERR_ARG;
  *flag = rt().phase() != Runtime::Phase::kBefore;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Finalized, (int* flag)) {
  MPI_ENTER_ANYTIME("MPI_Finalized");
  if (!flag) return MPI_ERR_ARG;
  *flag = rt().phase() == Runtime::Phase::kDown;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Finalize, (void)) {
  MPI_ENTER("MPI_Finalize");
  comm_finalize_self_attrs();
  Status st = rt().quiesce();
  if (!st) return raise_status(MPI_COMM_WORLD, st);
  engine_stop();
  comm_free_all();
  rt().shutdown();
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Abort, (MPI_Comm comm, int errorcode)) {
  MPI_ENTER("MPI_Abort");
  char why[160];
  snprintf(why, sizeof why, "MPI_Abort(%s, %d)", comm_label(comm).c_str(), errorcode);
  rt().abort(errorcode, why);
}

TOROID_MPI_API(int, Query_thread, (int* provided)) {
  MPI_ENTER("MPI_Query_thread");
  if (!provided) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "provided is NULL");
  *provided = rt().thread_level();
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Is_thread_main, (int* flag)) {
  MPI_ENTER("MPI_Is_thread_main");
  if (!flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "flag is NULL");
  *flag = rt().is_main_thread();
  return MPI_SUCCESS;
}

TOROID_MPI_API(double, Wtime, (void)) { return rt().wtime(); }

TOROID_MPI_API(double, Wtick, (void)) { return 1e-9; }

TOROID_MPI_API(int, Get_version, (int* version, int* subversion)) {
  MPI_ENTER_ANYTIME("MPI_Get_version");
  if (!version || !subversion) return MPI_ERR_ARG;
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Get_library_version, (char* version, int* resultlen)) {
  MPI_ENTER_ANYTIME("MPI_Get_library_version");
  if (!version || !resultlen) return MPI_ERR_ARG;
  const char* text = TOROID_MPI_VERSION_STRING " (MPI 3.1 on the Toroid node runtime)";
  const size_t n = std::min<size_t>(std::strlen(text), MPI_MAX_LIBRARY_VERSION_STRING - 1);
  std::memcpy(version, text, n);
  version[n] = 0;
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Get_processor_name, (char* name, int* resultlen)) {
  MPI_ENTER("MPI_Get_processor_name");
  if (!name || !resultlen) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "name or resultlen is NULL");
  const std::string& p = rt().processor_name();
  const size_t n = std::min<size_t>(p.size(), MPI_MAX_PROCESSOR_NAME - 1);
  std::memcpy(name, p.data(), n);
  name[n] = 0;
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Pcontrol, (const int level, ...)) {
  (void)level;  // no profiling levels of its own: a tool interposing MPI_Pcontrol sees the call
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr)) {
  MPI_ENTER("MPI_Alloc_mem");
  (void)info;
  if (size < 0) return raise(MPI_COMM_WORLD, MPI_ERR_SIZE, "size %ld is negative", static_cast<long>(size));
  if (!baseptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "baseptr is NULL");
  void* p = nullptr;
  if (posix_memalign(&p, 64, size > 0 ? static_cast<size_t>(size) : 1) != 0)
    return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "cannot allocate %ld bytes", static_cast<long>(size));
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Free_mem, (void* base)) {
  MPI_ENTER("MPI_Free_mem");
  std::free(base);
  return MPI_SUCCESS;
}
