// Helpers for sim-rig tests: build and run a partition quietly.
#pragma once
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
