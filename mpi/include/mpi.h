/*
 * mpi.h: the MPI 3.1 C interface of toroid-mpi (docs/mpi.md).
 *
 * One MPI process per torus node, rank = the node's linear rank; the library
 * drives the node runtime's event loop inside every call
 * (MPI_THREAD_FUNNELED at most). Handles are pointers to opaque objects;
 * the predefined ones are the addresses of objects the library exports, so
 * they are constant expressions usable in static initializers. Every
 * function has its profiling twin PMPI_<name>.
 *
 * Out of scope (declared, so programs build; each returns
 * MPI_ERR_UNSUPPORTED_OPERATION through the error handler with a message
 * naming the call): one-sided communication (MPI_Win_*, MPI_Put, ...),
 * MPI-IO (MPI_File_*), dynamic processes (spawn, ports, names).
 */
#ifndef TOROID_MPI_H
#define TOROID_MPI_H

#include <stddef.h>
#include <stdint.h>

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define TOROID_MPI 1
#define TOROID_MPI_VERSION_STRING "toroid-mpi 0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- basic types ---- */
typedef ptrdiff_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

/* ---- handles (opaque) ---- */
typedef struct toroid_mpi_comm *MPI_Comm;
typedef struct toroid_mpi_group *MPI_Group;
typedef struct toroid_mpi_datatype *MPI_Datatype;
typedef struct toroid_mpi_op *MPI_Op;
typedef struct toroid_mpi_request *MPI_Request;
typedef struct toroid_mpi_errhandler *MPI_Errhandler;
typedef struct toroid_mpi_info *MPI_Info;
typedef struct toroid_mpi_message *MPI_Message;
typedef struct toroid_mpi_win *MPI_Win;
typedef struct toroid_mpi_file *MPI_File;

/* ---- status: the three public fields, then the library's ---- */
typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int toroid_cancelled;
  MPI_Count toroid_bytes; /* bytes received */
} MPI_Status;

#define MPI_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#define MPI_F_SOURCE 0
#define MPI_F_TAG 1
#define MPI_F_ERROR 2

/* ---- error classes (MPI_SUCCESS < class <= MPI_ERR_LASTCODE) ---- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_KEYVAL 20
#define MPI_ERR_NO_MEM 21
#define MPI_ERR_BASE 22
#define MPI_ERR_INFO_KEY 23
#define MPI_ERR_INFO_VALUE 24
#define MPI_ERR_INFO_NOKEY 25
#define MPI_ERR_SPAWN 26
#define MPI_ERR_PORT 27
#define MPI_ERR_SERVICE 28
#define MPI_ERR_NAME 29
#define MPI_ERR_WIN 30
#define MPI_ERR_SIZE 31
#define MPI_ERR_DISP 32
#define MPI_ERR_INFO 33
#define MPI_ERR_LOCKTYPE 34
#define MPI_ERR_ASSERT 35
#define MPI_ERR_RMA_CONFLICT 36
#define MPI_ERR_RMA_SYNC 37
#define MPI_ERR_FILE 38
#define MPI_ERR_NOT_SAME 39
#define MPI_ERR_AMODE 40
#define MPI_ERR_UNSUPPORTED_DATAREP 41
#define MPI_ERR_UNSUPPORTED_OPERATION 42
#define MPI_ERR_NO_SUCH_FILE 43
#define MPI_ERR_FILE_EXISTS 44
#define MPI_ERR_BAD_FILE 45
#define MPI_ERR_ACCESS 46
#define MPI_ERR_NO_SPACE 47
#define MPI_ERR_QUOTA 48
#define MPI_ERR_READ_ONLY 49
#define MPI_ERR_FILE_IN_USE 50
#define MPI_ERR_DUP_DATAREP 51
#define MPI_ERR_CONVERSION 52
#define MPI_ERR_IO 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_T_ERR_MEMORY 58
#define MPI_T_ERR_NOT_INITIALIZED 59
#define MPI_T_ERR_CANNOT_INIT 60
#define MPI_T_ERR_INVALID_INDEX 61
#define MPI_T_ERR_INVALID_ITEM 62
#define MPI_T_ERR_INVALID_HANDLE 63
#define MPI_T_ERR_OUT_OF_HANDLES 64
#define MPI_T_ERR_OUT_OF_SESSIONS 65
#define MPI_T_ERR_INVALID_SESSION 66
#define MPI_T_ERR_CVAR_SET_NOT_NOW 67
#define MPI_T_ERR_CVAR_SET_NEVER 68
#define MPI_T_ERR_PVAR_NO_STARTSTOP 69
#define MPI_T_ERR_PVAR_NO_WRITE 70
#define MPI_T_ERR_PVAR_NO_ATOMIC 71
#define MPI_T_ERR_INVALID_NAME 72
#define MPI_T_ERR_INVALID 73
#define MPI_ERR_LASTCODE 74

/* ---- wildcards and special values ---- */
#define MPI_ANY_SOURCE (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_BSEND_OVERHEAD 64
#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-54278278)

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 1024
#define MPI_MAX_DATAREP_STRING 128

/* results of MPI_Comm_compare, MPI_Group_compare */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* topologies */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

/* thread levels */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* predefined attribute keys */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE 5
#define MPI_LASTUSEDCODE 6
#define MPI_APPNUM 7
#define MPI_WIN_BASE 8
#define MPI_WIN_SIZE 9
#define MPI_WIN_DISP_UNIT 10
#define MPI_WIN_CREATE_FLAVOR 11
#define MPI_WIN_MODEL 12

/* datatype combiners */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_HINDEXED_BLOCK 11
#define MPI_COMBINER_STRUCT_INTEGER 12
#define MPI_COMBINER_STRUCT 13
#define MPI_COMBINER_SUBARRAY 14
#define MPI_COMBINER_DARRAY 15
#define MPI_COMBINER_F90_REAL 16
#define MPI_COMBINER_F90_COMPLEX 17
#define MPI_COMBINER_F90_INTEGER 18
#define MPI_COMBINER_RESIZED 19

#define MPI_ORDER_C 0
#define MPI_ORDER_FORTRAN 1
#define MPI_DISTRIBUTE_BLOCK 0
#define MPI_DISTRIBUTE_CYCLIC 1
#define MPI_DISTRIBUTE_NONE 2
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)
#define MPI_TYPECLASS_INTEGER 1
#define MPI_TYPECLASS_REAL 2
#define MPI_TYPECLASS_COMPLEX 3

#define MPI_COMM_TYPE_SHARED 1
#define MPI_COMM_TYPE_HW_GUIDED 2 /* MPI 4.0 */
#define MPI_COMM_TYPE_HW_UNGUIDED 3

/* one-sided and I/O constants (those calls are not supported; the values
   exist so that programs compile) */
#define MPI_MODE_NOCHECK 1
#define MPI_MODE_NOSTORE 2
#define MPI_MODE_NOPUT 4
#define MPI_MODE_NOPRECEDE 8
#define MPI_MODE_NOSUCCEED 16
#define MPI_LOCK_EXCLUSIVE 1
#define MPI_LOCK_SHARED 2
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2
#define MPI_MODE_RDONLY 2
#define MPI_MODE_RDWR 8
#define MPI_MODE_WRONLY 4
#define MPI_MODE_CREATE 1
#define MPI_MODE_EXCL 64
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604

/* ---- special addresses ---- */
#define MPI_BOTTOM ((void *)0)
#define MPI_IN_PLACE ((void *)1)
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
extern int toroid_mpi_unweighted[1], toroid_mpi_weights_empty[1];
#define MPI_UNWEIGHTED (toroid_mpi_unweighted)
#define MPI_WEIGHTS_EMPTY (toroid_mpi_weights_empty)
extern MPI_Fint *MPI_F_STATUS_IGNORE;
extern MPI_Fint *MPI_F_STATUSES_IGNORE;

/* ---- null handles ---- */
#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_FILE_NULL ((MPI_File)0)

/* ---- predefined objects ---- */
extern struct toroid_mpi_comm toroid_mpi_comm_world, toroid_mpi_comm_self;
extern struct toroid_mpi_group toroid_mpi_group_empty;
extern struct toroid_mpi_errhandler toroid_mpi_errors_are_fatal, toroid_mpi_errors_return;
extern struct toroid_mpi_info toroid_mpi_info_env;
extern struct toroid_mpi_message toroid_mpi_message_no_proc;
#define MPI_COMM_WORLD (&toroid_mpi_comm_world)
#define MPI_COMM_SELF (&toroid_mpi_comm_self)
#define MPI_GROUP_EMPTY (&toroid_mpi_group_empty)
#define MPI_ERRORS_ARE_FATAL (&toroid_mpi_errors_are_fatal)
#define MPI_ERRORS_RETURN (&toroid_mpi_errors_return)
#define MPI_INFO_ENV (&toroid_mpi_info_env)
#define MPI_MESSAGE_NO_PROC (&toroid_mpi_message_no_proc)

/* Predefined datatypes: toroid_mpi_dt_<name>, one object each. */
#define TOROID_MPI_DT(name) extern struct toroid_mpi_datatype toroid_mpi_dt_##name;
#include "mpi_datatypes.h"
#undef TOROID_MPI_DT
#define MPI_CHAR (&toroid_mpi_dt_char)
#define MPI_SHORT (&toroid_mpi_dt_short)
#define MPI_INT (&toroid_mpi_dt_int)
#define MPI_LONG (&toroid_mpi_dt_long)
#define MPI_LONG_LONG_INT (&toroid_mpi_dt_long_long)
#define MPI_LONG_LONG (&toroid_mpi_dt_long_long)
#define MPI_SIGNED_CHAR (&toroid_mpi_dt_signed_char)
#define MPI_UNSIGNED_CHAR (&toroid_mpi_dt_unsigned_char)
#define MPI_UNSIGNED_SHORT (&toroid_mpi_dt_unsigned_short)
#define MPI_UNSIGNED (&toroid_mpi_dt_unsigned)
#define MPI_UNSIGNED_LONG (&toroid_mpi_dt_unsigned_long)
#define MPI_UNSIGNED_LONG_LONG (&toroid_mpi_dt_unsigned_long_long)
#define MPI_FLOAT (&toroid_mpi_dt_float)
#define MPI_DOUBLE (&toroid_mpi_dt_double)
#define MPI_LONG_DOUBLE (&toroid_mpi_dt_long_double)
#define MPI_WCHAR (&toroid_mpi_dt_wchar)
#define MPI_C_BOOL (&toroid_mpi_dt_c_bool)
#define MPI_INT8_T (&toroid_mpi_dt_int8_t)
#define MPI_INT16_T (&toroid_mpi_dt_int16_t)
#define MPI_INT32_T (&toroid_mpi_dt_int32_t)
#define MPI_INT64_T (&toroid_mpi_dt_int64_t)
#define MPI_UINT8_T (&toroid_mpi_dt_uint8_t)
#define MPI_UINT16_T (&toroid_mpi_dt_uint16_t)
#define MPI_UINT32_T (&toroid_mpi_dt_uint32_t)
#define MPI_UINT64_T (&toroid_mpi_dt_uint64_t)
#define MPI_AINT (&toroid_mpi_dt_aint)
#define MPI_OFFSET (&toroid_mpi_dt_offset)
#define MPI_COUNT (&toroid_mpi_dt_count)
#define MPI_C_COMPLEX (&toroid_mpi_dt_c_complex)
#define MPI_C_FLOAT_COMPLEX (&toroid_mpi_dt_c_float_complex)
#define MPI_C_DOUBLE_COMPLEX (&toroid_mpi_dt_c_double_complex)
#define MPI_C_LONG_DOUBLE_COMPLEX (&toroid_mpi_dt_c_long_double_complex)
#define MPI_CXX_BOOL (&toroid_mpi_dt_cxx_bool)
#define MPI_CXX_FLOAT_COMPLEX (&toroid_mpi_dt_cxx_float_complex)
#define MPI_CXX_DOUBLE_COMPLEX (&toroid_mpi_dt_cxx_double_complex)
#define MPI_CXX_LONG_DOUBLE_COMPLEX (&toroid_mpi_dt_cxx_long_double_complex)
#define MPI_BYTE (&toroid_mpi_dt_byte)
#define MPI_PACKED (&toroid_mpi_dt_packed)
#define MPI_FLOAT_INT (&toroid_mpi_dt_float_int)
#define MPI_DOUBLE_INT (&toroid_mpi_dt_double_int)
#define MPI_LONG_INT (&toroid_mpi_dt_long_int)
#define MPI_2INT (&toroid_mpi_dt_2int)
#define MPI_SHORT_INT (&toroid_mpi_dt_short_int)
#define MPI_LONG_DOUBLE_INT (&toroid_mpi_dt_long_double_int)
#define MPI_LB (&toroid_mpi_dt_lb)
#define MPI_UB (&toroid_mpi_dt_ub)
/* Fortran types, for C code that passes Fortran data */
#define MPI_CHARACTER (&toroid_mpi_dt_character)
#define MPI_LOGICAL (&toroid_mpi_dt_logical)
#define MPI_INTEGER (&toroid_mpi_dt_integer)
#define MPI_REAL (&toroid_mpi_dt_real)
#define MPI_DOUBLE_PRECISION (&toroid_mpi_dt_double_precision)
#define MPI_COMPLEX (&toroid_mpi_dt_complex)
#define MPI_DOUBLE_COMPLEX (&toroid_mpi_dt_double_complex)
#define MPI_2REAL (&toroid_mpi_dt_2real)
#define MPI_2DOUBLE_PRECISION (&toroid_mpi_dt_2double_precision)
#define MPI_2INTEGER (&toroid_mpi_dt_2integer)
#define MPI_INTEGER1 (&toroid_mpi_dt_integer1)
#define MPI_INTEGER2 (&toroid_mpi_dt_integer2)
#define MPI_INTEGER4 (&toroid_mpi_dt_integer4)
#define MPI_INTEGER8 (&toroid_mpi_dt_integer8)
#define MPI_REAL4 (&toroid_mpi_dt_real4)
#define MPI_REAL8 (&toroid_mpi_dt_real8)
#define MPI_REAL16 (&toroid_mpi_dt_real16)
#define MPI_COMPLEX8 (&toroid_mpi_dt_complex8)
#define MPI_COMPLEX16 (&toroid_mpi_dt_complex16)
#define MPI_COMPLEX32 (&toroid_mpi_dt_complex32)

/* Predefined operations: toroid_mpi_op_<name>. */
extern struct toroid_mpi_op toroid_mpi_op_max, toroid_mpi_op_min, toroid_mpi_op_sum, toroid_mpi_op_prod,
    toroid_mpi_op_land, toroid_mpi_op_band, toroid_mpi_op_lor, toroid_mpi_op_bor, toroid_mpi_op_lxor,
    toroid_mpi_op_bxor, toroid_mpi_op_minloc, toroid_mpi_op_maxloc, toroid_mpi_op_replace, toroid_mpi_op_no_op;
#define MPI_MAX (&toroid_mpi_op_max)
#define MPI_MIN (&toroid_mpi_op_min)
#define MPI_SUM (&toroid_mpi_op_sum)
#define MPI_PROD (&toroid_mpi_op_prod)
#define MPI_LAND (&toroid_mpi_op_land)
#define MPI_BAND (&toroid_mpi_op_band)
#define MPI_LOR (&toroid_mpi_op_lor)
#define MPI_BOR (&toroid_mpi_op_bor)
#define MPI_LXOR (&toroid_mpi_op_lxor)
#define MPI_BXOR (&toroid_mpi_op_bxor)
#define MPI_MINLOC (&toroid_mpi_op_minloc)
#define MPI_MAXLOC (&toroid_mpi_op_maxloc)
#define MPI_REPLACE (&toroid_mpi_op_replace)
#define MPI_NO_OP (&toroid_mpi_op_no_op)

/* ---- callback types ---- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                                          void *extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state,
                                       void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state);
typedef void MPI_Comm_errhandler_function(MPI_Comm *, int *, ...);
typedef void MPI_File_errhandler_function(MPI_File *, int *, ...);
typedef void MPI_Win_errhandler_function(MPI_Win *, int *, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef void MPI_Handler_function(MPI_Comm *, int *, ...);
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                              void *attribute_val_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state);
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                                            MPI_Offset position, void *extra_state);

/* predefined attribute callbacks */
MPI_Comm_copy_attr_function toroid_mpi_comm_null_copy_fn, toroid_mpi_comm_dup_fn;
MPI_Comm_delete_attr_function toroid_mpi_comm_null_delete_fn;
MPI_Type_copy_attr_function toroid_mpi_type_null_copy_fn, toroid_mpi_type_dup_fn;
MPI_Type_delete_attr_function toroid_mpi_type_null_delete_fn;
MPI_Win_copy_attr_function toroid_mpi_win_null_copy_fn, toroid_mpi_win_dup_fn;
MPI_Win_delete_attr_function toroid_mpi_win_null_delete_fn;
#define MPI_COMM_NULL_COPY_FN toroid_mpi_comm_null_copy_fn
#define MPI_COMM_DUP_FN toroid_mpi_comm_dup_fn
#define MPI_COMM_NULL_DELETE_FN toroid_mpi_comm_null_delete_fn
#define MPI_NULL_COPY_FN toroid_mpi_comm_null_copy_fn
#define MPI_DUP_FN toroid_mpi_comm_dup_fn
#define MPI_NULL_DELETE_FN toroid_mpi_comm_null_delete_fn
#define MPI_TYPE_NULL_COPY_FN toroid_mpi_type_null_copy_fn
#define MPI_TYPE_DUP_FN toroid_mpi_type_dup_fn
#define MPI_TYPE_NULL_DELETE_FN toroid_mpi_type_null_delete_fn
#define MPI_WIN_NULL_COPY_FN toroid_mpi_win_null_copy_fn
#define MPI_WIN_DUP_FN toroid_mpi_win_dup_fn
#define MPI_WIN_NULL_DELETE_FN toroid_mpi_win_null_delete_fn
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)

/* ---- address arithmetic (MPI 3.1) ---- */
#define MPI_Aint_add(base, disp) ((MPI_Aint)((char *)(base) + (disp)))
#define MPI_Aint_diff(addr1, addr2) ((MPI_Aint)((char *)(addr1) - (char *)(addr2)))
#define PMPI_Aint_add(base, disp) MPI_Aint_add(base, disp)
#define PMPI_Aint_diff(addr1, addr2) MPI_Aint_diff(addr1, addr2)

/* ROMIO compatibility names */
#define MPIO_Request MPI_Request
#define MPIO_Test MPI_Test
#define MPIO_Wait MPI_Wait

#include "mpi_functions.h"
#include "mpi_tool.h"

#ifdef __cplusplus
}
#endif

#endif /* TOROID_MPI_H */
