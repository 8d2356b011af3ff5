// The collectives self-test job: every collective x every registered
// algorithm x datatype/op x size class (0, 1 element, odd, 1 KiB, 1 MiB) x
// in-place or not, on the world communicator. Each node generates every
// other node's input from the seed (firmware/jobs/coll_data.h) so
// verification is exact (float sums within the error bound of their
// algorithm, or bit-exact in exact mode). Float reductions in fixed-order or
// exact mode are also checked to be bit-identical on every node (a MIN and a
// MAX allreduce of the result's fingerprint must agree). Algorithms that
// cannot run here (a power of two, a 2x2x2 cube, the world tree ...) are
// recorded as SKIP with the reason. Records (collective, algorithm, case,
// verdict, time) per case; the rig prints the table and the verdict.
//
// Job argument `level`: full (default) or quick (no datatype x op sweep and
// no 1 MiB cases: for slow rigs such as TCG guests). Job argument `only`: a
// comma list of KIND or KIND:ALGO (e.g. alltoall,allreduce:ring) to run
// those collectives or algorithms alone (each with all its cases).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "firmware/job.h"
#include "firmware/jobs/coll_case.h"

namespace toroid {

struct SelftestSpec {
  bool quick = false;
  struct Only {
    CollKind kind;
    std::string algo;  // "" for every algorithm of the kind
  };
  std::vector<Only> only;  // empty: everything
};
Result<SelftestSpec> parse_selftest_args(const std::map<std::string, std::string>& args);

class SelftestJob final : public Job {
 public:
  SelftestJob(const JobContext& ctx, SelftestSpec spec = {});
  void start() override;
  bool poll() override;
  bool done() const override { return next_ >= plan_.size() && phase_ == Phase::kIdle; }
  Status status() const override { return status_; }
  size_t planned_cases() const override { return plan_.size(); }
  std::string current_case() const override;

 private:
  enum class Phase : uint8_t { kIdle, kOp, kIdentMin, kIdentMax };
  struct Planned {
    CaseSpec spec;
    uint32_t rounds = 1;
  };
  void build_plan();
  void add_kind(CollKind kind, const std::string& algo);
  void begin_case();
  void end_case(Status st, const std::string& skip = "");
  Status start_ident(ROp op);

  JobContext ctx_;
  SelftestSpec opt_;
  std::vector<Planned> plan_;
  size_t next_ = 0;
  Phase phase_ = Phase::kIdle;
  uint32_t round_ = 0;
  uint64_t case_start_ = 0;
  colldata::Source src_{DType::kInt64, ROp::kSum, 1};
  CollCase case_;
  uint64_t fp_ = 0, fp_min_ = 0, fp_max_ = 0;
  Status status_;
};

}  // namespace toroid
