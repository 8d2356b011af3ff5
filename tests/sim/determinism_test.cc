// The sim rig is deterministic: the same seed replays the same packet trace
// bit for bit; another seed draws another fault pattern.

#include <cstring>

#include <string>

#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>
#include <CppUTest/MemoryLeakWarningPlugin.h>

using namespace toroid;
using namespace toroid::test;

namespace {
struct Run {
  uint64_t hash;
  FabricStats stats;
  uint32_t passed;
};
Run run_sim(const char* dims, const char* job, uint64_t seed, const char* faults, uint32_t threads = 1) {
  LogCapture log;
  SimOptions o = options(dims, job, seed, faults);
  o.threads = threads;
  if (std::string(job) == "selftest") o.job_args["level"] = "quick";  // every collective and algorithm, fewer cases
  SimRig rig(o);
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  return Run{s.trace_hash, rig.fabric().stats(), s.passed};
}
}  // namespace

TEST_GROUP(Determinism){};

TEST(Determinism, SameSeedSameTraceWithFaults) {
  const char* faults = "drop=0.1,corrupt=0.05,dup=0.05,reorder=0.1,jitter=500ns";
  const Run a = run_sim("4x4x2", "train", 11, faults);
  const Run b = run_sim("4x4x2", "train", 11, faults);
  UNSIGNED_LONGS_EQUAL(a.hash, b.hash);
  CHECK(std::memcmp(&a.stats, &b.stats, sizeof a.stats) == 0);
  CHECK(a.stats.dropped > 0 && a.stats.corrupted > 0 && a.stats.duplicated > 0 && a.stats.reordered > 0);
}

TEST(Determinism, DifferentSeedDifferentFaultPattern) {
  const char* faults = "drop=0.1,corrupt=0.05,dup=0.05,reorder=0.1";
  const Run a = run_sim("4x4x2", "train", 11, faults);
  const Run b = run_sim("4x4x2", "train", 12, faults);
  CHECK(a.hash != b.hash);
  CHECK(a.stats.dropped != b.stats.dropped || a.stats.corrupted != b.stats.corrupted ||
        a.stats.duplicated != b.stats.duplicated);
}

TEST(Determinism, SameSeedSameTraceForTheSelftest) {
  const Run a = run_sim("4x2x2", "selftest", 3, "");
  const Run b = run_sim("4x2x2", "selftest", 3, "");
  LONGS_EQUAL(16, a.passed);
  UNSIGNED_LONGS_EQUAL(a.hash, b.hash);
  // The seed also changes the data, hence the payload bytes in the trace.
  const Run c = run_sim("4x2x2", "selftest", 4, "");
  CHECK(a.hash != c.hash);
}

// CppUTest's leak detector is not thread-safe: off while the scheduler runs
// on several threads.
TEST_GROUP(DeterminismThreads) {
  void setup() override { MemoryLeakWarningPlugin::saveAndDisableNewDeleteOverloads(); }
  void teardown() override { MemoryLeakWarningPlugin::restoreNewDeleteOverloads(); }
};

// The same run, bit for bit, on two threads as on one: the trace hash and
// every medium counter (events and steps included).
TEST(DeterminismThreads, TwoThreadsGiveTheSameTraceAsOne) {
  const Run a = run_sim("4x2x2", "selftest", 3, "", 1);
  const Run b = run_sim("4x2x2", "selftest", 3, "", 2);
  LONGS_EQUAL(16, a.passed);
  LONGS_EQUAL(16, b.passed);
  UNSIGNED_LONGS_EQUAL(a.hash, b.hash);
  CHECK(std::memcmp(&a.stats, &b.stats, sizeof a.stats) == 0);
}

TEST(DeterminismThreads, ThreadsDoNotChangeTheFaultPattern) {
  const char* faults = "drop=0.1,corrupt=0.05,dup=0.05,reorder=0.1,jitter=500ns";
  const Run a = run_sim("4x4x2", "train", 11, faults, 1);
  for (uint32_t threads : {2u, 3u}) {
    const Run b = run_sim("4x4x2", "train", 11, faults, threads);
    UNSIGNED_LONGS_EQUAL(a.hash, b.hash);
    CHECK(std::memcmp(&a.stats, &b.stats, sizeof a.stats) == 0);
  }
  CHECK(a.stats.dropped > 0 && a.stats.corrupted > 0 && a.stats.duplicated > 0 && a.stats.reordered > 0);
}
