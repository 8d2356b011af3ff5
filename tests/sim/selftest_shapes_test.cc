// The selftest job passes on the sim rig for a range of partition shapes,
// and every node verified every case itself.

#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

TEST_GROUP(SelftestShapes){};

static void expect_pass(const char* dims) {
  LogCapture log;
  SimRig rig(options(dims));
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  CHECK_EQUAL_TEXT(s.nodes, s.passed, (std::string(dims) + ": " + s.first_error).c_str());
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    const Job* job = rig.node(r).job();
    CHECK(job != nullptr);
    CHECK(job->cases().size() >= 7);
    for (const auto& c : job->cases()) CHECK_TEXT(c.verdict == CaseVerdict::kPass, c.name.c_str());
  }
}

TEST(SelftestShapes, SingleNode) { expect_pass("1x1x1"); }
TEST(SelftestShapes, TwoNodes) { expect_pass("2x1x1"); }
TEST(SelftestShapes, Cube2) { expect_pass("2x2x2"); }
TEST(SelftestShapes, Flat4x2x1) { expect_pass("4x2x1"); }
TEST(SelftestShapes, Line8) { expect_pass("8x1x1"); }
TEST(SelftestShapes, LineAlongZ) { expect_pass("1x1x16"); }
TEST(SelftestShapes, OddCube3) { expect_pass("3x3x3"); }
TEST(SelftestShapes, Mixed3x5x7) { expect_pass("3x5x7"); }
TEST(SelftestShapes, Cube4) { expect_pass("4x4x4"); }

// Link counters agree with the medium: nothing was dropped or rejected on a
// clean run, and every frame sent was received.
TEST(SelftestShapes, CountersBalanceOnACleanRun) {
  LogCapture log;
  SimRig rig(options("4x2x2"));
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
      bad += c.rx_crc_errors + c.rx_short + c.rx_bad_length + c.rx_bad_type + c.rx_bad_version + c.rx_bad_ethertype;
    }
  }
  CHECK(tx > 0);
  UNSIGNED_LONGS_EQUAL(tx, rx);
  UNSIGNED_LONGS_EQUAL(0, bad);
  UNSIGNED_LONGS_EQUAL(tx, rig.fabric().stats().frames_delivered);
}
