#include "base/clock.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <algorithm>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace toroid {

double wall_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

namespace {

uint64_t kernel_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kSec + static_cast<uint64_t>(ts.tv_nsec);
}

#if defined(__x86_64__)
inline uint64_t tsc() { return __rdtsc(); }

bool kernel_clock_is_tsc() {
  const char* env = std::getenv("TOROID_CLOCK");
  if (env && std::strcmp(env, "kernel") == 0) return false;
  FILE* f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (!f) return false;
  char name[32] = {};
  const bool ok = std::fgets(name, sizeof name, f) && std::strcmp(name, "tsc\n") == 0;
  std::fclose(f);
  return ok;
}
#else
inline uint64_t tsc() { return 0; }
bool kernel_clock_is_tsc() { return false; }
#endif

const bool g_reads_tsc = kernel_clock_is_tsc();
constexpr uint64_t kMaxLeadNs = 100 * kUs;

// A kernel reading and the TSC at the same instant: the middle of two TSC
// reads taken close together (a thread preempted between them tries again).
void read_pair(uint64_t* ns, uint64_t* cycles) {
  for (int i = 0;; ++i) {
    const uint64_t c0 = tsc();
    *ns = kernel_ns();
    const uint64_t c1 = tsc();
    *cycles = c0 + (c1 - c0) / 2;
    if (c1 - c0 < 20000 || i == 4) return;
  }
}

inline uint64_t scaled(uint64_t cycles, uint64_t mult) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(cycles) * mult) >> 32);
}

}  // namespace

bool RealClock::reads_tsc() { return g_reads_tsc; }

uint64_t RealClock::now_ns() const {
  if (!g_reads_tsc) return kernel_ns();
  const uint64_t c = tsc();
  const uint64_t d = c - anchor_tsc_;
  if (mult_ == 0 || d >= reanchor_cycles_) return reanchor();
  // A thread that moved to another CPU may read a TSC a few cycles behind
  // the last one: never earlier than what was returned.
  const uint64_t t = anchor_ns_ + scaled(d, mult_);
  last_ = t > last_ ? t : last_;
  return last_;
}

// Every millisecond (and on every read during the first one, while the
// scale is not known yet): a kernel reading. The scale is the whole span
// since the first reading, so it converges; the reading continues from the
// later of the kernel's time and the TSC's extrapolation, so it never goes
// back (a scale a little fast leaves it a few nanoseconds ahead). An
// extrapolation more than kMaxLeadNs off the kernel's time (a TSC that
// jumped, say when a host moved the VM) starts the measurement over from
// this reading: the clock follows the kernel, never going back, until the
// new scale is known a millisecond later.
uint64_t RealClock::reanchor() const {
  uint64_t k, c;
  read_pair(&k, &c);
  if (base_ns_ == 0) {
    base_tsc_ = anchor_tsc_ = c;
    base_ns_ = anchor_ns_ = last_ = k;
    return k;
  }
  uint64_t t = std::max(k, last_);
  if (mult_ != 0) {
    const uint64_t ext = c >= anchor_tsc_ ? anchor_ns_ + scaled(c - anchor_tsc_, mult_) : 0;
    if (ext > k + kMaxLeadNs || ext + kMaxLeadNs < k) {
      base_tsc_ = anchor_tsc_ = c;
      base_ns_ = k;
      anchor_ns_ = last_ = t;
      mult_ = 0;
      return t;
    }
    t = std::max(t, ext);
  }
  if (k - base_ns_ >= kMs && c > base_tsc_) {
    mult_ = static_cast<uint64_t>((static_cast<unsigned __int128>(k - base_ns_) << 32) / (c - base_tsc_));
    if (mult_ == 0) mult_ = 1;
    reanchor_cycles_ = static_cast<uint64_t>((static_cast<unsigned __int128>(kMs) << 32) / mult_);
  }
  anchor_tsc_ = c;
  anchor_ns_ = last_ = t;
  return t;
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
