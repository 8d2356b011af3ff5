// The deploy-like rig: every node in its own network namespace, every cable
// a veth pair named after it, links through DPDK's AF_XDP PMD (or
// af_packet), every node booting from the topology file the rig writes. The
// self-test passes; two swapped veths are refused at link training with
// both ends named; and no namespace, veth or node process is left behind.
#include <dirent.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/host/run_cmd.h"

#include <CppUTest/TestHarness.h>

using testutil::env_bin;
using testutil::line_with;
using testutil::processes_mentioning;
using testutil::Run;
using testutil::run_cmd;

namespace {

std::string host_short() {
  char b[256] = {};
  gethostname(b, sizeof b - 1);
  std::string h = b;
  return h;
}

// Namespaces under /run/netns whose name starts with prefix.
int namespaces_named(const std::string& prefix) {
  int n = 0;
  if (DIR* d = opendir("/run/netns")) {
    while (dirent* e = readdir(d)) n += std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0;
    closedir(d);
  }
  return n;
}

struct KernelRig {
  testutil::TempDir tmp;
  std::string dir;
  void make() {
    tmp.make("toroid-kernel-rig");
    dir = tmp.path;
  }
  void clean() { tmp.clean(); }
  Run rig(const std::string& args, double bound_s) {
    Run r = run_cmd(env_bin("TOROID_RIG"), args + " --quiet --run-dir " + dir, bound_s);
    CHECK_FALSE_TEXT(r.overran, ("the rig overran its bound:\n" + r.out).c_str());
    LONGS_EQUAL_TEXT(0, processes_mentioning(dir), ("node processes outlived the rig:\n" + r.out).c_str());
    // "rig: removed 24 veth pairs and 8 of 8 network namespaces (toroid-PID-*)"
    const std::string removed = line_with(r.out, " veth pairs and ");
    CHECK_TEXT(!removed.empty(), r.out.c_str());
    const size_t at = removed.find("(toroid-");
    CHECK_TEXT(at != std::string::npos, removed.c_str());
    const std::string prefix = removed.substr(at + 1, removed.find('*', at) - at - 1);
    LONGS_EQUAL_TEXT(0, namespaces_named(prefix), ("namespaces left behind: " + prefix + "\n" + r.out).c_str());
    return r;
  }
};

void check_selftest(KernelRig& k, const char* driver, const char* dims, int nodes, int ports, int cables) {
  Run r = k.rig(std::string("--dims ") + dims + " --job selftest --driver " + driver, 240);
  LONGS_EQUAL_TEXT(0, r.status, r.out.c_str());
  const std::string all = std::to_string(nodes) + "/" + std::to_string(nodes);
  CHECK_TEXT(r.has("verdict: PASS (" + all + " nodes passed)"), r.out.c_str());
  // Every port really ran on the driver asked for (an af_xdp port that could
  // not be set up would have fallen back to af_packet, and said so).
  CHECK_TEXT(r.has("ports: " + std::to_string(ports) + " on " + driver + "\n"), r.out.c_str());
  CHECK_TEXT(r.has("rig: removed " + std::to_string(cables) + " veth pairs and " + std::to_string(nodes) + " of " +
                   std::to_string(nodes) + " network namespaces"),
             r.out.c_str());
  const std::string cases = line_with(r.out, "cases: ");
  CHECK_TEXT(cases.find(" passed on every node") != std::string::npos, r.out.c_str());
  std::printf("\n  %s %s selftest: %.2f s wall; %s\n", driver, dims, r.wall_s, cases.c_str());
}

}  // namespace

TEST_GROUP(DeployRigAfXdp) {
  KernelRig k;
  void setup() override { k.make(); }
  void teardown() override { k.clean(); }
};

TEST(DeployRigAfXdp, SelftestPassesOn2x2x2) { check_selftest(k, "af_xdp", "2x2x2", 8, 48, 24); }

// Node 0,0,0's x+ and y+ veths swapped: its x+ port meets 0,1,0's y- port.
// Both ends of each wrong cable are named, by coordinates and interfaces.
TEST(DeployRigAfXdp, SwappedVethsAreRefusedAtTrainingNamingBothEnds) {
  Run r = k.rig("--dims 2x2x2 --job selftest --driver af_xdp --swap-veths 0,0,0:x+,y+ --train-timeout 3s "
                "--fail-grace 4s",
                120);
  LONGS_EQUAL_TEXT(1, r.status, r.out.c_str());
  const std::string h = host_short();
  CHECK_TEXT(r.has("rig: swapped the veths of node 0,0,0 ports x+ and y+ (t0.0.0x+ <-> t0.0.0y+)"), r.out.c_str());
  // Each bad port is logged by name (the node's verdict carries the first).
  CHECK_TEXT(r.has("error: link training: node 0,0,0 port port0 (x+) is miswired: expected neighbour "
                   "1,0,0 on its x- port, got a hello from 0,1,0 y-; this port is host " + h +
                   ", af_xdp t0.0.0x+ q0, cable t0.0.0x; the topology cables it to 1,0,0 x- (host " + h +
                   ", af_xdp t0.0.0x- q0, cable t0.0.0x), but the hello came from 0,1,0 y- (host " + h +
                   ", af_xdp t0.0.0y- q0, cable t0.0.0y)"),
             r.out.c_str());
  // The far end of that cable names it too.
  CHECK_TEXT(r.has("error: link training: node 0,1,0 port port3 (y-) is miswired: expected neighbour "
                   "0,0,0 on its y+ port, got a hello from 0,0,0 x+"),
             r.out.c_str());
  CHECK_TEXT(r.has("error: link training: node 1,0,0 port port1 (x-) is miswired"), r.out.c_str());
  CHECK_TEXT(r.has("node 0,0,0: FAIL: link training: node 0,0,0 port"), r.out.c_str());
}

TEST_GROUP(DeployRigAfPacket) {
  KernelRig k;
  void setup() override { k.make(); }
  void teardown() override { k.clean(); }
};

TEST(DeployRigAfPacket, SelftestPassesOn2x2x1) { check_selftest(k, "af_packet", "2x2x1", 4, 16, 8); }

// A rig killed outright leaves its namespaces; the next rig removes them by
// name (their pid is gone: 4194305 is above any pid_max).
TEST(DeployRigAfPacket, NamespacesOfAGoneRigAreRemoved) {
  const std::string stale = "toroid-4194305-0-0-0";
  LONGS_EQUAL(0, std::system(("ip netns add " + stale).c_str()));
  LONGS_EQUAL(1, namespaces_named(stale));
  Run r = k.rig("--dims 2x1x1 --job train --driver af_packet", 60);
  const bool gone = namespaces_named(stale) == 0;
  if (!gone) (void)std::system(("ip netns del " + stale).c_str());
  LONGS_EQUAL_TEXT(0, r.status, r.out.c_str());
  CHECK_TEXT(r.has("rig: removed network namespace " + stale + " left by a rig that is gone"), r.out.c_str());
  CHECK_TEXT(gone, r.out.c_str());
}
