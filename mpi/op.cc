#include "mpi/op.h"

#include <complex>
#include <cstring>
#include <type_traits>

#include "mpi/datatype.h"

toroid_mpi_op toroid_mpi_op_max, toroid_mpi_op_min, toroid_mpi_op_sum, toroid_mpi_op_prod, toroid_mpi_op_land,
    toroid_mpi_op_band, toroid_mpi_op_lor, toroid_mpi_op_bor, toroid_mpi_op_lxor, toroid_mpi_op_bxor,
    toroid_mpi_op_minloc, toroid_mpi_op_maxloc, toroid_mpi_op_replace, toroid_mpi_op_no_op;

namespace toroid::mpi {

namespace {

struct PredefinedOps {
  PredefinedOps() {
    const struct {
      toroid_mpi_op* op;
      int which;
      const char* name;
    } all[] = {
        {&toroid_mpi_op_max, kOpMax, "MPI_MAX"},       {&toroid_mpi_op_min, kOpMin, "MPI_MIN"},
        {&toroid_mpi_op_sum, kOpSum, "MPI_SUM"},       {&toroid_mpi_op_prod, kOpProd, "MPI_PROD"},
        {&toroid_mpi_op_land, kOpLand, "MPI_LAND"},    {&toroid_mpi_op_band, kOpBand, "MPI_BAND"},
        {&toroid_mpi_op_lor, kOpLor, "MPI_LOR"},       {&toroid_mpi_op_bor, kOpBor, "MPI_BOR"},
        {&toroid_mpi_op_lxor, kOpLxor, "MPI_LXOR"},    {&toroid_mpi_op_bxor, kOpBxor, "MPI_BXOR"},
        {&toroid_mpi_op_minloc, kOpMinloc, "MPI_MINLOC"}, {&toroid_mpi_op_maxloc, kOpMaxloc, "MPI_MAXLOC"},
        {&toroid_mpi_op_replace, kOpReplace, "MPI_REPLACE"}, {&toroid_mpi_op_no_op, kOpNoOp, "MPI_NO_OP"},
    };
    for (const auto& o : all) {
      o.op->magic = kMagicOp;
      o.op->predefined = true;
      o.op->which = o.which;
      o.op->commute = true;
      o.op->name = o.name;
    }
  }
} g_predefined_ops;

// ---- this library's element kernels: dst = src OP dst ----

// State of a kernel: the reduction (for user functions) and, for primitive
// kernels, the primitive's size.
template <typename T>
void prim_kernel(int which, T* d, const T* s, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    switch (which) {
      case kOpSum: d[i] = s[i] + d[i]; break;
      case kOpProd: d[i] = s[i] * d[i]; break;
      case kOpMax:
        if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>> &&
                      !std::is_same_v<T, std::complex<long double>>)
          d[i] = s[i] > d[i] ? s[i] : d[i];
        break;
      case kOpMin:
        if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>> &&
                      !std::is_same_v<T, std::complex<long double>>)
          d[i] = s[i] < d[i] ? s[i] : d[i];
        break;
      default: break;
    }
  }
}

template <typename T>
void prim_fn(const void* ctx, void* dst, const void* src, size_t n) {
  const auto* r = static_cast<const Reduction*>(ctx);
  const size_t prims = n * r->esize / sizeof(T);
  // The frames are not aligned for T: work on copies of whole chunks.
  constexpr size_t kChunk = 64;
  T a[kChunk], b[kChunk];
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < prims; i += kChunk) {
    const size_t k = std::min(kChunk, prims - i);
    std::memcpy(a, d + i * sizeof(T), k * sizeof(T));
    std::memcpy(b, s + i * sizeof(T), k * sizeof(T));
    prim_kernel<T>(r->op->which, a, b, k);
    std::memcpy(d + i * sizeof(T), a, k * sizeof(T));
  }
}

// Logical ops on C _Bool / Fortran LOGICAL kept here for completeness of
// kernels the library lacks are not needed: the library has them.

// (value, index) pairs at the pair type's offsets: the smaller (MINLOC) or
// larger (MAXLOC) value wins, a tie takes the smaller index.
template <typename V, typename I, size_t kIndexAt>
void pair_fn(const void* ctx, void* dst, const void* src, size_t n) {
  const auto* r = static_cast<const Reduction*>(ctx);
  const bool is_min = r->op->which == kOpMinloc;
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n; ++i, d += r->esize, s += r->esize) {
    V dv, sv;
    I di, si;
    std::memcpy(&dv, d, sizeof dv);
    std::memcpy(&sv, s, sizeof sv);
    std::memcpy(&di, d + kIndexAt, sizeof di);
    std::memcpy(&si, s + kIndexAt, sizeof si);
    const bool s_wins = is_min ? sv < dv : sv > dv;
    if (s_wins || (sv == dv && si < di)) {
      std::memcpy(d, &sv, sizeof sv);
      std::memcpy(d + kIndexAt, &si, sizeof si);
    }
  }
}

void user_fn(const void* ctx, void* dst, const void* src, size_t n) {
  const auto* r = static_cast<const Reduction*>(ctx);
  int len = static_cast<int>(n);
  MPI_Datatype t = r->type;
  // inoutvec = invec OP inoutvec: invec is the lower ranks' partial.
  r->op->fn(const_cast<void*>(src), dst, &len, &t);
}

Reducer::CtxFn prim_kernel_for(Prim p) {
  switch (p) {
    case Prim::kLongDouble: case Prim::kReal16: return prim_fn<long double>;
    case Prim::kCFloatComplex: case Prim::kComplex: case Prim::kComplex8: return prim_fn<std::complex<float>>;
    case Prim::kCDoubleComplex: case Prim::kDoubleComplex: case Prim::kComplex16: return prim_fn<std::complex<double>>;
    case Prim::kCLongDoubleComplex: case Prim::kComplex32: return prim_fn<std::complex<long double>>;
    default: return nullptr;
  }
}

Reducer::CtxFn pair_kernel_for(Pair p) {
  switch (p) {
    case Pair::kFloatInt: return pair_fn<float, int, 4>;
    case Pair::kDoubleInt: return pair_fn<double, int, 8>;
    case Pair::kLongInt: return pair_fn<long, int, 8>;
    case Pair::k2Int: return pair_fn<int, int, 4>;
    case Pair::kShortInt: return pair_fn<short, int, 4>;
    case Pair::kLongDoubleInt: return pair_fn<long double, int, 16>;
    case Pair::k2Real: return pair_fn<float, float, 4>;
    case Pair::k2DoublePrecision: return pair_fn<double, double, 8>;
    case Pair::k2Integer: return pair_fn<int, int, 4>;
    default: return nullptr;
  }
}

bool op_applies(int which, OpGroup g) {
  switch (which) {
    case kOpMax: case kOpMin:
      return g == OpGroup::kCInteger || g == OpGroup::kFortranInteger || g == OpGroup::kFloating || g == OpGroup::kMulti;
    case kOpSum: case kOpProd:
      return g == OpGroup::kCInteger || g == OpGroup::kFortranInteger || g == OpGroup::kFloating ||
             g == OpGroup::kComplex || g == OpGroup::kMulti;
    case kOpLand: case kOpLor: case kOpLxor:
      // MPI 3.1's table leaves the multi-language integers (MPI_AINT,
      // MPI_OFFSET, MPI_COUNT) out of the logical ops; MPICH and Open MPI
      // take them, as integers, and test suites use them.
      return g == OpGroup::kCInteger || g == OpGroup::kLogical || g == OpGroup::kMulti;
    case kOpBand: case kOpBor: case kOpBxor:
      return g == OpGroup::kCInteger || g == OpGroup::kFortranInteger || g == OpGroup::kByte || g == OpGroup::kMulti;
    default: return false;
  }
}

ROp rop_of(int which) {
  switch (which) {
    case kOpMax: return ROp::kMax;
    case kOpMin: return ROp::kMin;
    case kOpSum: return ROp::kSum;
    case kOpProd: return ROp::kProd;
    case kOpLand: return ROp::kLand;
    case kOpBand: return ROp::kBand;
    case kOpLor: return ROp::kLor;
    case kOpBor: return ROp::kBor;
    case kOpLxor: return ROp::kLxor;
    case kOpBxor: return ROp::kBxor;
    case kOpMinloc: return ROp::kMinloc;
    default: return ROp::kMaxloc;
  }
}

}  // namespace

int resolve_reduction(MPI_Comm comm, MPI_Op op, MPI_Datatype t, Reduction* r) {
  r->op = op;
  r->type = t;
  r->library = false;
  r->commutative = op->commute;
  r->esize = static_cast<size_t>(t->extent());
  r->red = Reducer{};
  r->red.esize = r->esize;
  r->red.ctx = r;
  if (op->which == kOpUser) {
    const bool dense = t->lb == 0 && t->true_lb >= 0 && t->true_ub <= t->ub && t->extent() > 0;
    if (!dense)
      return raise(comm, MPI_ERR_TYPE,
                   "user operations on datatype '%s' whose data lies outside [0, extent) are not supported",
                   t->name.c_str());
    r->red.cfn = user_fn;
    return MPI_SUCCESS;
  }
  if (op->which == kOpReplace || op->which == kOpNoOp)
    return raise(comm, MPI_ERR_OP, "%s is for one-sided accumulate operations, not collectives", op->name);
  if (op->which == kOpMinloc || op->which == kOpMaxloc) {
    if (t->pair == Pair::kNone)
      return raise(comm, MPI_ERR_OP, "%s needs a (value, index) pair type such as MPI_DOUBLE_INT, not '%s'", op->name,
                   t->name.c_str());
    // The library's loc kernels take a packed (value, int32) pair: the same
    // bytes as MPI_2INT and MPI_FLOAT_INT.
    if (t->pair == Pair::k2Int || t->pair == Pair::kFloatInt) {
      r->library = true;
      r->dtype = t->pair == Pair::k2Int ? DType::kInt32 : DType::kFloat;
      r->rop = rop_of(op->which);
      r->scale = 1;
      return MPI_SUCCESS;
    }
    r->red.cfn = pair_kernel_for(t->pair);
    return MPI_SUCCESS;
  }
  if (t->prim == Prim::kNone || !op_applies(op->which, prim_group(t->prim)))
    return raise(comm, MPI_ERR_OP, "%s is not defined for datatype '%s'", op->name,
                 t->name.empty() ? "(derived)" : t->name.c_str());
  DType d;
  if (prim_dtype(t->prim, &d)) {
    r->library = true;
    r->dtype = d;
    r->rop = rop_of(op->which);
    r->scale = static_cast<uint64_t>(t->prims);
    return MPI_SUCCESS;
  }
  r->red.cfn = prim_kernel_for(t->prim);
  if (!r->red.cfn) return raise(comm, MPI_ERR_OP, "%s is not defined for datatype '%s'", op->name, t->name.c_str());
  return MPI_SUCCESS;
}

void reduce_local(const Reduction& r, const void* inbuf, void* inoutbuf, MPI_Count count) {
  if (count <= 0) return;
  if (r.library) {
    // Library kernels compute acc = acc OP in; predefined ops commute bit for bit.
    const Reducer red = make_reducer(r.dtype, r.rop);
    red.apply(inoutbuf, inbuf, static_cast<size_t>(count) * r.scale);
    return;
  }
  r.red.cfn(r.red.ctx, inoutbuf, inbuf, static_cast<size_t>(count));
}

void op_retain(MPI_Op op) {
  if (valid(op) && !op->predefined) ++op->refs;
}

void op_release(MPI_Op op) {
  if (!valid(op) || op->predefined) return;
  if (--op->refs == 0) op->magic = 0;
}

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Op_create, (MPI_User_function * user_fn, int commute, MPI_Op* op)) {
  MPI_ENTER("MPI_Op_create");
  if (!user_fn || !op) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "user_fn or op is NULL");
  auto* o = new toroid_mpi_op();
  o->magic = kMagicOp;
  o->which = kOpUser;
  o->fn = user_fn;
  o->commute = commute != 0;
  o->name = "a user operation";
  *op = o;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Op_free, (MPI_Op * op)) {
  MPI_ENTER("MPI_Op_free");
  if (!op) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "op is NULL");
  if (int e = check_op(MPI_COMM_WORLD, *op)) return e;
  if ((*op)->predefined) return raise(MPI_COMM_WORLD, MPI_ERR_OP, "%s is predefined and cannot be freed", (*op)->name);
  op_release(*op);
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Op_commutative, (MPI_Op op, int* commute)) {
  MPI_ENTER("MPI_Op_commutative");
  if (int e = check_op(MPI_COMM_WORLD, op)) return e;
  if (!commute) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "commute is NULL");
  *commute = op->commute;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Reduce_local, (const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)) {
  MPI_ENTER("MPI_Reduce_local");
  if (int e = check_op(MPI_COMM_WORLD, op)) return e;
  if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
    return raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_IN_PLACE is not a buffer of MPI_Reduce_local");
  if (int e = check_buf(MPI_COMM_WORLD, inbuf, count, datatype)) return e;
  if (int e = check_buf(MPI_COMM_WORLD, inoutbuf, count, datatype)) return e;
  if (int e = check_no_alias(MPI_COMM_WORLD, span_of(inbuf, count, datatype), span_of(inoutbuf, count, datatype)))
    return e;
  Reduction r;
  if (int e = resolve_reduction(MPI_COMM_WORLD, op, datatype, &r)) return e;
  if (!datatype->contig && r.library) {
    // The library's kernels take packed values: pack both, reduce, unpack.
    std::vector<uint8_t> a(static_cast<size_t>(count * datatype->size)), b(a.size());
    pack(inbuf, count, datatype, a.data());
    pack(inoutbuf, count, datatype, b.data());
    reduce_local(r, a.data(), b.data(), count);
    unpack(b.data(), static_cast<MPI_Count>(b.size()), inoutbuf, count, datatype);
    return MPI_SUCCESS;
  }
  const MPI_Aint off = r.library ? datatype->true_lb : datatype->lb;
  reduce_local(r, static_cast<const uint8_t*>(inbuf) + off, static_cast<uint8_t*>(inoutbuf) + off, count);
  return MPI_SUCCESS;
}
