#include "firmware/job.h"

#include "firmware/jobs/bench_job.h"
#include "firmware/jobs/coll_job.h"
#include "firmware/jobs/selftest_job.h"
#include "firmware/jobs/soak_job.h"
#include "firmware/jobs/traffic_job.h"
#include "firmware/jobs/train_job.h"

namespace toroid {

const char* verdict_name(CaseVerdict v) {
  switch (v) {
    case CaseVerdict::kPass: return "PASS";
    case CaseVerdict::kFail: return "FAIL";
    case CaseVerdict::kSkip: return "SKIP";
  }
  return "?";
}

const char* known_jobs() { return "selftest, coll, traffic, train, bench, soak"; }

bool is_known_job(const std::string& name) {
  return name == "selftest" || name == "coll" || name == "traffic" || name == "train" || name == "bench" ||
         name == "soak";
}

Result<std::unique_ptr<Job>> make_job(const JobContext& ctx) {
  const std::string& name = ctx.personality.job;
  std::unique_ptr<Job> job;
  if (name == "traffic") {
    auto spec = parse_traffic_args(ctx.personality.job_args);
    if (!spec) return spec.status();
    return std::unique_ptr<Job>(std::make_unique<TrafficJob>(ctx, *spec));
  }
  if (name == "bench") {
    auto spec = parse_bench_args(ctx.personality.job_args);
    if (!spec) return spec.status();
    return std::unique_ptr<Job>(std::make_unique<BenchJob>(ctx, *spec));
  }
  if (name == "coll") {
    auto spec = parse_coll_args(ctx.personality.job_args);
    if (!spec) return spec.status();
    return std::unique_ptr<Job>(std::make_unique<CollJob>(ctx, *spec));
  }
  if (name == "selftest") {
    auto spec = parse_selftest_args(ctx.personality.job_args);
    if (!spec) return spec.status();
    return std::unique_ptr<Job>(std::make_unique<SelftestJob>(ctx, *spec));
  }
  if (name == "soak") {
    auto spec = parse_soak_args(ctx.personality.job_args);
    if (!spec) return spec.status();
    return std::unique_ptr<Job>(std::make_unique<SoakJob>(ctx, *spec));
  }
  if (name == "train") job = std::make_unique<TrainJob>();
  else return error(Code::kInvalid, "unknown job '%s' (known: %s)", name.c_str(), known_jobs());
  if (!ctx.personality.job_args.empty())
    return error(Code::kInvalid, "job %s takes no arguments (got '%s')", name.c_str(),
                 ctx.personality.job_args.begin()->first.c_str());
  return job;
}

}  // namespace toroid
