// The bench job: an OSU-style sweep of collectives over sizes, timed on the
// node's clock. On every node, for each (collective, algorithm, size): a
// barrier aligns the nodes, then `warmup` untimed and `reps` timed
// repetitions run, each started right after a barrier (so repetition k
// starts at about the same time on every node) and timed from its start to
// the moment this node's part is complete. Nothing is printed while the
// sweep runs; at the end the job prints one machine-readable line per
// (collective, algorithm, size) on stdout:
//
//   bench node=1,0,0 coll=allreduce algo=torus-ring bytes=8 reps=20 warmup=2 rep_ns=1234,1250,...
//   bench node=1,0,0 coll=alltoall algo=p2p-direct bytes=8 skip="8 B is less than one byte per node"
//   bench node=1,0,0 coll=info ...           (frame sizes and link counters over the sweep)
//
// The host rig (toroid-rig) collects them: per repetition the slowest node,
// then min/median/max over the repetitions (firmware/rig/bench_report.h).
//
// What runs, labelled by what it is:
//   allreduce  torus-ring, torus-tree   Comm::start_allreduce_sum_i64, bytes/8 int64 (SUM, checked);
//                                       --algos takes any allreduce algorithm of the library
//   barrier    barrier-network          Comm::start_barrier (the barrier network's global AND)
//   bcast      p2p-flat                 rank 0 sends the buffer to every other node as one
//                                       Messenger message each (no tree, no pipelining)
//   allgather  p2p-direct               every node sends its bytes/n block to every other node
//   alltoall   p2p-direct               every node sends block j (bytes/n) to node j
// The p2p ones are the point-to-point exchange patterns of the Messenger,
// not collectives of their own: a node's part is complete when it has
// received every block it is owed and its own sends are fully injected.
// Sizes follow NCCL's conventions: allreduce and bcast move `bytes` per
// node; allgather's and alltoall's `bytes` is the whole buffer of n blocks.
//
// Job arguments (personality "arg" lines; toroid-rig --colls/--sizes/--reps):
//   colls=allreduce,bcast,allgather,alltoall,barrier   (default: all five)
//   algos=torus-ring,torus-tree                        (allreduce algorithms; default both)
//   sizes=8,32,...                                     (bytes; default 8 B .. 4 MiB by x4, and 4 MiB)
//   reps=N                                             (default 20; sizes of 1 MiB and more
//                                                       run max(5, N/4), at most N)
//   warmup=N                                           (default 2; 1 from 1 MiB up)
//   wait=spin|idle                                     (default spin: while an operation or
//                                                       the barrier before it is in flight the
//                                                       job reports work, so the event loop
//                                                       neither sleeps nor yields, as an MPI
//                                                       rank spins in a blocking call; idle:
//                                                       the loop's own idle policy, which
//                                                       sleeps up to 1 ms after 4000 idle
//                                                       rounds: for more nodes than cores;
//                                                       and always on the sim rig, whose
//                                                       virtual time moves only when
//                                                       nodes are idle)
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "firmware/job.h"
#include "netstack/p2p.h"

namespace toroid {

struct BenchSpec {
  std::vector<std::string> colls;
  std::vector<std::string> algos;  // allreduce algorithm names
  std::vector<uint64_t> sizes;
  uint32_t reps = 20;
  uint32_t warmup = 2;
  bool spin = true;  // wait=spin
  bool reps_given = false;
  bool warmup_given = false;
};

// Where the result lines go: stdout (the host rig reads the node's stdout),
// or, when set, this function (tests; an empty function restores stdout).
using BenchSink = std::function<void(const std::string& line)>;
void set_bench_sink(BenchSink sink);

// Known collectives, in the default order.
std::vector<std::string> bench_colls();
// 8, 32, ..., 2 MiB (x4 steps) and 4 MiB.
std::vector<uint64_t> bench_default_sizes();
// Parses the job arguments; errors name the argument.
Result<BenchSpec> parse_bench_args(const std::map<std::string, std::string>& args);
// Timed and warm-up repetitions for one size.
uint32_t bench_reps_for(const BenchSpec& s, uint64_t bytes);
uint32_t bench_warmup_for(const BenchSpec& s, uint64_t bytes);

class BenchJob final : public Job {
 public:
  BenchJob(const JobContext& ctx, const BenchSpec& spec);
  void start() override;
  bool poll() override;
  bool done() const override { return done_; }
  Status status() const override { return status_; }

  // Messenger context of the p2p patterns (the traffic job uses 1).
  static constexpr uint16_t kContext = 7;

 private:
  struct Entry {
    std::string coll, algo;
    std::string ar;  // allreduce algorithm
    uint64_t bytes = 0;
    uint32_t reps = 0, warmup = 0;
    std::string skip;  // why it cannot run (then nothing is timed)
    std::vector<uint64_t> rep_ns;
  };
  enum class Phase : uint8_t { kIdle, kAlign, kOp, kDone };

  void plan();
  void begin_entry();
  void start_align();
  void start_rep();
  bool op_complete(Status* st);
  void end_rep();
  void end_entry();
  void fail(Status st);
  void finish();
  void emit_results();
  bool is_p2p(const Entry& e) const;
  // What poll() returns while waiting: "work" under wait=spin (the loop
  // stays hot), "nothing" under wait=idle (the loop's idle policy applies).
  // Never under virtual time: a busy poll would stop the sim clock.
  bool spin() const { return spec_.spin && !ctx_.loop.clock().is_virtual(); }
  void prepare_p2p(const Entry& e);
  Status start_p2p(const Entry& e);
  Status check_p2p(const Entry& e);
  static void on_timeout(void* self);

  JobContext ctx_;
  BenchSpec spec_;
  uint32_t n_ = 1, me_ = 0;
  std::vector<Entry> plan_;
  size_t next_ = 0;
  Phase phase_ = Phase::kIdle;
  uint32_t rep_ = 0;  // repetitions done of the current entry, warm-up included
  uint64_t t0_ = 0;
  uint64_t start_ns_ = 0;
  uint64_t entry_start_ = 0;
  std::vector<int64_t> ar_;
  // p2p patterns
  std::vector<uint8_t> sbuf_;
  std::vector<uint32_t> handles_;
  std::vector<uint32_t> recv_from_;  // ranks still owed to this node this repetition
  uint32_t recv_len_ = 0;
  uint32_t bad_msgs_ = 0;
  bool done_ = false;
  Status status_;
  Timer deadline_;
};

}  // namespace toroid
