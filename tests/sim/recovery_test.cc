// Link liveness and recovery on the sim rig (docs/netstack.md, "Link
// liveness and recovery"): a rebooted neighbour is recognised by its boot id
// and the links train again; a frozen one is found by the keepalive within
// the link timeout; a cut cable, once mended, trains again. In every case
// the soak job's operations in flight fail with a named error, none gives a
// wrong result or hangs, and later ones are verified on every node. And two
// partitions cabled together refuse each other by name.
#include <string>

#include "firmware/jobs/soak_job.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

SimSummary run_soak(SimRig& rig) {
  CHECK_TRUE(rig.build().is_ok());
  return rig.run();
}

SimOptions soak(const std::string& dims, const std::string& faults, uint64_t until_ms, uint64_t seed = 1) {
  SimOptions o = options(dims, "soak", seed, faults);
  o.job_args = {{"until", std::to_string(until_ms * kMs)}};
  return o;
}

const SoakCounts& counts(const SimRig& rig, uint32_t r) {
  const auto* job = dynamic_cast<const SoakJob*>(rig.node(r).job());
  CHECK(job != nullptr);
  return job->counts();
}

// Every node passed; nothing wrong, nothing hung; every failure was a link
// down or a reset (named), and every node verified operations in the last
// generation it saw. Returns the failures over all nodes.
uint64_t check_recovered(const SimRig& rig, const SimSummary& s) {
  CHECK_EQUAL_TEXT(s.nodes, s.passed, s.first_error.c_str());
  uint64_t failed = 0;
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    const SoakCounts& n = counts(rig, r);
    const std::string at = rig.node(r).personality().node_name();
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, n.wrong, at.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, n.hangs, at.c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, n.failed_timeout + n.failed_other, at.c_str());
    CHECK_TEXT(n.ok_last_gen > 0, at.c_str());
    failed += n.failed;
  }
  return failed;
}

}  // namespace

TEST_GROUP(Recovery){};

TEST(Recovery, ARebootedNeighbourIsRecognisedAndTheLinksTrainAgain) {
  LogCapture log;
  SimRig rig(soak("2x2x2", "reboot=1.0.0@5ms", 20));
  const SimSummary s = run_soak(rig);
  CHECK(check_recovered(rig, s) > 0);  // operations in flight did fail
  const Dims dims{{2, 2, 2}};
  const uint32_t rebooted = rank_of(Coord{{1, 0, 0}}, dims);
  // A new boot id, not the one derived for the first boot.
  CHECK(rig.node(rebooted).trainer().boot_id() != mix64(1 ^ mix64(rebooted)));
  uint64_t seen = 0;
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    seen += rig.node(r).trainer().counters().reboots_seen;
    CHECK(rig.node(r).trainer().generation() >= 1);
    CHECK(rig.node(r).trainer().all_up());
  }
  CHECK(seen >= 1);
  CHECK(log.has("rebooted"));
  // The neighbours' reset names the reboot ...
  const uint32_t nb = rank_of(Coord{{0, 0, 0}}, dims);
  const std::string& why = rig.node(nb).last_reset().message();
  CHECK_TEXT(why.find("rebooted") != std::string::npos, why.c_str());
}

TEST(Recovery, AFrozenNeighbourIsFoundWithinTheLinkTimeout) {
  LogCapture log;
  SimRig rig(soak("2x2x2", "stop=1.0.0@5ms+5ms", 25));
  const SimSummary s = run_soak(rig);
  CHECK(check_recovered(rig, s) > 0);
  // Its neighbours reset within the link timeout (no progress on data in
  // flight, or silence past the keepalive), plus one retransmission period.
  uint64_t first = kNever;
  for (uint32_t r = 0; r < rig.node_count(); ++r)
    if (rig.node(r).first_reset_ns()) first = std::min(first, rig.node(r).first_reset_ns());
  CHECK(first > 5 * kMs);
  CHECK_TEXT(first <= 5 * kMs + tuning::kLinkDownSimNs + tuning::kLinkRtoMaxSimNs, std::to_string(first).c_str());
  CHECK(log.has("link down: no progress") || log.has("link down: nothing heard from the neighbour"));
}

// An idle partition (no job traffic, only keepalives): the hung neighbour is
// found by the keepalive alone.
TEST(Recovery, AnIdleLinkFindsAHungNeighbourByKeepalive) {
  LogCapture log;
  SimOptions o = soak("2x1x1", "stop=1.0.0@2ms", 8);
  o.job = "train";
  o.job_args.clear();
  o.time_limit_ns = 8 * kMs;
  SimRig rig(o);
  CHECK_TRUE(rig.build().is_ok());
  (void)rig.run();  // ends once both nodes trained, long before the stop
  // Run on past the stop by the keepalive and link-down times: nothing but
  // keepalives crosses the link, so only they can find the hung node.
  SimFabric& f = rig.fabric();
  for (uint32_t r = 0; r < rig.node_count(); ++r) f.wake(r, f.now());
  f.run(2 * kMs + tuning::kLinkDownSimNs + 2 * tuning::kLinkKeepaliveSimNs);
  const Node& n = rig.node(0);
  CHECK(n.resets() >= 1);
  CHECK(n.first_reset_ns() > 2 * kMs);
  CHECK(n.first_reset_ns() <= 2 * kMs + tuning::kLinkDownSimNs + tuning::kLinkKeepaliveSimNs);
  CHECK_TEXT(log.has("[node 0,0,0] error: node 0,0,0 port port0 (x+): link down: nothing heard from the neighbour for") ||
                 log.has("[node 0,0,0] error: node 0,0,0 port port1 (x-): link down: nothing heard from the neighbour for"),
             log.text().c_str());
  CHECK(n.net().link(0).counters().keepalives > 0);
}

TEST(Recovery, ACutCableOnceMendedTrainsAgain) {
  LogCapture log;
  SimRig rig(soak("2x2x2", "linkdown=0.0.0:y+@5ms+2ms", 20));
  const SimSummary s = run_soak(rig);
  CHECK(check_recovered(rig, s) > 0);
  const Node& n = rig.node(0);
  CHECK(n.net().link(2).up());
  CHECK(n.net().link(2).counters().trainings >= 2);
}

// Everything at once, on a lossy wire too.
TEST(Recovery, ASoakUnderRebootsStopsAndCutsNeverGivesAWrongResult) {
  LogCapture log;
  SimRig rig(soak("4x2x2",
                  "drop=0.01,corrupt=0.005,reboot=1.1.1@4ms,stop=2.0.1@9ms+3ms,linkdown=3.1.0:z-@14ms+2ms,"
                  "reboot=0.0.0@18ms",
                  26, 3));
  const SimSummary s = run_soak(rig);
  CHECK(check_recovered(rig, s) > 0);
}

TEST_GROUP(PartitionIsolation){};

// Two 2x2x2 partitions cabled as one 4x2x2 torus: each one's x wrap cables
// reach the other. Training refuses them, naming the other partition, and
// counts their frames; the cables inside a partition train.
TEST(PartitionIsolation, CrossWiredPartitionsRefuseEachOtherByName) {
  LogCapture log;
  SimOptions o = options("4x2x2", "train", 1);
  o.partitions = {"lab-a", "lab-b"};
  SimRig rig(o);
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary s = rig.run();
  LONGS_EQUAL(s.nodes, s.boot_failures);
  CHECK(log.has("[node 1,0,0] error: link training: node 1,0,0 port port0 (x+) is miswired: expected neighbour 0,0,0 "
                "on its x- port, got a hello from 0,0,0 x- of partition 'lab-b' (this node is in 'lab-a')"));
  CHECK(log.has("of partition 'lab-a' (this node is in 'lab-b')"));
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    const Node& n = rig.node(r);
    // port0/port1 are x+/x-: one of them crosses; y and z train.
    const uint64_t foreign = n.net().link(0).counters().rx_foreign_partition +
                             n.net().link(1).counters().rx_foreign_partition;
    CHECK(foreign > 0);
    CHECK(n.trainer().counters().foreign_partition_hellos > 0);
    for (uint16_t i = 2; i < 6; ++i) CHECK(n.net().link(i).up());
    UNSIGNED_LONGS_EQUAL(5, n.trainer().trained_ports());
    CHECK(n.status().code() == Code::kMiswired);
  }
}
