// Attribute caching (MPI 3.1 sections 6.7, 8.1.2): keyvals with copy and
// delete callbacks, attributes on communicators and datatypes, and the
// predefined attributes of every communicator (MPI_TAG_UB, MPI_HOST,
// MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_APPNUM).
#include <vector>

#include "mpi/comm_internal.h"

extern "C" {
int toroid_mpi_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int toroid_mpi_comm_dup_fn(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int toroid_mpi_comm_null_delete_fn(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }
int toroid_mpi_type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int toroid_mpi_type_dup_fn(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int toroid_mpi_type_null_delete_fn(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }
int toroid_mpi_win_null_copy_fn(MPI_Win, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int toroid_mpi_win_dup_fn(MPI_Win, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int toroid_mpi_win_null_delete_fn(MPI_Win, int, void*, void*) { return MPI_SUCCESS; }
}

namespace toroid::mpi {

int last_used_code();  // errors.cc

namespace {

enum class KvKind : uint8_t { kComm, kType };

struct Keyval {
  KvKind kind = KvKind::kComm;
  MPI_Comm_copy_attr_function* comm_copy = nullptr;
  MPI_Comm_delete_attr_function* comm_delete = nullptr;
  MPI_Type_copy_attr_function* type_copy = nullptr;
  MPI_Type_delete_attr_function* type_delete = nullptr;
  void* extra = nullptr;
  bool live = false;  // not freed by the program
  int uses = 0;       // attributes that still carry it
};

constexpr int kFirstUserKeyval = 16;

std::vector<Keyval>& keyvals() {
  static auto* v = new std::vector<Keyval>(kFirstUserKeyval);
  return *v;
}

bool predefined_comm_key(int kv) { return kv >= MPI_TAG_UB && kv <= MPI_APPNUM; }

int check_keyval(MPI_Comm where, int kv, KvKind kind) {
  if (kv < kFirstUserKeyval || kv >= static_cast<int>(keyvals().size()) || keyvals()[static_cast<size_t>(kv)].kind != kind ||
      (!keyvals()[static_cast<size_t>(kv)].live && keyvals()[static_cast<size_t>(kv)].uses == 0))
    return raise(where, MPI_ERR_KEYVAL, "keyval %d is not a valid %s keyval", kv, kind == KvKind::kComm ? "communicator" : "datatype");
  return 0;
}

int create_keyval(KvKind kind, void* copy, void* del, int* keyval, void* extra) {
  if (!keyval) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "keyval is NULL");
  Keyval k;
  k.kind = kind;
  if (kind == KvKind::kComm) {
    k.comm_copy = reinterpret_cast<MPI_Comm_copy_attr_function*>(copy);
    k.comm_delete = reinterpret_cast<MPI_Comm_delete_attr_function*>(del);
  } else {
    k.type_copy = reinterpret_cast<MPI_Type_copy_attr_function*>(copy);
    k.type_delete = reinterpret_cast<MPI_Type_delete_attr_function*>(del);
  }
  k.extra = extra;
  k.live = true;
  keyvals().push_back(k);
  *keyval = static_cast<int>(keyvals().size() - 1);
  return MPI_SUCCESS;
}

Attr* find(AttrList& l, int kv) {
  for (Attr& a : l)
    if (a.keyval == kv) return &a;
  return nullptr;
}

// The delete callback of one attribute; the attribute is then gone.
int delete_one(MPI_Comm c, MPI_Datatype t, AttrList& l, int kv) {
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i].keyval != kv) continue;
    Keyval& k = keyvals()[static_cast<size_t>(kv)];
    int rc = MPI_SUCCESS;
    if (c && k.comm_delete) rc = k.comm_delete(c, kv, l[i].value, k.extra);
    if (t && k.type_delete) rc = k.type_delete(t, kv, l[i].value, k.extra);
    if (rc != MPI_SUCCESS) return rc;
    l.erase(l.begin() + static_cast<ptrdiff_t>(i));
    --k.uses;
    return MPI_SUCCESS;
  }
  return MPI_SUCCESS;
}

int free_keyval(int* keyval, KvKind kind) {
  if (!keyval) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "keyval is NULL");
  if (int e = check_keyval(MPI_COMM_WORLD, *keyval, kind)) return e;
  keyvals()[static_cast<size_t>(*keyval)].live = false;  // attributes that carry it keep it until deleted
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int set_attr(MPI_Comm c, MPI_Datatype t, AttrList& l, int kv, void* value) {
  if (find(l, kv)) {
    if (int rc = delete_one(c, t, l, kv)) return raise(c ? c : MPI_COMM_WORLD, rc, "the delete callback of keyval %d failed", kv);
  }
  l.push_back(Attr{kv, value});
  ++keyvals()[static_cast<size_t>(kv)].uses;
  return MPI_SUCCESS;
}

int g_tag_ub = kTagUb, g_host = MPI_PROC_NULL, g_io = MPI_ANY_SOURCE, g_wtime_global = 0, g_universe = 0,
    g_last_code = 0, g_appnum = 0;

}  // namespace

int attrs_copy_comm(MPI_Comm from, MPI_Comm to) {
  for (const Attr& a : from->attrs) {
    Keyval& k = keyvals()[static_cast<size_t>(a.keyval)];
    if (!k.comm_copy) continue;
    void* out = nullptr;
    int flag = 0;
    if (int rc = k.comm_copy(from, a.keyval, k.extra, a.value, &out, &flag))
      return raise(from, rc, "the copy callback of keyval %d failed", a.keyval);
    if (flag) {
      to->attrs.push_back(Attr{a.keyval, out});
      ++k.uses;
    }
  }
  return MPI_SUCCESS;
}

int attrs_delete_comm(MPI_Comm c) {
  while (!c->attrs.empty()) {
    const int kv = c->attrs.back().keyval;
    if (int rc = delete_one(c, nullptr, c->attrs, kv)) return raise(c, rc, "the delete callback of keyval %d failed", kv);
  }
  return MPI_SUCCESS;
}

int attrs_delete_type(MPI_Datatype t) {
  while (!t->attrs.empty()) {
    const int kv = t->attrs.back().keyval;
    if (int rc = delete_one(nullptr, t, t->attrs, kv)) return raise(MPI_COMM_WORLD, rc, "the delete callback of keyval %d failed", kv);
  }
  return MPI_SUCCESS;
}

int attrs_copy_type(MPI_Datatype from, MPI_Datatype to) {
  for (const Attr& a : from->attrs) {
    Keyval& k = keyvals()[static_cast<size_t>(a.keyval)];
    if (!k.type_copy) continue;
    void* out = nullptr;
    int flag = 0;
    if (int rc = k.type_copy(from, a.keyval, k.extra, a.value, &out, &flag))
      return raise(MPI_COMM_WORLD, rc, "the copy callback of keyval %d failed", a.keyval);
    if (flag) {
      to->attrs.push_back(Attr{a.keyval, out});
      ++k.uses;
    }
  }
  return MPI_SUCCESS;
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Comm_create_keyval, (MPI_Comm_copy_attr_function * copy_fn, MPI_Comm_delete_attr_function* delete_fn,
                                         int* comm_keyval, void* extra_state)) {
  MPI_ENTER("MPI_Comm_create_keyval");
  return create_keyval(KvKind::kComm, reinterpret_cast<void*>(copy_fn), reinterpret_cast<void*>(delete_fn), comm_keyval,
                       extra_state);
}

TOROID_MPI_API(int, Keyval_create, (MPI_Copy_function * copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                                    void* extra_state)) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

TOROID_MPI_API(int, Comm_free_keyval, (int* comm_keyval)) {
  MPI_ENTER("MPI_Comm_free_keyval");
  return free_keyval(comm_keyval, KvKind::kComm);
}

TOROID_MPI_API(int, Keyval_free, (int* keyval)) { return PMPI_Comm_free_keyval(keyval); }

TOROID_MPI_API(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val)) {
  MPI_ENTER("MPI_Comm_set_attr");
  if (int e = check_comm(comm)) return e;
  if (predefined_comm_key(comm_keyval))
    return raise(comm, MPI_ERR_KEYVAL, "keyval %d is predefined: its attribute cannot be set", comm_keyval);
  if (int e = check_keyval(comm, comm_keyval, KvKind::kComm)) return e;
  return set_attr(comm, nullptr, comm->attrs, comm_keyval, attribute_val);
}

TOROID_MPI_API(int, Attr_put, (MPI_Comm comm, int keyval, void* attribute_val)) {
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

TOROID_MPI_API(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag)) {
  MPI_ENTER("MPI_Comm_get_attr");
  if (int e = check_comm(comm)) return e;
  if (!attribute_val || !flag) return raise(comm, MPI_ERR_ARG, "attribute_val or flag is NULL");
  void** out = static_cast<void**>(attribute_val);
  if (predefined_comm_key(comm_keyval)) {
    g_universe = static_cast<int>(rt().size());
    g_last_code = last_used_code();
    int* v = comm_keyval == MPI_TAG_UB ? &g_tag_ub
             : comm_keyval == MPI_HOST ? &g_host
             : comm_keyval == MPI_IO ? &g_io
             : comm_keyval == MPI_WTIME_IS_GLOBAL ? &g_wtime_global
             : comm_keyval == MPI_UNIVERSE_SIZE ? &g_universe
             : comm_keyval == MPI_LASTUSEDCODE ? &g_last_code
                                               : &g_appnum;
    *out = v;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (int e = check_keyval(comm, comm_keyval, KvKind::kComm)) return e;
  Attr* a = find(comm->attrs, comm_keyval);
  *flag = a != nullptr;
  if (a) *out = a->value;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Attr_get, (MPI_Comm comm, int keyval, void* attribute_val, int* flag)) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

TOROID_MPI_API(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval)) {
  MPI_ENTER("MPI_Comm_delete_attr");
  if (int e = check_comm(comm)) return e;
  if (int e = check_keyval(comm, comm_keyval, KvKind::kComm)) return e;
  if (!find(comm->attrs, comm_keyval)) return raise(comm, MPI_ERR_KEYVAL, "no attribute of keyval %d is set", comm_keyval);
  if (int rc = delete_one(comm, nullptr, comm->attrs, comm_keyval))
    return raise(comm, rc, "the delete callback of keyval %d failed", comm_keyval);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Attr_delete, (MPI_Comm comm, int keyval)) { return PMPI_Comm_delete_attr(comm, keyval); }

TOROID_MPI_API(int, Type_create_keyval, (MPI_Type_copy_attr_function * copy_fn, MPI_Type_delete_attr_function* delete_fn,
                                         int* type_keyval, void* extra_state)) {
  MPI_ENTER("MPI_Type_create_keyval");
  return create_keyval(KvKind::kType, reinterpret_cast<void*>(copy_fn), reinterpret_cast<void*>(delete_fn), type_keyval,
                       extra_state);
}

TOROID_MPI_API(int, Type_free_keyval, (int* type_keyval)) {
  MPI_ENTER("MPI_Type_free_keyval");
  return free_keyval(type_keyval, KvKind::kType);
}

TOROID_MPI_API(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val)) {
  MPI_ENTER("MPI_Type_set_attr");
  if (!valid(datatype)) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "not a valid datatype");
  if (int e = check_keyval(MPI_COMM_WORLD, type_keyval, KvKind::kType)) return e;
  return set_attr(nullptr, datatype, datatype->attrs, type_keyval, attribute_val);
}

TOROID_MPI_API(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag)) {
  MPI_ENTER("MPI_Type_get_attr");
  if (!valid(datatype)) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "not a valid datatype");
  if (int e = check_keyval(MPI_COMM_WORLD, type_keyval, KvKind::kType)) return e;
  if (!attribute_val || !flag) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "attribute_val or flag is NULL");
  Attr* a = find(datatype->attrs, type_keyval);
  *flag = a != nullptr;
  if (a) *static_cast<void**>(attribute_val) = a->value;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval)) {
  MPI_ENTER("MPI_Type_delete_attr");
  if (!valid(datatype)) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "not a valid datatype");
  if (int e = check_keyval(MPI_COMM_WORLD, type_keyval, KvKind::kType)) return e;
  if (!find(datatype->attrs, type_keyval))
    return raise(MPI_COMM_WORLD, MPI_ERR_KEYVAL, "no attribute of keyval %d is set", type_keyval);
  if (int rc = delete_one(nullptr, datatype, datatype->attrs, type_keyval))
    return raise(MPI_COMM_WORLD, rc, "the delete callback of keyval %d failed", type_keyval);
  return MPI_SUCCESS;
}
