// The self-test job (every collective x algorithm x datatype/op x size
// class) passes on the sim rig for a range of partition shapes: every node
// verified every case itself; algorithms that cannot run on a shape are
// skipped with their reason, and every node agrees on which.

#include <map>

#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

TEST_GROUP(SelftestShapes){};

// Returns the number of skipped cases (the same on every node).
static size_t expect_pass(const char* dims, const char* level = "full") {
  LogCapture log;
  SimOptions o = options(dims);
  o.job_args["level"] = level;
  SimRig rig(o);
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  CHECK_EQUAL_TEXT(s.nodes, s.passed, (std::string(dims) + ": " + s.first_error).c_str());
  size_t skipped = 0, cases = 0;
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    const Job* job = rig.node(r).job();
    CHECK(job != nullptr);
    size_t skips = 0, passes = 0;
    for (const auto& c : job->cases()) {
      const std::string what = std::string(dims) + " " + c.coll + " " + c.algo + " " + c.name + ": " + c.detail;
      CHECK_TEXT(c.verdict != CaseVerdict::kFail, what.c_str());
      if (c.verdict == CaseVerdict::kSkip) {
        ++skips;
        CHECK_TEXT(c.detail.rfind("not applicable: ", 0) == 0 && c.detail.size() > 20, what.c_str());
      } else {
        ++passes;
      }
    }
    if (r == 0) {
      skipped = skips;
      cases = job->cases().size();
    }
    UNSIGNED_LONGS_EQUAL(skipped, skips);
    UNSIGNED_LONGS_EQUAL(cases, job->cases().size());
    CHECK(passes > skips);
  }
  return skipped;
}

// The five shapes of the collectives issue, with the full matrix.
TEST(SelftestShapes, Cube2) { expect_pass("2x2x2"); }
TEST(SelftestShapes, Flat4x2x1) { expect_pass("4x2x1"); }
TEST(SelftestShapes, Line8) { expect_pass("8x1x1"); }
TEST(SelftestShapes, OddCube3) {
  // 27 nodes: the 2x2x2-only algorithms (cube300, cube400) are skipped, with their reason.
  CHECK(expect_pass("3x3x3") > 0);
}
TEST(SelftestShapes, Cube4) {
#if defined(__SANITIZE_ADDRESS__)
  // The full matrix on 64 nodes is two minutes of CPU in a release build and
  // ten times that under the sanitizers: there, the quick matrix (every
  // collective once) on the same 64 nodes; the release suite runs it all.
  expect_pass("4x4x4", "quick");
#else
  expect_pass("4x4x4");
#endif
}
// Edge shapes, quick matrix.
TEST(SelftestShapes, SingleNode) { expect_pass("1x1x1", "quick"); }
TEST(SelftestShapes, TwoNodes) { expect_pass("2x1x1", "quick"); }
TEST(SelftestShapes, LineAlongZ) { expect_pass("1x1x16", "quick"); }
TEST(SelftestShapes, Mixed3x5x1) { expect_pass("3x5x1", "quick"); }

// Link counters agree with the medium: nothing was dropped or rejected on a
// clean run, and every frame sent was received.
TEST(SelftestShapes, CountersBalanceOnACleanRun) {
  LogCapture log;
  SimOptions o = options("4x2x2");
  o.job_args["level"] = "quick";
  SimRig rig(o);
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  LONGS_EQUAL(s.nodes, s.passed);
  uint64_t tx = 0, rx = 0, bad = 0;
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    const NetStack& net = rig.node(r).net();
    for (uint16_t i = 0; i < net.port_count(); ++i) {
      const LinkCounters& c = net.link(i).counters();
      tx += c.tx_frames;
      rx += c.rx_frames;
      bad += c.rx_crc_errors + c.rx_short + c.rx_bad_length + c.rx_bad_type + c.rx_bad_version + c.rx_bad_ethertype +
             c.rx_no_crc_refused;
    }
  }
  CHECK(tx > 0);
  UNSIGNED_LONGS_EQUAL(tx, rx);
  UNSIGNED_LONGS_EQUAL(0, bad);
  UNSIGNED_LONGS_EQUAL(tx, rig.fabric().stats().frames_delivered);
}
