// The collective data path on the sim rig, checked on the wire counters:
//  - every cable carries data: on dimensions of size 2 the + and - cables
//    reach the same neighbour, and a point-to-point collective's segments
//    alternate between them, so every cable carries data both ways (the
//    links' own frame counters, not a plan);
//  - nothing corrupted or duplicated reaches a user buffer through the
//    receive path that writes segments straight into it: a fabric that
//    corrupts and duplicates frames costs retransmissions, never a wrong
//    element.
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "tests/sim/coll_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

CollArgs allreduce_i64(std::vector<int64_t>& buf) {
  CollArgs a;
  a.kind = CollKind::kAllreduce;
  a.dtype = DType::kInt64;
  a.op = ROp::kSum;
  a.recv = buf.data();
  a.count = buf.size();
  return a;
}

// Runs a checked allreduce of `count` int64 on every node (node r holds
// r * 1000003 + i at element i); fails the test on a wrong element.
void checked_allreduce(SimRig& rig, uint64_t count, const char* algo, const std::string& what) {
  const uint32_t n = rig.node_count();
  std::vector<std::vector<int64_t>> bufs(n);
  for (uint32_t r = 0; r < n; ++r) {
    bufs[r].resize(count);
    for (uint64_t i = 0; i < count; ++i) bufs[r][i] = static_cast<int64_t>(r) * 1000003 + static_cast<int64_t>(i);
  }
  auto st = run_coll(rig, world_comms(rig), [&](size_t r) { return allreduce_i64(bufs[r]); }, algo);
  const int64_t ranks = static_cast<int64_t>(n) * (n - 1) / 2 * 1000003;
  for (uint32_t r = 0; r < n; ++r) {
    CHECK_TRUE_TEXT(st[r].is_ok(), (what + ": " + st[r].to_string()).c_str());
    for (uint64_t i = 0; i < count; ++i) {
      const int64_t want = ranks + static_cast<int64_t>(n) * static_cast<int64_t>(i);
      if (bufs[r][i] != want)
        FAIL((what + ": node " + std::to_string(r) + " element " + std::to_string(i) + " is " +
              std::to_string(bufs[r][i]) + ", expected " + std::to_string(want))
                 .c_str());
    }
  }
}

}  // namespace

TEST_GROUP(DataPath){};

// 2x1x1: a node's x+ and x- ports are two cables to its one neighbour. A
// ring allreduce (point-to-point messages) moves data over both, both ways:
// each port sends and receives at least a third of the node's data frames.
// 2x2x2: every dimension is such a pair; cube400 keeps all six cables of
// every node busy both ways.
TEST(DataPath, BothCablesToOneNeighbourCarryData) {
  for (const char* dims : {"2x1x1", "2x2x2"}) {
    LogCapture log;
    auto rig = booted_rig(dims);
    CHECK_TRUE(rig != nullptr);
    std::vector<std::vector<uint64_t>> sent0(rig->node_count()), got0(rig->node_count());
    for (uint32_t r = 0; r < rig->node_count(); ++r)
      for (uint16_t p = 0; p < rig->node(r).net().port_count(); ++p) {
        sent0[r].push_back(rig->node(r).net().link(p).counters().data_sent);
        got0[r].push_back(rig->node(r).net().link(p).counters().data_delivered);
      }
    // 2x1x1: a ring; 2x2x2: seed 001's cube400, whose every phase uses the
    // three cube edges of every node both ways.
    const bool pair = std::string(dims) == "2x1x1";
    const char* algo = pair ? "ring" : "cube400";
    checked_allreduce(*rig, 1 << 16, algo, std::string(dims) + " " + algo);
    for (uint32_t r = 0; r < rig->node_count(); ++r) {
      const NetStack& net = rig->node(r).net();
      uint64_t sent = 0, got = 0;
      for (uint16_t p = 0; p < net.port_count(); ++p) {
        sent += net.link(p).counters().data_sent - sent0[r][p];
        got += net.link(p).counters().data_delivered - got0[r][p];
      }
      CHECK(sent > 0 && got > 0);
      // 2x1x1: the x+ and x- cables to the one neighbour each carry at
      // least a third of the node's data frames, both ways. 2x2x2: every
      // one of the six cables carries data both ways.
      for (int d = 0; d < kNumDirs; ++d) {
        const int p = net.port_of(static_cast<Dir>(d));
        if (p < 0) continue;
        const uint64_t s = net.link(static_cast<uint16_t>(p)).counters().data_sent - sent0[r][p];
        const uint64_t g = net.link(static_cast<uint16_t>(p)).counters().data_delivered - got0[r][p];
        const std::string at = std::string(dims) + " node " + std::to_string(r) + " " +
                               dir_name(static_cast<Dir>(d)) + ": sent " + std::to_string(s) + " of " +
                               std::to_string(sent) + ", received " + std::to_string(g) + " of " + std::to_string(got);
        CHECK_TEXT(s > 0 && g > 0, at.c_str());
        if (pair) CHECK_TEXT(3 * s >= sent && 3 * g >= got, at.c_str());
      }
    }
  }
}

// Corrupted, duplicated, dropped and reordered frames under a 256 KiB
// allreduce whose segments land straight in the user's buffer: every
// element right on every node, and the fabric did do all four.
TEST(DataPath, FaultsNeverReachTheUserBuffer) {
  LogCapture log;
  auto rig = booted_rig("2x2x2", "drop=0.02,corrupt=0.05,dup=0.05,reorder=0.05", 7);
  CHECK_TRUE(rig != nullptr);
  for (const char* algo : {"ring", "recursive-doubling", "rabenseifner"})
    checked_allreduce(*rig, 1 << 15, algo, std::string("faulty 2x2x2 ") + algo);
  uint64_t crc = 0, dups = 0, segs = 0, bad = 0;
  for (uint32_t r = 0; r < rig->node_count(); ++r) {
    const Node& node = rig->node(r);
    for (uint16_t p = 0; p < node.net().port_count(); ++p) {
      crc += node.net().link(p).counters().rx_crc_errors;
      dups += node.net().link(p).counters().duplicates;
    }
    segs += node.messenger().counters().segs_received;
    bad += node.messenger().counters().bad_segments;
  }
  CHECK(crc > 0);    // corrupted frames arrived and were caught by the link
  CHECK(dups > 0);   // duplicates arrived and were dropped by the link
  CHECK(segs > 0);   // the data did go through the message layer
  LONGS_EQUAL(0, bad);  // nothing malformed got past the link to it
}
