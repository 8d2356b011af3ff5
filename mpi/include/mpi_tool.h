/* The MPI tool information interface (MPI 3.1 chapter 14). toroid-mpi
   exports no control or performance variables and no categories: the
   interface initialises, reports zero of each, and every index is invalid.
   Included by mpi.h inside its extern "C" block. */
#ifndef TOROID_MPI_TOOL_H
#define TOROID_MPI_TOOL_H

typedef struct toroid_mpi_t_enum *MPI_T_enum;
typedef struct toroid_mpi_t_cvar_handle *MPI_T_cvar_handle;
typedef struct toroid_mpi_t_pvar_handle *MPI_T_pvar_handle;
typedef struct toroid_mpi_t_pvar_session *MPI_T_pvar_session;

#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)

#define MPI_T_VERBOSITY_USER_BASIC 1
#define MPI_T_VERBOSITY_USER_DETAIL 2
#define MPI_T_VERBOSITY_USER_ALL 3
#define MPI_T_VERBOSITY_TUNER_BASIC 4
#define MPI_T_VERBOSITY_TUNER_DETAIL 5
#define MPI_T_VERBOSITY_TUNER_ALL 6
#define MPI_T_VERBOSITY_MPIDEV_BASIC 7
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 8
#define MPI_T_VERBOSITY_MPIDEV_ALL 9

#define MPI_T_BIND_NO_OBJECT 0
#define MPI_T_BIND_MPI_COMM 1
#define MPI_T_BIND_MPI_DATATYPE 2
#define MPI_T_BIND_MPI_ERRHANDLER 3
#define MPI_T_BIND_MPI_FILE 4
#define MPI_T_BIND_MPI_GROUP 5
#define MPI_T_BIND_MPI_OP 6
#define MPI_T_BIND_MPI_REQUEST 7
#define MPI_T_BIND_MPI_WIN 8
#define MPI_T_BIND_MPI_MESSAGE 9
#define MPI_T_BIND_MPI_INFO 10

#define MPI_T_SCOPE_CONSTANT 0
#define MPI_T_SCOPE_READONLY 1
#define MPI_T_SCOPE_LOCAL 2
#define MPI_T_SCOPE_GROUP 3
#define MPI_T_SCOPE_GROUP_EQ 4
#define MPI_T_SCOPE_ALL 5
#define MPI_T_SCOPE_ALL_EQ 6

#define MPI_T_PVAR_CLASS_STATE 0
#define MPI_T_PVAR_CLASS_LEVEL 1
#define MPI_T_PVAR_CLASS_SIZE 2
#define MPI_T_PVAR_CLASS_PERCENTAGE 3
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 4
#define MPI_T_PVAR_CLASS_LOWWATERMARK 5
#define MPI_T_PVAR_CLASS_COUNTER 6
#define MPI_T_PVAR_CLASS_AGGREGATE 7
#define MPI_T_PVAR_CLASS_TIMER 8
#define MPI_T_PVAR_CLASS_GENERIC 9

#define TOROID_MPI_T_FN(ret, name, params) ret MPI_T_##name params; ret PMPI_T_##name params;
TOROID_MPI_T_FN(int, init_thread, (int required, int *provided))
TOROID_MPI_T_FN(int, finalize, (void))
TOROID_MPI_T_FN(int, enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len))
TOROID_MPI_T_FN(int, enum_get_item, (MPI_T_enum enumtype, int index, int *value, char *name, int *name_len))
TOROID_MPI_T_FN(int, cvar_get_num, (int *num_cvar))
TOROID_MPI_T_FN(int, cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope))
TOROID_MPI_T_FN(int, cvar_get_index, (const char *name, int *cvar_index))
TOROID_MPI_T_FN(int, cvar_handle_alloc, (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count))
TOROID_MPI_T_FN(int, cvar_handle_free, (MPI_T_cvar_handle *handle))
TOROID_MPI_T_FN(int, cvar_read, (MPI_T_cvar_handle handle, void *buf))
TOROID_MPI_T_FN(int, cvar_write, (MPI_T_cvar_handle handle, const void *buf))
TOROID_MPI_T_FN(int, pvar_get_num, (int *num_pvar))
TOROID_MPI_T_FN(int, pvar_get_info, (int pvar_index, char *name, int *name_len, int *verbosity, int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *readonly, int *continuous, int *atomic))
TOROID_MPI_T_FN(int, pvar_get_index, (const char *name, int var_class, int *pvar_index))
TOROID_MPI_T_FN(int, pvar_session_create, (MPI_T_pvar_session *session))
TOROID_MPI_T_FN(int, pvar_session_free, (MPI_T_pvar_session *session))
TOROID_MPI_T_FN(int, pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle, int *count))
TOROID_MPI_T_FN(int, pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle))
TOROID_MPI_T_FN(int, pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
TOROID_MPI_T_FN(int, pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
TOROID_MPI_T_FN(int, pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
TOROID_MPI_T_FN(int, pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf))
TOROID_MPI_T_FN(int, pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
TOROID_MPI_T_FN(int, pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
TOROID_MPI_T_FN(int, category_get_num, (int *num_cat))
TOROID_MPI_T_FN(int, category_get_info, (int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars, int *num_pvars, int *num_categories))
TOROID_MPI_T_FN(int, category_get_index, (const char *name, int *cat_index))
TOROID_MPI_T_FN(int, category_get_cvars, (int cat_index, int len, int indices[]))
TOROID_MPI_T_FN(int, category_get_pvars, (int cat_index, int len, int indices[]))
TOROID_MPI_T_FN(int, category_get_categories, (int cat_index, int len, int indices[]))
TOROID_MPI_T_FN(int, category_changed, (int *stamp))
#undef TOROID_MPI_T_FN

#endif /* TOROID_MPI_TOOL_H */
