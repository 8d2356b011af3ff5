// The bench job: an OSU-style sweep of the library's collectives over sizes,
// timed on the node's clock. On every node, for each (collective, datatype
// variant, algorithm, size): a barrier aligns the nodes, then `warmup`
// untimed and `reps` timed repetitions run, each started right after a
// barrier (so repetition k starts at about the same time on every node) and
// timed from Comm::start to the moment Comm::test reports this node's part
// complete. Every repetition's result is checked (all elements up to 64, a
// sample beyond: bench_job_check.h). Nothing is printed while the sweep
// runs; at the end the job prints one machine-readable line per row:
//
//   bench node=1,0,0 coll=allreduce algo=ring dtype=double op=sum repro=exact sel=1 bytes=8 reps=20 warmup=2 rep_ns=...
//   bench node=1,0,0 coll=reduce algo=tree dtype=int64 op=sum bytes=8 skip="..."   (why it cannot run)
//   bench node=1,0,0 coll=info ...           (frame sizes and link counters over the sweep)
//
// op and repro appear for the reducing collectives only, dtype for all but
// the barrier; sel=1 marks the selector's choice for that operation. The
// host rig (toroid-rig) collects them: per repetition the slowest node, then
// min/median/max over the repetitions (firmware/rig/bench_report.h).
//
// Everything runs through Comm::start(CollArgs, algo) on the world
// communicator, root 0 for bcast and reduce, separate send and receive
// buffers. Sizes follow NCCL's conventions: allreduce, bcast and reduce move
// `bytes` per node; allgather's and alltoall's `bytes` is the whole buffer of
// n blocks; reduce_scatter's the whole input of n blocks. A size that is not
// whole elements (whole blocks of elements) is a skip row, as is an
// algorithm the library says cannot run the operation (its reason).
//
// Job arguments (personality "arg" lines; toroid-rig --colls/--algos/...):
//   colls=allreduce,bcast,reduce,allgather,alltoall,reduce_scatter,barrier
//                                  (default: all seven; reduce-scatter is accepted too)
//   algos=KIND=A,B;KIND=C          algorithms per collective (the rig joins repeated
//                                  --algos with ';'). A name of the library, `auto`
//                                  (the selector's choice: Comm::start with no name,
//                                  recorded under the name it picked) or `all`
//                                  (every algorithm of the kind). A group without
//                                  KIND= names allreduce algorithms (the older form
//                                  algos=torus-ring,torus-tree). Default: allreduce
//                                  torus-ring,torus-tree,auto; the others auto.
//   dtype=T,U  op=O,P  repro=R,S   datatypes (default int64), reduction ops (default
//                                  sum) and reproducibility modes (none, fixed-order,
//                                  exact; default none): every combination runs.
//                                  op and repro apply to allreduce, reduce and
//                                  reduce_scatter; repro to float datatypes only
//                                  (integers are exact in any order: an integer
//                                  reduction runs once, repro none).
//   sizes=8,32,...                 (bytes; default 8 B .. 4 MiB by x4, and 4 MiB)
//   reps=N                         (default by size, as OSU does: 1000 up to
//                                   1 KiB, 500 to 16 KiB, 100 to 256 KiB, 40 to
//                                   1 MiB, 20 above; given N: sizes of 1 MiB and
//                                   more run max(5, N/4), at most N)
//   warmup=N                       (default a tenth of the repetitions, at
//                                   least 2; with reps=N: 2, 1 from 1 MiB up)
//   wait=spin|idle                 (default spin: while an operation or the barrier
//                                   before it is in flight the job reports work, so
//                                   the event loop neither sleeps nor yields, as an
//                                   MPI rank spins in a blocking call; idle: the
//                                   loop's own idle policy, which sleeps up to 1 ms
//                                   after 4000 idle rounds: for more nodes than
//                                   cores; and always on the sim rig, whose virtual
//                                   time moves only when nodes are idle)
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "firmware/job.h"
#include "firmware/jobs/bench_job_check.h"

namespace toroid {

// The keyword for the selector's choice in --algos.
constexpr const char* kBenchAuto = "auto";

struct BenchSpec {
  std::vector<std::string> colls;  // bench names (bench_colls())
  // Per collective (bench name): algorithm names in order, kBenchAuto among them.
  std::map<std::string, std::vector<std::string>> algos;
  std::vector<uint64_t> sizes;
  std::vector<DType> dtypes = {DType::kInt64};
  std::vector<ROp> ops = {ROp::kSum};
  std::vector<Repro> repros = {Repro::kNone};
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

// Known collectives as the bench spells them, in the default order:
// allreduce, bcast, reduce, allgather, alltoall, reduce_scatter, barrier.
std::vector<std::string> bench_colls();
// The library's kind of a bench name ("reduce-scatter" accepted too).
Result<CollKind> bench_coll_kind(const std::string& name);
// The bench name of a kind ("reduce_scatter").
std::string bench_coll_name(CollKind k);
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

 private:
  struct Entry {
    CollKind kind = CollKind::kAllreduce;
    std::string coll;      // bench name
    std::string algo;      // the algorithm (for the selector's entries: the one it picked)
    std::string want;      // what Comm::start is given: algo, or "" for the selector's choice
    bool selected = false; // the selector picks this algorithm for this operation
    uint32_t series = 0;   // entries of one (collective, variant, --algos item) share it
    DType dtype = DType::kInt64;
    ROp op = ROp::kSum;
    Repro repro = Repro::kNone;
    uint64_t bytes = 0, count = 0;
    uint32_t reps = 0, warmup = 0;
    std::string skip;  // why it cannot run (then nothing is timed)
    std::vector<uint64_t> rep_ns;
    uint64_t elapsed_ns = 0;  // the entry's whole run, barriers and warm-up included
  };
  enum class Phase : uint8_t { kIdle, kAlign, kOp, kDrain, kCheck, kDone };

  void plan();
  void plan_variant(CollKind kind, const std::string& coll, DType t, ROp op, Repro r);
  static std::string variant(const Entry& e);   // "double sum exact"; "" for the barrier
  static std::string describe(const Entry& e);  // "allreduce ring double sum exact 4194304 B"
  void begin_entry();
  void start_align();
  void start_rep();
  void end_rep();
  void end_entry();
  void skip_entry(const Status& why);
  void fail(Status st);
  void finish();
  void report_cases();
  void emit_results();
  // What poll() returns while waiting: "work" under wait=spin (the loop
  // stays hot), "nothing" under wait=idle (the loop's idle policy applies).
  // Never under virtual time: a busy poll would stop the sim clock.
  bool spin() const { return spec_.spin && !ctx_.loop.clock().is_virtual(); }
  static void on_timeout(void* self);

  JobContext ctx_;
  BenchSpec spec_;
  uint32_t n_ = 1, me_ = 0;
  std::vector<Entry> plan_;
  size_t next_ = 0;
  uint64_t moved_ = 0;  // bytes per node the sweep's repetitions moved so far (warm-up and timed)
  Phase phase_ = Phase::kIdle;
  uint32_t rep_ = 0;  // repetitions done of the current entry, warm-up included
  bool whole_rep_ = false;  // the untimed repetition after the timed ones, checked whole
  uint64_t t0_ = 0;
  uint64_t drain_until_ = 0;
  uint64_t checked_to_ = 0;  // kCheck: the whole output is checked below this element
  uint64_t start_ns_ = 0;
  uint64_t entry_start_ = 0;
  BenchCheck data_;  // the current entry's buffers and expected values
  CollArgs args_;
  bool done_ = false;
  Status status_;
  Timer deadline_;
};

}  // namespace toroid
