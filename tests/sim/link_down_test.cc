// A cable cut in the middle of a transfer: both ends report the dead link by
// node and port within the configured detection time, their senders get an
// error, and the partition finishes (fails) instead of hanging.
#include <string>

#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

TEST_GROUP(LinkDown){};

TEST(LinkDown, CutMidTransferIsReportedByNodeAndPort) {
  LogCapture log;
  SimOptions o = options("4x4x2", "traffic", 3, "linkdown=1.1.1:x+@40us");
  o.job_args = {{"pattern", "uniform"}, {"messages", "200"}, {"size", "900"}};
  o.job_timeout_ns = 100 * kMs;
  SimRig rig(o);
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  LONGS_EQUAL(0, s.unfinished);  // nobody hangs
  CHECK(s.failed > 0);
  const Dims dims{{4, 4, 2}};
  const Node& a = rig.node(rank_of(Coord{{1, 1, 1}}, dims));
  const Node& b = rig.node(rank_of(Coord{{2, 1, 1}}, dims));
  // Both ends send over the cut cable (uniform traffic), so both have frames
  // in flight and both see the link die. The end that notices first fails
  // its job with the link's status and resets the partition; a, if it was
  // not first, fails with the reset, which names the same cable. Either
  // way both links are down, and b's was reported by node and port.
  CHECK(a.state() == NodeState::kFailed);
  const std::string& m = a.status().message();
  if (a.status().code() == Code::kLinkDown) {
    CHECK_TEXT(m.find("node 1,1,1 port port0 (x+): link down") != std::string::npos, m.c_str());
  } else {
    CHECK_TEXT(a.status().code() == Code::kReset, a.status().to_string().c_str());
    CHECK_TEXT(m.find("link down at node 2,1,1 port x-") != std::string::npos, m.c_str());
  }
  CHECK(!a.net().link(0).up());
  CHECK(!b.net().link(1).up());
  CHECK_TEXT(b.net().link(1).down_status().message().find("node 2,1,1 port port1 (x-): link down") !=
                 std::string::npos,
             b.net().link(1).down_status().message().c_str());
  CHECK(log.has("[node 2,1,1] error: node 2,1,1 port port1 (x-): link down"));
  // Detected within the configured time after the cut (plus one maximal
  // retransmission interval for the check to run).
  const uint64_t cut = 40 * kUs;  // the transfer takes about 100 us without the cut
  const uint64_t bound = cut + tuning::kLinkDownSimNs + tuning::kLinkRtoMaxSimNs;
  CHECK(a.done_ns() > cut && a.done_ns() <= bound);
}

// A collective in flight when a link dies fails with the link's status at
// the end that noticed first; everywhere else with the partition's reset,
// which names the same cable.
TEST(LinkDown, CollectiveFailsWithTheLinkStatus) {
  LogCapture log;
  SimRig rig(options("2x2x2", "selftest", 1, "linkdown=0.0.0:y+@20us"));
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  LONGS_EQUAL(0, s.unfinished);
  const Node& n = rig.node(0);
  CHECK(n.state() == NodeState::kFailed);
  const std::string& m = n.status().message();
  if (n.status().code() == Code::kLinkDown) {
    CHECK_TEXT(m.find("node 0,0,0 port port2 (y+): link down") != std::string::npos, m.c_str());
  } else {
    CHECK_TEXT(n.status().code() == Code::kReset, n.status().to_string().c_str());
    CHECK_TEXT(m.find("link down at node 0,1,0 port y-") != std::string::npos ||
                   m.find("link down at node 0,0,0 port y+") != std::string::npos,
               m.c_str());
  }
}
