// Logging with levels and a per-node prefix: "[node 1,0,1] trained 6 links".
// One Logger per node (the sim rig holds thousands in one process), all
// writing through one process-wide sink so tests can capture lines.
#pragma once
#include <cstdarg>
#include <cstdint>
#include <functional>
#include <string>

namespace toroid {

enum class LogLevel : unsigned char { kError = 0, kWarn, kInfo, kDebug };

// Parses "error|warn|info|debug"; returns false if unknown.
bool parse_log_level(const std::string& s, LogLevel* out);

// Where lines go. Default: stdout for info/debug, stderr for warn/error.
// A test installs a capture sink; the rig may prefix virtual time.
using LogSink = std::function<void(LogLevel, const std::string& line)>;
void set_log_sink(LogSink sink);  // empty function restores the default
void set_log_level(LogLevel level);
LogLevel log_level();

class Logger {
 public:
  Logger() = default;
  explicit Logger(std::string prefix) : prefix_(std::move(prefix)) {}
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  const std::string& prefix() const { return prefix_; }

  void error(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  void warn(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  void info(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  void debug(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));
  bool enabled(LogLevel level) const;
  void vlog(LogLevel level, const char* fmt, va_list ap) const;

 private:
  std::string prefix_;  // "[node 1,0,1]" or empty
};

// Process-level messages (CLI, rig) with no node prefix.
extern const Logger kLog;

}  // namespace toroid
