// Reduction operations (MPI 3.1 section 5.9): which (operation, datatype)
// pairs are defined, and how each runs: on the library's own kernels and
// algorithms (the tree, torus and seed ones included) when the library has
// the type, else on an element kernel of this library (long double,
// complex, the pair types of MINLOC/MAXLOC, user functions) run by the
// point-to-point plans, in rank order when the operation is not commutative.
#pragma once
#include <vector>

#include "collectives/dtype.h"
#include "mpi/impl.h"

namespace toroid::mpi {

enum OpKind : int {
  kOpMax = 1, kOpMin, kOpSum, kOpProd, kOpLand, kOpBand, kOpLor, kOpBor, kOpLxor, kOpBxor, kOpMinloc, kOpMaxloc,
  kOpReplace, kOpNoOp, kOpUser,
};

struct Reduction {
  MPI_Op op = nullptr;
  MPI_Datatype type = nullptr;
  // The library runs it: `scale` library elements of `dtype` per MPI element.
  bool library = false;
  DType dtype = DType::kUint8;
  ROp rop = ROp::kSum;
  uint64_t scale = 1;
  // Otherwise: element kernel dst = src OP dst (src holds the lower ranks),
  // on elements laid out as the datatype (its extent apart).
  Reducer red;
  bool commutative = true;
  size_t esize = 0;
};

// Fills r for op on t (used by count elements); raises MPI_ERR_OP on comm
// for a pair MPI does not define ("MPI_BAND is not defined for MPI_DOUBLE").
int resolve_reduction(MPI_Comm comm, MPI_Op op, MPI_Datatype t, Reduction* r);
// inoutbuf = inbuf OP inoutbuf over count elements (MPI_Reduce_local's rule).
void reduce_local(const Reduction& r, const void* inbuf, void* inoutbuf, MPI_Count count);

}  // namespace toroid::mpi
