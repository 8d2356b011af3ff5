// The generic binomial-tree schedules (bcast, reduce, gather, scatter), every
// rank's plan run together by plan_sim.h for every n, several roots and
// counts, in place or not: exact results at the right ranks (and recv left
// untouched where the collective has no result); ceil(log2 n) steps at the
// root and on the critical path; each rank sends or receives exactly its
// subtree; the reduce equal bit for bit to its fixed binomial order.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/schedule/generic.h"
#include "tests/unit/collectives/generic/generic_test_util.h"
#include "tests/unit/collectives/plan_sim.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::schedule;
using namespace toroid::gentest;

namespace {

std::vector<uint32_t> roots_for(uint32_t n) {
  if (n <= 9) {
    std::vector<uint32_t> v;
    for (uint32_t r = 0; r < n; ++r) v.push_back(r);
    return v;
  }
  return {0, 1, n / 2 + 1, n - 1};
}

uint32_t subtree(uint32_t n, uint32_t v) { return v == 0 ? n : std::min(lowbit(v), n - v); }

const std::vector<uint8_t> kPoison(8, 0xA5);
bool untouched(const std::vector<uint8_t>& out) {
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != 0xA5) return false;
  return true;
}

// Common properties of a binomial run: the root takes ceil(log2 n) steps,
// so does the critical path, n-1 messages in all.
void check_tree_shape(const plansim::Report& rep, uint32_t n, uint32_t root, const std::string& w) {
  LONGS_EQUAL_TEXT(ceil_log2(n), rep.steps[root], w.c_str());
  LONGS_EQUAL_TEXT(ceil_log2(n), rep.time, w.c_str());
  uint64_t msgs = 0;
  for (uint32_t r = 0; r < n; ++r) msgs += rep.msgs_sent[r];
  LONGS_EQUAL_TEXT(n - 1, msgs, w.c_str());
}

// The binomial reduce's value for relative rank v, in its combining order.
double tree_sum(uint32_t n, uint32_t root, uint32_t v, uint64_t i) {
  double acc = dval((v + root) % n, i);
  for (uint32_t m = 1; m < n && !(v & m); m <<= 1)
    if (v + m < n) acc = acc + tree_sum(n, root, v + m, i);
  return acc;
}

}  // namespace

TEST_GROUP(GenericRooted){};

TEST(GenericRooted, BinomialBcast) {
  for (uint32_t n : node_counts())
    for (uint32_t root : roots_for(n))
      for (uint64_t count : counts_for(n)) {
        std::vector<plansim::RankIO> io(n);
        std::vector<int64_t> data(count);
        for (uint64_t i = 0; i < count; ++i) data[i] = ival(root, i);
        for (uint32_t r = 0; r < n; ++r) io[r] = make_io(r == root ? data : std::vector<int64_t>(count, -1), 0, true);
        auto ps = plans_of(n, [&](uint32_t nn, uint32_t r) { return binomial_bcast_plan(nn, r, root, count); });
        auto rep = plansim::run_plans(ps, io, 8, nullptr);
        const std::string w = where("bcast binomial", n, count, false, root);
        CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
        for (uint32_t r = 0; r < n; ++r) {
          CHECK_TEXT(plansim::from_bytes<int64_t>(io[r].out) == data, w.c_str());
          if (r != root) LONGS_EQUAL_TEXT(count * 8, rep.recv_bytes[r], w.c_str());  // received once
        }
        LONGS_EQUAL(0, rep.recv_bytes[root]);
        check_tree_shape(rep, n, root, w);
      }
}

TEST(GenericRooted, BinomialReduceIsExactAtTheRootOnly) {
  for (uint32_t n : node_counts())
    for (uint32_t root : roots_for(n))
      for (uint64_t count : counts_for(n))
        for (bool in_place : {false, true}) {
          std::vector<plansim::RankIO> io(n);
          std::vector<int64_t> want(count, 0);
          for (uint32_t r = 0; r < n; ++r) {
            std::vector<int64_t> in(count);
            for (uint64_t i = 0; i < count; ++i) {
              in[i] = ival(r, i);
              want[i] = static_cast<int64_t>(static_cast<uint64_t>(want[i]) + static_cast<uint64_t>(in[i]));
            }
            io[r] = make_io(in, count, in_place);
          }
          auto ps = plans_of(
              n, [&](uint32_t nn, uint32_t r) { return binomial_reduce_plan(nn, r, root, count, in_place); });
          auto rep = plansim::run_plans(ps, io, 8, sum_i64());
          const std::string w = where("reduce binomial", n, count, in_place, root);
          CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
          CHECK_TEXT(plansim::from_bytes<int64_t>(io[root].out) == want, w.c_str());
          for (uint32_t r = 0; r < n; ++r) {
            if (r == root) continue;
            if (!in_place) CHECK_TEXT(untouched(io[r].out), (w + ": recv written at a non-root").c_str());
            LONGS_EQUAL_TEXT(count * 8, rep.sent_bytes[r], w.c_str());  // one send of count per non-root
            CHECK(ps[r].tmp_elems <= count);
          }
          check_tree_shape(rep, n, root, w);
        }
}

TEST(GenericRooted, BinomialReduceFollowsItsFixedOrderBitForBit) {
  for (uint32_t n : node_counts())
    for (uint32_t root : {0u, n - 1}) {
      const uint64_t count = 17;
      std::vector<plansim::RankIO> io(n);
      for (uint32_t r = 0; r < n; ++r) {
        std::vector<double> in(count);
        for (uint64_t i = 0; i < count; ++i) in[i] = dval(r, i);
        io[r] = make_io(in, count, false);
      }
      auto ps = plans_of(n, [&](uint32_t nn, uint32_t r) { return binomial_reduce_plan(nn, r, root, count, false); });
      auto rep = plansim::run_plans(ps, io, 8, sum_f64());
      CHECK_TEXT(rep.ok, rep.error.c_str());
      auto got = plansim::from_bytes<double>(io[root].out);
      for (uint64_t i = 0; i < count; ++i) {
        double want = tree_sum(n, root, 0, i);
        CHECK_TEXT(std::memcmp(&want, &got[i], 8) == 0, where("reduce binomial", n, count, false, root).c_str());
      }
    }
}

TEST(GenericRooted, BinomialGather) {
  for (uint32_t n : node_counts())
    for (uint32_t root : roots_for(n))
      for (uint64_t count : counts_for(n))
        for (bool in_place : {false, true}) {
          std::vector<plansim::RankIO> io(n);
          for (uint32_t r = 0; r < n; ++r) {
            std::vector<int64_t> in(count);
            for (uint64_t i = 0; i < count; ++i) in[i] = ival(r, i);
            const bool at_root = r == root;
            io[r] = make_io(in, at_root ? uint64_t{n} * count : (in_place ? 0 : count), in_place,
                            at_root ? uint64_t{root} * count : 0);
          }
          auto ps = plans_of(
              n, [&](uint32_t nn, uint32_t r) { return binomial_gather_plan(nn, r, root, count, in_place); });
          auto rep = plansim::run_plans(ps, io, 8, nullptr);
          const std::string w = where("gather binomial", n, count, in_place, root);
          CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
          auto got = plansim::from_bytes<int64_t>(io[root].out);
          for (uint32_t s = 0; s < n; ++s)
            for (uint64_t i = 0; i < count; ++i) CHECK_TEXT(got[s * count + i] == ival(s, i), w.c_str());
          for (uint32_t r = 0; r < n; ++r) {
            const uint32_t v = (r + n - root) % n;
            if (r != root) {
              LONGS_EQUAL_TEXT(subtree(n, v) * count * 8, rep.sent_bytes[r], w.c_str());  // its subtree, once
              if (!in_place) CHECK_TEXT(untouched(io[r].out), (w + ": recv written at a non-root").c_str());
            }
          }
          check_tree_shape(rep, n, root, w);
        }
}

TEST(GenericRooted, BinomialScatter) {
  for (uint32_t n : node_counts())
    for (uint32_t root : roots_for(n))
      for (uint64_t count : counts_for(n))
        for (bool in_place : {false, true}) {
          std::vector<plansim::RankIO> io(n);
          std::vector<int64_t> all(uint64_t{n} * count);
          for (uint32_t s = 0; s < n; ++s)
            for (uint64_t i = 0; i < count; ++i) all[s * count + i] = ival(s, i, 5);
          for (uint32_t r = 0; r < n; ++r)
            io[r] = r == root ? make_io(all, in_place ? 0 : count, in_place)
                              : make_io(std::vector<int64_t>{}, count, false);
          auto ps = plans_of(
              n, [&](uint32_t nn, uint32_t r) { return binomial_scatter_plan(nn, r, root, count, in_place); });
          auto rep = plansim::run_plans(ps, io, 8, nullptr);
          const std::string w = where("scatter binomial", n, count, in_place, root);
          CHECK_TEXT(rep.ok, (w + ": " + rep.error).c_str());
          for (uint32_t r = 0; r < n; ++r) {
            auto got = plansim::from_bytes<int64_t>(io[r].out);
            // in place, the root's block stays where it is in the input (MPI_IN_PLACE)
            const uint64_t at = (r == root && in_place) ? uint64_t{root} * count : 0;
            for (uint64_t i = 0; i < count; ++i) CHECK_TEXT(got[at + i] == ival(r, i, 5), w.c_str());
            const uint32_t v = (r + n - root) % n;
            if (r != root) LONGS_EQUAL_TEXT(subtree(n, v) * count * 8, rep.recv_bytes[r], w.c_str());
          }
          check_tree_shape(rep, n, root, w);
        }
}
