// Datatype queries (MPI 3.1 sections 4.1.5, 4.1.7-4.1.8, 4.1.13, 6.8):
// sizes, extents, envelopes and contents, names, addresses.
#include <cstring>

#include "mpi/datatype.h"
#include "mpi/impl.h"

using namespace toroid;
using namespace toroid::mpi;

namespace {
int check(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL");
  if (!valid(t)) return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "not a valid datatype");
  return 0;
}
}  // namespace

TOROID_MPI_API(int, Type_size_x, (MPI_Datatype datatype, MPI_Count* size)) {
  MPI_ENTER("MPI_Type_size_x");
  if (int e = check(datatype)) return e;
  if (!size) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "size is NULL");
  *size = datatype->size;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_size, (MPI_Datatype datatype, int* size)) {
  MPI_ENTER("MPI_Type_size");
  if (int e = check(datatype)) return e;
  if (!size) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "size is NULL");
  *size = datatype->size > 0x7fffffff ? MPI_UNDEFINED : static_cast<int>(datatype->size);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent)) {
  MPI_ENTER("MPI_Type_get_extent");
  if (int e = check(datatype)) return e;
  if (!lb || !extent) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "lb or extent is NULL");
  *lb = datatype->lb;
  *extent = datatype->extent();
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent)) {
  MPI_ENTER("MPI_Type_get_extent_x");
  if (int e = check(datatype)) return e;
  if (!lb || !extent) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "lb or extent is NULL");
  *lb = datatype->lb;
  *extent = datatype->extent();
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent)) {
  MPI_ENTER("MPI_Type_get_true_extent");
  if (int e = check(datatype)) return e;
  if (!true_lb || !true_extent) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "true_lb or true_extent is NULL");
  *true_lb = datatype->true_lb;
  *true_extent = datatype->true_ub - datatype->true_lb;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent)) {
  MPI_ENTER("MPI_Type_get_true_extent_x");
  if (int e = check(datatype)) return e;
  if (!true_lb || !true_extent) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "true_lb or true_extent is NULL");
  *true_lb = datatype->true_lb;
  *true_extent = datatype->true_ub - datatype->true_lb;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_extent, (MPI_Datatype datatype, MPI_Aint* extent)) {
  MPI_ENTER("MPI_Type_extent");
  if (int e = check(datatype)) return e;
  *extent = datatype->extent();
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_lb, (MPI_Datatype datatype, MPI_Aint* displacement)) {
  MPI_ENTER("MPI_Type_lb");
  if (int e = check(datatype)) return e;
  *displacement = datatype->lb;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_ub, (MPI_Datatype datatype, MPI_Aint* displacement)) {
  MPI_ENTER("MPI_Type_ub");
  if (int e = check(datatype)) return e;
  *displacement = datatype->ub;
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Get_address, (const void* location, MPI_Aint* address)) {
  MPI_ENTER_ANYTIME("MPI_Get_address");
  if (!address) return MPI_ERR_ARG;
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Address, (void* location, MPI_Aint* address)) { return PMPI_Get_address(location, address); }

TOROID_MPI_API(int, Type_get_envelope, (MPI_Datatype datatype, int* num_integers, int* num_addresses,
                                        int* num_datatypes, int* combiner)) {
  MPI_ENTER("MPI_Type_get_envelope");
  if (int e = check(datatype)) return e;
  if (!num_integers || !num_addresses || !num_datatypes || !combiner)
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "an output argument is NULL");
  *combiner = datatype->combiner;
  *num_integers = static_cast<int>(datatype->ints.size());
  *num_addresses = static_cast<int>(datatype->aints.size());
  *num_datatypes = static_cast<int>(datatype->types.size());
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_get_contents, (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                                        int array_of_integers[], MPI_Aint array_of_addresses[],
                                        MPI_Datatype array_of_datatypes[])) {
  MPI_ENTER("MPI_Type_get_contents");
  if (int e = check(datatype)) return e;
  if (datatype->combiner == MPI_COMBINER_NAMED)
    return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "%s is predefined: it has no contents", datatype->name.c_str());
  if (max_integers < static_cast<int>(datatype->ints.size()) || max_addresses < static_cast<int>(datatype->aints.size()) ||
      max_datatypes < static_cast<int>(datatype->types.size()))
    return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "the arrays are smaller than MPI_Type_get_envelope said (%zu, %zu, %zu)",
                 datatype->ints.size(), datatype->aints.size(), datatype->types.size());
  std::copy(datatype->ints.begin(), datatype->ints.end(), array_of_integers);
  std::copy(datatype->aints.begin(), datatype->aints.end(), array_of_addresses);
  for (size_t i = 0; i < datatype->types.size(); ++i) {
    array_of_datatypes[i] = datatype->types[i];
    type_retain(datatype->types[i]);  // derived ones are the program's to free (MPI 3.1 4.1.13)
  }
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_set_name, (MPI_Datatype datatype, const char* type_name)) {
  MPI_ENTER("MPI_Type_set_name");
  if (int e = check(datatype)) return e;
  if (!type_name) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "the name is NULL");
  datatype->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

TOROID_MPI_API(int, Type_get_name, (MPI_Datatype datatype, char* type_name, int* resultlen)) {
  MPI_ENTER("MPI_Type_get_name");
  if (int e = check(datatype)) return e;
  if (!type_name || !resultlen) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "type_name or resultlen is NULL");
  std::memcpy(type_name, datatype->name.c_str(), datatype->name.size() + 1);
  *resultlen = static_cast<int>(datatype->name.size());
  return MPI_SUCCESS;
}
