// `--job coll`: one collective, run once on the world communicator, checked
// on every node against values computed from every rank's input, with a
// fingerprint line per node for scripts and reproducibility checks:
//   result node=X,Y,Z sha256=HEX     (of this node's output buffer)
// Options (job arguments): coll NAME (required), algo, dtype, op, count,
// repro (none|fixed-order|exact), data-seed, root, in-place (yes|no),
// buffer-blocks (xor-inplace m), input FILE (raw little-endian rows, one per
// linear rank, row_elems() elements each: see coll_case.h), output FILE
// (rank 0's output, raw), blocking (yes: the blocking calls, real-time rigs),
// start-at D (begin when the node's clock reads D: in the sim every node
// starts at one virtual instant, so the case's time is the operation's).
#pragma once
#include <map>
#include <string>

#include "firmware/job.h"
#include "firmware/jobs/coll_case.h"

namespace toroid {

struct CollJobSpec {
  CaseSpec spec;
  std::string input, output;
  bool blocking = false;  // Comm::run and blocking send/recv instead of start/test
  uint64_t start_at_ns = 0;  // start when the node's clock reads this (a common instant in the sim)
};
// Every option checked here, with messages that name it.
Result<CollJobSpec> parse_coll_args(const std::map<std::string, std::string>& args);
// The option names (for the rigs' command lines): "coll", "algo", ...
extern const char* const kCollJobOptions[];
extern const int kCollJobOptionCount;
const char* coll_job_usage();
// "--coll", "--dtype", ...: a command-line option of the coll job.
bool is_coll_option(const std::string& arg);

class CollJob final : public Job {
 public:
  CollJob(const JobContext& ctx, CollJobSpec spec);
  void start() override;
  bool poll() override;
  bool done() const override { return done_; }
  Status status() const override { return status_; }

 private:
  void end(Status st);
  void begin();
  Status p2p_ring();
  static void on_start_time(void*) {}  // the step it causes polls the job, which begins
  Timer start_timer_;
  bool waiting_ = false;
  JobContext ctx_;
  CollJobSpec job_;
  colldata::Source src_;
  CollCase case_;
  uint64_t t0_ = 0;
  bool running_ = false;
  bool done_ = false;
  Status status_;
};

}  // namespace toroid
