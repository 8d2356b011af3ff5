// The tree group's collectives on trained sim partitions, through the
// communicator (Comm::start with the algorithm named), with and without the
// fault plan "drop=0.05,corrupt=0.01":
// - allreduce `tree`: every datatype x op the combine ALU can do equals, on
//   every node and bit for bit, a serial fold of all nodes' inputs with the
//   datatype kernel (float SUM: MPFR's correctly rounded sum); it travels on
//   the combine network only (no point-to-point message, combine packets
//   sent up by every node but the tree's root); PROD and sub-communicators
//   are refused with their reason.
// - reduce `tree`: only the root's buffer changes; bcast `tree` from several
//   roots and allgather `tree` (in place or not) on odd byte counts.
// - barrier `barrier-network`: no node is released before the last arrives.
// - a node that never starts makes the others time out with a message that
//   names the network they wait for.
// - exact mode: allreduce double SUM with Repro::kExact through every
//   registered allreduce of tree, ring, recursive-doubling, torus-ring gives
//   MPFR's correctly rounded sum on 2x2x2, 8x1x1 and 4x2x1 holding the same
//   8 contributions: the same bits for every algorithm and shape.
// - exact-share (each rank rounds its own share): MPFR's sum and the
//   specials' rules bit for bit on 2x2x2, 3x1x1 (a padded last share) and
//   2x1x1 (IEEE addition and the encoded path alike), in place and with
//   faults; each rank rounds share() values, not the whole vector; its
//   links carry what an alltoall and an allgather of the doubles carry.
#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/rng.h"
#include "collectives/comm.h"
#include "collectives/repro_exact.h"
#include "collectives/repro_exact_share.h"
#include "netstack/p2p.h"
#include "netstack/tree/barrier.h"
#include "netstack/tree/combine.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

// coll_helpers.h uses CppUTest's macros without including CppUTest, so it
// comes after it; everything it includes is already included above.
#include "tests/sim/coll_helpers.h"

using namespace toroid;
using namespace toroid::test;

namespace {

const char* const kFaults = "drop=0.05,corrupt=0.01";

// The algorithm registry is a function-local static built on first use: build
// it before any test runs so CppUTest does not count it as a test's leak.
const bool kRegistryBuilt = !algorithms().empty();

// Element i of rank r, drawn to hit the edges (extremes, zero, ties).
void fill_value(DType t, uint64_t seed, uint32_t r, uint64_t i, uint8_t* p) {
  Rng rng(mix64(seed * 7919 + r * 104729 + i));
  const uint64_t k = rng.next();
  const size_t vs = dtype_size(t);
  if (dtype_is_float(t)) {
    double d = k % 4 == 0 ? static_cast<double>(k % 3) : std::ldexp(rng.uniform() - 0.5, static_cast<int>(k % 80) - 40);
    if (t == DType::kFloat) {
      const auto f = static_cast<float>(d);
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &d, 8);
    }
    return;
  }
  uint64_t v = rng.next();
  switch (k % 5) {
    case 0: v = uint64_t{1} << (8 * vs - 1); break;
    case 1: v = ~uint64_t{0}; break;
    case 2: v = k % 3; break;
    default: break;
  }
  std::memcpy(p, &v, vs);
}

std::vector<uint8_t> input(DType t, ROp op, uint64_t count, uint32_t r, uint64_t seed) {
  const size_t es = elem_size(t, op);
  std::vector<uint8_t> in(count * es);
  for (uint64_t i = 0; i < count; ++i) {
    fill_value(t, seed, r, i, in.data() + i * es);
    if (rop_is_loc(op)) {
      const int32_t idx = static_cast<int32_t>((r * 5 + i) % 4);
      std::memcpy(in.data() + i * es + dtype_size(t), &idx, 4);
    }
  }
  return in;
}

// MPFR, exact at 2400 bits, one rounding (no NaN/Inf in these inputs).
template <typename F>
F mpfr_sum(const std::vector<F>& xs) {
  mpfr_t acc, x;
  mpfr_init2(acc, 2400);
  mpfr_init2(x, 64);
  mpfr_set_zero(acc, 1);
  bool all_neg_zero = true;
  for (F v : xs) {
    all_neg_zero &= v == F(0) && std::signbit(v);
    mpfr_set_d(x, static_cast<double>(v), MPFR_RNDN);
    mpfr_add(acc, acc, x, MPFR_RNDN);
  }
  F d = sizeof(F) == 8 ? F(mpfr_get_d(acc, MPFR_RNDN)) : F(mpfr_get_flt(acc, MPFR_RNDN));
  if (mpfr_zero_p(acc)) d = all_neg_zero ? F(-0.0) : F(0.0);
  mpfr_clear(acc);
  mpfr_clear(x);
  return d;
}

// What every node must hold: the kernel fold in rank order; float SUM correctly rounded.
std::vector<uint8_t> expected(DType t, ROp op, const std::vector<std::vector<uint8_t>>& in, uint64_t count) {
  std::vector<uint8_t> acc = in[0];
  if (op == ROp::kSum && dtype_is_float(t)) {
    const size_t vs = dtype_size(t);
    for (uint64_t i = 0; i < count; ++i) {
      if (t == DType::kDouble) {
        std::vector<double> xs;
        for (const auto& row : in) xs.push_back(load<double>(row.data() + i * vs));
        const double s = mpfr_sum(xs);
        std::memcpy(acc.data() + i * vs, &s, vs);
      } else {
        std::vector<float> xs;
        for (const auto& row : in) xs.push_back(load<float>(row.data() + i * vs));
        const float s = mpfr_sum(xs);
        std::memcpy(acc.data() + i * vs, &s, vs);
      }
    }
    return acc;
  }
  const Reducer red = make_reducer(t, op);
  for (size_t r = 1; r < in.size(); ++r) red.apply(acc.data(), in[r].data(), count);
  return acc;
}

CollArgs reduce_args(CollKind kind, DType t, ROp op, uint64_t count, const void* send, void* recv) {
  CollArgs a;
  a.kind = kind;
  a.dtype = t;
  a.op = op;
  a.count = count;
  a.send = send;
  a.recv = recv;
  return a;
}

void check_all_ok(const std::vector<Status>& sts, const std::string& what) {
  for (size_t r = 0; r < sts.size(); ++r)
    CHECK_TEXT(sts[r].is_ok(), (what + ": node " + std::to_string(r) + ": " + sts[r].to_string()).c_str());
}

// Every (dtype, op) the tree supports, on one rig, several counts.
void allreduce_every_type_op(const char* dims, const std::string& faults) {
  auto rig = booted_rig(dims, faults);
  const uint32_t n = rig->node_count();
  auto comms = world_comms(*rig);
  uint64_t seed = 1;
  for (int ti = 0; ti < kUserDTypes; ++ti) {
    const auto t = static_cast<DType>(ti);
    for (int oi = 0; oi < kROps; ++oi) {
      const auto op = static_cast<ROp>(oi);
      if (!check_rop(t, op) || op == ROp::kProd) continue;
      for (uint64_t count : {uint64_t{1}, uint64_t{7}, uint64_t{300}}) {
        const std::string what = std::string(dims) + " " + faults + " allreduce tree " + dtype_name(t) + " " +
                                 rop_name(op) + " x" + std::to_string(count);
        std::vector<std::vector<uint8_t>> in, out;
        for (uint32_t r = 0; r < n; ++r) {
          in.push_back(input(t, op, count, r, ++seed));
          out.emplace_back(in.back().size(), 0xEE);
        }
        const bool in_place = count == 7;
        if (in_place) out = in;
        std::vector<uint64_t> msgs(n);
        for (uint32_t r = 0; r < n; ++r) msgs[r] = rig->node(r).messenger().counters().msgs_sent;
        const auto sts = run_coll(*rig, comms, [&](size_t r) {
          return reduce_args(CollKind::kAllreduce, t, op, count, in_place ? nullptr : in[r].data(), out[r].data());
        }, "tree");
        check_all_ok(sts, what);
        const std::vector<uint8_t> want = expected(t, op, in, count);
        for (uint32_t r = 0; r < n; ++r) {
          CHECK_TEXT(out[r] == want, (what + ": node " + std::to_string(r) + " differs from the reference").c_str());
          LONGS_EQUAL_TEXT(msgs[r], rig->node(r).messenger().counters().msgs_sent, "no point-to-point message");
        }
      }
    }
  }
  for (uint32_t r = 1; r < n; ++r) CHECK_TEXT(rig->node(r).combine().counters().up_packets > 0, "all on the tree");
  LONGS_EQUAL(0, rig->node(0).combine().counters().up_packets);  // rank 0 is the world tree's root
  if (!faults.empty()) {  // the fault plan did hit these operations
    CHECK(rig->fabric().stats().dropped > 0);
    CHECK(rig->fabric().stats().corrupted > 0);
  }
}

}  // namespace

TEST_GROUP(TreeColl){};

TEST(TreeColl, AllreduceEveryTypeAndOpEqualsTheReferenceOnEveryNode) { allreduce_every_type_op("2x2x2", ""); }
TEST(TreeColl, AllreduceEveryTypeAndOpOnANonPowerOfTwoWithFaults) { allreduce_every_type_op("3x3x1", kFaults); }
TEST(TreeColl, AllreduceEveryTypeAndOpWithFaults) { allreduce_every_type_op("2x2x2", kFaults); }

TEST(TreeColl, ProdAndSubCommunicatorsAreRefusedWithTheReason) {
  auto rig = booted_rig("2x2x1");
  Comm& c = rig->node(0).comm();
  int64_t x = 3, y = 0;
  Status st = c.start(reduce_args(CollKind::kAllreduce, DType::kInt64, ROp::kProd, 1, &x, &y), "tree");
  CHECK_TRUE(st.code() == Code::kUnsupported);
  CHECK_TEXT(st.message().find("the combine ALU has no multiply") != std::string::npos, st.message().c_str());
  // Only node 0 makes the line (its operations are refused before any
  // message): a locally reserved id stands in for an agreed one.
  CHECK_TRUE(c.contexts().reserve(2));
  auto line = c.split_line(0, 2);
  CHECK_TRUE(line.is_ok() && *line);
  st = (*line)->start(reduce_args(CollKind::kAllreduce, DType::kInt64, ROp::kSum, 1, &x, &y), "tree");
  CHECK_TEXT(st.message().find("needs the combine network") != std::string::npos, st.message().c_str());
  CollArgs b;
  b.kind = CollKind::kBarrier;
  st = (*line)->start(b, "barrier-network");
  CHECK_TEXT(st.message().find("needs the barrier network") != std::string::npos, st.message().c_str());
}

TEST(TreeColl, ReduceLeavesTheResultAtTheRootOnly) {
  for (const char* faults : {"", kFaults}) {
    auto rig = booted_rig("2x2x2", faults);
    const uint32_t n = rig->node_count();
    for (uint32_t root : {0u, 5u}) {
      std::vector<std::vector<uint8_t>> in, out;
      for (uint32_t r = 0; r < n; ++r) {
        in.push_back(input(DType::kInt32, ROp::kMax, 33, r, root + 9));
        out.emplace_back(in.back().size(), 0xEE);
      }
      const bool in_place = root == 5;  // the root's input already in its receive buffer
      if (in_place) out[root] = in[root];
      auto sts = run_coll(*rig, world_comms(*rig), [&](size_t r) {
        CollArgs a = reduce_args(CollKind::kReduce, DType::kInt32, ROp::kMax, 33,
                                 in_place && r == root ? nullptr : in[r].data(), r == root ? out[r].data() : nullptr);
        a.root = root;
        return a;
      }, "tree");
      check_all_ok(sts, "reduce tree");
      CHECK_TRUE(out[root] == expected(DType::kInt32, ROp::kMax, in, 33));
      for (uint32_t r = 0; r < n; ++r)
        if (r != root) CHECK_TRUE(out[r] == std::vector<uint8_t>(out[r].size(), 0xEE));
    }
  }
}

TEST(TreeColl, BcastDeliversTheRootsBytesFromAnyRoot) {
  for (const char* faults : {"", kFaults}) {
    auto rig = booted_rig("3x2x1", faults);
    const uint32_t n = rig->node_count();
    for (uint32_t root : {0u, 4u}) {
      for (uint64_t count : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{1001}}) {  // int16: 2, 14, 2002 bytes
        std::vector<std::vector<uint8_t>> buf(n);
        for (uint32_t r = 0; r < n; ++r) buf[r] = input(DType::kInt16, ROp::kSum, count, r, count + root);
        const std::vector<uint8_t> want = buf[root];
        auto sts = run_coll(*rig, world_comms(*rig), [&](size_t r) {
          CollArgs a;
          a.kind = CollKind::kBcast;
          a.dtype = DType::kInt16;
          a.count = count;
          a.recv = buf[r].data();
          a.root = root;
          return a;
        }, "tree");
        check_all_ok(sts, "bcast tree");
        for (uint32_t r = 0; r < n; ++r) CHECK_TEXT(buf[r] == want, "every node holds the root's bytes");
      }
    }
  }
}

TEST(TreeColl, AllgatherSumsBlocksOverZeros) {
  for (const char* faults : {"", kFaults}) {
    auto rig = booted_rig("3x3x1", faults);  // 9 nodes: odd totals take the padded path
    const uint32_t n = rig->node_count();
    for (DType t : {DType::kInt8, DType::kUint32, DType::kDouble}) {
      for (uint64_t count : {uint64_t{1}, uint64_t{5}, uint64_t{64}}) {
        for (bool in_place : {false, true}) {
          const size_t block = count * dtype_size(t);
          std::vector<std::vector<uint8_t>> in(n), out(n, std::vector<uint8_t>(block * n, 0xEE));
          std::vector<uint8_t> want;
          for (uint32_t r = 0; r < n; ++r) {
            in[r] = input(t, ROp::kSum, count, r, count * 31 + r);
            want.insert(want.end(), in[r].begin(), in[r].end());
            if (in_place) std::memcpy(out[r].data() + r * block, in[r].data(), block);
          }
          auto sts = run_coll(*rig, world_comms(*rig), [&](size_t r) {
            CollArgs a;
            a.kind = CollKind::kAllgather;
            a.dtype = t;
            a.count = count;
            a.send = in_place ? nullptr : in[r].data();
            a.recv = out[r].data();
            return a;
          }, "tree");
          check_all_ok(sts, "allgather tree");
          for (uint32_t r = 0; r < n; ++r) CHECK_TEXT(out[r] == want, "the gathered array, block r from rank r");
        }
      }
    }
  }
}

TEST(TreeColl, BarrierNetworkReleasesNobodyBeforeTheLastArrives) {
  for (const char* faults : {"", kFaults}) {
    auto rig = booted_rig("2x2x2", faults);
    const uint32_t n = rig->node_count();
    for (uint32_t late : {0u, 6u}) {
      CollArgs b;
      b.kind = CollKind::kBarrier;
      for (uint32_t r = 0; r < n; ++r)
        if (r != late) CHECK_TRUE(rig->node(r).comm().start(b, "barrier-network").is_ok());
      // Every event of the next 50 us of virtual time: everyone else has
      // arrived long ago (a barrier takes ~1 us) and the network is quiet.
      for (uint32_t r = 0; r < n; ++r) rig->fabric().wake(r, rig->fabric().now());
      rig->fabric().run(rig->fabric().now() + 50 * kUs);
      for (uint32_t r = 0; r < n; ++r)
        if (r != late) CHECK_TEXT(rig->node(r).comm().in_flight(), "released before the last arrived");
      CHECK_TRUE(rig->node(late).comm().start(b, "barrier-network").is_ok());
      STRCMP_EQUAL("", finish_world(*rig).c_str());
    }
    // Back-to-back barriers through the helper.
    for (int i = 0; i < 8; ++i) {
      auto sts = run_coll(*rig, world_comms(*rig), [](size_t) {
        CollArgs b;
        b.kind = CollKind::kBarrier;
        return b;
      }, "barrier-network");
      check_all_ok(sts, "barrier-network");
    }
  }
}

// ---- exact mode across algorithms and shapes ----

constexpr uint32_t kExactNodes = 8;
constexpr uint32_t kExactValues = 40;

double exact_value(uint32_t r, uint32_t i) {
  switch (i) {
    case 0: return r == 0 ? 1e308 : r == 1 ? -1e308 : r == 2 ? 1.0 : 0.0;
    case 1: return r == 0 ? 0x1p1023 : r == 1 ? 0x1p-1074 : r == 2 ? -0x1p1023 : 0x1p-1074 * 3;
    case 2: return std::ldexp(static_cast<double>(2 * r + 1), -1074);
    case 3: return -0.0;
    case 4: return r % 2 ? -0.0 : 0.0;
    case 5: return r == 0 ? 1.0 : 0x1p-53;  // ties to even, by halves
    case 6: return (r % 2 ? -1.0 : 1.0) * std::ldexp(1.0, 1000 - 300 * static_cast<int>(r));
    default: {
      Rng rng(mix64(i * 131 + r));
      const double m = 1.0 + rng.uniform();
      const int e = static_cast<int>(rng.below(i < 20 ? 2098 : 60)) - (i < 20 ? 1074 : 30);
      return (rng.next() & 1 ? -1.0 : 1.0) * std::ldexp(m, e);
    }
  }
}

std::vector<double> exact_sum_on(const char* dims, const std::string& algo, const std::string& faults) {
  auto rig = booted_rig(dims, faults);
  LONGS_EQUAL(kExactNodes, rig->node_count());
  std::vector<std::vector<double>> in(kExactNodes, std::vector<double>(kExactValues)), out = in;
  for (uint32_t r = 0; r < kExactNodes; ++r)
    for (uint32_t i = 0; i < kExactValues; ++i) in[r][i] = exact_value(r, i);
  const auto sts = run_coll(*rig, world_comms(*rig), [&](size_t r) {
    CollArgs a = reduce_args(CollKind::kAllreduce, DType::kDouble, ROp::kSum, kExactValues, in[r].data(),
                             out[r].data());
    a.repro = Repro::kExact;
    return a;
  }, algo);
  const std::string what = std::string(dims) + " " + algo + " " + faults;
  check_all_ok(sts, what);
  if (!faults.empty()) CHECK_TEXT(rig->fabric().stats().dropped > 0, "the fault plan dropped frames");
  STRCMP_EQUAL((algo + " (exact)").c_str(), rig->node(0).comm().algo().c_str());
  // Two passes of the inner algorithm. The 40 values are one block; element
  // 1 spans the whole double range, so every value of the block takes its
  // 2098-bit window (8 nodes: 16 chunks of 124 bits in 16-byte fields, one
  // of 114 in 15) and, for element 3's -0, a 4-bit counter (one byte): per
  // group of 8 values 16 sub-blocks of 128 bytes, one of 120, one of 8,
  // packed without a gap into 256-byte operands.
  const auto* ex = dynamic_cast<const ExactSum*>(rig->node(0).comm().active_algo());
  CHECK_TRUE(ex != nullptr);
  LONGS_EQUAL(2, ex->pass());
  LONGS_EQUAL(256, ex->plan().width);
  LONGS_EQUAL((kExactValues / 8 * (16 * 128 + 120 + 8) + 255) / 256, ex->plan().operands);
  for (uint32_t i = 0; i < kExactValues; ++i) {
    std::vector<double> xs;
    for (uint32_t r = 0; r < kExactNodes; ++r) xs.push_back(in[r][i]);
    const double want = mpfr_sum(xs);
    for (uint32_t r = 0; r < kExactNodes; ++r) {
      char msg[200];
      snprintf(msg, sizeof msg, "%s node %u element %u: got %a want %a", what.c_str(), r, i, out[r][i], want);
      CHECK_TEXT(std::memcmp(&out[r][i], &want, 8) == 0, msg);
    }
  }
  return out[0];
}

void exact_everywhere(const std::string& faults) {
  std::vector<std::string> algos;
  for (const char* a : {"tree", "ring", "recursive-doubling", "torus-ring"})
    if (find_algo(CollKind::kAllreduce, a)) algos.push_back(a);
  CHECK_TRUE(algos.size() >= 1);
  std::vector<double> first;
  for (const std::string& algo : algos) {
    for (const char* dims : {"2x2x2", "8x1x1", "4x2x1"}) {
      const std::vector<double> got = exact_sum_on(dims, algo, faults);
      if (first.empty()) first = got;
      CHECK_TEXT(std::memcmp(first.data(), got.data(), 8 * kExactValues) == 0, "the same bits everywhere");
    }
  }
}

TEST(TreeColl, ExactSumIsCorrectlyRoundedForEveryAlgorithmAndShape) { exact_everywhere(""); }
TEST(TreeColl, ExactSumWithFaults) { exact_everywhere(kFaults); }

// Element i of rank r for exact-share: exact_value's edges and random
// doubles, and from element 40 on specials and overflow.
double share_value(uint32_t r, uint32_t i) {
  switch (i) {
    case 40: return r == 1 ? std::nan("") : 1.0;                          // any NaN -> the default NaN
    case 41: return r == 0 ? HUGE_VAL : r == 1 ? -HUGE_VAL : 2.0;         // +Inf and -Inf -> NaN
    case 42: return r == 0 ? -HUGE_VAL : -1e308;                          // -Inf
    case 43: return 0x1.fffffffffffffp1023;                               // rounds beyond the largest
    default: return exact_value(r, i % 40 == i ? i : 7 + i % 33 + (i / 40) * 1000);
  }
}

double share_want(const std::vector<double>& xs, uint32_t i) {
  switch (i) {
    case 40: case 41: return std::numeric_limits<double>::quiet_NaN();
    case 42: return -HUGE_VAL;
    case 43: return xs.size() > 1 ? HUGE_VAL : xs[0];
    default: return mpfr_sum(xs);
  }
}

// Runs exact-share on dims (count values, or in place) and checks every
// node's result against MPFR; returns node 0's.
std::vector<double> share_sum_on(const char* dims, uint32_t count, bool in_place, const std::string& faults,
                                 bool encode_pairs = false) {
  auto rig = booted_rig(dims, faults);
  CHECK_TRUE(rig != nullptr);
  const uint32_t n = rig->node_count();
  std::vector<std::vector<double>> in(n, std::vector<double>(count)), out(n, std::vector<double>(count, -1.0));
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t i = 0; i < count; ++i) in[r][i] = share_value(r, i);
  auto comms = world_comms(*rig);
  auto args_of = [&](size_t r) {
    if (in_place) out[r] = in[r];
    CollArgs a = reduce_args(CollKind::kAllreduce, DType::kDouble, ROp::kSum, count,
                             in_place ? nullptr : in[r].data(), out[r].data());
    a.repro = Repro::kExact;
    return a;
  };
  const std::string what = std::string(dims) + " " + std::to_string(count) + (in_place ? " in place " : " ") + faults;
  check_all_ok(run_coll(*rig, comms, args_of, "exact-share"), what);
  if (encode_pairs) {  // the object is kept: the second operation takes the encoded path
    for (Comm* c : comms) static_cast<ExactShare*>(c->active_algo())->set_encode_pairs(true);
    check_all_ok(run_coll(*rig, comms, args_of, "exact-share"), what);
  }
  const uint64_t blocks = (count + 63) / 64, share = (blocks + n - 1) / n * 64;
  for (uint32_t r = 0; r < n; ++r) {
    STRCMP_EQUAL("exact-share", comms[r]->algo().c_str());
    const auto* es = dynamic_cast<const ExactShare*>(comms[r]->active_algo());
    CHECK_TRUE(es != nullptr);
    LONGS_EQUAL(share, es->share());
    LONGS_EQUAL(share, es->rounded());  // its own share, not the n * share values
    CHECK_EQUAL(n == 2 && !encode_pairs, es->pair_add());
  }
  for (uint32_t i = 0; i < count; ++i) {
    std::vector<double> xs;
    for (uint32_t r = 0; r < n; ++r) xs.push_back(in[r][i]);
    const double want = share_want(xs, i);
    for (uint32_t r = 0; r < n; ++r) {
      char msg[200];
      snprintf(msg, sizeof msg, "%s node %u element %u: got %a want %a", what.c_str(), r, i, out[r][i], want);
      CHECK_TEXT(std::memcmp(&out[r][i], &want, 8) == 0, msg);
    }
  }
  if (!faults.empty()) CHECK_TEXT(rig->fabric().stats().dropped > 0, "the fault plan dropped frames");
  return out[0];
}

TEST(TreeColl, ExactShareRoundsEachShareOnceAtItsOwner) {
  share_sum_on("2x2x2", 5000, false, "");
  share_sum_on("2x2x2", 5000, true, kFaults);
  share_sum_on("2x2x2", 8 * 512, true, "");  // whole shares: no staging, in place in the caller's buffer
  share_sum_on("3x1x1", 1000, false, "");  // 16 blocks in shares of 6: the last padded
  share_sum_on("3x1x1", 44, true, "");
}

TEST(TreeColl, ExactShareOnTwoNodesAddsOnceOrEncodesWithTheSameBits) {
  const auto added = share_sum_on("2x1x1", 3000, false, "");
  const auto encoded = share_sum_on("2x1x1", 3000, false, "", true);
  CHECK_TRUE(std::memcmp(added.data(), encoded.data(), 8 * added.size()) == 0);
  share_sum_on("2x1x1", 100, true, kFaults);
  share_sum_on("2x1x1", 256, true, "");
}

// The links exact-share uses: the bytes of a plain alltoall of the doubles
// and an allgather of the shares, run by the same algorithms on the same
// partition, within 5 % (frame headers and acks vary with timing), and
// fewer than ExactSum's two passes of integer fields over rabenseifner.
TEST(TreeColl, ExactShareMovesTheDoublesOnly) {
  auto rig = booted_rig("2x2x2");
  CHECK_TRUE(rig != nullptr);
  const uint32_t n = rig->node_count();
  constexpr uint32_t kCount = 8 * 4096;
  std::vector<std::vector<double>> in(n, std::vector<double>(kCount)), out(n, std::vector<double>(kCount));
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t i = 0; i < kCount; ++i) in[r][i] = share_value(r, 44 + i);
  auto comms = world_comms(*rig);
  auto bytes_of = [&](const std::function<CollArgs(size_t)>& args_of, const char* algo) {
    const uint64_t before = rig->fabric().stats().bytes_delivered;
    check_all_ok(run_coll(*rig, comms, args_of, algo), algo);
    CHECK_TRUE(settle_quiet(*rig));
    return rig->fabric().stats().bytes_delivered - before;
  };
  auto sum = [&](size_t r) {
    CollArgs a = reduce_args(CollKind::kAllreduce, DType::kDouble, ROp::kSum, kCount, in[r].data(), out[r].data());
    a.repro = Repro::kExact;
    return a;
  };
  const uint64_t share = bytes_of(sum, "exact-share");
  const uint64_t two_pass = bytes_of(sum, "rabenseifner");
  STRCMP_EQUAL("rabenseifner (exact)", comms[0]->algo().c_str());
  const uint64_t a2a = bytes_of([&](size_t r) {
    CollArgs a = reduce_args(CollKind::kAlltoall, DType::kDouble, ROp::kSum, kCount / n, in[r].data(), out[r].data());
    return a;
  }, "");
  const uint64_t ag = bytes_of([&](size_t r) {
    CollArgs a = reduce_args(CollKind::kAllgather, DType::kDouble, ROp::kSum, kCount / n, nullptr, out[r].data());
    return a;
  }, "");
  char msg[200];
  snprintf(msg, sizeof msg, "exact-share %llu B, alltoall + allgather %llu + %llu B, ExactSum %llu B",
           static_cast<unsigned long long>(share), static_cast<unsigned long long>(a2a),
           static_cast<unsigned long long>(ag), static_cast<unsigned long long>(two_pass));
  CHECK_TEXT(share * 100 <= (a2a + ag) * 105 && share * 105 >= (a2a + ag) * 100, msg);
  CHECK_TEXT(share < two_pass, msg);
}

TEST(TreeColl, AMissingNodeMakesTheOthersTimeOutNamingTheNetwork) {
  struct Case {
    CollKind kind;
    const char* algo;
    const char* names;
  };
  for (const Case& c : {Case{CollKind::kAllreduce, "tree", "the combine network (class 1): add signed, 3 operands"},
                        Case{CollKind::kBarrier, "barrier-network", "the barrier network (channel"}}) {
    auto rig = booted_rig("2x2x1");
    const uint32_t n = rig->node_count();
    std::vector<int32_t> in(3, 1), out(3 * n);
    for (uint32_t r = 0; r + 1 < n; ++r) {  // the last node never starts
      Status st = rig->node(r).comm().start(
          reduce_args(c.kind, DType::kInt32, ROp::kSum, 3, in.data(), out.data() + 3 * r), c.algo);
      CHECK_TEXT(st.is_ok(), st.to_string().c_str());
    }
    // One second of virtual time: past the communicators' 0.5 s deadline.
    // (drive_until cannot be used: with every node idle until a deadline the
    // fabric's clock does not move in its 50 us slices.)
    for (uint32_t r = 0; r < n; ++r) rig->fabric().wake(r, rig->fabric().now());
    rig->fabric().run(rig->fabric().now() + kSec);
    for (uint32_t r = 0; r + 1 < n; ++r) {
      Status st;
      CHECK_TRUE(rig->node(r).comm().test(&st));
      CHECK_TRUE(st.code() == Code::kTimeout);
      CHECK_TEXT(st.message().find(c.names) != std::string::npos, st.message().c_str());
    }
  }
}
