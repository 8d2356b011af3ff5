// The layer boundary between the communicator (collectives/comm.h) and the
// algorithms (collectives/algos/, each a non-blocking state machine in its
// own file, with its pure schedule in collectives/schedule/).
//
// Buffer conventions (count is elements of elem_size(dtype, op) bytes; n is
// the communicator's size; `send == nullptr` means in place, as MPI_IN_PLACE):
//   allreduce       send[count]   -> recv[count]     in place: recv holds the input
//   reduce          send[count]   -> recv[count] at root (recv unused elsewhere)
//   bcast           recv[count]: root's is the source, everyone's the result
//   gather          send[count]   -> recv[n*count] at root; in place: root's
//                                    block already at recv[root*count]
//   scatter         send[n*count] at root -> recv[count]
//   allgather       send[count]   -> recv[n*count]; in place: own block at recv[rank*count]
//   reduce-scatter  send[n*count] -> recv[count] (block r to rank r); in place:
//                                    recv[n*count] is the input, block rank's
//                                    result lands at recv[0..count)
//   alltoall        send[n*count] -> recv[n*count] (block j to rank j); in place: recv
//   barrier         no data
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/torus.h"
#include "collectives/dtype.h"

namespace toroid {

class Comm;

enum class CollKind : uint8_t {
  kAllreduce, kReduce, kBcast, kGather, kScatter, kAllgather, kReduceScatter, kAlltoall, kBarrier,
};
constexpr int kCollKinds = 9;
const char* coll_kind_name(CollKind k);  // "allreduce", ..., "reduce-scatter", ...
Result<CollKind> parse_coll_kind(const std::string& s);
// Whether the kind reduces (takes an op) or only moves data.
bool coll_reduces(CollKind k);

struct CollArgs {
  CollKind kind = CollKind::kAllreduce;
  DType dtype = DType::kInt64;
  ROp op = ROp::kSum;
  Repro repro = Repro::kNone;
  const void* send = nullptr;  // nullptr: in place
  void* recv = nullptr;
  uint64_t count = 0;          // elements (see the table above)
  uint32_t root = 0;           // communicator rank (reduce, bcast, gather, scatter)
  uint32_t buffer_blocks = 0;  // xor-inplace alltoall: m (0 = n - 1)
  uint64_t seed = 0;           // random-order alltoall: permutation seed
  // Filled in by the communicator before start():
  Reducer red;                 // the reduction (reducing kinds)
  size_t esize = 0;            // bytes per element
  bool in_place() const { return send == nullptr; }
  const void* input() const { return send ? send : recv; }
};

// What an algorithm may ask of the communicator before it runs.
struct CommInfo {
  uint32_t size = 1;
  uint32_t rank = 0;
  Dims shape;              // the communicator's box (size = shape.nodes()); {size,1,1} when not box-shaped
  bool box = true;         // ranks fill a box of the torus in rank order (coordinates mean torus positions)
  bool world = false;      // the node's world communicator: torus links and the world tree are its own
  bool has_tree = false;   // a combine-network class spans it
  bool has_barrier = false;  // the barrier network spans it
};

// One operation of one algorithm. start() is called once per operation on a
// fresh or finished object; progress() is polled by the communicator until
// done(); abort() drops everything it holds (timeouts, link down).
class CollAlgo {
 public:
  virtual ~CollAlgo() = default;
  virtual Status start(Comm& comm, const CollArgs& args) = 0;
  virtual bool progress() = 0;  // true if anything moved
  bool done() const { return done_; }
  const Status& status() const { return status_; }
  virtual void abort() { done_ = true; }
  // What the operation still waits for, for timeout messages ("step 3/7: a message from rank 5").
  virtual std::string waiting_for() const = 0;

 protected:
  void finish(Status st) {
    if (done_) return;
    status_ = std::move(st);
    done_ = true;
  }
  void fail(Status st) {
    abort();
    done_ = false;
    finish(std::move(st));
  }
  void reset() {
    done_ = false;
    status_ = Status::ok();
  }
  bool done_ = true;
  Status status_;
};

struct AlgoInfo {
  CollKind kind;
  const char* name;    // "ring", "xor-inplace", ...
  const char* source;  // "seed 001 method 300", "Thakur, Rabenseifner, Gropp 2005", ...
  // Float reductions combine in an order fixed by the partition, the same on
  // every node (so Repro::kFixedOrder may use it).
  bool fixed_order;
  // "" when the algorithm can run this operation here, else why not
  // ("needs a power-of-two node count (this communicator has 27)").
  std::string (*applicable)(const CommInfo& comm, const CollArgs& args);
  std::unique_ptr<CollAlgo> (*make)();
};

// Every algorithm of the library, in a fixed order; the registry is filled
// by the four groups below (collectives/algos/<group>/registry.cc).
const std::vector<AlgoInfo>& algorithms();
const AlgoInfo* find_algo(CollKind kind, std::string_view name);
// Names of the algorithms of a kind, comma separated (for error messages and --help).
std::string algo_names(CollKind kind);

// Exact mode (collectives/repro_exact.cc): allreduce float SUM correctly
// rounded by running `inner` twice over integer encodings (seed 004 B.3).
std::unique_ptr<CollAlgo> make_exact_sum(const AlgoInfo& inner);
// allreduce "exact-share" (collectives/repro_exact_share.h): exact mode by
// its own method, so the communicator runs it as it is, not inside ExactSum.
std::unique_ptr<CollAlgo> make_exact_share();
std::string exact_share_applicable(const CommInfo& comm, const CollArgs& args);

void register_generic_algos(std::vector<AlgoInfo>& out);  // point-to-point schedules
void register_seed_algos(std::vector<AlgoInfo>& out);     // seeds 000, 001, 003
void register_torus_algos(std::vector<AlgoInfo>& out);    // neighbour exchanges on torus links, line multicast
void register_tree_algos(std::vector<AlgoInfo>& out);     // combine and barrier networks

}  // namespace toroid
