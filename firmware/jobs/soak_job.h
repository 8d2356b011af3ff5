// The soak job: verified collectives, one after another, for a set time,
// while the rig breaks things (the host rig's --chaos, the sim's reboot,
// stop and linkdown faults). It outlives failures: an operation either
// completes with the right result (checked element by element, as the
// self-test does) or fails with a named error, and then the node waits for
// the partition's reset (firmware/link_training.h) and goes on.
//
// Rounds: in every generation the rounds count from 0, and round r's
// operation (collective, algorithm among those that apply, datatype, size,
// root, in place or not, input seed) is a pure function of (seed,
// generation, r), so every node that reaches round r of a generation runs
// the same one. After a failure the node asks for a new generation itself
// unless the failure came with one (a link down or a reset already started
// it), then waits until its links trained again.
//
// Counts (the job's totals, summed by the rig): ops started, ok, failed
// (by cause: link down, reset, timeout, other), wrong results, hangs (an
// operation still in flight at twice the collective deadline; then the
// node resets), generations seen, and operations cut off by the end (those
// some nodes started and others, past the end, never joined). PASS: no
// wrong result, no hang, at least one operation verified.
//
// Job arguments: seconds=S (default 10, from the job's start) or until=NS
// (the node clock's value at which to stop starting operations: a rig that
// restarts nodes gives them all the same end), max_count=N (largest element
// count, default 4096).
#pragma once
#include <map>
#include <string>

#include "collectives/comm.h"
#include "firmware/job.h"
#include "firmware/jobs/coll_case.h"

namespace toroid {

struct SoakSpec {
  uint64_t seconds = 10;
  uint64_t until_ns = 0;  // 0: start + seconds
  uint64_t max_count = 4096;
};
Result<SoakSpec> parse_soak_args(const std::map<std::string, std::string>& args);

struct SoakCounts {
  uint64_t ops = 0, ok = 0, failed = 0, wrong = 0, hangs = 0, cut_off = 0, generations = 0;
  uint64_t failed_link_down = 0, failed_reset = 0, failed_timeout = 0, failed_other = 0;
  uint64_t ok_last_gen = 0;  // verified since the last generation change (recovery worked)
  uint64_t max_op_ns = 0;
};

class SoakJob final : public Job {
 public:
  SoakJob(const JobContext& ctx, SoakSpec spec);
  void start() override;
  bool poll() override;
  bool done() const override { return done_; }
  Status status() const override { return status_; }
  std::vector<std::pair<std::string, uint64_t>> totals() const override;
  const char* totals_name() const override { return "soak"; }
  const SoakCounts& counts() const { return n_; }

 private:
  enum class Phase : uint8_t { kWait, kOp };
  // The round's operation, the same on every node of the generation.
  CaseSpec round_spec(uint64_t h) const;
  void start_round();
  void end_round(Status st);
  void finish();

  JobContext ctx_;
  SoakSpec spec_;
  uint64_t until_ = 0;
  Phase phase_ = Phase::kWait;
  uint32_t gen_ = 0;       // generation of the rounds being counted
  uint32_t op_gen_ = 0;    // generation the operation in flight started in
  uint64_t round_ = 0;
  uint64_t op_round_ = 0;  // round of the operation in flight
  uint64_t op_start_ = 0;
  colldata::Source src_{DType::kInt64, ROp::kSum, 1};
  CollCase case_;
  CaseSpec spec_now_;
  bool done_ = false;
  bool started_ = false;
  std::string first_wrong_;
  Status status_;
  SoakCounts n_;
};

}  // namespace toroid
