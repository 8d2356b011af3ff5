// Distributed-array datatypes (MPI 3.1 sections 4.1.3-4.1.4: subarray and
// darray) and the Fortran-size matching types (4.1.?, 17.1.9). Both array
// forms become the list of contiguous runs of the local part (in array
// order, C or Fortran), flattened like any other type, with the whole
// array's extent.
#include <vector>

#include "mpi/datatype.h"
#include "mpi/impl.h"

namespace toroid::mpi {
namespace {

// Index runs (start, length) of one dimension.
using Runs = std::vector<std::pair<MPI_Aint, MPI_Aint>>;

// A type over the runs of every dimension (dim order given slowest first),
// elements of old at their place in an array of `sizes`, with extent the
// whole array.
MPI_Datatype from_runs(const std::vector<Runs>& runs, const std::vector<MPI_Aint>& sizes, MPI_Datatype old,
                       int combiner) {
  const size_t nd = runs.size();
  const MPI_Aint ext = old->extent();
  std::vector<MPI_Aint> stride(nd, ext);  // bytes per index step of each dimension
  for (size_t d = nd - 1; d-- > 0;) stride[d] = stride[d + 1] * sizes[d + 1];
  std::vector<MPI_Aint> bl, disp;
  // Every index of every run of the slower dimensions (an odometer), the
  // last dimension's runs as blocks.
  std::vector<std::vector<MPI_Aint>> points(nd);
  bool empty = false;
  for (size_t d = 0; d + 1 < nd; ++d) {
    for (const auto& r : runs[d])
      for (MPI_Aint k = 0; k < r.second; ++k) points[d].push_back(r.first + k);
    empty |= points[d].empty();
  }
  MPI_Datatype t = type_new(combiner);
  std::vector<size_t> at(nd, 0);
  while (!empty) {
    MPI_Aint base = 0;
    for (size_t d = 0; d + 1 < nd; ++d) base += points[d][at[d]] * stride[d];
    for (const auto& r : runs[nd - 1]) {
      bl.push_back(r.second);
      disp.push_back(base + r.first * stride[nd - 1]);
    }
    int d = static_cast<int>(nd) - 2;
    for (; d >= 0; --d) {
      if (++at[static_cast<size_t>(d)] < points[static_cast<size_t>(d)].size()) break;
      at[static_cast<size_t>(d)] = 0;
    }
    if (d < 0) break;
  }
  std::vector<MPI_Datatype> types(bl.size(), old);
  type_layout(t, bl.size(), bl.data(), disp.data(), types.data(), false);
  MPI_Aint total = ext;
  for (MPI_Aint s : sizes) total *= s;
  t->lb = 0;
  t->ub = total;
  t->lb_marker = t->ub_marker = true;
  t->contig = t->size == total && (t->size == 0 || (t->blocks.size() == 1 && t->blocks[0].disp == t->true_lb));
  return t;
}

// Runs of one dimension of a darray (MPI 3.1 4.1.4): the process at
// coordinate `coord` of `procs` owns, for BLOCK, one block of
// darg (or ceil(gsize / procs)) indices; for CYCLIC(darg), every procs-th
// block of darg; for NONE, all.
int dim_runs(int gsize, int distrib, int darg, int procs, int coord, Runs* out) {
  out->clear();
  if (distrib == MPI_DISTRIBUTE_NONE) {
    out->emplace_back(0, gsize);
    return 0;
  }
  if (distrib == MPI_DISTRIBUTE_BLOCK) {
    const int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + procs - 1) / procs : darg;
    if (b <= 0 || static_cast<long>(b) * procs < gsize) return MPI_ERR_ARG;
    const int lo = coord * b, hi = std::min(gsize, lo + b);
    if (hi > lo) out->emplace_back(lo, hi - lo);
    return 0;
  }
  if (distrib == MPI_DISTRIBUTE_CYCLIC) {
    const int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (b <= 0) return MPI_ERR_ARG;
    for (int lo = coord * b; lo < gsize; lo += procs * b) out->emplace_back(lo, std::min(b, gsize - lo));
    return 0;
  }
  return MPI_ERR_ARG;
}

}  // namespace
}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Type_create_subarray, (int ndims, const int sizes[], const int subsizes[], const int starts[],
                                           int order, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_subarray");
  if (ndims <= 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "ndims %d is not positive", ndims);
  if (!sizes || !subsizes || !starts || !newtype) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "an array argument is NULL");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "order %d is not MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
  if (!valid(oldtype)) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "the old type is not a valid datatype");
  std::vector<Runs> runs(static_cast<size_t>(ndims));
  std::vector<MPI_Aint> dims(static_cast<size_t>(ndims));
  for (int i = 0; i < ndims; ++i) {
    // Slowest dimension first: C order as given, Fortran order reversed.
    const int d = order == MPI_ORDER_C ? i : ndims - 1 - i;
    if (sizes[d] <= 0 || subsizes[d] <= 0 || subsizes[d] > sizes[d] || starts[d] < 0 || starts[d] + subsizes[d] > sizes[d])
      return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "dimension %d: size %d, subsize %d, start %d do not fit", d, sizes[d],
                   subsizes[d], starts[d]);
    runs[static_cast<size_t>(i)] = {{starts[d], subsizes[d]}};
    dims[static_cast<size_t>(i)] = sizes[d];
  }
  MPI_Datatype t = from_runs(runs, dims, oldtype, MPI_COMBINER_SUBARRAY);
  t->ints.push_back(ndims);
  t->ints.insert(t->ints.end(), sizes, sizes + ndims);
  t->ints.insert(t->ints.end(), subsizes, subsizes + ndims);
  t->ints.insert(t->ints.end(), starts, starts + ndims);
  t->ints.push_back(order);
  t->types = {oldtype};
  type_retain(oldtype);
  *newtype = t;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_create_darray, (int size, int rank, int ndims, const int gsizes[], const int distribs[],
                                         const int dargs[], const int psizes[], int order, MPI_Datatype oldtype,
                                         MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_darray");
  if (ndims <= 0 || size <= 0 || rank < 0 || rank >= size)
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "ndims %d, size %d, rank %d", ndims, size, rank);
  if (!gsizes || !distribs || !dargs || !psizes || !newtype)
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "an array argument is NULL");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "order %d is not MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
  if (!valid(oldtype)) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "the old type is not a valid datatype");
  long procs = 1;
  for (int d = 0; d < ndims; ++d) procs *= psizes[d];
  if (procs != size) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "the process grid has %ld processes, not %d", procs, size);
  // The process grid is row-major (C order) whatever the array order.
  std::vector<int> coord(static_cast<size_t>(ndims));
  for (int d = ndims - 1, r = rank; d >= 0; --d) {
    coord[static_cast<size_t>(d)] = r % psizes[d];
    r /= psizes[d];
  }
  std::vector<Runs> runs(static_cast<size_t>(ndims));
  std::vector<MPI_Aint> dims(static_cast<size_t>(ndims));
  for (int i = 0; i < ndims; ++i) {
    const int d = order == MPI_ORDER_C ? i : ndims - 1 - i;
    if (dim_runs(gsizes[d], distribs[d], dargs[d], psizes[d], coord[static_cast<size_t>(d)], &runs[static_cast<size_t>(i)]))
      return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "dimension %d: distribution %d with argument %d does not cover %d indices",
                   d, distribs[d], dargs[d], gsizes[d]);
    dims[static_cast<size_t>(i)] = gsizes[d];
  }
  MPI_Datatype t = from_runs(runs, dims, oldtype, MPI_COMBINER_DARRAY);
  t->ints = {size, rank, ndims};
  for (const int* a : {gsizes, distribs, dargs, psizes}) t->ints.insert(t->ints.end(), a, a + ndims);
  t->ints.push_back(order);
  t->types = {oldtype};
  type_retain(oldtype);
  *newtype = t;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_match_size, (int typeclass, int size, MPI_Datatype* datatype)) {
  MPI_ENTER("MPI_Type_match_size");
  if (!datatype) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "datatype is NULL");
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (typeclass == MPI_TYPECLASS_INTEGER)
    t = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4 : size == 8 ? MPI_INTEGER8 : t;
  else if (typeclass == MPI_TYPECLASS_REAL)
    t = size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : size == static_cast<int>(sizeof(long double)) ? MPI_REAL16 : t;
  else if (typeclass == MPI_TYPECLASS_COMPLEX)
    t = size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16 : size == 32 ? MPI_COMPLEX32 : t;
  else
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "type class %d is not MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX", typeclass);
  if (t == MPI_DATATYPE_NULL) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "no type of class %d has %d bytes", typeclass, size);
  *datatype = t;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_create_f90_integer, (int r, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_f90_integer");
  if (!newtype) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newtype is NULL");
  if (r <= 2) *newtype = MPI_INTEGER1;
  else if (r <= 4) *newtype = MPI_INTEGER2;
  else if (r <= 9) *newtype = MPI_INTEGER4;
  else if (r <= 18) *newtype = MPI_INTEGER8;
  else return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "no integer type has a range of %d digits", r);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_create_f90_real, (int p, int r, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_f90_real");
  if (!newtype) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newtype is NULL");
  if (p <= 6 && r <= 37) *newtype = MPI_REAL4;
  else if (p <= 15 && r <= 307) *newtype = MPI_REAL8;
  else if (p <= 18 && r <= 4931) *newtype = MPI_REAL16;
  else return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "no real type has precision %d and range %d", p, r);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_create_f90_complex, (int p, int r, MPI_Datatype* newtype)) {
  MPI_ENTER("MPI_Type_create_f90_complex");
  if (!newtype) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "newtype is NULL");
  if (p <= 6 && r <= 37) *newtype = MPI_COMPLEX8;
  else if (p <= 15 && r <= 307) *newtype = MPI_COMPLEX16;
  else if (p <= 18 && r <= 4931) *newtype = MPI_COMPLEX32;
  else return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "no complex type has precision %d and range %d", p, r);
  return MPI_SUCCESS;
}
