// Seed 004 C on the sim rig (allreduce `torus-tree`, through Comm::start with
// the algorithm named): reduce on the torus towards the middles, then
// broadcast on the combine tree. Exact results on every node, and no node
// ever combines more than two incoming packets for one chunk. Other types,
// ops and bit-identical floats: tests/sim/torus/torus_coll_test.cc.
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "firmware/jobs/selftest_data.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

// The algorithm registry is a function-local static built on first use; build
// it before any test runs so CppUTest does not count it as a test's leak.
const bool kRegistryBuilt = !algorithms().empty();

void run_torus_tree(const char* dims_s, const char* faults, uint32_t count) {
  LogCapture log;
  SimRig rig(options(dims_s, "train", 5, faults));
  CHECK_TRUE(rig.build().is_ok());
  const SimSummary trained = rig.run();
  LONGS_EQUAL(trained.nodes, trained.passed);
  const Dims dims = parse_dims(dims_s).value();
  const uint32_t n = rig.node_count();
  std::vector<std::vector<int64_t>> bufs(n, std::vector<int64_t>(count));
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t i = 0; i < count; ++i) bufs[r][i] = selftest::input(7, r, i);
    Status st = rig.node(r).comm().start_allreduce_sum_i64(bufs[r].data(), count, "torus-tree");
    CHECK_TRUE_TEXT(st.is_ok(), st.to_string().c_str());
    rig.fabric().wake(r, rig.fabric().now());
  }
  rig.fabric().run(rig.fabric().now() + 200 * kMs);
  for (uint32_t r = 0; r < n; ++r) {
    Status st;
    CHECK_TRUE_TEXT(rig.node(r).comm().test(&st), "operation finished");
    CHECK_TRUE_TEXT(st.is_ok(), st.to_string().c_str());
    for (uint32_t i = 0; i < count; ++i)
      CHECK_EQUAL_TEXT(selftest::expected_sum(7, n, i), bufs[r][i], (std::string(dims_s) + " element").c_str());
    // The property seed 004 C asks for, counted by the algorithm per chunk.
    CHECK(rig.node(r).comm().counters().max_incoming_per_step <= 2);
  }
  // Somebody had to take two streams (every line of length >= 3 has a middle
  // with both neighbours feeding it).
  uint64_t most = 0;
  for (uint32_t r = 0; r < n; ++r) most = std::max<uint64_t>(most, rig.node(r).comm().counters().max_incoming_per_step);
  if (dims.n[0] >= 3 || dims.n[1] >= 3 || dims.n[2] >= 3) LONGS_EQUAL(2, most);
}

}  // namespace

TEST_GROUP(TorusTree){};

TEST(TorusTree, Cube2) { run_torus_tree("2x2x2", "", 1000); }
TEST(TorusTree, Cube4) { run_torus_tree("4x4x4", "", 1000); }
TEST(TorusTree, Mixed8x4x2) { run_torus_tree("8x4x2", "", 300); }
TEST(TorusTree, Line16) { run_torus_tree("1x1x16", "", 300); }
TEST(TorusTree, Odd3x5x7) { run_torus_tree("3x5x7", "", 300); }
TEST(TorusTree, WithFaults) { run_torus_tree("4x4x4", "drop=0.05,corrupt=0.01", 1000); }
