// Helpers for sim-rig tests: build and run a partition quietly.
#pragma once
#include <algorithm>
#include <string>

#include "base/log.h"
#include "firmware/sim_rig.h"

namespace toroid::test {

// Captures log lines while alive (and keeps the test output clean).
class LogCapture {
 public:
  LogCapture() {
    set_log_sink([this](LogLevel, const std::string& line) { text_ += line + "\n"; });
  }
  ~LogCapture() { set_log_sink(nullptr); }
  const std::string& text() const { return text_; }
  bool has(const std::string& s) const { return text_.find(s) != std::string::npos; }

 private:
  std::string text_;
};

// Runs the rig's fabric until the partition is quiet: no frame on a wire or
// in an rx ring at two checks 300 us apart (longer than any retransmission
// or ack delay of the sim's links), or until max_ns passed. Idle nodes
// still wake for their keepalives, so "no event left" never comes.
inline bool settle_quiet(SimRig& rig, uint64_t max_ns = 20 * kMs) {
  SimFabric& f = rig.fabric();
  for (uint32_t r = 0; r < rig.node_count(); ++r) f.wake(r, f.now());
  const uint64_t end = f.now() + max_ns;
  bool was_quiet = false;
  while (f.now() < end) {
    const uint64_t t = f.now() + 300 * kUs;
    f.run(t);
    f.clock().set(t);
    const bool q = f.quiet();
    if (q && was_quiet) return true;
    was_quiet = q;
  }
  return false;
}

inline SimOptions options(const std::string& dims, const std::string& job = "selftest", uint64_t seed = 1,
                          const std::string& faults = "") {
  SimOptions o;
  o.dims = parse_dims(dims).value();
  o.job = job;
  o.seed = seed;
  o.faults = parse_fault_plan(faults, o.dims).value();
  o.log_boot = false;
  o.progress = false;
  return o;
}

}  // namespace toroid::test
