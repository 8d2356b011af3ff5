// Derived datatype constructors (MPI 3.1 sections 4.1.2-4.1.7, 4.1.9-4.1.10):
// each reduces its arguments to (count, blocklength, byte displacement,
// type) entries and lets type_layout flatten them; the arguments are kept
// for MPI_Type_get_contents, and the types they name are held until the new
// type is freed.
#include <algorithm>
#include <vector>

#include "mpi/datatype.h"
#include "mpi/impl.h"

namespace toroid::mpi {

int attrs_delete_type(MPI_Datatype t);  // attrs.cc
int attrs_copy_type(MPI_Datatype from, MPI_Datatype to);

void type_retain(MPI_Datatype t) {
  if (valid(t) && !t->predefined) ++t->refs;
}

void type_release(MPI_Datatype t) {
  if (!valid(t) || t->predefined) return;
  if (--t->refs > 0) return;
  t->magic = 0;
  for (MPI_Datatype u : t->types) type_release(u);
  t->types.clear();
  t->blocks.clear();
  t->blocks.shrink_to_fit();
  t->sig.clear();
  // The object itself stays allocated: a stale handle must still read as invalid.
}

namespace {

int check_old(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "the old type is MPI_DATATYPE_NULL");
  if (!valid(t)) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "the old type is not a valid datatype");
  return 0;
}

int check_count(int count, const char* what) {
  if (count < 0) return raise(MPI_COMM_WORLD, MPI_ERR_COUNT, "%s %d is negative", what, count);
  return 0;
}

// A new type over entries (bl[i] copies of types[i] at disp[i] bytes).
MPI_Datatype make(int combiner, const std::vector<MPI_Aint>& bl, const std::vector<MPI_Aint>& disp,
                  const std::vector<MPI_Datatype>& types, bool pad) {
  MPI_Datatype t = type_new(combiner);
  type_layout(t, bl.size(), bl.data(), disp.data(), types.data(), pad);
  return t;
}

void keep(MPI_Datatype t, std::vector<int> ints, std::vector<MPI_Aint> aints, std::vector<MPI_Datatype> types) {
  t->ints = std::move(ints);
  t->aints = std::move(aints);
  t->types = std::move(types);
  for (MPI_Datatype u : t->types) type_retain(u);
}

int out(MPI_Datatype t, MPI_Datatype* newtype) {
  if (!newtype) {
    type_release(t);
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newtype is NULL");
  }
  *newtype = t;
  return MPI_SUCCESS;
}

}  // namespace

// An internal temporary type (subarray, darray), freed by the caller.
MPI_Datatype temp_hvector(MPI_Aint count, MPI_Aint bl, MPI_Aint stride, MPI_Datatype old) {
  std::vector<MPI_Aint> b(static_cast<size_t>(count), bl), d(static_cast<size_t>(count));
  for (MPI_Aint i = 0; i < count; ++i) d[static_cast<size_t>(i)] = i * stride;
  return make(MPI_COMBINER_HVECTOR, b, d, std::vector<MPI_Datatype>(static_cast<size_t>(count), old), true);
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_contiguous");
  if (int e = check_count(count, "count")) return e;
  if (int e = check_old(oldtype)) return e;
  MPI_Datatype t = make(MPI_COMBINER_CONTIGUOUS, {count}, {0}, {oldtype}, true);
  keep(t, {count}, {}, {oldtype});
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_vector");
  if (int e = check_count(count, "count")) return e;
  if (int e = check_count(blocklength, "blocklength")) return e;
  if (int e = check_old(oldtype)) return e;
  MPI_Datatype t = temp_hvector(count, blocklength, static_cast<MPI_Aint>(stride) * oldtype->extent(), oldtype);
  t->combiner = MPI_COMBINER_VECTOR;
  keep(t, {count, blocklength, stride}, {}, {oldtype});
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                          MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_hvector");
  if (int e = check_count(count, "count")) return e;
  if (int e = check_count(blocklength, "blocklength")) return e;
  if (int e = check_old(oldtype)) return e;
  MPI_Datatype t = temp_hvector(count, blocklength, stride, oldtype);
  keep(t, {count, blocklength}, {stride}, {oldtype});
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                   MPI_Datatype* newtype)) {
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

TOROID_MPI_API(int, Type_indexed, (int count, const int bls[], const int displs[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_indexed");
  if (int e = check_count(count, "count")) return e;
  if (int e = check_old(oldtype)) return e;
  if (count > 0 && (!bls || !displs)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "blocklengths or displacements is NULL");
  std::vector<MPI_Aint> b(static_cast<size_t>(count)), d(static_cast<size_t>(count));
  std::vector<int> ints = {count};
  for (int i = 0; i < count; ++i) {
    if (bls[i] < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "blocklength %d is negative", bls[i]);
    b[static_cast<size_t>(i)] = bls[i];
    d[static_cast<size_t>(i)] = static_cast<MPI_Aint>(displs[i]) * oldtype->extent();
  }
  ints.insert(ints.end(), bls, bls + count);
  ints.insert(ints.end(), displs, displs + count);
  MPI_Datatype t = make(MPI_COMBINER_INDEXED, b, d, std::vector<MPI_Datatype>(static_cast<size_t>(count), oldtype), true);
  keep(t, ints, {}, {oldtype});
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_create_hindexed, (int count, const int bls[], const MPI_Aint displs[], MPI_Datatype oldtype,
                                           MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_hindexed");
  if (int e = check_count(count, "count")) return e;
  if (int e = check_old(oldtype)) return e;
  if (count > 0 && (!bls || !displs)) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "blocklengths or displacements is NULL");
  std::vector<MPI_Aint> b(static_cast<size_t>(count)), d(displs, displs + count);
  std::vector<int> ints = {count};
  for (int i = 0; i < count; ++i) {
    if (bls[i] < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "blocklength %d is negative", bls[i]);
    b[static_cast<size_t>(i)] = bls[i];
  }
  ints.insert(ints.end(), bls, bls + count);
  MPI_Datatype t = make(MPI_COMBINER_HINDEXED, b, d, std::vector<MPI_Datatype>(static_cast<size_t>(count), oldtype), true);
  keep(t, ints, d, {oldtype});
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_hindexed, (int count, int bls[], MPI_Aint displs[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype)) {
  return PMPI_Type_create_hindexed(count, bls, displs, oldtype, newtype);
}

TOROID_MPI_API(int, Type_create_indexed_block, (int count, int blocklength, const int displs[], MPI_Datatype oldtype,
                                                MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_indexed_block");
  if (int e = check_count(count, "count")) return e;
  if (int e = check_count(blocklength, "blocklength")) return e;
  if (int e = check_old(oldtype)) return e;
  if (count > 0 && !displs) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "displacements is NULL");
  std::vector<MPI_Aint> b(static_cast<size_t>(count), blocklength), d(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) d[static_cast<size_t>(i)] = static_cast<MPI_Aint>(displs[i]) * oldtype->extent();
  std::vector<int> ints = {count, blocklength};
  ints.insert(ints.end(), displs, displs + count);
  MPI_Datatype t = make(MPI_COMBINER_INDEXED_BLOCK, b, d, std::vector<MPI_Datatype>(static_cast<size_t>(count), oldtype), true);
  keep(t, ints, {}, {oldtype});
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint displs[],
                                                 MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_hindexed_block");
  if (int e = check_count(count, "count")) return e;
  if (int e = check_count(blocklength, "blocklength")) return e;
  if (int e = check_old(oldtype)) return e;
  if (count > 0 && !displs) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "displacements is NULL");
  std::vector<MPI_Aint> b(static_cast<size_t>(count), blocklength), d(displs, displs + count);
  MPI_Datatype t = make(MPI_COMBINER_HINDEXED_BLOCK, b, d, std::vector<MPI_Datatype>(static_cast<size_t>(count), oldtype), true);
  keep(t, {count, blocklength}, d, {oldtype});
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_create_struct, (int count, const int bls[], const MPI_Aint displs[], const MPI_Datatype types[],
                                         MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_struct");
  if (int e = check_count(count, "count")) return e;
  if (count > 0 && (!bls || !displs || !types))
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "blocklengths, displacements or types is NULL");
  std::vector<MPI_Aint> b(static_cast<size_t>(count)), d(displs, displs + count);
  std::vector<MPI_Datatype> ts(types, types + count);
  std::vector<int> ints = {count};
  for (int i = 0; i < count; ++i) {
    if (int e = check_old(types[i])) return e;
    if (bls[i] < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "blocklength %d is negative", bls[i]);
    b[static_cast<size_t>(i)] = bls[i];
  }
  ints.insert(ints.end(), bls, bls + count);
  MPI_Datatype t = make(MPI_COMBINER_STRUCT, b, d, ts, true);
  keep(t, ints, d, ts);
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_struct, (int count, int bls[], MPI_Aint displs[], MPI_Datatype types[], MPI_Datatype* newtype)) {
  return PMPI_Type_create_struct(count, bls, displs, types, newtype);
}

TOROID_MPI_API(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_resized");
  if (int e = check_old(oldtype)) return e;
  MPI_Datatype t = make(MPI_COMBINER_RESIZED, {1}, {0}, {oldtype}, true);
  t->lb = lb;
  t->ub = lb + extent;
  t->lb_marker = t->ub_marker = true;
  t->contig = t->size == extent && (t->size == 0 || (t->blocks.size() == 1 && t->blocks[0].disp == t->true_lb));
  keep(t, {}, {lb, extent}, {oldtype});
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_dup");
  if (int e = check_old(oldtype)) return e;
  MPI_Datatype t = make(MPI_COMBINER_DUP, {1}, {0}, {oldtype}, true);
  // The same type map and bounds, markers included.
  t->lb = oldtype->lb;
  t->ub = oldtype->ub;
  t->lb_marker = oldtype->lb_marker;
  t->ub_marker = oldtype->ub_marker;
  t->contig = oldtype->contig;
  t->pair = oldtype->pair;
  t->align = oldtype->align;
  t->committed = oldtype->committed;
  keep(t, {}, {}, {oldtype});
  if (int e = attrs_copy_type(oldtype, t)) {
    type_release(t);
    return e;
  }
  return out(t, newtype);
}

TOROID_MPI_API(int, Type_commit, (MPI_Datatype * datatype)) {
  MPI_ENTER("MPI_Type_commit");
  if (!datatype) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "datatype is NULL");
  if (int e = check_old(*datatype)) return e;
  (*datatype)->committed = true;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_free, (MPI_Datatype * datatype)) {
  MPI_ENTER("MPI_Type_free");
  if (!datatype) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "datatype is NULL");
  if (int e = check_old(*datatype)) return e;
  if ((*datatype)->predefined)
    return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s is predefined and cannot be freed", (*datatype)->name.c_str());
  if (int e = attrs_delete_type(*datatype)) return e;
  type_release(*datatype);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}
