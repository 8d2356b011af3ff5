// The seed group's algorithms on the sim rig, through the communicator:
//   xor-inplace (seed 000): the message layer never holds more than m blocks
//     (Messenger::counters().peak_held_bytes), the result lands in place, for
//     m = 1, 2, n-1 on 2x2x2 and 4x2x1;
//   random-order (seed 003): receives complete first come: with rank 0 started
//     300 us late, every other rank takes rank 0's block last;
//   cube300 / cube400 (seed 001): exact int64 sums, bit-identical doubles on
//     every rank, 8 / 6 steps, "not applicable" off 2x2x2;
// and each of them again under 5% drop and 1% corruption.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/rng.h"
#include "collectives/comm.h"
#include "collectives/plan_runner.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

// coll_helpers.h uses CppUTest's macros without including CppUTest, so it
// comes after it; everything it includes is already included above.
#include "tests/sim/coll_helpers.h"

using namespace toroid;
using namespace toroid::test;

namespace {

constexpr const char* kFaults = "drop=0.05,corrupt=0.01";

// The algorithm registry is a function-local static built on first use; build
// it before any test runs so CppUTest does not count it as a test's leak.
const bool kRegistryBuilt = !algorithms().empty();

// Element e of the block rank `src` sends to rank `dst`.
int64_t a2a_value(uint32_t src, uint32_t dst, uint64_t e) {
  return static_cast<int64_t>(mix64((uint64_t{src} << 40) ^ (uint64_t{dst} << 20) ^ e));
}

std::vector<std::vector<int64_t>> a2a_inputs(uint32_t n, uint64_t count) {
  std::vector<std::vector<int64_t>> v(n, std::vector<int64_t>(n * count));
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t d = 0; d < n; ++d)
      for (uint64_t e = 0; e < count; ++e) v[r][d * count + e] = a2a_value(r, d, e);
  return v;
}

void check_a2a(const std::vector<std::vector<int64_t>>& out, uint32_t n, uint64_t count, const std::string& what) {
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t s = 0; s < n; ++s)
      for (uint64_t e = 0; e < count; ++e)
        if (out[r][s * count + e] != a2a_value(s, r, e))
          FAIL((what + ": rank " + std::to_string(r) + " block " + std::to_string(s) + " element " +
                std::to_string(e) + " wrong")
                   .c_str());
}

CollArgs a2a_args(std::vector<int64_t>& buf, uint64_t count, uint32_t m = 0, uint64_t seed = 0) {
  CollArgs a;
  a.kind = CollKind::kAlltoall;
  a.dtype = DType::kInt64;
  a.send = nullptr;  // in place
  a.recv = buf.data();
  a.count = count;
  a.buffer_blocks = m;
  a.seed = seed;
  return a;
}

void check_all_ok(const std::vector<Status>& st, const std::string& what) {
  for (size_t i = 0; i < st.size(); ++i)
    CHECK_TRUE_TEXT(st[i].is_ok(), (what + ": rank " + std::to_string(i) + ": " + st[i].to_string()).c_str());
}

// Lets `ns` of virtual time pass, stepping every node. (drive_until cannot
// wait for time alone: SimFabric::run leaves the clock at the last event it
// ran, so with every node idle the clock never moves.) After a slice has run
// every event due in it, moving the clock to the slice's end is exact.
void let_time_pass(SimRig& rig, uint64_t ns) {
  const uint64_t end = rig.fabric().now() + ns;
  while (rig.fabric().now() < end) {
    const uint64_t slice_end = std::min(end, rig.fabric().now() + 50 * kUs);
    for (uint32_t r = 0; r < rig.node_count(); ++r) rig.fabric().wake(r, rig.fabric().now());
    rig.fabric().run(slice_end);
    rig.fabric().clock().set(slice_end);
  }
}

PlanAlgo& plan_algo(Comm& c) {
  auto* p = dynamic_cast<PlanAlgo*>(c.active_algo());
  CHECK_TRUE(p != nullptr);
  return *p;
}

// xor-inplace with m blocks: in place, right, and the message layer held at
// most m blocks of it on every node at any time.
void run_xor(const char* dims, uint32_t m, const char* faults = "") {
  LogCapture log;
  auto rig = booted_rig(dims, faults, 3);
  const uint32_t n = rig->node_count();
  const uint64_t count = 300;  // 2400-byte blocks: two segments each
  const uint64_t block_bytes = count * sizeof(int64_t);
  auto bufs = a2a_inputs(n, count);
  auto comms = world_comms(*rig);
  for (Comm* c : comms) c->msgr().reset_peak();
  const std::string what = std::string("xor-inplace ") + dims + " m=" + std::to_string(m);
  auto st = run_coll(*rig, comms, [&](size_t i) { return a2a_args(bufs[i], count, m); }, "xor-inplace");
  check_all_ok(st, what);
  check_a2a(bufs, n, count, what);  // bufs were the input: the result is in place
  uint64_t most = 0;
  for (uint32_t r = 0; r < n; ++r) {
    const uint64_t peak = comms[r]->msgr().counters().peak_held_bytes;
    CHECK_TEXT(peak <= m * block_bytes, (what + ": rank " + std::to_string(r) + " held " + std::to_string(peak) +
                                         " bytes, more than m blocks")
                                            .c_str());
    most = std::max(most, peak);
    LONGS_EQUAL(0, comms[r]->msgr().counters().held_bytes);
  }
  // The plan keeps no buffer of its own: each block lands in the slot whose
  // content it has just sent (the receive is gated by that send), so the
  // only blocks waiting anywhere are the frames the message layer holds,
  // never more than m blocks, and nothing is copied aside.
  for (uint32_t r = 0; r < n; ++r) {
    UNSIGNED_LONGLONGS_EQUAL(0, plan_algo(*comms[r]).plan().tmp_elems);
    UNSIGNED_LONGLONGS_EQUAL(0, comms[r]->msgr().counters().spilled);
  }
  CHECK(most <= m * block_bytes);
}

template <typename T>
std::vector<std::vector<T>> allreduce_on(SimRig& rig, const std::vector<std::vector<T>>& in, DType t,
                                         const std::string& algo, std::vector<Status>* st) {
  auto out = in;
  auto comms = world_comms(rig);
  *st = run_coll(rig, comms,
                 [&](size_t i) {
                   CollArgs a;
                   a.kind = CollKind::kAllreduce;
                   a.dtype = t;
                   a.op = ROp::kSum;
                   a.send = nullptr;
                   a.recv = out[i].data();
                   a.count = out[i].size();
                   return a;
                 },
                 algo);
  return out;
}

void run_cube(const char* algo, const char* faults, uint32_t steps) {
  LogCapture log;
  auto rig = booted_rig("2x2x2", faults, 4);
  Rng rng(21);
  const uint64_t count = 1001;
  std::vector<std::vector<int64_t>> ints(8, std::vector<int64_t>(count));
  std::vector<std::vector<double>> dbls(8, std::vector<double>(count));
  std::vector<uint64_t> want(count, 0);
  for (uint32_t r = 0; r < 8; ++r)
    for (uint64_t i = 0; i < count; ++i) {
      ints[r][i] = static_cast<int64_t>(rng.next());
      want[i] += static_cast<uint64_t>(ints[r][i]);
      dbls[r][i] = std::ldexp(rng.uniform() - 0.5, static_cast<int>(rng.below(60)) - 30);
    }
  std::vector<Status> st;
  auto got = allreduce_on(*rig, ints, DType::kInt64, algo, &st);
  check_all_ok(st, algo);
  for (uint32_t r = 0; r < 8; ++r) {
    for (uint64_t i = 0; i < count; ++i) CHECK_EQUAL(static_cast<int64_t>(want[i]), got[r][i]);
    LONGS_EQUAL(steps, plan_algo(rig->node(r).comm()).steps_run());
    STRCMP_EQUAL(algo, rig->node(r).comm().algo().c_str());
  }
  auto gd = allreduce_on(*rig, dbls, DType::kDouble, algo, &st);
  check_all_ok(st, algo);
  for (uint32_t r = 1; r < 8; ++r) CHECK_TEXT(std::memcmp(gd[r].data(), gd[0].data(), count * 8) == 0, algo);
  for (uint64_t i = 0; i < count; ++i) {
    double mag = 0, ref = 0;
    for (uint32_t r = 0; r < 8; ++r) {
      ref += dbls[r][i];
      mag += std::fabs(dbls[r][i]);
    }
    CHECK(std::fabs(gd[0][i] - ref) <= 16 * 0x1p-52 * mag);
  }
}

// random-order with rank 0 starting `late_ns` after the others: every other
// receiver takes rank 0's block last (a fixed-order receiver would wait for
// it first, holding up the rest), and the results are right.
void run_random_order(const char* dims, const char* faults, uint64_t late_ns) {
  LogCapture log;
  auto rig = booted_rig(dims, faults, 6);
  const uint32_t n = rig->node_count();
  const uint64_t count = 64;
  auto bufs = a2a_inputs(n, count);
  auto comms = world_comms(*rig);
  for (uint32_t r = 1; r < n; ++r) {
    Status s = comms[r]->start(a2a_args(bufs[r], count, 0, 77), "random-order");
    CHECK_TRUE_TEXT(s.is_ok(), s.to_string().c_str());
  }
  let_time_pass(*rig, late_ns);
  // Before rank 0 even starts, every other rank has taken the n-2 blocks that
  // are there: it does not wait for the missing one first.
  for (uint32_t r = 1; r < n; ++r) {
    CHECK_TRUE(comms[r]->in_flight());
    LONGS_EQUAL_TEXT(n - 2, plan_algo(*comms[r]).arrivals().size(), ("rank " + std::to_string(r)).c_str());
  }
  Status s0 = comms[0]->start(a2a_args(bufs[0], count, 0, 77), "random-order");
  CHECK_TRUE_TEXT(s0.is_ok(), s0.to_string().c_str());
  auto all_done = [&] {
    for (Comm* c : comms) {
      Status st;
      if (!c->test(&st)) return false;
    }
    return true;
  };
  CHECK_TRUE(drive_until(*rig, all_done));
  for (uint32_t r = 0; r < n; ++r) {
    Status st;
    CHECK_TRUE(comms[r]->test(&st));
    CHECK_TRUE_TEXT(st.is_ok(), st.to_string().c_str());
    const auto& arr = plan_algo(*comms[r]).arrivals();
    LONGS_EQUAL(n - 1, arr.size());
    std::vector<bool> seen(n, false);
    for (uint32_t p : arr) {
      CHECK(p != r && p < n && !seen[p]);
      seen[p] = true;
    }
    if (r != 0) LONGS_EQUAL_TEXT(0, arr.back(), ("rank " + std::to_string(r) + " took rank 0's block before "
                                                 "others that arrived earlier").c_str());
  }
  check_a2a(bufs, n, count, std::string("random-order ") + dims);
}

}  // namespace

TEST_GROUP(SeedXorInplace){};

TEST(SeedXorInplace, Cube2OneBlock) { run_xor("2x2x2", 1); }
TEST(SeedXorInplace, Cube2TwoBlocks) { run_xor("2x2x2", 2); }
TEST(SeedXorInplace, Cube2AllBlocks) { run_xor("2x2x2", 7); }
TEST(SeedXorInplace, Mesh4x2OneBlock) { run_xor("4x2x1", 1); }
TEST(SeedXorInplace, Mesh4x2TwoBlocks) { run_xor("4x2x1", 2); }
TEST(SeedXorInplace, Mesh4x2AllBlocks) { run_xor("4x2x1", 7); }
TEST(SeedXorInplace, NotAPowerOfTwo) {
  run_xor("3x2x1", 1);
  run_xor("3x2x1", 2);
  run_xor("3x3x1", 4);
}
TEST(SeedXorInplace, WithFaults) { run_xor("2x2x2", 2, kFaults); }

TEST(SeedXorInplace, BufferBlocksOutOfRangeIsAnError) {
  LogCapture log;
  auto rig = booted_rig("2x2x1");
  std::vector<int64_t> buf(4 * 3);
  Status st = rig->node(0).comm().start(a2a_args(buf, 3, 4), "xor-inplace");
  CHECK_FALSE(st.is_ok());
  STRCMP_CONTAINS("buffer_blocks 4 is out of range for 4 nodes", st.message().c_str());
}

TEST_GROUP(SeedRandomOrder){};

TEST(SeedRandomOrder, LateSenderArrivesLast) { run_random_order("2x2x2", "", 300 * kUs); }
TEST(SeedRandomOrder, LateSenderArrivesLast4x2) { run_random_order("4x2x1", "", 300 * kUs); }
TEST(SeedRandomOrder, WithFaults) { run_random_order("2x2x2", kFaults, 300 * kUs); }

TEST_GROUP(SeedCube){};

TEST(SeedCube, Method300) { run_cube("cube300", "", 8); }
TEST(SeedCube, Method400) { run_cube("cube400", "", 6); }
TEST(SeedCube, Method300WithFaults) { run_cube("cube300", kFaults, 8); }
TEST(SeedCube, Method400WithFaults) { run_cube("cube400", kFaults, 6); }

TEST(SeedCube, NotApplicableOffTheCube) {
  LogCapture log;
  auto rig = booted_rig("4x2x1");
  std::vector<int64_t> buf(24, 1);
  CollArgs a;
  a.kind = CollKind::kAllreduce;
  a.recv = buf.data();
  a.count = buf.size();
  Status st = rig->node(0).comm().start(a, "cube400");
  CHECK_FALSE(st.is_ok());
  STRCMP_CONTAINS("not applicable: needs a 2x2x2 communicator (this one is 4x2x1)", st.message().c_str());
}
