// The collectives self-test job: runs every case in turn on the world
// communicator, verifies each result exactly against values computed from
// the seed, and records (collective, algorithm, case, verdict, time).
#pragma once
#include <vector>

#include "collectives/comm.h"
#include "firmware/job.h"

namespace toroid {

class SelftestJob final : public Job {
 public:
  explicit SelftestJob(const JobContext& ctx);
  void start() override;
  bool poll() override;
  bool done() const override { return next_ >= plan_.size() && !running_; }
  Status status() const override { return status_; }

 private:
  struct Plan {
    const char* coll;
    uint32_t count;   // elements (allreduce)
    uint32_t rounds;  // back-to-back repetitions
    AllreduceAlgo algo = AllreduceAlgo::kTorusRing;
  };
  void begin_case();
  void end_case(Status st);

  JobContext ctx_;
  std::vector<Plan> plan_;
  size_t next_ = 0;
  bool running_ = false;
  uint32_t round_ = 0;
  uint64_t case_start_ = 0;
  std::vector<int64_t> buf_;
  Status status_;
};

}  // namespace toroid
