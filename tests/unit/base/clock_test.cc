#include <ctime>
#include <string>

#include "base/clock.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {
uint64_t parsed(const char* s) {
  uint64_t v = 12345;
  CHECK_TEXT(parse_duration_ns(s, &v), s);
  return v;
}
void rejects(const char* s) {
  uint64_t v = 12345;
  CHECK_FALSE_TEXT(parse_duration_ns(s, &v), s ? s : "(null)");
  UNSIGNED_LONGLONGS_EQUAL(12345, v);
}
std::string fmt(uint64_t ns) {
  char buf[32];
  return format_duration(ns, buf, sizeof buf);
}
}  // namespace

TEST_GROUP(Clock) {};

TEST(Clock, ParseDurationUnits) {
  UNSIGNED_LONGLONGS_EQUAL(2000, parsed("2us"));
  UNSIGNED_LONGLONGS_EQUAL(1500000, parsed("1.5ms"));
  UNSIGNED_LONGLONGS_EQUAL(300, parsed("300"));
  UNSIGNED_LONGLONGS_EQUAL(1000000000ull, parsed("1s"));
  UNSIGNED_LONGLONGS_EQUAL(250, parsed("250ns"));
  UNSIGNED_LONGLONGS_EQUAL(1500, parsed("1.5us"));
  UNSIGNED_LONGLONGS_EQUAL(300000, parsed("300us"));
  UNSIGNED_LONGLONGS_EQUAL(0, parsed("0"));
}

TEST(Clock, ParseDurationRejectsMalformed) {
  rejects("abc");
  rejects("-1us");
  rejects("5parsecs");
  rejects("");
  rejects(nullptr);
  rejects("us");
  rejects("1.5 us");
  rejects("nan");
  rejects("inf");
  rejects("1e30s");
}

TEST(Clock, FormatDuration) {
  STRCMP_EQUAL("1.50 us", fmt(1500).c_str());
  STRCMP_EQUAL("300.0 us", fmt(300 * kUs).c_str());
  STRCMP_EQUAL("30.00 ms", fmt(30 * kMs).c_str());
  STRCMP_EQUAL("20.00 s", fmt(20 * kSec).c_str());
  STRCMP_EQUAL("never", fmt(kNever).c_str());
  char tiny[4];
  format_duration(123456789, tiny, sizeof tiny);  // truncates, stays terminated
  LONGS_EQUAL(3, std::string(tiny).size());
}

TEST(Clock, RealClockIsMonotonicAndAdvances) {
  RealClock c;
  CHECK_FALSE(c.is_virtual());
  const uint64_t a = c.now_ns();
  const uint64_t b = c.now_ns();
  CHECK_TRUE(b >= a);
  timespec ts{0, 2 * 1000 * 1000};
  nanosleep(&ts, nullptr);
  CHECK_TRUE(c.now_ns() - a >= 2 * kMs);
}

TEST(Clock, VirtualClockNeverGoesBack) {
  VirtualClock c;
  CHECK_TRUE(c.is_virtual());
  UNSIGNED_LONGLONGS_EQUAL(0, c.now_ns());
  c.set(500);
  UNSIGNED_LONGLONGS_EQUAL(500, c.now_ns());
  c.set(100);
  UNSIGNED_LONGLONGS_EQUAL(500, c.now_ns());
  c.set(501);
  UNSIGNED_LONGLONGS_EQUAL(501, c.now_ns());
}

// RealClock on the TSC (where the kernel's clocksource is the TSC) stays with
// CLOCK_MONOTONIC across its re-anchorings and never goes back.
TEST(Clock, RealClockFollowsTheKernelClockAndNeverGoesBack) {
  RealClock c;
  auto kernel = [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * kSec + static_cast<uint64_t>(ts.tv_nsec);
  };
  uint64_t prev = c.now_ns();
  uint64_t worst = 0;
  uint64_t reads = 0;
  const uint64_t end = kernel() + 30 * kMs;  // about 30 re-anchorings
  for (uint64_t k0 = kernel(); k0 < end; k0 = kernel()) {
    const uint64_t t = c.now_ns();
    const uint64_t k1 = kernel();
    CHECK_TRUE_TEXT(t >= prev, "went back");
    // Within the two kernel readings around it, give or take the drift of
    // a scale still being measured.
    const uint64_t off = t < k0 ? k0 - t : t > k1 ? t - k1 : 0;
    worst = off > worst ? off : worst;
    prev = t;
    ++reads;
  }
  CHECK_TRUE(reads > 1000);
  CHECK_TRUE_TEXT(worst < 20 * kUs, ("off the kernel clock by " + std::to_string(worst) + " ns").c_str());
}
