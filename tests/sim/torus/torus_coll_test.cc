// The torus group's data-moving collectives on trained sim partitions,
// through the communicator (Comm::start with the algorithm named), with and
// without the fault plan "drop=0.05,corrupt=0.01", on every shape of the
// issue (2x2x2, 4x4x4, 4x2x1, 8x1x1, 3x3x3, 1x1x1) and counts 0, 1, odd,
// several packets and 1 MiB:
// - allreduce `torus-fixed-order` (seed 004 A): every node's result equals,
//   bit for bit, the nested fold sum_z(sum_y(sum_x v)) in coordinate order
//   (for 8x1x1 the serial left-to-right sum over ranks 0..7) on adversarial
//   doubles whose sum depends on the order, and for every datatype x op;
//   every node injects each value once per direction per dimension and
//   receives n-1 per dimension; every plus link carries exactly
//   ceil((n-1)/2) vectors and every minus link floor((n-1)/2) (so no other
//   link is used and nothing travels twice).
// - bcast `line-multicast`: every node gets the root's bytes, receives each
//   chunk exactly once, injects once per direction per later dimension, and
//   the links carry N-1 copies of each chunk in all.
// Ring, tree, errors and back-to-back operations: torus_ring_tree_test.cc.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/rng.h"
#include "collectives/algos/torus/allreduce_torus_fixed_order.h"
#include "collectives/algos/torus/bcast_line_multicast.h"
#include "collectives/comm.h"
#include "collectives/schedule/line_bcast.h"
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

// ---- torus-fixed-order ----

void fixed_order_doubles(const char* dims_s, uint64_t count, const std::string& faults, bool in_place = false) {
  auto rig = booted_rig(dims_s, faults);
  const uint32_t n = rig->node_count();
  const Dims dims = parse_dims(dims_s).value();
  const std::string what = std::string(dims_s) + " " + faults + " torus-fixed-order x" + std::to_string(count);
  const auto in = inputs(n, DType::kDouble, ROp::kSum, Data::kAdversarial, count, 11);
  const auto before = link_data_sent(*rig);
  const auto out = allreduce(*rig, "torus-fixed-order", DType::kDouble, ROp::kSum, count, in, in_place, what);
  const Reducer red = make_reducer(DType::kDouble, ROp::kSum);
  const Bytes want = nested_reference(in, dims, red, count);
  for (uint32_t r = 0; r < n; ++r)
    CHECK_TEXT(out[r] == want, (what + ": node " + std::to_string(r) + " is not the nested fold bit for bit").c_str());
  if (dims.n[1] == 1 && dims.n[2] == 1) CHECK_TEXT(want == fold(in, red, count), "a line: the serial rank-order sum");
  // Teeth: on these inputs another order (the reverse) rounds differently.
  if (n > 2 && count >= 100) {
    std::vector<Bytes> rev(in.rbegin(), in.rend());
    CHECK_TEXT(fold(rev, red, count) != want, "the data makes the order visible");
  }
  // Injections and receptions per dimension, as the schedule says.
  for (uint32_t r = 0; r < n; ++r) {
    auto* algo = dynamic_cast<TorusFixedOrderAllreduce*>(rig->node(r).comm().active_algo());
    CHECK_TEXT(algo != nullptr, "the comm ran torus-fixed-order");
    const uint32_t chunks = algo->chunks();
    for (int d = 0; d < kDims; ++d) {
      const uint32_t len = dims.n[d];
      const uint64_t sends = len < 2 ? 0 : len == 2 ? 1 : 2;
      LONGS_EQUAL_TEXT(sends * chunks, algo->injected(d), (what + ": injections once per direction").c_str());
      LONGS_EQUAL_TEXT(uint64_t{len - 1} * chunks, algo->received(d), (what + ": n-1 values received").c_str());
    }
  }
  // Every link direction carries exactly the vectors of its half of the line
  // (first transmissions; retransmissions under faults are not counted).
  const auto after = link_data_sent(*rig);
  for (uint32_t r = 0; r < n; ++r) {
    auto* algo = dynamic_cast<TorusFixedOrderAllreduce*>(rig->node(r).comm().active_algo());
    NetStack& net = rig->node(r).net();
    for (int di = 0; di < kNumDirs; ++di) {
      const Dir dir = static_cast<Dir>(di);
      const int port = net.port_of(dir);
      if (port < 0) continue;
      const uint32_t len = dims.n[dir_dim(dir)];
      const uint64_t hops = dir_plus(dir) ? schedule::line_hops_plus(len) : schedule::line_hops_minus(len);
      LONGS_EQUAL_TEXT(hops * algo->chunks(), after[r][port] - before[r][port],
                       (what + ": frames on " + dir_name(dir) + " of node " + std::to_string(r)).c_str());
    }
  }
}

// Every datatype and op against the nested fold with the same kernel.
void fixed_order_every_type_op(const char* dims_s, const std::string& faults) {
  auto rig = booted_rig(dims_s, faults);
  const uint32_t n = rig->node_count();
  const Dims dims = parse_dims(dims_s).value();
  uint64_t seed = 100;
  for (int ti = 0; ti < kUserDTypes; ++ti) {
    const auto t = static_cast<DType>(ti);
    for (int oi = 0; oi < kROps; ++oi) {
      const auto op = static_cast<ROp>(oi);
      if (!check_rop(t, op)) continue;
      const uint64_t count = oi % 2 ? 13 : 301;
      const std::string what = std::string(dims_s) + " torus-fixed-order " + dtype_name(t) + " " + rop_name(op);
      const auto in = inputs(n, t, op, Data::kAdversarial, count, ++seed);
      const auto out = allreduce(*rig, "torus-fixed-order", t, op, count, in, ti % 2 == 0, what);
      const Bytes want = nested_reference(in, dims, make_reducer(t, op), count);
      for (uint32_t r = 0; r < n; ++r) CHECK_TEXT(out[r] == want, (what + ": node " + std::to_string(r)).c_str());
    }
  }
}

// ---- line-multicast ----

void multicast(const char* dims_s, uint64_t count, DType t, const std::string& faults) {
  auto rig = booted_rig(dims_s, faults);
  const uint32_t n = rig->node_count();
  const size_t es = dtype_size(t);
  for (uint32_t root : {0u, n / 2, n - 1}) {
    const std::string what = std::string(dims_s) + " " + faults + " line-multicast root " + std::to_string(root) +
                             " x" + std::to_string(count);
    std::vector<Bytes> buf(n, Bytes(count * es, 0xEE));
    for (uint64_t i = 0; i < count * es; ++i) buf[root][i] = static_cast<uint8_t>(mix64(root * 31 + i));
    const Bytes want = buf[root];
    const auto before = link_data_sent(*rig);
    const auto sts = run_all(*rig, [&](size_t r) {
      return args_for(CollKind::kBcast, t, ROp::kSum, count, nullptr, buf[r].data(), root);
    }, "line-multicast");
    check_all_ok(sts, what);
    uint64_t total_rx = 0, chunks = 0;
    for (uint32_t r = 0; r < n; ++r) {
      CHECK_TEXT(buf[r] == want, (what + ": node " + std::to_string(r) + " has the root's bytes").c_str());
      auto* algo = dynamic_cast<LineMulticastBcast*>(rig->node(r).comm().active_algo());
      CHECK_TEXT(algo != nullptr, "the comm ran line-multicast");
      chunks = algo->chunks();
      LONGS_EQUAL_TEXT(r == root ? 0 : chunks, algo->received(), (what + ": each chunk received once").c_str());
      LONGS_EQUAL_TEXT(algo->role().sends.size() * chunks, algo->injected(), (what + ": injections").c_str());
      total_rx += algo->received();
    }
    // Each hop of a deposit packet reaches a new node: N-1 copies per chunk
    // in all, and no link direction carries a chunk twice.
    const auto after = link_data_sent(*rig);
    uint64_t frames = 0;
    for (uint32_t r = 0; r < n; ++r) {
      for (size_t p = 0; p < after[r].size(); ++p) {
        frames += after[r][p] - before[r][p];
        CHECK_TEXT(after[r][p] - before[r][p] <= chunks, (what + ": a link carried a chunk twice").c_str());
      }
    }
    LONGS_EQUAL_TEXT(uint64_t{n - 1} * chunks, frames, (what + ": link frames").c_str());
    LONGS_EQUAL(uint64_t{n - 1} * chunks, total_rx);
  }
}

// With minimal-adaptive routing (VC 2, escape on the dateline VCs) deposit
// packets still stay on their line and arrive exactly once: results too.
void adaptive(const char* dims_s, const std::string& faults) {
  auto rig = booted_rig(dims_s, faults);
  const uint32_t n = rig->node_count();
  const Dims dims = parse_dims(dims_s).value();
  for (uint32_t r = 0; r < n; ++r) rig->node(r).net().set_adaptive(true);
  const auto in = inputs(n, DType::kDouble, ROp::kSum, Data::kAdversarial, 2001, 5);
  const auto out = allreduce(*rig, "torus-fixed-order", DType::kDouble, ROp::kSum, 2001, in, false, "adaptive");
  const Bytes want = nested_reference(in, dims, make_reducer(DType::kDouble, ROp::kSum), 2001);
  for (uint32_t r = 0; r < n; ++r) CHECK_TEXT(out[r] == want, "adaptive torus-fixed-order");
  std::vector<Bytes> buf = in;
  const auto sts = run_all(*rig, [&](size_t r) {
    return args_for(CollKind::kBcast, DType::kDouble, ROp::kSum, 2001, nullptr, buf[r].data(), n - 1);
  }, "line-multicast");
  check_all_ok(sts, "adaptive line-multicast");
  for (uint32_t r = 0; r < n; ++r) CHECK_TEXT(buf[r] == in[n - 1], "adaptive line-multicast");
  uint64_t adaptive_hops = 0;
  for (uint32_t r = 0; r < n; ++r) adaptive_hops += rig->node(r).net().counters().adaptive_hops;
  CHECK_TEXT(adaptive_hops > 0, "packets took the adaptive channel");
}

}  // namespace

TEST_GROUP(TorusFixedOrder){};

TEST(TorusFixedOrder, LineOfEightIsTheSerialSumInRankOrder) { fixed_order_doubles("8x1x1", 1001, ""); }
TEST(TorusFixedOrder, Cube2) { fixed_order_doubles("2x2x2", 1001, ""); }
TEST(TorusFixedOrder, Cube4) { fixed_order_doubles("4x4x4", 301, ""); }
TEST(TorusFixedOrder, Box4x2x1InPlace) { fixed_order_doubles("4x2x1", 1001, "", true); }
TEST(TorusFixedOrder, Odd3x3x3) { fixed_order_doubles("3x3x3", 1001, ""); }
TEST(TorusFixedOrder, SingleNode) { fixed_order_doubles("1x1x1", 7, ""); }
TEST(TorusFixedOrder, CountsZeroOneOdd) {
  for (uint64_t c : {uint64_t{0}, uint64_t{1}, uint64_t{117}, uint64_t{118}, uint64_t{235}})
    fixed_order_doubles("3x2x1", c, "");
}
TEST(TorusFixedOrder, OneMiB) { fixed_order_doubles("8x1x1", kMiBDoubles, ""); }
TEST(TorusFixedOrder, OneMiBOnACube) { fixed_order_doubles("2x2x2", kMiBDoubles, ""); }
TEST(TorusFixedOrder, OneMiBWithFaults) { fixed_order_doubles("2x2x2", kMiBDoubles, kFaults); }
TEST(TorusFixedOrder, WithFaults) { fixed_order_doubles("4x4x4", 1001, kFaults); }
TEST(TorusFixedOrder, OddWithFaults) { fixed_order_doubles("3x3x3", 1001, kFaults); }
TEST(TorusFixedOrder, EveryTypeAndOp) { fixed_order_every_type_op("3x2x2", ""); }
TEST(TorusFixedOrder, EveryTypeAndOpWithFaults) { fixed_order_every_type_op("4x1x3", kFaults); }

TEST_GROUP(LineMulticast){};

TEST(LineMulticast, Cube2) { multicast("2x2x2", 1001, DType::kDouble, ""); }
TEST(LineMulticast, Cube4) { multicast("4x4x4", 301, DType::kInt32, ""); }
TEST(LineMulticast, Box4x2x1) { multicast("4x2x1", 999, DType::kInt8, ""); }
TEST(LineMulticast, Line8) { multicast("8x1x1", 1001, DType::kUint16, ""); }
TEST(LineMulticast, Odd3x3x3) { multicast("3x3x3", 1001, DType::kFloat, ""); }
TEST(LineMulticast, SingleNode) { multicast("1x1x1", 7, DType::kDouble, ""); }
TEST(LineMulticast, CountsZeroAndOne) {
  multicast("3x2x2", 0, DType::kDouble, "");
  multicast("3x2x2", 1, DType::kInt8, "");
}
TEST(LineMulticast, OneMiB) { multicast("4x2x1", kMiBDoubles, DType::kDouble, ""); }
TEST(LineMulticast, OneMiBWithFaults) { multicast("3x3x3", kMiBDoubles, DType::kDouble, kFaults); }
TEST(LineMulticast, WithFaults) { multicast("4x4x4", 1001, DType::kDouble, kFaults); }
TEST(LineMulticast, OddWithFaults) { multicast("3x3x3", 777, DType::kInt16, kFaults); }


TEST_GROUP(TorusAdaptive){};

TEST(TorusAdaptive, Cube4WithFaults) { adaptive("4x4x4", kFaults); }
TEST(TorusAdaptive, Odd3x3x3) { adaptive("3x3x3", ""); }
