#include "base/clock.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace toroid {

double wall_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t RealClock::now_ns() const {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kSec + static_cast<uint64_t>(ts.tv_nsec);
}

bool parse_duration_ns(const char* s, uint64_t* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || v < 0 || v != v) return false;
  double mult = 1;
  if (*end == '\0' || std::strcmp(end, "ns") == 0) mult = 1;
  else if (std::strcmp(end, "us") == 0) mult = 1e3;
  else if (std::strcmp(end, "ms") == 0) mult = 1e6;
  else if (std::strcmp(end, "s") == 0) mult = 1e9;
  else return false;
  const double ns = v * mult;
  if (ns > 1e18) return false;
  *out = static_cast<uint64_t>(ns + 0.5);
  return true;
}

const char* format_duration(uint64_t ns, char* buf, int len) {
  if (ns == kNever) snprintf(buf, len, "never");
  else if (ns < 10 * kUs) snprintf(buf, len, "%.2f us", ns / 1e3);
  else if (ns < 10 * kMs) snprintf(buf, len, "%.1f us", ns / 1e3);
  else if (ns < 10 * kSec) snprintf(buf, len, "%.2f ms", ns / 1e6);
  else snprintf(buf, len, "%.2f s", ns / 1e9);
  return buf;
}

}  // namespace toroid
