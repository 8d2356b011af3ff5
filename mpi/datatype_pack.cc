// Packing (MPI 3.1 section 4.2): the flattened type map copied block by
// block, and the staging every send and receive uses for data that is not
// contiguous. "external32" is big-endian: primitives are byte-swapped.
#include <algorithm>
#include <cstring>

#include "mpi/datatype.h"
#include "mpi/impl.h"

namespace toroid::mpi {

void pack(const void* buf, MPI_Count count, MPI_Datatype t, uint8_t* out) {
  const auto* base = static_cast<const uint8_t*>(buf);
  if (t->contig) {
    if (count > 0 && t->size > 0) std::memcpy(out, base + t->true_lb, static_cast<size_t>(count * t->size));
    return;
  }
  const MPI_Aint ext = t->extent();
  for (MPI_Count i = 0; i < count; ++i) {
    const uint8_t* e = base + i * ext;
    for (const Block& b : t->blocks) {
      std::memcpy(out, e + b.disp, static_cast<size_t>(b.len));
      out += b.len;
    }
  }
}

void unpack(const uint8_t* in, MPI_Count bytes, void* buf, MPI_Count count, MPI_Datatype t) {
  auto* base = static_cast<uint8_t*>(buf);
  bytes = std::min<MPI_Count>(bytes, count * t->size);
  if (t->contig) {
    if (bytes > 0) std::memcpy(base + t->true_lb, in, static_cast<size_t>(bytes));
    return;
  }
  const MPI_Aint ext = t->extent();
  for (MPI_Count i = 0; i < count && bytes > 0; ++i) {
    uint8_t* e = base + i * ext;
    for (const Block& b : t->blocks) {
      const MPI_Count n = std::min<MPI_Count>(b.len, bytes);
      std::memcpy(e + b.disp, in, static_cast<size_t>(n));
      in += n;
      bytes -= n;
      if (bytes == 0) return;
    }
  }
}

void stage_send(const void* buf, MPI_Count count, MPI_Datatype t, Staging* s) {
  s->bytes = count * t->size;
  s->packed = !t->contig;
  if (!s->packed) {
    s->base = contig_base(buf, t);
    return;
  }
  s->pack.resize(static_cast<size_t>(s->bytes));
  pack(buf, count, t, s->pack.data());
  s->base = s->pack.data();
}

void stage_recv(void* buf, MPI_Count count, MPI_Datatype t, Staging* s) {
  s->bytes = count * t->size;
  s->packed = !t->contig;
  if (!s->packed) {
    s->base = contig_base(buf, t);
    return;
  }
  s->pack.resize(static_cast<size_t>(s->bytes));
  s->base = s->pack.data();
}

void stage_finish(const Staging& s, MPI_Count got, void* buf, MPI_Count count, MPI_Datatype t) {
  if (s.packed) unpack(s.pack.data(), got, buf, count, t);
}

namespace {

bool is_external32(const char* rep) { return rep && std::strcmp(rep, "external32") == 0; }

// external32 sizes: the standard's fixed sizes for the C types.
size_t external_size(Prim p) {
  switch (p) {
    case Prim::kLong: case Prim::kULong: return 8;
    case Prim::kWChar: return 4;
    case Prim::kLongDouble: case Prim::kReal16: return 16;
    default: return prim_size(p);
  }
}

// Byte-swaps each primitive of one packed element stream in place.
void swap_prims(uint8_t* p, MPI_Count count, MPI_Datatype t) {
  for (MPI_Count i = 0; i < count; ++i)
    for (const SigRun& s : t->sig) {
      size_t n = prim_size(s.prim);
      size_t unit = n;
      if (s.prim == Prim::kCFloatComplex || s.prim == Prim::kComplex || s.prim == Prim::kComplex8 ||
          s.prim == Prim::kCDoubleComplex || s.prim == Prim::kDoubleComplex || s.prim == Prim::kComplex16 ||
          s.prim == Prim::kCLongDoubleComplex || s.prim == Prim::kComplex32)
        unit = n / 2;
      for (MPI_Count k = 0; k < s.n; ++k) {
        for (size_t off = 0; off < n; off += unit) std::reverse(p + off, p + off + unit);
        p += n;
      }
    }
}

}  // namespace

}  // namespace toroid::mpi

using namespace toroid;
using namespace toroid::mpi;

TOROID_MPI_API(int, Pack, (const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
                           int* position, MPI_Comm comm)) {
  MPI_ENTER("MPI_Pack");
  if (int e = check_comm(comm)) return e;
  if (int e = check_buf(comm, inbuf, incount, datatype)) return e;
  if (!position) return raise(comm, MPI_ERR_ARG, "position is NULL");
  const MPI_Count need = static_cast<MPI_Count>(incount) * datatype->size;
  if (*position < 0 || *position + need > outsize)
    return raise(comm, MPI_ERR_TRUNCATE, "%lld bytes at position %d do not fit the %d-byte buffer",
                 static_cast<long long>(need), *position, outsize);
  pack(inbuf, incount, datatype, static_cast<uint8_t*>(outbuf) + *position);
  *position += static_cast<int>(need);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Unpack, (const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                             MPI_Datatype datatype, MPI_Comm comm)) {
  MPI_ENTER("MPI_Unpack");
  if (int e = check_comm(comm)) return e;
  if (int e = check_buf(comm, outbuf, outcount, datatype)) return e;
  if (!position) return raise(comm, MPI_ERR_ARG, "position is NULL");
  const MPI_Count need = static_cast<MPI_Count>(outcount) * datatype->size;
  if (*position < 0 || *position + need > insize)
    return raise(comm, MPI_ERR_TRUNCATE, "%lld bytes at position %d are more than the %d-byte buffer holds",
                 static_cast<long long>(need), *position, insize);
  unpack(static_cast<const uint8_t*>(inbuf) + *position, need, outbuf, outcount, datatype);
  *position += static_cast<int>(need);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size)) {
  MPI_ENTER("MPI_Pack_size");
  if (int e = check_comm(comm)) return e;
  if (int e = check_count(comm, incount)) return e;
  if (int e = check_type(comm, datatype)) return e;
  if (!size) return raise(comm, MPI_ERR_ARG, "size is NULL");
  const MPI_Count n = static_cast<MPI_Count>(incount) * datatype->size;
  if (n > 0x7fffffff) return raise(comm, MPI_ERR_COUNT, "%lld bytes do not fit an int", static_cast<long long>(n));
  *size = static_cast<int>(n);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size)) {
  MPI_ENTER("MPI_Pack_external_size");
  if (!is_external32(datarep))
    return raise(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_DATAREP, "data representation '%s' (only external32)",
                 datarep ? datarep : "(null)");
  if (int e = check_count(MPI_COMM_WORLD, incount)) return e;
  if (int e = check_type(MPI_COMM_WORLD, datatype)) return e;
  MPI_Aint n = 0;
  for (const SigRun& s : datatype->sig) n += s.n * static_cast<MPI_Aint>(external_size(s.prim));
  *size = n * incount;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Pack_external, (const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                                    void* outbuf, MPI_Aint outsize, MPI_Aint* position)) {
  MPI_ENTER("MPI_Pack_external");
  if (!is_external32(datarep))
    return raise(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_DATAREP, "data representation '%s' (only external32)",
                 datarep ? datarep : "(null)");
  if (int e = check_buf(MPI_COMM_WORLD, inbuf, incount, datatype)) return e;
  for (const SigRun& s : datatype->sig)
    if (external_size(s.prim) != prim_size(s.prim))
      return raise(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_DATAREP,
                   "external32 of a type whose size differs here (long double) is not supported");
  const MPI_Aint need = static_cast<MPI_Aint>(incount) * datatype->size;
  if (!position || *position < 0 || *position + need > outsize)
    return raise(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, "%ld bytes do not fit the buffer at its position",
                 static_cast<long>(need));
  uint8_t* out = static_cast<uint8_t*>(outbuf) + *position;
  pack(inbuf, incount, datatype, out);
  swap_prims(out, incount, datatype);
  *position += need;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Unpack_external, (const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position,
                                      void* outbuf, int outcount, MPI_Datatype datatype)) {
  MPI_ENTER("MPI_Unpack_external");
  if (!is_external32(datarep))
    return raise(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_DATAREP, "data representation '%s' (only external32)",
                 datarep ? datarep : "(null)");
  if (int e = check_buf(MPI_COMM_WORLD, outbuf, outcount, datatype)) return e;
  const MPI_Aint need = static_cast<MPI_Aint>(outcount) * datatype->size;
  if (!position || *position < 0 || *position + need > insize)
    return raise(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, "%ld bytes are more than the buffer holds at its position",
                 static_cast<long>(need));
  std::vector<uint8_t> tmp(static_cast<const uint8_t*>(inbuf) + *position,
                           static_cast<const uint8_t*>(inbuf) + *position + need);
  swap_prims(tmp.data(), outcount, datatype);
  unpack(tmp.data(), need, outbuf, outcount, datatype);
  *position += need;
  return MPI_SUCCESS;
}
