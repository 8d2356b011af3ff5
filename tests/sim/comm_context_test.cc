// Communicators that cannot collide (issue 13): contexts agreed by the
// members, full-size sub-communicators that are not taken for the world,
// communicators of any membership, and the operation counter across its wrap.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "tests/sim/coll_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

CollArgs sum_i64(std::vector<int64_t>& buf) {
  CollArgs a;
  a.kind = CollKind::kAllreduce;
  a.dtype = DType::kInt64;
  a.op = ROp::kSum;
  a.recv = buf.data();
  a.count = buf.size();
  return a;
}

std::vector<Comm*> raw(const std::vector<std::unique_ptr<Comm>>& v) {
  std::vector<Comm*> out;
  for (const auto& c : v) out.push_back(c.get());
  return out;
}

}  // namespace

TEST_GROUP(CommContexts){};

// A line as long as the partition (8x1x1) is a sub-communicator, not the
// world: the selector picks a point-to-point algorithm for it and its
// messages reach it. A reversed list of all ranks is a communicator of its own.
TEST(CommContexts, FullSizeSubCommunicatorOn8x1x1Works) {
  LogCapture log;
  auto rig = booted_rig("8x1x1");
  CHECK_TRUE(rig != nullptr);
  const uint32_t n = rig->node_count();
  const auto line_ids = agree_contexts(*rig, world_comms(*rig));
  const auto rev_ids = agree_contexts(*rig, world_comms(*rig));
  std::vector<std::unique_ptr<Comm>> lines(n), revs(n);
  std::vector<uint32_t> reversed;
  for (uint32_t r = n; r-- > 0;) reversed.push_back(r);
  for (uint32_t r = 0; r < n; ++r) {
    CHECK_TRUE(line_ids[r] >= ContextTable::kFirstAgreed);
    UNSIGNED_LONGS_EQUAL(line_ids[0], line_ids[r]);
    lines[r] = std::move(rig->node(r).comm().split_line(0, line_ids[r]).value());
    revs[r] = std::move(rig->node(r).comm().create(reversed, rev_ids[r]).value());
    UNSIGNED_LONGS_EQUAL(8, lines[r]->size());
    CHECK_FALSE(lines[r]->info().world);
    CHECK_TRUE(lines[r]->info().box);
    CHECK_FALSE(revs[r]->info().box);
    UNSIGNED_LONGS_EQUAL(n - 1 - r, revs[r]->rank());
    UNSIGNED_LONGS_EQUAL(r, revs[r]->world_rank_of(n - 1 - r));
  }
  for (auto* comms : {&lines, &revs}) {
    std::vector<std::vector<int64_t>> buf(n);
    for (uint32_t r = 0; r < n; ++r) buf[r] = {static_cast<int64_t>((*comms)[r]->rank()) + 1, 5};
    auto st = run_coll(*rig, raw(*comms), [&](size_t i) { return sum_i64(buf[i]); });
    for (uint32_t r = 0; r < n; ++r) {
      CHECK_TRUE_TEXT(st[r].is_ok(), st[r].to_string().c_str());
      LONGS_EQUAL(36, buf[r][0]);
      LONGS_EQUAL(40, buf[r][1]);
      CHECK_TRUE_TEXT((*comms)[r]->algo().rfind("torus", 0) != 0, (*comms)[r]->algo().c_str());
    }
  }
}

// Communicators made and freed over and over, several alive at once with
// overlapping members: every member gets the same id, no node ever holds
// one id for two live communicators, each one's allreduce sums exactly its
// own members, and the ids all come back when they are freed.
TEST(CommContexts, CommunicatorsMadeAndFreedNeverShareAnId) {
  LogCapture log;
  auto rig = booted_rig("2x2x1");
  CHECK_TRUE(rig != nullptr);
  const uint32_t n = rig->node_count();
  const uint32_t baseline = rig->node(0).comm().contexts().used();
  std::vector<std::vector<std::unique_ptr<Comm>>> live;  // [k][node]
  Rng rng(7);
  for (uint32_t step = 0; step < 3000; ++step) {
    if (live.size() < 6 || rng.next() % 2) {
      // A new communicator over a random subset that includes every node
      // (so every node takes part in the agreement over the world).
      std::vector<uint32_t> order;
      for (uint32_t r = 0; r < n; ++r) order.push_back(r);
      for (uint32_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
      const auto ids = agree_contexts(*rig, world_comms(*rig));
      std::vector<std::unique_ptr<Comm>> made(n);
      for (uint32_t r = 0; r < n; ++r) {
        UNSIGNED_LONGS_EQUAL(ids[0], ids[r]);
        for (const auto& k : live) CHECK_TRUE_TEXT(k[r]->context() != ids[r], "an id of a live communicator came back");
        made[r] = std::move(rig->node(r).comm().create(order, ids[r]).value());
      }
      std::vector<std::vector<int64_t>> buf(n);
      for (uint32_t r = 0; r < n; ++r) buf[r] = {static_cast<int64_t>(made[r]->rank()) * 10 + step};
      auto st = run_coll(*rig, raw(made), [&](size_t i) { return sum_i64(buf[i]); }, step % 2 ? "ring" : "");
      for (uint32_t r = 0; r < n; ++r) {
        CHECK_TRUE_TEXT(st[r].is_ok(), st[r].to_string().c_str());
        LONGS_EQUAL(60 + 4 * step, buf[r][0]);
      }
      live.push_back(std::move(made));
    } else {
      const size_t k = rng.below(live.size());
      live.erase(live.begin() + static_cast<ptrdiff_t>(k));
    }
  }
  live.clear();
  for (uint32_t r = 0; r < n; ++r) UNSIGNED_LONGS_EQUAL(baseline, rig->node(r).comm().contexts().used());
}

// The operation counter of a communicator starts just below its wrap: the
// operations across it match their messages and packets (tags compare
// modulo 2^32), on the world's torus algorithms and on a sub-communicator.
TEST(CommContexts, OperationCounterWrapsWithoutConfusion) {
  LogCapture log;
  auto rig = booted_rig("2x2x1");
  CHECK_TRUE(rig != nullptr);
  const uint32_t n = rig->node_count();
  const auto ids = agree_contexts(*rig, world_comms(*rig));
  std::vector<std::unique_ptr<Comm>> lines(n);
  for (uint32_t r = 0; r < n; ++r) {
    lines[r] = std::move(rig->node(r).comm().split_line(1, ids[r]).value());
    rig->node(r).comm().skip_tags(0xfffffffdu);
    lines[r]->skip_tags(0xfffffffeu);
  }
  for (uint32_t op = 0; op < 6; ++op) {
    std::vector<std::vector<int64_t>> w(n), l(n);
    for (uint32_t r = 0; r < n; ++r) {
      w[r].assign(3 + op, r + op);
      l[r].assign(2, 100 * r);
    }
    const char* algo = op % 3 == 0 ? "torus-ring" : op % 3 == 1 ? "ring" : "torus-fixed-order";
    auto sw = run_coll(*rig, world_comms(*rig), [&](size_t i) { return sum_i64(w[i]); }, algo);
    auto sl = run_coll(*rig, raw(lines), [&](size_t i) { return sum_i64(l[i]); }, "recursive-doubling");
    for (uint32_t r = 0; r < n; ++r) {
      CHECK_TRUE_TEXT(sw[r].is_ok(), sw[r].to_string().c_str());
      CHECK_TRUE_TEXT(sl[r].is_ok(), sl[r].to_string().c_str());
      for (int64_t v : w[r]) LONGS_EQUAL(6 + 4 * op, v);
      const Coord me = coord_of(r, Dims{{2, 2, 1}});
      const int64_t line_sum = 100 * (rank_of(Coord{{me.c[0], 0, 0}}, Dims{{2, 2, 1}}) +
                                      rank_of(Coord{{me.c[0], 1, 0}}, Dims{{2, 2, 1}}));
      LONGS_EQUAL(line_sum, l[r][0]);
    }
  }
  UNSIGNED_LONGS_EQUAL(2, rig->node(0).comm().tag());  // wrapped: 0xfffffffd .. 0xffffffff, 0, 1, 2
  UNSIGNED_LONGS_EQUAL(3, lines[0]->tag());
}
