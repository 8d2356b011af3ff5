// Datatypes inside the library: primitive types, the flattened type map
// (blocks of contiguous bytes of one element) every constructor computes,
// and how a (buffer, count, datatype) meets the network: directly when its
// elements lie back to back, packed otherwise.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "collectives/dtype.h"
#include "mpi/objects.h"

namespace toroid::mpi {

size_t prim_size(Prim p);
// The library's datatype for a primitive's values, if it has one.
bool prim_dtype(Prim p, DType* out);

// Reduction groups of MPI 3.1 section 5.9.2.
enum class OpGroup : uint8_t { kNone, kCInteger, kFortranInteger, kFloating, kLogical, kComplex, kByte, kMulti };
OpGroup prim_group(Prim p);

// A new, uncommitted derived type (refs 1) with `combiner` and its arguments.
MPI_Datatype type_new(int combiner);
// Fills the layout of t from its parts: `count` entries, each bl[i] copies
// of types[i] at byte displacement disp[i] (the general form every
// constructor reduces to). `pad`: round the extent up to the largest
// alignment of the type map (MPI 3.1 4.1.6's epsilon), unless explicit
// bounds (MPI_UB, a resized type) set it.
void type_layout(MPI_Datatype t, size_t count, const MPI_Aint* bl, const MPI_Aint* disp, const MPI_Datatype* types,
                 bool pad);
// Elements (primitives) in `bytes` of data of type t, partial elements
// counted primitive by primitive; MPI_UNDEFINED if bytes ends inside a primitive.
MPI_Count elements_in(MPI_Datatype t, MPI_Count bytes);

// ---- packing ----
// Copies count elements of t at buf into out (t->size * count bytes).
void pack(const void* buf, MPI_Count count, MPI_Datatype t, uint8_t* out);
// The reverse, of `bytes` bytes (at most count elements' worth): a short
// message fills the type map from its start.
void unpack(const uint8_t* in, MPI_Count bytes, void* buf, MPI_Count count, MPI_Datatype t);

// Where count elements of t at buf are read from (sends) or written to
// (receives). Contiguous data is used in place; otherwise a send packs into
// s->pack and a receive lands there and is unpacked by stage_finish().
void stage_send(const void* buf, MPI_Count count, MPI_Datatype t, Staging* s);
void stage_recv(void* buf, MPI_Count count, MPI_Datatype t, Staging* s);
void stage_finish(const Staging& s, MPI_Count got, void* buf, MPI_Count count, MPI_Datatype t);
// The first byte of contiguous data (t->contig).
inline uint8_t* contig_base(const void* buf, MPI_Datatype t) {
  return const_cast<uint8_t*>(static_cast<const uint8_t*>(buf)) + t->true_lb;
}

}  // namespace toroid::mpi
