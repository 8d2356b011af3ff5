// Collectives on intercommunicators (MPI 3.1 section 5.2.2 and each
// collective's intercommunicator paragraph), as exchange plans on the
// library communicator that spans both groups (intercomm.cc). The callers
// (coll_data.cc, coll_reduce.cc) have checked the communicator; these check
// the rest. request != nullptr: non-blocking (queued like any collective).
#pragma once
#include "mpi/impl.h"

namespace toroid::mpi {

// Root arguments: MPI_ROOT at the root, MPI_PROC_NULL at the other members
// of its group, the root's rank in the remote group elsewhere.
int inter_bcast(const char* name, void* buf, int count, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* request);

// Gather, scatter, allgather and alltoall in their one-count, v and w forms.
// One side of an exchange: counts/displs null means blocks of `count`
// back to back; types null means every block is `type`; displacements in
// bytes when `bytes` (the w form), else in extents of the block's type.
struct InterSide {
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = nullptr;
  const int* counts = nullptr;
  const int* displs = nullptr;
  const MPI_Datatype* types = nullptr;
  bool bytes = false;
};
enum class InterData { kGather, kScatter, kAllgather, kAlltoall };
int inter_data(const char* name, InterData kind, const InterSide& send, const InterSide& recv, int root, MPI_Comm c,
               MPI_Request* request);

// Reductions: the root (or every member) gets the remote group's inputs
// combined in the remote group's rank order (any operation).
enum class InterReduce { kReduce, kAllreduce, kReduceScatter, kReduceScatterBlock };
int inter_reduce(const char* name, InterReduce kind, const void* send, void* recv, int count, const int* counts,
                 MPI_Datatype t, MPI_Op op, int root, MPI_Comm c, MPI_Request* request);

}  // namespace toroid::mpi
