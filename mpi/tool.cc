// The tool information interface (MPI 3.1 chapter 14): it initialises and
// finalises (nested pairs counted), and reports no control variables, no
// performance variables and no categories; any index is invalid.
#include <cstring>

#include "mpi/impl.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace {
int g_tool_inits = 0;
int up() { return g_tool_inits > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED; }
}  // namespace

#define TOROID_MPI_T_API(ret, name, params)                                          \
  extern "C" ret MPI_T_##name params __attribute__((weak, alias("PMPI_T_" #name))); \
  extern "C" ret PMPI_T_##name params

TOROID_MPI_T_API(int, init_thread, (int required, int* provided)) {
  if (provided) *provided = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
  ++g_tool_inits;
  return MPI_SUCCESS;
}

TOROID_MPI_T_API(int, finalize, (void)) {
  if (g_tool_inits == 0) return MPI_T_ERR_NOT_INITIALIZED;
  --g_tool_inits;
  return MPI_SUCCESS;
}

TOROID_MPI_T_API(int, cvar_get_num, (int* num_cvar)) {
  if (int e = up()) return e;
  *num_cvar = 0;
  return MPI_SUCCESS;
}

TOROID_MPI_T_API(int, pvar_get_num, (int* num_pvar)) {
  if (int e = up()) return e;
  *num_pvar = 0;
  return MPI_SUCCESS;
}

TOROID_MPI_T_API(int, category_get_num, (int* num_cat)) {
  if (int e = up()) return e;
  *num_cat = 0;
  return MPI_SUCCESS;
}

TOROID_MPI_T_API(int, category_changed, (int* stamp)) {
  if (int e = up()) return e;
  *stamp = 0;
  return MPI_SUCCESS;
}

TOROID_MPI_T_API(int, enum_get_info, (MPI_T_enum enumtype, int* num, char* name, int* name_len)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, enum_get_item, (MPI_T_enum enumtype, int index, int* value, char* name, int* name_len)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, cvar_get_info, (int cvar_index, char* name, int* name_len, int* verbosity, MPI_Datatype* datatype,
                                      MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind, int* scope)) {
  return up() ? up() : MPI_T_ERR_INVALID_INDEX;
}
TOROID_MPI_T_API(int, cvar_get_index, (const char* name, int* cvar_index)) { return up() ? up() : MPI_T_ERR_INVALID_NAME; }
TOROID_MPI_T_API(int, cvar_handle_alloc, (int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle, int* count)) {
  return up() ? up() : MPI_T_ERR_INVALID_INDEX;
}
TOROID_MPI_T_API(int, cvar_handle_free, (MPI_T_cvar_handle * handle)) { return up() ? up() : MPI_T_ERR_INVALID_HANDLE; }
TOROID_MPI_T_API(int, cvar_read, (MPI_T_cvar_handle handle, void* buf)) { return up() ? up() : MPI_T_ERR_INVALID_HANDLE; }
TOROID_MPI_T_API(int, cvar_write, (MPI_T_cvar_handle handle, const void* buf)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, pvar_get_info, (int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                                      MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                                      int* bind, int* readonly, int* continuous, int* atomic)) {
  return up() ? up() : MPI_T_ERR_INVALID_INDEX;
}
TOROID_MPI_T_API(int, pvar_get_index, (const char* name, int var_class, int* pvar_index)) {
  return up() ? up() : MPI_T_ERR_INVALID_NAME;
}
TOROID_MPI_T_API(int, pvar_session_create, (MPI_T_pvar_session * session)) {
  if (int e = up()) return e;
  static int token;
  *session = reinterpret_cast<MPI_T_pvar_session>(&token);
  return MPI_SUCCESS;
}
TOROID_MPI_T_API(int, pvar_session_free, (MPI_T_pvar_session * session)) {
  if (int e = up()) return e;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
TOROID_MPI_T_API(int, pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                                          MPI_T_pvar_handle* handle, int* count)) {
  return up() ? up() : MPI_T_ERR_INVALID_INDEX;
}
TOROID_MPI_T_API(int, pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle* handle)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf)) {
  return up() ? up() : MPI_T_ERR_INVALID_HANDLE;
}
TOROID_MPI_T_API(int, category_get_info, (int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                                          int* num_cvars, int* num_pvars, int* num_categories)) {
  return up() ? up() : MPI_T_ERR_INVALID_INDEX;
}
TOROID_MPI_T_API(int, category_get_index, (const char* name, int* cat_index)) { return up() ? up() : MPI_T_ERR_INVALID_NAME; }
TOROID_MPI_T_API(int, category_get_cvars, (int cat_index, int len, int indices[])) {
  return up() ? up() : MPI_T_ERR_INVALID_INDEX;
}
TOROID_MPI_T_API(int, category_get_pvars, (int cat_index, int len, int indices[])) {
  return up() ? up() : MPI_T_ERR_INVALID_INDEX;
}
TOROID_MPI_T_API(int, category_get_categories, (int cat_index, int len, int indices[])) {
  return up() ? up() : MPI_T_ERR_INVALID_INDEX;
}
