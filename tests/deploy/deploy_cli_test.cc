// The deployment's programs from the outside: toroid-topo (check, gen,
// personality) and how toroid-node --topology finds out who it is (rank from
// --rank, Slurm's variables or PMIx; the job's size; this host) and refuses a
// bad topology before it opens anything.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <string>

#include "tests/host/run_cmd.h"

#include <CppUTest/TestHarness.h>

using testutil::env_bin;
using testutil::Run;
using testutil::run_cmd;

namespace {

std::string host_name() {
  char b[HOST_NAME_MAX + 1] = {};
  gethostname(b, sizeof b - 1);
  return b;
}

struct TopoFiles {
  testutil::TempDir tmp;
  std::string dir;
  void make() {
    tmp.make("toroid-deploy-test");
    dir = tmp.path;
  }
  void clean() { tmp.clean(); }
  // A topology written by toroid-topo gen (ARGS), then edited (from -> to).
  std::string gen(const std::string& name, const std::string& args, const std::string& from = "",
                  const std::string& to = "") {
    const std::string path = dir + "/" + name;
    Run r = run_cmd(env_bin("TOROID_TOPO"), "gen " + args + " -o " + path, 20);
    LONGS_EQUAL_TEXT(0, r.status, r.out.c_str());
    if (!from.empty()) {
      std::ifstream in(path);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto at = text.find(from);
      CHECK_TEXT(at != std::string::npos, text.c_str());
      text.replace(at, from.size(), to);
      std::ofstream(path) << text;
    }
    return path;
  }
};

}  // namespace

TEST_GROUP(DeployCli) {
  TopoFiles f;
  void setup() override { f.make(); }
  void teardown() override { f.clean(); }
};

TEST(DeployCli, CheckPrintsThePlanOrEveryProblem) {
  const std::string good = f.gen("good", "--dims 2x2x2 --driver af_xdp --partition p1 --hosts " + host_name());
  Run r = run_cmd(env_bin("TOROID_TOPO"), "check " + good, 20);
  LONGS_EQUAL_TEXT(0, r.status, r.out.c_str());
  CHECK_TEXT(r.has("partition p1: 2x2x2 torus, 8 nodes on 1 host, 24 cables"), r.out.c_str());
  CHECK_TEXT(r.has("topology " + good + ": OK"), r.out.c_str());
  const std::string bad = f.gen("bad", "--dims 2x2x2 --driver af_xdp --partition p1", "coord=1,1,1", "coord=0,1,1");
  r = run_cmd(env_bin("TOROID_TOPO"), "check " + bad, 20);
  LONGS_EQUAL_TEXT(1, r.status, r.out.c_str());
  CHECK_TEXT(r.has("duplicate coordinate 0,1,1: node 7 has it, and node 6 (line "), r.out.c_str());
  CHECK_TEXT(r.has("no node has coordinate 1,1,1"), r.out.c_str());
  r = run_cmd(env_bin("TOROID_TOPO"), "check /nonexistent/topo", 20);
  LONGS_EQUAL_TEXT(2, r.status, r.out.c_str());
  CHECK_TEXT(r.has("cannot open '/nonexistent/topo'"), r.out.c_str());
  r = run_cmd(env_bin("TOROID_TOPO"), "gen --dims 2x1x1 --driver memif --hosts a,b --socket-dir /tmp", 20);
  LONGS_EQUAL_TEXT(2, r.status, r.out.c_str());
  CHECK_TEXT(r.has("memif links join processes of one host, but the hosts differ (a, b)"), r.out.c_str());
  r = run_cmd(env_bin("TOROID_TOPO"), "--help", 20);
  LONGS_EQUAL(0, r.status);
  CHECK(r.has("usage: toroid-topo check FILE"));
}

TEST(DeployCli, PersonalityOfARank) {
  const std::string t = f.gen("t", "--dims 2x2x1 --driver af_xdp --partition p2 --job selftest --hosts a,b,c,d");
  Run r = run_cmd(env_bin("TOROID_TOPO"), "personality " + t + " --rank 2", 20);
  LONGS_EQUAL_TEXT(0, r.status, r.out.c_str());
  CHECK_TEXT(r.has("# rank 2 of " + t + ", on host c"), r.out.c_str());
  CHECK_TEXT(r.has("coord = 0,1,0"), r.out.c_str());
  CHECK_TEXT(r.has("port = port2 y+ af_xdp iface=t0.1.0y+,queue=0 cable=t0.1.0y"), r.out.c_str());
}

// A node refuses a topology with a duplicate coordinate before it opens a
// port, listing every problem, exit 2.
TEST(DeployCli, NodeRefusesADuplicateCoordinateNamingIt) {
  const std::string bad = f.gen("bad", "--dims 2x2x1 --driver af_xdp --partition p3 --job selftest", "coord=1,1,0",
                                "coord=1,0,0");
  Run r = run_cmd(env_bin("TOROID_NODE"), "--topology " + bad + " --rank 0", 20);
  LONGS_EQUAL_TEXT(2, r.status, r.out.c_str());
  CHECK_TEXT(r.has("toroid-node: topology " + bad + " is refused (2 problems):"), r.out.c_str());
  CHECK_TEXT(r.has("duplicate coordinate 1,0,0: node 3 has it, and node 1 (line "), r.out.c_str());
  CHECK(!r.has("up node="));  // it never started
}

TEST(DeployCli, NodeTakesItsRankFromSlurmAndChecksTheJobAndHost) {
  // A topology on this host whose ports cannot open (no such interfaces):
  // the node gets as far as its ports, which shows it found its rank.
  const std::string t =
      f.gen("t", "--dims 2x1x1 --driver af_packet --partition p4 --job selftest --hosts " + host_name());
  Run r = run_cmd(env_bin("TOROID_NODE"), "--topology " + t + " --linger 0s", 30, -1,
                  {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}});
  LONGS_EQUAL_TEXT(1, r.status, r.out.c_str());
  CHECK_TEXT(r.has("up node=1,0,0 pid="), r.out.c_str());
  CHECK_TEXT(r.has("rank 1 (from SLURM_PROCID) on host " + host_name()), r.out.c_str());
  CHECK_TEXT(r.has("verdict node=1,0,0 FAIL"), r.out.c_str());
  // The job's size must be the topology's.
  r = run_cmd(env_bin("TOROID_NODE"), "--topology " + t, 20, -1, {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}});
  LONGS_EQUAL_TEXT(2, r.status, r.out.c_str());
  CHECK_TEXT(r.has("has 2 nodes, but the job has 4 tasks (SLURM_PROCID): start one task per node (srun -n 2)"),
             r.out.c_str());
  r = run_cmd(env_bin("TOROID_NODE"), "--topology " + t, 20, -1, {{"SLURM_PROCID", "x"}});
  LONGS_EQUAL_TEXT(2, r.status, r.out.c_str());
  CHECK_TEXT(r.has("SLURM_PROCID='x' is not a rank"), r.out.c_str());
  // No rank from anywhere.
  r = run_cmd(env_bin("TOROID_NODE"), "--topology " + t, 20);
  LONGS_EQUAL_TEXT(2, r.status, r.out.c_str());
  CHECK_TEXT(r.has("no rank: give --rank R, or start the node under Slurm"), r.out.c_str());
  // Placed on another host.
  const std::string far = f.gen("far", "--dims 2x1x1 --driver af_packet --partition p4 --job selftest --hosts n-far");
  r = run_cmd(env_bin("TOROID_NODE"), "--topology " + far + " --rank 0", 20);
  LONGS_EQUAL_TEXT(2, r.status, r.out.c_str());
  CHECK_TEXT(r.has("places rank 0 (0,0,0) on host n-far, but this is " + host_name()), r.out.c_str());
  // Flags that would say who the node is twice.
  r = run_cmd(env_bin("TOROID_NODE"), "--topology " + t + " --rank 0 --coord 1,0,0", 20);
  LONGS_EQUAL_TEXT(2, r.status, r.out.c_str());
  CHECK_TEXT(r.has("--coord and --topology both say who this node is"), r.out.c_str());
}
