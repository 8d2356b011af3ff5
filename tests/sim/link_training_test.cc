// Link training at boot: a crossed cable and a dead link are each reported
// by node and port, the boot fails, and the rig stops without hanging.

#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

TEST_GROUP(LinkTraining){};

TEST(LinkTraining, AllLinksTrainOnACleanPartition) {
  LogCapture log;
  SimRig rig(options("3x2x2", "train"));
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  LONGS_EQUAL(s.nodes, s.passed);
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    // 3 in x (two links), 2 in y and z (two cables each): six trained ports.
    LONGS_EQUAL(6, rig.node(r).trainer().trained_ports());
  }
}

TEST(LinkTraining, SwappedCableIsNamedByPort) {
  LogCapture log;
  SimOptions o = options("2x2x2");
  o.swaps.push_back(parse_port_swap("1.0.1:y+,y-", o.dims).value());
  SimRig rig(o);
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  CHECK(s.boot_failures >= 1);
  LONGS_EQUAL(0, s.passed);
  const Node& bad = rig.node(rank_of(Coord{{1, 0, 1}}, o.dims));
  CHECK(bad.state() == NodeState::kFailed);
  CHECK(bad.boot_failed());
  CHECK(bad.status().code() == Code::kMiswired);
  // port2 is cabled y+ but the personality says y-; port3 the reverse.
  CHECK_TEXT(bad.status().message().find("node 1,0,1 port port2 (y-) is miswired") != std::string::npos,
             bad.status().message().c_str());
  CHECK(log.has("port port3 (y+) is miswired"));
  // Nodes whose own links trained may have started their job, but the rig
  // stopped the partition at the boot failure: none finished it.
  for (uint32_t r = 0; r < rig.node_count(); ++r) CHECK(rig.node(r).state() != NodeState::kPassed);
  // Caught at the first hello, long before any timeout.
  CHECK(s.virtual_ns < 100 * kUs);
}

TEST(LinkTraining, DeadLinkIsNamedByPortWithinTheTimeout) {
  LogCapture log;
  SimRig rig(options("4x2x1", "selftest", 1, "linkdown=2.1.0:x-"));
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  LONGS_EQUAL(2, s.boot_failures);  // both ends of the cable
  LONGS_EQUAL(0, s.passed);
  const Node& a = rig.node(rank_of(Coord{{2, 1, 0}}, Dims{{4, 2, 1}}));
  CHECK(a.status().code() == Code::kTimeout);
  CHECK_TEXT(a.status().message().find("node 2,1,0 port port1 (x-) is a dead link: no hello from neighbour 1,1,0") !=
                 std::string::npos,
             a.status().message().c_str());
  CHECK(log.has("node 1,1,0 port port0 (x+) is a dead link"));
  // Bounded: the training deadline plus one scheduler slice, no hang.
  CHECK(s.virtual_ns >= tuning::kTrainTimeoutSimNs);
  CHECK(s.virtual_ns <= tuning::kTrainTimeoutSimNs + 200 * kUs);
}

TEST(LinkTraining, TrainsThroughALossyMedium) {
  LogCapture log;
  SimRig rig(options("4x4x2", "train", 7, "drop=0.2,dup=0.05,reorder=0.1,corrupt=0.05,jitter=1us"));
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  CHECK_EQUAL_TEXT(s.nodes, s.passed, s.first_error.c_str());
  CHECK(rig.fabric().stats().dropped > 0);
  // Corrupted hellos were caught by the CRC (frames still in flight when the
  // rig stopped were never received, hence <=).
  uint64_t crc = 0;
  for (uint32_t r = 0; r < rig.node_count(); ++r)
    for (uint16_t i = 0; i < rig.node(r).net().port_count(); ++i) crc += rig.node(r).net().link(i).counters().rx_crc_errors;
  CHECK(crc > 0);
  CHECK(crc <= rig.fabric().stats().corrupted);
}
