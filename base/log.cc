#include "base/log.h"

#include <cstdio>
#include <cstring>
#include <mutex>

namespace toroid {

namespace {
LogSink g_sink;
// Nodes of a multi-threaded sim log from several threads: one line at a
// time reaches the sink or the stream (log lines are not on a hot path).
std::mutex g_mu;
LogLevel g_level = LogLevel::kInfo;
const char* const kLevelNames[] = {"error", "warn", "info", "debug"};
}  // namespace

const Logger kLog;

bool parse_log_level(const std::string& s, LogLevel* out) {
  for (int i = 0; i < 4; ++i) {
    if (s == kLevelNames[i]) { *out = static_cast<LogLevel>(i); return true; }
  }
  return false;
}

void set_log_sink(LogSink sink) { g_sink = std::move(sink); }
void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level; }

bool Logger::enabled(LogLevel level) const { return level <= g_level; }

void Logger::vlog(LogLevel level, const char* fmt, va_list ap) const {
  if (!enabled(level)) return;
  char body[1024];
  vsnprintf(body, sizeof body, fmt, ap);
  std::string line;
  line.reserve(prefix_.size() + std::strlen(body) + 16);
  if (!prefix_.empty()) { line += prefix_; line += ' '; }
  if (level == LogLevel::kError) line += "error: ";
  else if (level == LogLevel::kWarn) line += "warning: ";
  line += body;
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_sink) { g_sink(level, line); return; }
  FILE* out = level <= LogLevel::kWarn ? stderr : stdout;
  line += '\n';
  fwrite(line.data(), 1, line.size(), out);
  if (out == stdout) fflush(stdout);
}

#define TOROID_LOG_FN(name, level)              \
  void Logger::name(const char* fmt, ...) const { \
    if (!enabled(level)) return;                \
    va_list ap;                                 \
    va_start(ap, fmt);                          \
    vlog(level, fmt, ap);                       \
    va_end(ap);                                 \
  }
TOROID_LOG_FN(error, LogLevel::kError)
TOROID_LOG_FN(warn, LogLevel::kWarn)
TOROID_LOG_FN(info, LogLevel::kInfo)
TOROID_LOG_FN(debug, LogLevel::kDebug)
#undef TOROID_LOG_FN

}  // namespace toroid
