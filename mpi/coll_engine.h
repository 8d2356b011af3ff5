// The collective engine: every collective operation of a communicator runs
// through its library communicator, one at a time, in the order the
// program started them (MPI requires the same order on every rank).
// Non-blocking ones wait in the communicator's queue; a poller on the
// node's event loop starts each when the one before it finished, so any
// number can be in flight on different communicators at once and progress
// happens inside every MPI call. A blocking collective with nothing queued
// starts at once and waits, without allocating.
#pragma once
#include <memory>

#include "collectives/coll.h"
#include "mpi/impl.h"

namespace toroid::mpi {

// One collective operation: it may take several rounds on the library
// communicator (context agreement, operations in phases).
struct CollOp {
  virtual ~CollOp() = default;
  // Start (the next round of) the operation; the library communicator is idle.
  virtual Status start(MPI_Comm comm) = 0;
  // The round finished with st: finish locally (unpack, convert) and return
  // the operation's status, or kBusy after starting another round.
  virtual Status done(MPI_Comm comm, const Status& st) { (void)comm; return st; }
  const char* name = "collective";  // the MPI call, for messages
  bool started = false;
  bool finished = false;
  Status result;
  MPI_Request req = nullptr;  // non-blocking: the request it completes
  CollOp* next = nullptr;
};

// A single library operation (CollArgs), or a caller's algorithm object.
struct LibraryOp : CollOp {
  CollArgs args;
  CollAlgo* custom = nullptr;           // set: run it with start_custom
  std::unique_ptr<CollAlgo> owned;      // ... owned here
  Status start(MPI_Comm comm) override {
    return custom ? comm->coll->start_custom(args, custom, name) : comm->coll->start(args);
  }
};

// Failure reports: when a collective fails on one member (a count that
// differs, a link that went down, its deadline), that member sends each
// other member a short report naming the operation (its sequence number),
// the error class and the reason; a member still running that operation
// fails it at once with "rank R: <reason>". Without reports, the members
// downstream of the failure would wait for the operation's deadline.
void reports_arm(MPI_Comm c);     // post the receive for reports (intracommunicators)
void reports_disarm(MPI_Comm c);  // withdraw it and anything of ours still leaving
// Takes c off the engine's list of communicators with queued operations
// (it is being destroyed: its queue is empty, but the engine may not have
// looked at it since, and would read it after it is freed).
void engine_forget(MPI_Comm c);

// Lets this rank's frames of a finished collective leave its transmit
// queues (bounded by tuning::kTxDrainNs): a neighbour still in the same
// operation waits for them while the program computes without calling MPI.
// Blocking collectives do it before they return, MPI_Wait and its kin when
// they complete a non-blocking one.
void drain_after_collective();
// Runs op on comm to the end (blocking); returns its status.
Status run_blocking(MPI_Comm comm, CollOp& op);
// Queues op (heap-allocated, owned by the request it completes) and
// returns the request.
MPI_Request run_nonblocking(MPI_Comm comm, CollOp* op);
// Drives comm's queue once; true if anything moved.
bool engine_progress(MPI_Comm comm);
// The request of a finished non-blocking collective: its status.
void coll_request_free(MPI_Request r);

}  // namespace toroid::mpi
