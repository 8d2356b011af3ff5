// The predefined datatypes (one static object each, addresses exported as
// MPI_INT, MPI_DOUBLE_INT, ...), primitive sizes and reduction groups, and
// the layout computation every derived-type constructor ends in.
#include <algorithm>
#include <complex>
#include <cstring>
#include <string>
#include <type_traits>

#include "mpi/datatype.h"
#include "mpi/impl.h"

#define TOROID_MPI_DT(name) toroid_mpi_datatype toroid_mpi_dt_##name;
#include "mpi_datatypes.h"
#undef TOROID_MPI_DT

namespace toroid::mpi {

namespace {

struct PrimInfo {
  Prim prim;
  size_t size;
  OpGroup group;
  DType dtype;
  bool has_dtype;
};

const PrimInfo kPrims[] = {
    {Prim::kNone, 0, OpGroup::kNone, DType::kUint8, false},
    // MPI 3.1 5.9.2 leaves MPI_CHAR (text) out of the C integers; MPICH and
    // Open MPI reduce it as the C char it is, and the OSU benchmarks' reductions
    // use MPI_CHAR with MPI_SUM by default: an integer here too.
    {Prim::kChar, 1, OpGroup::kCInteger, std::is_signed_v<char> ? DType::kInt8 : DType::kUint8, true},
    {Prim::kSChar, 1, OpGroup::kCInteger, DType::kInt8, true},
    {Prim::kUChar, 1, OpGroup::kCInteger, DType::kUint8, true},
    {Prim::kShort, sizeof(short), OpGroup::kCInteger, DType::kInt16, true},
    {Prim::kUShort, sizeof(unsigned short), OpGroup::kCInteger, DType::kUint16, true},
    {Prim::kInt, sizeof(int), OpGroup::kCInteger, DType::kInt32, true},
    {Prim::kUInt, sizeof(unsigned), OpGroup::kCInteger, DType::kUint32, true},
    {Prim::kLong, sizeof(long), OpGroup::kCInteger, DType::kInt64, true},
    {Prim::kULong, sizeof(unsigned long), OpGroup::kCInteger, DType::kUint64, true},
    {Prim::kLongLong, sizeof(long long), OpGroup::kCInteger, DType::kInt64, true},
    {Prim::kULongLong, sizeof(unsigned long long), OpGroup::kCInteger, DType::kUint64, true},
    {Prim::kFloat, sizeof(float), OpGroup::kFloating, DType::kFloat, true},
    {Prim::kDouble, sizeof(double), OpGroup::kFloating, DType::kDouble, true},
    {Prim::kLongDouble, sizeof(long double), OpGroup::kFloating, DType::kUint8, false},
    {Prim::kWChar, sizeof(wchar_t), OpGroup::kNone, DType::kUint32, false},
    {Prim::kCBool, sizeof(bool), OpGroup::kLogical, DType::kUint8, true},
    {Prim::kCxxBool, sizeof(bool), OpGroup::kLogical, DType::kUint8, true},
    {Prim::kInt8, 1, OpGroup::kCInteger, DType::kInt8, true},
    {Prim::kInt16, 2, OpGroup::kCInteger, DType::kInt16, true},
    {Prim::kInt32, 4, OpGroup::kCInteger, DType::kInt32, true},
    {Prim::kInt64, 8, OpGroup::kCInteger, DType::kInt64, true},
    {Prim::kUInt8, 1, OpGroup::kCInteger, DType::kUint8, true},
    {Prim::kUInt16, 2, OpGroup::kCInteger, DType::kUint16, true},
    {Prim::kUInt32, 4, OpGroup::kCInteger, DType::kUint32, true},
    {Prim::kUInt64, 8, OpGroup::kCInteger, DType::kUint64, true},
    {Prim::kAint, sizeof(MPI_Aint), OpGroup::kMulti, DType::kInt64, true},
    {Prim::kOffset, sizeof(MPI_Offset), OpGroup::kMulti, DType::kInt64, true},
    {Prim::kCount, sizeof(MPI_Count), OpGroup::kMulti, DType::kInt64, true},
    {Prim::kCFloatComplex, 2 * sizeof(float), OpGroup::kComplex, DType::kUint8, false},
    {Prim::kCDoubleComplex, 2 * sizeof(double), OpGroup::kComplex, DType::kUint8, false},
    {Prim::kCLongDoubleComplex, 2 * sizeof(long double), OpGroup::kComplex, DType::kUint8, false},
    {Prim::kByte, 1, OpGroup::kByte, DType::kUint8, true},
    {Prim::kPacked, 1, OpGroup::kNone, DType::kUint8, false},
    {Prim::kCharacter, 1, OpGroup::kNone, DType::kUint8, false},
    {Prim::kLogical, 4, OpGroup::kLogical, DType::kInt32, true},
    {Prim::kInteger, 4, OpGroup::kFortranInteger, DType::kInt32, true},
    {Prim::kReal, 4, OpGroup::kFloating, DType::kFloat, true},
    {Prim::kDoublePrecision, 8, OpGroup::kFloating, DType::kDouble, true},
    {Prim::kComplex, 8, OpGroup::kComplex, DType::kUint8, false},
    {Prim::kDoubleComplex, 16, OpGroup::kComplex, DType::kUint8, false},
    {Prim::kInteger1, 1, OpGroup::kFortranInteger, DType::kInt8, true},
    {Prim::kInteger2, 2, OpGroup::kFortranInteger, DType::kInt16, true},
    {Prim::kInteger4, 4, OpGroup::kFortranInteger, DType::kInt32, true},
    {Prim::kInteger8, 8, OpGroup::kFortranInteger, DType::kInt64, true},
    {Prim::kReal4, 4, OpGroup::kFloating, DType::kFloat, true},
    {Prim::kReal8, 8, OpGroup::kFloating, DType::kDouble, true},
    {Prim::kReal16, sizeof(long double), OpGroup::kFloating, DType::kUint8, false},
    {Prim::kComplex8, 8, OpGroup::kComplex, DType::kUint8, false},
    {Prim::kComplex16, 16, OpGroup::kComplex, DType::kUint8, false},
    {Prim::kComplex32, 2 * sizeof(long double), OpGroup::kComplex, DType::kUint8, false},
};

const PrimInfo& info(Prim p) { return kPrims[static_cast<int>(p)]; }

// A predefined type of one primitive.
void basic(toroid_mpi_datatype& t, Prim p, const char* name) {
  const auto n = static_cast<MPI_Aint>(info(p).size);
  t.magic = kMagicType;
  t.predefined = true;
  t.committed = true;
  t.combiner = MPI_COMBINER_NAMED;
  t.size = n;
  t.lb = 0;
  t.ub = n;
  t.true_lb = 0;
  t.true_ub = n;
  t.blocks = {Block{0, n}};
  t.contig = true;
  t.prim = p;
  t.sig = {SigRun{p, 1}};
  t.prims = 1;
  t.align = std::min<MPI_Aint>(n, 16);
  if (p == Prim::kCFloatComplex || p == Prim::kComplex || p == Prim::kComplex8) t.align = 4;
  if (p == Prim::kCDoubleComplex || p == Prim::kDoubleComplex || p == Prim::kComplex16) t.align = 8;
  if (p == Prim::kCLongDoubleComplex || p == Prim::kComplex32) t.align = 16;
  t.name = name;
}

// A predefined (value, index) pair: value at 0, index at `index_at`, the
// extent that of the C struct.
void pair(toroid_mpi_datatype& t, Pair kind, Prim value, Prim index, MPI_Aint index_at, MPI_Aint extent,
          const char* name) {
  const auto vs = static_cast<MPI_Aint>(info(value).size), is = static_cast<MPI_Aint>(info(index).size);
  t.magic = kMagicType;
  t.predefined = true;
  t.committed = true;
  t.combiner = MPI_COMBINER_NAMED;
  t.size = vs + is;
  t.lb = 0;
  t.ub = extent;
  t.true_lb = 0;
  t.true_ub = index_at + is;
  if (index_at == vs) t.blocks = {Block{0, vs + is}};
  else t.blocks = {Block{0, vs}, Block{index_at, is}};
  t.contig = index_at == vs && vs + is == extent;
  t.prim = value == index ? value : Prim::kNone;
  t.pair = kind;
  t.sig = value == index ? std::vector<SigRun>{SigRun{value, 2}} : std::vector<SigRun>{SigRun{value, 1}, SigRun{index, 1}};
  t.prims = 2;
  t.align = std::min<MPI_Aint>(std::max(vs, is), 16);
  t.name = name;
}

void marker(toroid_mpi_datatype& t, bool lb, const char* name) {
  t.magic = kMagicType;
  t.predefined = true;
  t.committed = true;
  t.name = name;
  t.lb_marker = lb;
  t.ub_marker = !lb;
}

struct Predefined {
  Predefined() {
    basic(toroid_mpi_dt_char, Prim::kChar, "MPI_CHAR");
    basic(toroid_mpi_dt_short, Prim::kShort, "MPI_SHORT");
    basic(toroid_mpi_dt_int, Prim::kInt, "MPI_INT");
    basic(toroid_mpi_dt_long, Prim::kLong, "MPI_LONG");
    basic(toroid_mpi_dt_long_long, Prim::kLongLong, "MPI_LONG_LONG_INT");
    basic(toroid_mpi_dt_signed_char, Prim::kSChar, "MPI_SIGNED_CHAR");
    basic(toroid_mpi_dt_unsigned_char, Prim::kUChar, "MPI_UNSIGNED_CHAR");
    basic(toroid_mpi_dt_unsigned_short, Prim::kUShort, "MPI_UNSIGNED_SHORT");
    basic(toroid_mpi_dt_unsigned, Prim::kUInt, "MPI_UNSIGNED");
    basic(toroid_mpi_dt_unsigned_long, Prim::kULong, "MPI_UNSIGNED_LONG");
    basic(toroid_mpi_dt_unsigned_long_long, Prim::kULongLong, "MPI_UNSIGNED_LONG_LONG");
    basic(toroid_mpi_dt_float, Prim::kFloat, "MPI_FLOAT");
    basic(toroid_mpi_dt_double, Prim::kDouble, "MPI_DOUBLE");
    basic(toroid_mpi_dt_long_double, Prim::kLongDouble, "MPI_LONG_DOUBLE");
    basic(toroid_mpi_dt_wchar, Prim::kWChar, "MPI_WCHAR");
    basic(toroid_mpi_dt_c_bool, Prim::kCBool, "MPI_C_BOOL");
    basic(toroid_mpi_dt_cxx_bool, Prim::kCxxBool, "MPI_CXX_BOOL");
    basic(toroid_mpi_dt_int8_t, Prim::kInt8, "MPI_INT8_T");
    basic(toroid_mpi_dt_int16_t, Prim::kInt16, "MPI_INT16_T");
    basic(toroid_mpi_dt_int32_t, Prim::kInt32, "MPI_INT32_T");
    basic(toroid_mpi_dt_int64_t, Prim::kInt64, "MPI_INT64_T");
    basic(toroid_mpi_dt_uint8_t, Prim::kUInt8, "MPI_UINT8_T");
    basic(toroid_mpi_dt_uint16_t, Prim::kUInt16, "MPI_UINT16_T");
    basic(toroid_mpi_dt_uint32_t, Prim::kUInt32, "MPI_UINT32_T");
    basic(toroid_mpi_dt_uint64_t, Prim::kUInt64, "MPI_UINT64_T");
    basic(toroid_mpi_dt_aint, Prim::kAint, "MPI_AINT");
    basic(toroid_mpi_dt_offset, Prim::kOffset, "MPI_OFFSET");
    basic(toroid_mpi_dt_count, Prim::kCount, "MPI_COUNT");
    basic(toroid_mpi_dt_c_float_complex, Prim::kCFloatComplex, "MPI_C_FLOAT_COMPLEX");
    basic(toroid_mpi_dt_c_double_complex, Prim::kCDoubleComplex, "MPI_C_DOUBLE_COMPLEX");
    basic(toroid_mpi_dt_c_long_double_complex, Prim::kCLongDoubleComplex, "MPI_C_LONG_DOUBLE_COMPLEX");
    // The same layouts under their own names (MPI_Type_get_name tells them
    // apart, as MPICH and Open MPI do).
    basic(toroid_mpi_dt_c_complex, Prim::kCFloatComplex, "MPI_C_COMPLEX");
    basic(toroid_mpi_dt_cxx_float_complex, Prim::kCFloatComplex, "MPI_CXX_FLOAT_COMPLEX");
    basic(toroid_mpi_dt_cxx_double_complex, Prim::kCDoubleComplex, "MPI_CXX_DOUBLE_COMPLEX");
    basic(toroid_mpi_dt_cxx_long_double_complex, Prim::kCLongDoubleComplex, "MPI_CXX_LONG_DOUBLE_COMPLEX");
    basic(toroid_mpi_dt_byte, Prim::kByte, "MPI_BYTE");
    basic(toroid_mpi_dt_packed, Prim::kPacked, "MPI_PACKED");
    pair(toroid_mpi_dt_float_int, Pair::kFloatInt, Prim::kFloat, Prim::kInt, 4, 8, "MPI_FLOAT_INT");
    pair(toroid_mpi_dt_double_int, Pair::kDoubleInt, Prim::kDouble, Prim::kInt, 8, 16, "MPI_DOUBLE_INT");
    pair(toroid_mpi_dt_long_int, Pair::kLongInt, Prim::kLong, Prim::kInt, 8, 16, "MPI_LONG_INT");
    pair(toroid_mpi_dt_2int, Pair::k2Int, Prim::kInt, Prim::kInt, 4, 8, "MPI_2INT");
    pair(toroid_mpi_dt_short_int, Pair::kShortInt, Prim::kShort, Prim::kInt, 4, 8, "MPI_SHORT_INT");
    pair(toroid_mpi_dt_long_double_int, Pair::kLongDoubleInt, Prim::kLongDouble, Prim::kInt, 16, 32,
         "MPI_LONG_DOUBLE_INT");
    marker(toroid_mpi_dt_lb, true, "MPI_LB");
    marker(toroid_mpi_dt_ub, false, "MPI_UB");
    basic(toroid_mpi_dt_character, Prim::kCharacter, "MPI_CHARACTER");
    basic(toroid_mpi_dt_logical, Prim::kLogical, "MPI_LOGICAL");
    basic(toroid_mpi_dt_integer, Prim::kInteger, "MPI_INTEGER");
    basic(toroid_mpi_dt_real, Prim::kReal, "MPI_REAL");
    basic(toroid_mpi_dt_double_precision, Prim::kDoublePrecision, "MPI_DOUBLE_PRECISION");
    basic(toroid_mpi_dt_complex, Prim::kComplex, "MPI_COMPLEX");
    basic(toroid_mpi_dt_double_complex, Prim::kDoubleComplex, "MPI_DOUBLE_COMPLEX");
    pair(toroid_mpi_dt_2real, Pair::k2Real, Prim::kReal, Prim::kReal, 4, 8, "MPI_2REAL");
    pair(toroid_mpi_dt_2double_precision, Pair::k2DoublePrecision, Prim::kDoublePrecision, Prim::kDoublePrecision, 8,
         16, "MPI_2DOUBLE_PRECISION");
    pair(toroid_mpi_dt_2integer, Pair::k2Integer, Prim::kInteger, Prim::kInteger, 4, 8, "MPI_2INTEGER");
    basic(toroid_mpi_dt_integer1, Prim::kInteger1, "MPI_INTEGER1");
    basic(toroid_mpi_dt_integer2, Prim::kInteger2, "MPI_INTEGER2");
    basic(toroid_mpi_dt_integer4, Prim::kInteger4, "MPI_INTEGER4");
    basic(toroid_mpi_dt_integer8, Prim::kInteger8, "MPI_INTEGER8");
    basic(toroid_mpi_dt_real4, Prim::kReal4, "MPI_REAL4");
    basic(toroid_mpi_dt_real8, Prim::kReal8, "MPI_REAL8");
    basic(toroid_mpi_dt_real16, Prim::kReal16, "MPI_REAL16");
    basic(toroid_mpi_dt_complex8, Prim::kComplex8, "MPI_COMPLEX8");
    basic(toroid_mpi_dt_complex16, Prim::kComplex16, "MPI_COMPLEX16");
    basic(toroid_mpi_dt_complex32, Prim::kComplex32, "MPI_COMPLEX32");
  }
} g_predefined;

}  // namespace

size_t prim_size(Prim p) { return info(p).size; }

bool prim_dtype(Prim p, DType* out) {
  if (!info(p).has_dtype) return false;
  *out = info(p).dtype;
  return true;
}

OpGroup prim_group(Prim p) { return info(p).group; }

MPI_Datatype type_new(int combiner) {
  auto* t = new toroid_mpi_datatype();
  t->magic = kMagicType;
  t->combiner = combiner;
  return t;
}

void type_layout(MPI_Datatype t, size_t count, const MPI_Aint* bl, const MPI_Aint* disp, const MPI_Datatype* types,
                 bool pad) {
  t->blocks.clear();
  t->sig.clear();
  t->size = 0;
  t->prims = 0;
  t->align = 1;
  bool any = false, have_lbm = false, have_ubm = false, have_data = false;
  MPI_Aint lb = 0, ub = 0, lbm = 0, ubm = 0, tlb = 0, tub = 0;
  Prim prim = Prim::kNone;
  bool mixed = false;
  for (size_t i = 0; i < count; ++i) {
    const MPI_Datatype o = types[i];
    const MPI_Aint n = bl[i];
    // n copies k * extent apart: the markers of the first and of the last
    // copy bound them (the extent may be negative: MPI_Type_create_resized).
    const MPI_Aint step = n > 0 ? (n - 1) * o->extent() : 0;
    if (o->lb_marker) {
      const MPI_Aint at = disp[i] + std::min(o->lb, o->lb + step);
      lbm = have_lbm ? std::min(lbm, at) : at;
      have_lbm = true;
    }
    if (o->ub_marker) {
      const MPI_Aint at = disp[i] + std::max(o->ub, o->ub + step);
      ubm = have_ubm ? std::max(ubm, at) : at;
      have_ubm = true;
    }
    if (o == MPI_LB || o == MPI_UB || n <= 0) continue;
    const MPI_Aint ext = o->extent();
    const MPI_Aint lo = disp[i] + std::min(o->lb, o->lb + (n - 1) * ext);
    const MPI_Aint hi = disp[i] + std::max(o->ub, o->ub + (n - 1) * ext);
    lb = any ? std::min(lb, lo) : lo;
    ub = any ? std::max(ub, hi) : hi;
    any = true;
    t->align = std::max(t->align, o->align);
    if (o->size > 0) {
      const MPI_Aint dlo = disp[i] + std::min(o->true_lb, o->true_lb + (n - 1) * ext);
      const MPI_Aint dhi = disp[i] + std::max(o->true_ub, o->true_ub + (n - 1) * ext);
      tlb = have_data ? std::min(tlb, dlo) : dlo;
      tub = have_data ? std::max(tub, dhi) : dhi;
      have_data = true;
      if (o->prim == Prim::kNone || (prim != Prim::kNone && prim != o->prim)) mixed = true;
      prim = o->prim;
    }
    for (MPI_Aint k = 0; k < n; ++k) {
      const MPI_Aint base = disp[i] + k * ext;
      for (const Block& b : o->blocks) {
        if (b.len == 0) continue;
        if (!t->blocks.empty() && t->blocks.back().disp + t->blocks.back().len == base + b.disp)
          t->blocks.back().len += b.len;
        else
          t->blocks.push_back(Block{base + b.disp, b.len});
      }
      for (const SigRun& s : o->sig) {
        if (!t->sig.empty() && t->sig.back().prim == s.prim) t->sig.back().n += s.n;
        else t->sig.push_back(s);
      }
    }
    t->size += n * o->size;
    t->prims += n * o->prims;
  }
  if (pad && !have_ubm && any && t->align > 1) {
    const MPI_Aint ext = ub - lb;
    const MPI_Aint rem = ext % t->align;
    if (rem) ub += t->align - rem;
  }
  t->lb_marker = have_lbm;
  t->ub_marker = have_ubm;
  t->lb = have_lbm ? lbm : lb;
  t->ub = have_ubm ? ubm : ub;
  if (!any && !have_lbm && !have_ubm) t->lb = t->ub = 0;
  t->true_lb = have_data ? tlb : 0;
  t->true_ub = have_data ? tub : 0;
  t->prim = mixed || !have_data ? Prim::kNone : prim;
  t->contig = t->size == t->extent() && (t->size == 0 || (t->blocks.size() == 1 && t->blocks[0].disp == t->true_lb));
}

MPI_Count elements_in(MPI_Datatype t, MPI_Count bytes) {
  if (t->size == 0) return 0;
  const MPI_Count whole = bytes / t->size;
  MPI_Count rest = bytes % t->size;
  MPI_Count n = whole * t->prims;
  for (const SigRun& s : t->sig) {
    if (rest == 0) break;
    const auto ps = static_cast<MPI_Count>(prim_size(s.prim));
    const MPI_Count take = std::min<MPI_Count>(s.n, rest / ps);
    n += take;
    rest -= take * ps;
    if (take < s.n) break;
  }
  return rest ? MPI_UNDEFINED : n;
}

}  // namespace toroid::mpi
