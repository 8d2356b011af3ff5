// A job is what a node runs after it booted: the collectives self-test, a
// benchmark, an application. Jobs are non-blocking state machines polled by
// the node's event loop, so the same job runs unchanged in every rig.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/log.h"
#include "base/status.h"
#include "firmware/personality.h"

namespace toroid {

class Comm;
class Messenger;
class NetStack;

enum class CaseVerdict : uint8_t { kPass, kFail, kSkip };
const char* verdict_name(CaseVerdict v);

struct CaseResult {
  std::string coll;    // "allreduce"
  std::string algo;    // "torus-ring"
  std::string name;    // "int64 sum n=1001"
  CaseVerdict verdict = CaseVerdict::kPass;
  uint64_t elapsed_ns = 0;
  std::string detail;  // why it failed or was skipped
};

// The node's recovery as a job that outlives failures sees it (the soak
// job): the partition resets its communication after a link went down or a
// neighbour rebooted (firmware/link_training.h), which fails the operations
// in flight; later ones work once the links trained again.
class Recovery {
 public:
  virtual ~Recovery() = default;
  // Changes at every reset (the node started or adopted a new generation).
  virtual uint32_t generation() const = 0;
  // Every link of this node is trained in the current generation.
  virtual bool links_up() const = 0;
  // Start a new generation (after an operation failed in a way that may
  // leave this node out of step with the others, e.g. a timeout).
  virtual void request_reset(const Status& why) = 0;
};

struct JobContext {
  const Personality& personality;
  NetStack& net;
  Comm& comm;
  Messenger& msgr;
  EventLoop& loop;
  const Logger& log;
  uint64_t timeout_ns;  // a job's overall deadline (virtual time in the sim rig)
  Recovery* recovery = nullptr;
};

class Job {
 public:
  virtual ~Job() = default;
  virtual void start() = 0;
  virtual bool poll() = 0;  // true if anything moved
  virtual bool done() const = 0;
  // ok, or the first failure.
  virtual Status status() const = 0;
  const std::vector<CaseResult>& cases() const { return cases_; }
  // Named totals the rig sums over all nodes and prints as one line
  // "<totals_name()>: k=v ...", e.g. "traffic: expected=E delivered=D ...".
  virtual std::vector<std::pair<std::string, uint64_t>> totals() const { return {}; }
  virtual const char* totals_name() const { return ""; }
  // For progress lines on long runs: how many cases the job will run (0 when
  // it does not know; cases() holds those finished) and the one it is on.
  virtual size_t planned_cases() const { return 0; }
  virtual std::string current_case() const { return {}; }

 protected:
  std::vector<CaseResult> cases_;
};

// Known jobs: "selftest", "traffic", "train", "bench". Unknown names and bad job arguments are
// errors that name them.
Result<std::unique_ptr<Job>> make_job(const JobContext& ctx);
const char* known_jobs();
bool is_known_job(const std::string& name);

}  // namespace toroid
