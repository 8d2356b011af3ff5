// Communicator plumbing shared by comm.cc, intercomm.cc and topo.cc.
#pragma once
#include <memory>
#include <vector>

#include "mpi/coll_engine.h"
#include "mpi/impl.h"

namespace toroid::mpi {

// Agrees a context id among comm's members (a collective on it, queued
// behind its other collectives).
struct AgreeOp : CollOp {
  uint16_t ctx = 0;
  Status start(MPI_Comm c) override { return c->coll->start_agree(); }
  Status done(MPI_Comm c, const Status&) override { return c->coll->agree_step(&ctx); }
};
// Blocking agreement over comm (an intracommunicator).
Status agree_over(MPI_Comm comm, uint16_t* ctx);
// Agreement among `members` (partition ranks, the same list everywhere)
// by messages on point-to-point context `ctx` with tag `tag`: for sets that
// have no communicator of their own yet (MPI_Comm_create_group,
// intercommunicators).
Status agree_by_messages(const std::vector<uint32_t>& members, uint16_t ctx, uint32_t tag, uint16_t* agreed);

// A new intracommunicator of `members` (partition ranks, in rank order)
// that owns context `ctx`; errhandler, reproducibility inherited from parent.
MPI_Comm comm_new_intra(MPI_Comm parent, const std::vector<uint32_t>& members, uint16_t ctx);
// A new intercommunicator over local and remote groups that owns id `ctx`
// (its point-to-point context and its collectives' library communicator
// over both groups); MPI_COMM_NULL if that cannot be made.
MPI_Comm comm_new_inter(MPI_Comm parent, const std::vector<uint32_t>& local, const std::vector<uint32_t>& remote,
                        uint16_t ctx);
// MPI_Comm_split and MPI_Comm_create of an intercommunicator (intercomm.cc):
// the arguments are checked.
int inter_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
int inter_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm);
// The partition rank of rank u of an intercommunicator's library
// communicator (both groups).
uint32_t inter_member(MPI_Comm c, uint32_t u);
// Releases everything a communicator holds and invalidates it.
void comm_destroy(MPI_Comm c);

// Blocking point-to-point exchange of the library's own messages (internal
// tags) on context ctx: send `len` bytes to partition rank `to`, receive
// exactly `len` bytes from partition rank `from`.
Status internal_send(uint32_t to, uint16_t ctx, uint32_t tag, const void* data, uint64_t len);
Status internal_recv(uint32_t from, uint16_t ctx, uint32_t tag, void* data, uint64_t len);

// Attributes (attrs.cc): the copy callbacks of MPI_Comm_dup, the delete
// callbacks of MPI_Comm_free.
int attrs_copy_comm(MPI_Comm from, MPI_Comm to);
int attrs_delete_comm(MPI_Comm c);
// Topologies (topo.cc).
std::unique_ptr<Topology> topo_clone(const Topology* t);

}  // namespace toroid::mpi
