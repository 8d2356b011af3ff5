#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {
std::vector<std::pair<LogLevel, std::string>>* g_lines = nullptr;

// Runs fn with file descriptor `fd` redirected into a pipe; returns what was written.
template <typename Fn>
std::string capture_fd(int fd, Fn fn) {
  int p[2];
  if (pipe(p) != 0) return "<pipe failed>";
  fflush(stdout);
  fflush(stderr);
  const int saved = dup(fd);
  dup2(p[1], fd);
  fn();
  fflush(stdout);
  fflush(stderr);
  dup2(saved, fd);
  close(saved);
  close(p[1]);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(p[0]);
  return out;
}
}  // namespace

TEST_GROUP(Log) {
  std::vector<std::pair<LogLevel, std::string>> lines;
  LogLevel saved_level = LogLevel::kInfo;

  void setup() override {
    saved_level = log_level();
    set_log_level(LogLevel::kInfo);
    g_lines = &lines;
    set_log_sink([](LogLevel lvl, const std::string& line) { g_lines->emplace_back(lvl, line); });
  }
  void teardown() override {
    set_log_sink(LogSink());
    set_log_level(saved_level);
    g_lines = nullptr;
    lines.clear();
    lines.shrink_to_fit();
  }
};

TEST(Log, NodePrefixOnEveryLine) {
  Logger log("[node 1,0,1]");
  log.info("trained %d links", 6);
  LONGS_EQUAL(1, lines.size());
  CHECK(lines[0].first == LogLevel::kInfo);
  STRCMP_EQUAL("[node 1,0,1] trained 6 links", lines[0].second.c_str());
}

TEST(Log, WarnAndErrorAreMarked) {
  Logger log("[node 0,0,0]");
  log.warn("link %s slow", "x+");
  log.error("link %s down", "y-");
  LONGS_EQUAL(2, lines.size());
  CHECK(lines[0].first == LogLevel::kWarn);
  STRCMP_EQUAL("[node 0,0,0] warning: link x+ slow", lines[0].second.c_str());
  CHECK(lines[1].first == LogLevel::kError);
  STRCMP_EQUAL("[node 0,0,0] error: link y- down", lines[1].second.c_str());
}

TEST(Log, ProcessLoggerHasNoPrefix) {
  kLog.info("rig up");
  LONGS_EQUAL(1, lines.size());
  STRCMP_EQUAL("rig up", lines[0].second.c_str());
}

TEST(Log, LevelFilters) {
  Logger log("[node 2,0,0]");
  log.debug("hidden at info");
  LONGS_EQUAL(0, lines.size());
  CHECK_FALSE(log.enabled(LogLevel::kDebug));
  CHECK_TRUE(log.enabled(LogLevel::kInfo));

  set_log_level(LogLevel::kWarn);
  CHECK(log_level() == LogLevel::kWarn);
  log.info("hidden at warn");
  log.debug("hidden at warn");
  log.warn("shown");
  log.error("shown too");
  LONGS_EQUAL(2, lines.size());
  CHECK(lines[0].first == LogLevel::kWarn);
  CHECK(lines[1].first == LogLevel::kError);

  set_log_level(LogLevel::kDebug);
  log.debug("now shown %d", 1);
  LONGS_EQUAL(3, lines.size());
  STRCMP_EQUAL("[node 2,0,0] now shown 1", lines[2].second.c_str());

  set_log_level(LogLevel::kError);
  log.warn("hidden at error");
  LONGS_EQUAL(3, lines.size());
}

TEST(Log, ParseLevel) {
  LogLevel l = LogLevel::kInfo;
  CHECK_TRUE(parse_log_level("debug", &l));
  CHECK(l == LogLevel::kDebug);
  CHECK_TRUE(parse_log_level("error", &l));
  CHECK(l == LogLevel::kError);
  CHECK_TRUE(parse_log_level("warn", &l));
  CHECK(l == LogLevel::kWarn);
  CHECK_TRUE(parse_log_level("info", &l));
  CHECK(l == LogLevel::kInfo);
  CHECK_FALSE(parse_log_level("verbose", &l));
  CHECK_FALSE(parse_log_level("", &l));
  CHECK(l == LogLevel::kInfo);
}

TEST(Log, EmptySinkRestoresDefaultStreams) {
  set_log_sink(LogSink());
  Logger log("[node 3,1,0]");
  const std::string out = capture_fd(1, [&] { log.info("to stdout"); });
  const std::string err = capture_fd(2, [&] { log.warn("to stderr"); });
  STRCMP_EQUAL("[node 3,1,0] to stdout\n", out.c_str());
  STRCMP_EQUAL("[node 3,1,0] warning: to stderr\n", err.c_str());
  LONGS_EQUAL(0, lines.size());
}
