// The selector's table (docs/collectives.md) on typical communicators, its
// fallbacks, the fixed-order rule, and that every registered algorithm has
// a name, a source and an applicability answer for every kind of shape.
#include <set>
#include <string>

#include "collectives/coll.h"
#include "collectives/select.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

CommInfo world(const char* shape, bool net = true) {
  CommInfo c;
  c.shape = parse_dims(shape).value();
  c.size = c.shape.nodes();
  c.world = true;
  c.has_tree = net;
  c.has_barrier = net;
  return c;
}

CollArgs args(CollKind k, uint64_t count, DType t = DType::kInt64, ROp op = ROp::kSum) {
  CollArgs a;
  a.kind = k;
  a.count = count;
  a.dtype = t;
  a.op = op;
  a.esize = coll_reduces(k) ? elem_size(t, op) : dtype_size(t);
  return a;
}

std::string pick(const CommInfo& c, const CollArgs& a) {
  auto r = select_algo(c, a);
  return r ? r.value()->name : "error: " + r.status().message();
}

}  // namespace

TEST_GROUP(Select){};

TEST(Select, RegistryIsComplete) {
  std::set<std::string> names;
  for (const AlgoInfo& a : algorithms()) {
    CHECK(a.name && *a.name);
    CHECK(a.source && *a.source);
    CHECK(a.make != nullptr);
    CHECK_TRUE_TEXT(names.insert(std::string(coll_kind_name(a.kind)) + "/" + a.name).second, a.name);
  }
  // Every kind has at least one algorithm that runs anywhere (point-to-point).
  for (int k = 0; k < kCollKinds; ++k) {
    const CollKind kind = static_cast<CollKind>(k);
    CommInfo sub;
    sub.shape = parse_dims("3x1x1").value();
    sub.size = 3;
    CHECK_FALSE_TEXT(pick(sub, args(kind, 10)).rfind("error", 0) == 0, coll_kind_name(kind));
  }
}

TEST(Select, TableChoices) {
  // The 2x2x2 cube: every recursive partner a direct neighbour.
  const CommInfo cube = world("2x2x2");
  STRCMP_EQUAL("torus-tree", pick(cube, args(CollKind::kAllreduce, 1)).c_str());
  STRCMP_EQUAL("torus-tree", pick(cube, args(CollKind::kAllreduce, 2048)).c_str());
  STRCMP_EQUAL("rabenseifner", pick(cube, args(CollKind::kAllreduce, 2049)).c_str());
  STRCMP_EQUAL("barrier-network", pick(cube, args(CollKind::kBarrier, 0)).c_str());
  STRCMP_EQUAL("line-multicast", pick(cube, args(CollKind::kBcast, 1)).c_str());
  STRCMP_EQUAL("recursive-doubling", pick(cube, args(CollKind::kAllgather, 1 << 16)).c_str());
  // Exact float sums: each rank rounds its own share above 2 KiB, where
  // every share holds a whole block of 64 values.
  CollArgs exact = args(CollKind::kAllreduce, 256, DType::kDouble);
  exact.repro = Repro::kExact;
  STRCMP_EQUAL("torus-ring", pick(world("2x1x1"), exact).c_str());  // run twice inside ExactSum
  exact.count = 257;
  STRCMP_EQUAL("exact-share", pick(world("2x1x1"), exact).c_str());
  STRCMP_EQUAL("torus-tree", pick(cube, exact).c_str());  // 257 < 8 x 64
  exact.count = 8 * 64;
  STRCMP_EQUAL("exact-share", pick(cube, exact).c_str());
  exact.count = 27 * 64 - 1;
  STRCMP_EQUAL("rabenseifner", pick(world("3x3x3"), exact).c_str());  // inside ExactSum
  exact.count = 27 * 64;
  STRCMP_EQUAL("exact-share", pick(world("3x3x3"), exact).c_str());
  exact.count = 257;
  exact.repro = Repro::kNone;
  STRCMP_EQUAL("rabenseifner", pick(world("3x3x3"), exact).c_str());  // plain: the usual table
  // Two nodes: one packet each way instead of the network's up and down, as
  // collective packets (torus-ring) on the world, as messages on a pair.
  const CommInfo two = world("2x1x1");
  STRCMP_EQUAL("torus-ring", pick(two, args(CollKind::kBarrier, 0)).c_str());
  STRCMP_EQUAL("torus-ring", pick(two, args(CollKind::kAllreduce, 1)).c_str());
  STRCMP_EQUAL("torus-ring", pick(two, args(CollKind::kAllreduce, 1024)).c_str());
  STRCMP_EQUAL("ring", pick(two, args(CollKind::kAllreduce, 1 << 20)).c_str());
  STRCMP_EQUAL("line-multicast", pick(two, args(CollKind::kBcast, 1)).c_str());
  STRCMP_EQUAL("binomial", pick(two, args(CollKind::kReduce, 128)).c_str());
  STRCMP_EQUAL("recursive-doubling", pick(two, args(CollKind::kAllgather, 128)).c_str());
  // A two-node sub-communicator: torus-ring runs on the world only, so the
  // point-to-point exchange (1.41 us there).
  CommInfo pair = world("2x1x1", false);
  pair.world = false;
  STRCMP_EQUAL("recursive-doubling", pick(pair, args(CollKind::kAllreduce, 1)).c_str());
  STRCMP_EQUAL("dissemination", pick(pair, args(CollKind::kBarrier, 0)).c_str());
  // PROD is not on the combine ALU either way; torus-ring takes it.
  STRCMP_EQUAL("torus-ring", pick(two, args(CollKind::kAllreduce, 4, DType::kInt32, ROp::kProd)).c_str());
  // PROD is not on the combine ALU, but torus-tree reduces on the torus and
  // only broadcasts on the combine network; the tree takes none.
  STRCMP_EQUAL("torus-tree", pick(cube, args(CollKind::kAllreduce, 4, DType::kInt32, ROp::kProd)).c_str());
  STRCMP_EQUAL("recursive-doubling",
               pick(world("2x2x2", false), args(CollKind::kAllreduce, 4, DType::kInt32, ROp::kProd)).c_str());
  // Large vectors on the 2x2x2 cube: recursive halving, then doubling.
  STRCMP_EQUAL("rabenseifner", pick(cube, args(CollKind::kAllreduce, 1 << 20)).c_str());
  STRCMP_EQUAL("bruck", pick(cube, args(CollKind::kAlltoall, 4)).c_str());
  CollArgs big = args(CollKind::kAlltoall, 1 << 16);
  const int64_t dummy = 0;
  big.send = &dummy;  // not in place
  STRCMP_EQUAL("pairwise", pick(cube, big).c_str());  // 512 KiB blocks on the cube
  big.count = 1 << 13;                                  // 64 KiB blocks
  STRCMP_EQUAL("pairwise", pick(cube, big).c_str());
  big.count = (1 << 13) - 1;  // just under: the torus-aware random order
  STRCMP_EQUAL("random-order", pick(cube, big).c_str());
  big.count = 1 << 12;  // 32 KiB blocks
  STRCMP_EQUAL("random-order", pick(cube, big).c_str());
  STRCMP_EQUAL("random-order", pick(world("4x2x1"), big).c_str());
  big.send = nullptr;  // in place
  CHECK(big.in_place());
  STRCMP_EQUAL("xor-inplace", pick(cube, big).c_str());
  // A sub-communicator has neither tree nor barrier network.
  CommInfo line = world("8x1x1", false);
  line.world = false;
  STRCMP_EQUAL("recursive-doubling", pick(line, args(CollKind::kAllreduce, 1)).c_str());
  STRCMP_EQUAL("dissemination", pick(line, args(CollKind::kBarrier, 0)).c_str());
  STRCMP_EQUAL("ring", pick(world("3x3x3"), args(CollKind::kAllreduce, 1 << 20)).c_str());
}

TEST(Select, FixedOrderExcludesAlgorithmsThatAddInNodeOrder) {
  const CommInfo c = world("4x4x1");
  CollArgs a = args(CollKind::kAllreduce, 1 << 20, DType::kDouble);
  a.repro = Repro::kFixedOrder;
  for (const AlgoInfo& info : algorithms()) {
    if (info.kind != CollKind::kAllreduce || info.fixed_order) continue;
    const std::string why = algo_unusable(info, c, a);
    CHECK_TEXT(why.find("fixed-order") != std::string::npos, info.name);
  }
  const AlgoInfo* chosen = select_algo(c, a).value();
  CHECK_TRUE(chosen->fixed_order);
}
