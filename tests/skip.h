// A test that cannot run on this machine (no root, no veth, no AVX-512 ...)
// says so and is counted as skipped, never as passed:
//
//   if (!can_make_veths()) TOROID_SKIP("cannot create a veth pair here: %s", why);
//
// prints "SKIP Group.Name: reason" on a line of its own and ends the test.
// `./toroid test` counts those lines: each moves one test from passed to
// skipped in the summary (the CppUTest runner itself only knows pass/fail).
// A whole executable that cannot run exits 77 instead (meson's skip).
#pragma once
#include <cstdarg>
#include <cstdio>

#include <CppUTest/TestHarness.h>

namespace toroid::test {

inline void report_skip(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void report_skip(const char* fmt, ...) {
  UtestShell* t = UtestShell::getCurrent();
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  std::printf("\nSKIP %s.%s: %s\n", t->getGroup().asCharString(), t->getName().asCharString(), why);
  std::fflush(stdout);
}

}  // namespace toroid::test

#define TOROID_SKIP(...)                         \
  do {                                           \
    ::toroid::test::report_skip(__VA_ARGS__);    \
    TEST_EXIT;                                   \
  } while (0)
