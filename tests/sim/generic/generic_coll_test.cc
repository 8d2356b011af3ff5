// The generic group's algorithms on the sim rig, through the communicator and
// the plan runner: every one of the 14 algorithms on 2x2x2 and 3x3x3, with
// and without the fault plan "drop=0.05,corrupt=0.01", at counts 0, 1, 37
// (odd) and 600 (multi-segment messages), in place and not, with several
// roots: int64 SUM results exact against values computed directly, the
// number of steps the runner took equal to the schedule's formula, double
// SUM allreduces bit-identical on every node (also in fixed-order mode), and
// a count mismatch between nodes reported as an error, not a hang.
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
#include "collectives/schedule/generic.h"
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
// it before main so CppUTest's leak check does not count it against a test.
const bool kRegistryBuilt = !algorithms().empty();
constexpr uint64_t kLimit = 20 * kSec;  // virtual time per operation (faults retransmit)

struct Case {
  CollKind kind;
  const char* algo;
};
const Case kCases[] = {
    {CollKind::kAllreduce, "ring"},
    {CollKind::kAllreduce, "recursive-doubling"},
    {CollKind::kAllreduce, "rabenseifner"},
    {CollKind::kReduceScatter, "ring"},
    {CollKind::kReduceScatter, "recursive-halving"},
    {CollKind::kAllgather, "ring"},
    {CollKind::kAllgather, "recursive-doubling"},
    {CollKind::kBcast, "binomial"},
    {CollKind::kReduce, "binomial"},
    {CollKind::kGather, "binomial"},
    {CollKind::kScatter, "binomial"},
    {CollKind::kBarrier, "dissemination"},
    {CollKind::kAlltoall, "pairwise"},
    {CollKind::kAlltoall, "bruck"},
};

int64_t val(uint32_t rank, uint64_t i) { return static_cast<int64_t>(mix64((uint64_t{rank} << 44) ^ (i + 1))); }

void check_all_ok(const std::vector<Status>& st, const std::string& what) {
  for (size_t i = 0; i < st.size(); ++i)
    CHECK_TRUE_TEXT(st[i].is_ok(), (what + ": rank " + std::to_string(i) + ": " + st[i].to_string()).c_str());
}

// Steps the runner must take at `rank` (the formulas of the schedules' header comments).
// The ring allreduce's steps at `rank` that move data: a step sends one
// block of each half and receives one (reduce-scatter: clockwise sends
// block r-s and takes r-s-1, counter-clockwise r+s and r+s+1; allgather:
// r+1-s and r-s, r-1+s and r+s), and a half of h elements has n blocks of
// which only the first h hold data when h < n. Empty blocks are not sent.
uint32_t ring_allreduce_steps(uint32_t n, uint32_t rank, uint64_t count) {
  const uint64_t h = (count + 1) / 2, g = count - h;
  const int64_t r = rank, nn = n;
  auto holds = [&](uint64_t half, int64_t j) { return half >= n || static_cast<uint64_t>(((j % nn) + nn) % nn) < half; };
  uint32_t steps = 0;
  for (int64_t s = 0; s + 1 < nn; ++s) {
    steps += holds(h, r - s) || holds(h, r - s - 1) || holds(g, r + s) || holds(g, r + s + 1);
    steps += holds(h, r + 1 - s) || holds(h, r - s) || holds(g, r - 1 + s) || holds(g, r + s);
  }
  return steps;
}

uint32_t expected_steps(const Case& c, uint32_t n, uint32_t rank, uint32_t root, uint64_t count) {
  const schedule::Fold f(n);
  const uint32_t lg = schedule::ceil_log2(f.p);
  auto folded = [&](uint32_t acting) { return f.idle(rank) ? 2 : f.absorbs(rank) ? acting + 2 : acting; };
  const std::string a = c.algo;
  switch (c.kind) {
    case CollKind::kAllreduce:
      if (a == "ring") return ring_allreduce_steps(n, rank, count);
      return a == "rabenseifner" ? folded(2 * lg) : folded(lg);
    // (ring: a count of 0 per block sends nothing)
    case CollKind::kReduceScatter: return a == "ring" ? (count ? n - 1 : 0) : n == 1 ? 0 : folded(lg);
    case CollKind::kAllgather: return a == "ring" ? (count ? n - 1 : 0) : folded(lg);
    case CollKind::kAlltoall: return a == "pairwise" ? n - 1 : schedule::ceil_log2(n);
    case CollKind::kBarrier: return schedule::ceil_log2(n);
    default: break;
  }
  // binomial trees: the root takes ceil(log2 n) steps; others vary
  return rank == root ? schedule::ceil_log2(n) : UINT32_MAX;
}

// One operation of `c` on every node: buffers laid out as coll.h says,
// results checked against values computed here, steps checked.
void run_case(SimRig& rig, const Case& c, uint64_t count, bool in_place, uint32_t root) {
  const uint32_t n = rig.node_count();
  const std::string what = std::string(coll_kind_name(c.kind)) + " " + c.algo + " n=" + std::to_string(n) +
                           " count=" + std::to_string(count) + (in_place ? " in place" : "") +
                           " root=" + std::to_string(root);
  auto comms = world_comms(rig);
  const uint64_t nc = uint64_t{n} * count;
  std::vector<std::vector<int64_t>> send(n), recv(n);
  std::vector<int64_t> sum(nc, 0);  // reductions: element-wise sums of the n*count inputs
  for (uint32_t r = 0; r < n; ++r)
    for (uint64_t i = 0; i < nc; ++i) sum[i] = static_cast<int64_t>(static_cast<uint64_t>(sum[i]) + val(r, i));
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t me = comms[r]->rank();
    auto in = [&](uint64_t len) {
      std::vector<int64_t> v(len);
      for (uint64_t i = 0; i < len; ++i) v[i] = val(me, i);
      return v;
    };
    switch (c.kind) {
      case CollKind::kAllreduce:
      case CollKind::kReduce:
        send[r] = in(count);
        recv[r].assign(count, -1);
        if (in_place) recv[r] = send[r];
        break;
      case CollKind::kBcast: recv[r] = me == root ? in(count) : std::vector<int64_t>(count, -1); break;
      case CollKind::kGather:
        send[r] = in(count);
        recv[r].assign(me == root ? nc : count, -1);
        if (in_place)
          std::copy(send[r].begin(), send[r].end(), recv[r].begin() + (me == root ? uint64_t{root} * count : 0));
        break;
      case CollKind::kScatter:
        send[r] = in(nc);
        recv[r].assign(count, -1);
        if (in_place && me == root) recv[r] = send[r];
        break;
      case CollKind::kAllgather:
        send[r] = in(count);
        recv[r].assign(nc, -1);
        if (in_place) std::copy(send[r].begin(), send[r].end(), recv[r].begin() + uint64_t{me} * count);
        break;
      case CollKind::kReduceScatter:
        send[r] = in(nc);
        recv[r].assign(count, -1);
        if (in_place) recv[r] = send[r];
        break;
      case CollKind::kAlltoall:
        send[r] = in(nc);
        recv[r].assign(nc, -1);
        if (in_place) recv[r] = send[r];
        break;
      case CollKind::kBarrier: break;
    }
  }
  for (Comm* cm : comms) cm->msgr().reset_peak();
  auto st = run_coll(
      rig, comms,
      [&](size_t i) {
        CollArgs a;
        a.kind = c.kind;
        a.dtype = DType::kInt64;
        a.op = ROp::kSum;
        a.send = in_place || send[i].empty() ? nullptr : send[i].data();
        a.recv = recv[i].empty() ? nullptr : recv[i].data();
        a.count = count;
        a.root = root;
        return a;
      },
      c.algo, kLimit);
  check_all_ok(st, what);
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t me = comms[r]->rank();
    STRCMP_EQUAL_TEXT(c.algo, comms[r]->algo().c_str(), what.c_str());
    auto* pa = dynamic_cast<PlanAlgo*>(comms[r]->active_algo());
    CHECK_TRUE_TEXT(pa != nullptr, what.c_str());
    const uint32_t steps = expected_steps(c, n, me, root, count);
    if (steps != UINT32_MAX) LONGS_EQUAL_TEXT(steps, pa->steps_run(), (what + " rank " + std::to_string(me)).c_str());
    const auto& got = recv[r];
    auto expect = [&](uint64_t at, int64_t want, const char* which) {
      if (got[at] != want)
        FAIL((what + ": rank " + std::to_string(me) + " " + which + " element " + std::to_string(at) + " wrong")
                 .c_str());
    };
    switch (c.kind) {
      case CollKind::kAllreduce:
        for (uint64_t i = 0; i < count; ++i) expect(i, sum[i], "sum");
        break;
      case CollKind::kReduce:
        if (me == root)
          for (uint64_t i = 0; i < count; ++i) expect(i, sum[i], "sum");
        break;
      case CollKind::kBcast:
        for (uint64_t i = 0; i < count; ++i) expect(i, val(root, i), "bcast");
        break;
      case CollKind::kGather:
        if (me == root)
          for (uint32_t s = 0; s < n; ++s)
            for (uint64_t i = 0; i < count; ++i) expect(uint64_t{s} * count + i, val(s, i), "gathered");
        break;
      case CollKind::kScatter: {
        const uint64_t at = (in_place && me == root) ? uint64_t{root} * count : 0;
        for (uint64_t i = 0; i < count; ++i) expect(at + i, val(root, uint64_t{me} * count + i), "scattered");
        break;
      }
      case CollKind::kAllgather:
        for (uint32_t s = 0; s < n; ++s)
          for (uint64_t i = 0; i < count; ++i) expect(uint64_t{s} * count + i, val(s, i), "gathered");
        break;
      case CollKind::kReduceScatter:
        for (uint64_t i = 0; i < count; ++i) expect(i, sum[uint64_t{me} * count + i], "block sum");
        break;
      case CollKind::kAlltoall:
        for (uint32_t s = 0; s < n; ++s)
          for (uint64_t i = 0; i < count; ++i)
            expect(uint64_t{s} * count + i, val(s, uint64_t{me} * count + i), "block");
        break;
      case CollKind::kBarrier: break;
    }
  }
}

void run_all(const char* dims, const char* faults, std::vector<uint64_t> counts) {
  LogCapture log;
  auto rig = booted_rig(dims, faults, 11);
  const uint32_t n = rig->node_count();
  const FabricStats before = rig->fabric().stats();
  for (const Case& c : kCases) {
    CHECK_TEXT(find_algo(c.kind, c.algo) != nullptr, c.algo);
    CHECK_TEXT(find_algo(c.kind, c.algo)->fixed_order, c.algo);
    for (size_t k = 0; k < counts.size(); ++k) {
      const bool in_place = k % 2 == 1;
      const uint32_t root = static_cast<uint32_t>((k * 5 + 3) % n);
      run_case(*rig, c, counts[k], in_place, root);
    }
  }
  if (*faults) {  // the fault plan really hit these operations' frames
    const FabricStats& after = rig->fabric().stats();
    CHECK(after.dropped - before.dropped > 20);
    CHECK(after.corrupted - before.corrupted > 2);
  }
}

// Double SUM allreduce: every node ends with the same bits, in fixed-order
// mode too (the selector accepts these algorithms there).
void run_doubles(const char* dims, const char* faults) {
  LogCapture log;
  auto rig = booted_rig(dims, faults, 12);
  const uint32_t n = rig->node_count();
  const uint64_t count = 257;
  Rng rng(5);
  std::vector<std::vector<double>> in(n, std::vector<double>(count));
  for (auto& v : in)
    for (double& x : v) x = std::ldexp(rng.uniform() - 0.5, static_cast<int>(rng.below(60)) - 30);
  for (const char* algo : {"ring", "recursive-doubling", "rabenseifner"})
    for (Repro repro : {Repro::kNone, Repro::kFixedOrder}) {
      auto out = in;
      auto comms = world_comms(*rig);
      auto st = run_coll(
          *rig, comms,
          [&](size_t i) {
            CollArgs a;
            a.kind = CollKind::kAllreduce;
            a.dtype = DType::kDouble;
            a.op = ROp::kSum;
            a.repro = repro;
            a.recv = out[i].data();
            a.count = count;
            return a;
          },
          algo, kLimit);
      const std::string what = std::string("double allreduce ") + algo + " " + dims + " " + repro_name(repro);
      check_all_ok(st, what);
      for (uint32_t r = 1; r < n; ++r)
        CHECK_TEXT(std::memcmp(out[r].data(), out[0].data(), count * 8) == 0, (what + ": bits differ").c_str());
      for (uint64_t i = 0; i < count; ++i) {
        double ref = 0, mag = 0;
        for (uint32_t r = 0; r < n; ++r) {
          ref += in[r][i];
          mag += std::fabs(in[r][i]);
        }
        CHECK_TEXT(std::fabs(out[0][i] - ref) <= 2 * n * 0x1p-52 * mag, what.c_str());
      }
    }
}

}  // namespace

TEST_GROUP(GenericColl){};

TEST(GenericColl, EveryAlgorithmOnCube2) { run_all("2x2x2", "", {0, 1, 37, 600}); }
TEST(GenericColl, EveryAlgorithmOnCube3) { run_all("3x3x3", "", {0, 1, 37, 600}); }
TEST(GenericColl, EveryAlgorithmOnCube2WithFaults) { run_all("2x2x2", kFaults, {1, 37, 600}); }
TEST(GenericColl, EveryAlgorithmOnCube3WithFaults) { run_all("3x3x3", kFaults, {1, 37, 600}); }
// Long messages (256 KiB blocks, many segments, the message layer's flow
// control engaged) through every algorithm.
TEST(GenericColl, EveryAlgorithmWithLongMessages) { run_all("2x2x1", "", {32768}); }
TEST(GenericColl, DoublesBitIdenticalOnCube2) { run_doubles("2x2x2", ""); }
TEST(GenericColl, DoublesBitIdenticalOnCube3WithFaults) { run_doubles("3x3x3", kFaults); }

// A node with a different count fails with a message naming the mismatch,
// instead of hanging or writing out of bounds; the nodes left waiting fail
// at their deadline. (Driven here rather than by run_coll: its drive_until
// does not advance virtual time while the fabric is idle, and here the nodes
// sit idle until their deadline timers fire.)
TEST(GenericColl, CountMismatchIsAnError) {
  LogCapture log;
  auto rig = booted_rig("2x2x1", "", 13);
  auto comms = world_comms(*rig);
  std::vector<std::vector<int64_t>> buf(4, std::vector<int64_t>(40, 1));
  for (size_t i = 0; i < comms.size(); ++i) {
    CollArgs a;
    a.kind = CollKind::kAllreduce;
    a.recv = buf[i].data();
    a.count = i == 2 ? 39 : 40;
    Status s = comms[i]->start(a, "ring");
    CHECK_TRUE_TEXT(s.is_ok(), s.to_string().c_str());
  }
  auto all_done = [&] {
    for (Comm* c : comms) {
      Status st;
      if (!c->test(&st)) return false;
    }
    return true;
  };
  const uint64_t end = rig->fabric().now() + 2 * kSec;
  while (!all_done() && rig->fabric().now() < end) {
    const uint64_t until = rig->fabric().now() + 50 * kUs;
    for (uint32_t r = 0; r < rig->node_count(); ++r) rig->fabric().wake(r, rig->fabric().now());
    rig->fabric().run(until);
    if (rig->fabric().now() < until) rig->fabric().clock().set(until);  // idle: let the clock move on
  }
  CHECK_TRUE(all_done());
  int mismatch = 0, failed = 0;
  for (Comm* c : comms) {
    Status s;
    CHECK_TRUE(c->test(&s));
    failed += !s.is_ok();
    mismatch += s.message().find("mismatched sizes across nodes") != std::string::npos;
  }
  CHECK(mismatch >= 1);
  CHECK(failed >= 2);  // the detecting node, and at least a neighbour that waits for it
}
