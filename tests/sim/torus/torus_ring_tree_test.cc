// The torus group's other collectives and cross-cutting properties on
// trained sim partitions, with and without "drop=0.05,corrupt=0.01":
// - allreduce `torus-ring` (order-free data, every datatype x op, against the
//   serial fold) and `torus-tree` (adversarial data, bit-identical on every
//   node and equal to its middle-reduction order; no node combines more than
//   two incoming packets per chunk) on every shape of the issue, counts 0, 1,
//   odd, several packets and 1 MiB; torus-ring's per-node order shows on
//   floats, so fixed-order mode refuses it.
// - mismatched sizes fail, naming both counts; sub-communicators are refused
//   with the reason; exact mode over each torus allreduce gives the same bits.
// - back-to-back operations of different algorithms, each node starting the
//   next as soon as it finished the previous one (later operations' packets
//   overtake earlier ones in the inboxes).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/rng.h"
#include "collectives/comm.h"
#include "collectives/schedule/torus_middle.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

// These use CppUTest's macros without including CppUTest, so they come after
// it; everything they include is already included above.
#include "tests/sim/coll_helpers.h"
#include "tests/sim/torus/torus_test_util.h"

using namespace toroid;
using namespace toroid::test;
using namespace toroid::test::torus;

namespace {

// The algorithm registry is a function-local static built on first use; build
// it before any test runs so CppUTest does not count it as a test's leak.
const bool kRegistryBuilt = !algorithms().empty();

// ---- torus-ring and torus-tree ----

// Every datatype and op; torus-ring on order-free data against the serial
// fold, torus-tree on adversarial data against its middle-reduction order,
// bit-identical on every node.
void ring_tree_every_type_op(const char* dims_s, const std::string& faults) {
  auto rig = booted_rig(dims_s, faults);
  const uint32_t n = rig->node_count();
  const Dims dims = parse_dims(dims_s).value();
  uint64_t seed = 300;
  for (int ti = 0; ti < kUserDTypes; ++ti) {
    const auto t = static_cast<DType>(ti);
    for (int oi = 0; oi < kROps; ++oi) {
      const auto op = static_cast<ROp>(oi);
      if (!check_rop(t, op)) continue;
      const uint64_t count = oi % 2 ? 5 : 250;
      const Reducer red = make_reducer(t, op);
      const std::string ty = std::string(dims_s) + " " + dtype_name(t) + " " + rop_name(op);
      const auto ein = inputs(n, t, op, Data::kExact, count, ++seed);
      const auto ring = allreduce(*rig, "torus-ring", t, op, count, ein, ti % 2 == 1, ty + " torus-ring");
      const Bytes ring_want = fold(ein, red, count);
      for (uint32_t r = 0; r < n; ++r)
        CHECK_TEXT(ring[r] == ring_want, (ty + " torus-ring node " + std::to_string(r)).c_str());
      const auto ain = inputs(n, t, op, Data::kAdversarial, count, ++seed);
      const auto tree = allreduce(*rig, "torus-tree", t, op, count, ain, ti % 2 == 0, ty + " torus-tree");
      const Bytes tree_want = middle_reference(ain, dims, red, count);
      for (uint32_t r = 0; r < n; ++r)
        CHECK_TEXT(tree[r] == tree_want, (ty + " torus-tree node " + std::to_string(r)).c_str());
    }
  }
  for (uint32_t r = 0; r < n; ++r) CHECK(rig->node(r).comm().counters().max_incoming_per_step <= 2);
}

void ring_tree_doubles(const char* dims_s, uint64_t count, const std::string& faults) {
  auto rig = booted_rig(dims_s, faults);
  const uint32_t n = rig->node_count();
  const Dims dims = parse_dims(dims_s).value();
  const Reducer red = make_reducer(DType::kDouble, ROp::kSum);
  const std::string what = std::string(dims_s) + " " + faults + " x" + std::to_string(count);
  const auto ein = inputs(n, DType::kDouble, ROp::kSum, Data::kExact, count, 21);
  const auto ring = allreduce(*rig, "torus-ring", DType::kDouble, ROp::kSum, count, ein, false, what + " torus-ring");
  for (uint32_t r = 0; r < n; ++r) CHECK_TEXT(ring[r] == fold(ein, red, count), (what + " torus-ring").c_str());
  const auto ain = inputs(n, DType::kDouble, ROp::kSum, Data::kAdversarial, count, 22);
  const auto tree = allreduce(*rig, "torus-tree", DType::kDouble, ROp::kSum, count, ain, true, what + " torus-tree");
  const Bytes want = middle_reference(ain, dims, red, count);
  for (uint32_t r = 0; r < n; ++r) CHECK_TEXT(tree[r] == want, (what + " torus-tree bit-identical").c_str());
  uint64_t most = 0;
  for (uint32_t r = 0; r < n; ++r) {
    const uint64_t m = rig->node(r).comm().counters().max_incoming_per_step;
    CHECK_TEXT(m <= 2, "seed 004 C: no node combines more than two incoming packets per chunk");
    most = std::max(most, m);
  }
  if (dims.n[0] >= 3 || dims.n[1] >= 3 || dims.n[2] >= 3) LONGS_EQUAL(2, most);
}

// ---- errors ----

// Node `odd` has one element more than the others: the operation fails, and
// a failing node's message names both counts.
void mismatch(const char* dims_s, const std::string& algo, CollKind kind, uint32_t odd) {
  auto rig = booted_rig(dims_s);
  const uint32_t n = rig->node_count();
  std::vector<Bytes> buf(n, Bytes(12 * 8, 1));
  const auto sts = run_all(*rig, [&](size_t r) {
    return args_for(kind, DType::kInt64, ROp::kSum, r == odd ? 11 : 10, nullptr, buf[r].data());
  }, algo);
  bool named = false;
  for (uint32_t r = 0; r < n; ++r) {
    const std::string m = sts[r].message();
    if (m.find("has 11 elements") != std::string::npos && m.find("has 10 elements") != std::string::npos &&
        m.find("mismatched sizes") != std::string::npos)
      named = true;
  }
  CHECK_TEXT(named, (algo + ": a node names both counts: " + sts[odd == 0 ? 1 : 0].to_string()).c_str());
  CHECK_FALSE(sts[odd].is_ok() && sts[odd == 0 ? 1 : 0].is_ok());
}

// ---- back to back ----

struct Op {
  const char* algo;
  CollKind kind;
  DType t;
  uint64_t count;
  uint32_t root;
};

// Every node starts the next operation as soon as it finished the previous
// one, so packets of later operations overtake earlier ones in the inboxes.
void back_to_back(const char* dims_s, const std::string& faults) {
  auto rig = booted_rig(dims_s, faults);
  const uint32_t n = rig->node_count();
  const Dims dims = parse_dims(dims_s).value();
  const Op ops[] = {
      {"torus-fixed-order", CollKind::kAllreduce, DType::kDouble, 500, 0},
      {"line-multicast", CollKind::kBcast, DType::kInt8, 3001, n - 1},
      {"torus-ring", CollKind::kAllreduce, DType::kInt64, 300, 0},
      {"torus-fixed-order", CollKind::kAllreduce, DType::kFloat, 1001, 0},
      {"torus-tree", CollKind::kAllreduce, DType::kDouble, 200, 0},
      {"line-multicast", CollKind::kBcast, DType::kDouble, 2000, n / 2},
      {"torus-fixed-order", CollKind::kAllreduce, DType::kDouble, 7, 0},
      {"torus-ring", CollKind::kAllreduce, DType::kInt32, 0, 0},
      {"line-multicast", CollKind::kBcast, DType::kInt16, 1, 0},
  };
  const size_t nops = sizeof ops / sizeof ops[0];
  std::vector<std::vector<Bytes>> in(nops), out(nops);
  for (size_t k = 0; k < nops; ++k) {
    in[k] = inputs(n, ops[k].t, ROp::kSum, Data::kAdversarial, ops[k].count, 500 + k);
    out[k] = in[k];
  }
  std::vector<size_t> next(n, 0);
  std::vector<bool> busy(n, false);
  auto step = [&]() {
    bool all = true;
    for (uint32_t r = 0; r < n; ++r) {
      Comm& c = rig->node(r).comm();
      Status st;
      if (busy[r]) {
        if (!c.test(&st)) {
          all = false;
          continue;
        }
        CHECK_TEXT(st.is_ok(), (std::string(ops[next[r] - 1].algo) + ": " + st.to_string()).c_str());
        busy[r] = false;
      }
      if (next[r] == nops) continue;
      all = false;
      const Op& o = ops[next[r]];
      st = c.start(args_for(o.kind, o.t, ROp::kSum, o.count, nullptr, out[next[r]][r].data(), o.root), o.algo);
      CHECK_TEXT(st.is_ok(), st.to_string().c_str());
      busy[r] = true;
      ++next[r];
    }
    return all;
  };
  // Small slices of virtual time (the fabric's clock only moves with events,
  // so the slice end is counted here).
  uint64_t t = rig->fabric().now();
  const uint64_t end = t + 2 * kSec;
  while (!step() && t < end) {
    for (uint32_t r = 0; r < n; ++r) rig->fabric().wake(r, rig->fabric().now());
    t += 2 * kUs;
    rig->fabric().run(t);
  }
  for (uint32_t r = 0; r < n; ++r) LONGS_EQUAL_TEXT(nops, next[r], "every node ran every operation");
  for (size_t k = 0; k < nops; ++k) {
    const Op& o = ops[k];
    Bytes want;
    const Reducer red = make_reducer(o.t, ROp::kSum);
    if (o.kind == CollKind::kBcast) want = in[k][o.root];
    else if (std::string(o.algo) == "torus-fixed-order") want = nested_reference(in[k], dims, red, o.count);
    else if (std::string(o.algo) == "torus-tree") want = middle_reference(in[k], dims, red, o.count);
    else want = fold(in[k], red, o.count);  // integers: any order
    for (uint32_t r = 0; r < n; ++r)
      CHECK_TEXT(out[k][r] == want, (std::string(dims_s) + " op " + std::to_string(k) + " " + o.algo).c_str());
  }
}

}  // namespace

TEST_GROUP(TorusRingTree){};

TEST(TorusRingTree, EveryTypeAndOp) { ring_tree_every_type_op("3x2x2", ""); }
TEST(TorusRingTree, EveryTypeAndOpWithFaults) { ring_tree_every_type_op("4x1x3", kFaults); }
TEST(TorusRingTree, Cube2) { ring_tree_doubles("2x2x2", 1001, ""); }
TEST(TorusRingTree, Cube4) { ring_tree_doubles("4x4x4", 301, ""); }
TEST(TorusRingTree, Box4x2x1) { ring_tree_doubles("4x2x1", 1001, ""); }
TEST(TorusRingTree, Line8) { ring_tree_doubles("8x1x1", 1001, ""); }
TEST(TorusRingTree, Odd3x3x3) { ring_tree_doubles("3x3x3", 1001, ""); }
TEST(TorusRingTree, SingleNode) { ring_tree_doubles("1x1x1", 7, ""); }
TEST(TorusRingTree, CountsZeroAndOne) {
  ring_tree_doubles("3x2x2", 0, "");
  ring_tree_doubles("3x2x2", 1, "");
}
TEST(TorusRingTree, OneMiB) { ring_tree_doubles("4x2x1", kMiBDoubles, ""); }
TEST(TorusRingTree, OneMiBWithFaults) { ring_tree_doubles("2x2x2", kMiBDoubles, kFaults); }
TEST(TorusRingTree, WithFaults) { ring_tree_doubles("4x4x4", 1001, kFaults); }

// Each node of a ring adds the contributions in its own order: on
// order-sensitive doubles the nodes disagree (why fixed_order is false).
TEST(TorusRingTree, RingIsNotFixedOrder) {
  auto rig = booted_rig("8x1x1");
  const auto in = inputs(8, DType::kDouble, ROp::kSum, Data::kAdversarial, 300, 31);
  const auto out = allreduce(*rig, "torus-ring", DType::kDouble, ROp::kSum, 300, in, false, "ring");
  bool differ = false;
  for (uint32_t r = 1; r < 8; ++r) differ = differ || out[r] != out[0];
  CHECK_TEXT(differ, "torus-ring's nodes round differently");
  CollArgs a = args_for(CollKind::kAllreduce, DType::kDouble, ROp::kSum, 300, nullptr, nullptr);
  Bytes buf(300 * 8);
  a.recv = buf.data();
  a.repro = Repro::kFixedOrder;
  const Status st = rig->node(0).comm().start(a, "torus-ring");
  CHECK_TRUE(st.code() == Code::kUnsupported);
  CHECK_TEXT(st.message().find("different order") != std::string::npos, st.message().c_str());
}

TEST_GROUP(TorusErrors){};

TEST(TorusErrors, MismatchedSizesNameBothCounts) {
  mismatch("3x1x1", "torus-fixed-order", CollKind::kAllreduce, 1);
  mismatch("2x2x1", "torus-fixed-order", CollKind::kAllreduce, 3);
  mismatch("2x1x1", "torus-ring", CollKind::kAllreduce, 0);
  mismatch("3x1x1", "torus-tree", CollKind::kAllreduce, 0);
  mismatch("2x1x1", "line-multicast", CollKind::kBcast, 1);
}

TEST(TorusErrors, WorldCommunicatorOnly) {
  auto rig = booted_rig("2x2x1");
  Comm& c = rig->node(0).comm();
  // Only node 0 makes the line (its operations are refused before any
  // message): a locally reserved id stands in for an agreed one.
  CHECK_TRUE(c.contexts().reserve(2));
  auto line = c.split_line(0, 2);
  CHECK_TRUE(line.is_ok() && *line);
  int64_t x = 1;
  for (const char* algo : {"torus-fixed-order", "torus-ring", "torus-tree"}) {
    const Status st = (*line)->start(args_for(CollKind::kAllreduce, DType::kInt64, ROp::kSum, 1, nullptr, &x), algo);
    CHECK_TRUE(st.code() == Code::kUnsupported);
    CHECK_TEXT(st.message().find("needs the world communicator (uses its torus links)") != std::string::npos,
               st.message().c_str());
  }
  const Status st =
      (*line)->start(args_for(CollKind::kBcast, DType::kInt64, ROp::kSum, 1, nullptr, &x), "line-multicast");
  CHECK_TEXT(st.message().find("needs the world communicator") != std::string::npos, st.message().c_str());
  CommInfo no_tree;
  no_tree.world = true;
  const AlgoInfo* tt = find_algo(CollKind::kAllreduce, "torus-tree");
  CHECK_TRUE(tt != nullptr);
  CHECK_TEXT(tt->applicable(no_tree, CollArgs{}).find("combine network") != std::string::npos, "tree needed");
  CHECK_TRUE(find_algo(CollKind::kAllreduce, "torus-fixed-order")->fixed_order);
  CHECK_FALSE(find_algo(CollKind::kAllreduce, "torus-ring")->fixed_order);
}

TEST_GROUP(TorusBackToBack){};

TEST(TorusBackToBack, MixedAlgorithms4x4x4WithFaults) { back_to_back("4x4x4", kFaults); }
TEST(TorusBackToBack, MixedAlgorithms3x3x3) { back_to_back("3x3x3", ""); }
TEST(TorusBackToBack, MixedAlgorithms8x1x1) { back_to_back("8x1x1", ""); }
TEST(TorusBackToBack, MixedAlgorithms8x1x1WithFaults) { back_to_back("8x1x1", kFaults); }

// Exact mode runs any allreduce over integer operands: the torus group's
// give the same bits as each other.
TEST(TorusBackToBack, ExactModeThroughEveryTorusAllreduce) {
  auto rig = booted_rig("4x2x1");
  const auto in = inputs(8, DType::kDouble, ROp::kSum, Data::kAdversarial, 100, 41);
  std::vector<Bytes> first;
  for (const char* algo : {"torus-fixed-order", "torus-ring", "torus-tree"}) {
    std::vector<Bytes> out(8, Bytes(800, 0));
    const auto sts = run_all(*rig, [&](size_t r) {
      CollArgs a = args_for(CollKind::kAllreduce, DType::kDouble, ROp::kSum, 100, in[r].data(), out[r].data());
      a.repro = Repro::kExact;
      return a;
    }, algo);
    check_all_ok(sts, std::string(algo) + " exact");
    if (first.empty()) first = out;
    for (uint32_t r = 0; r < 8; ++r) CHECK_TEXT(out[r] == first[0], (std::string(algo) + " exact").c_str());
  }
}
