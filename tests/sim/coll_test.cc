// The communicator on the sim rig: sub-communicators (lines, planes, boxes)
// with their own contexts and ranks, several collectives in flight at once
// on different communicators without cross-talk, point-to-point messages by
// source with pooled send buffers, errors as statuses, the coll job's
// fingerprints, and every collective under a lossy fabric.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "firmware/jobs/coll_case.h"
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

}  // namespace

TEST_GROUP(Comm){};

TEST(Comm, SubCommunicatorsNameRanksByCoordinates) {
  LogCapture log;
  auto rig = booted_rig("4x2x3");
  CHECK_TRUE(rig != nullptr);
  const uint32_t n = rig->node_count();
  std::vector<std::unique_ptr<Comm>> lines(n), planes(n), boxes(n);
  const auto line_ids = agree_contexts(*rig, world_comms(*rig));
  const auto plane_ids = agree_contexts(*rig, world_comms(*rig));
  const auto box_ids = agree_contexts(*rig, world_comms(*rig));
  for (uint32_t r = 0; r < n; ++r) {
    Comm& w = rig->node(r).comm();
    const Coord me = coord_of(r, w.shape());
    CHECK_TRUE(line_ids[r] >= ContextTable::kFirstAgreed);
    UNSIGNED_LONGS_EQUAL(line_ids[0], line_ids[r]);  // the same id on every member
    CHECK(line_ids[r] != plane_ids[r] && plane_ids[r] != box_ids[r] && box_ids[r] != line_ids[r]);
    lines[r] = std::move(w.split_line(0, line_ids[r]).value());
    planes[r] = std::move(w.split_plane(0, 2, plane_ids[r]).value());
    boxes[r] = std::move(w.split_box(Coord{{1, 0, 1}}, Dims{{2, 2, 2}}, box_ids[r]).value());
    UNSIGNED_LONGS_EQUAL(4, lines[r]->size());
    UNSIGNED_LONGS_EQUAL(me.c[0], lines[r]->rank());
    UNSIGNED_LONGS_EQUAL(12, planes[r]->size());
    UNSIGNED_LONGS_EQUAL(me.c[0] + 4 * me.c[2], planes[r]->rank());
    CHECK(lines[r]->context() != planes[r]->context());
    CHECK(lines[r]->context() != w.context());
    const bool inside = me.c[0] >= 1 && me.c[0] <= 2 && me.c[2] >= 1;
    CHECK_EQUAL(inside, boxes[r] != nullptr);
    if (inside) {
      UNSIGNED_LONGS_EQUAL(8, boxes[r]->size());
      CHECK(boxes[r]->world_coord_of(boxes[r]->rank()) == me);
      CHECK(boxes[r]->world_coord_of(0) == (Coord{{1, 0, 1}}));
    }
    CHECK(lines[r]->world_coord_of(lines[r]->rank()) == me);
  }
  // Bad splits are errors that say why.
  auto bad = rig->node(0).comm().split_box(Coord{{3, 0, 0}}, Dims{{2, 1, 1}}, 100);
  CHECK_FALSE(bad.is_ok());
  STRCMP_CONTAINS("does not fit", bad.status().message().c_str());
  CHECK_FALSE(rig->node(0).comm().split_line(3, 100).is_ok());

  // A SUM over each line adds exactly that line's world ranks.
  std::vector<std::vector<int64_t>> buf(n);
  std::vector<Comm*> comms;
  for (uint32_t r = 0; r < n; ++r) {
    buf[r] = {static_cast<int64_t>(r), 1};
    comms.push_back(lines[r].get());
  }
  auto st = run_coll(*rig, comms, [&](size_t i) { return sum_i64(buf[i]); }, "ring");
  for (uint32_t r = 0; r < n; ++r) {
    CHECK_TRUE_TEXT(st[r].is_ok(), st[r].to_string().c_str());
    const Coord me = coord_of(r, rig->node(r).comm().shape());
    int64_t want = 0;
    for (uint32_t x = 0; x < 4; ++x) want += rank_of(Coord{{x, me.c[1], me.c[2]}}, rig->node(r).comm().shape());
    LONGS_EQUAL(want, buf[r][0]);
    LONGS_EQUAL(4, buf[r][1]);
  }
}

// Three communicators per node (the world, its x line, its xy plane) run
// allreduces concurrently, interleaved over several rounds with different
// lengths and algorithms: each result is exactly its own group's sum, so
// no message of one communicator was taken by another.
TEST(Comm, ConcurrentCommunicatorsDoNotCrossTalk) {
  LogCapture log;
  auto rig = booted_rig("2x2x2");
  CHECK_TRUE(rig != nullptr);
  const uint32_t n = rig->node_count();
  std::vector<std::unique_ptr<Comm>> lines(n), planes(n);
  const auto line_ids = agree_contexts(*rig, world_comms(*rig));
  const auto plane_ids = agree_contexts(*rig, world_comms(*rig));
  for (uint32_t r = 0; r < n; ++r) {
    lines[r] = std::move(rig->node(r).comm().split_line(0, line_ids[r]).value());
    planes[r] = std::move(rig->node(r).comm().split_plane(0, 1, plane_ids[r]).value());
  }
  const Dims dims = rig->node(0).comm().shape();
  for (uint32_t round = 0; round < 6; ++round) {
    std::vector<std::vector<int64_t>> w(n), l(n), p(n);
    std::vector<Status> sw(n), sl(n), sp(n);
    for (uint32_t r = 0; r < n; ++r) {
      w[r].assign(5 + round, 1000 + r);
      l[r].assign(3 + 2 * round, 10 * r);
      p[r].assign(7 + round, r * r);
      CHECK(rig->node(r).comm().start(sum_i64(w[r]), round % 2 ? "recursive-doubling" : "ring").is_ok());
      CHECK(lines[r]->start(sum_i64(l[r]), "ring").is_ok());
      CHECK(planes[r]->start(sum_i64(p[r]), round % 2 ? "ring" : "rabenseifner").is_ok());
    }
    const bool done = drive_until(*rig, [&] {
      for (uint32_t r = 0; r < n; ++r) {
        Status st;
        if (!rig->node(r).comm().test(&st) || !lines[r]->test(&st) || !planes[r]->test(&st)) return false;
      }
      return true;
    });
    CHECK_TRUE(done);
    for (uint32_t r = 0; r < n; ++r) {
      Status st;
      CHECK(rig->node(r).comm().test(&st) && st.is_ok());
      CHECK(lines[r]->test(&st) && st.is_ok());
      CHECK(planes[r]->test(&st) && st.is_ok());
      const Coord me = coord_of(r, dims);
      int64_t ws = 0, ls = 0, ps = 0;
      for (uint32_t q = 0; q < n; ++q) {
        const Coord c = coord_of(q, dims);
        ws += 1000 + q;
        if (c.c[1] == me.c[1] && c.c[2] == me.c[2]) ls += 10 * q;
        if (c.c[2] == me.c[2]) ps += q * q;
      }
      for (int64_t v : w[r]) LONGS_EQUAL(ws, v);
      for (int64_t v : l[r]) LONGS_EQUAL(ls, v);
      for (int64_t v : p[r]) LONGS_EQUAL(ps, v);
    }
  }
}

// Point-to-point by source: sends return at once (the data is copied into
// pooled buffers that are reclaimed as sends complete), messages of a pair
// arrive in order, and the caller may reuse its buffer immediately.
TEST(Comm, PointToPointBySourceWithPooledSends) {
  LogCapture log;
  auto rig = booted_rig("4x2x1");
  CHECK_TRUE(rig != nullptr);
  const uint32_t n = rig->node_count();
  for (uint32_t r = 0; r < n; ++r) {
    Comm& c = rig->node(r).comm();
    std::vector<uint8_t> msg;
    for (uint32_t k = 0; k < 5; ++k) {
      msg.assign(100 + 3000 * k, static_cast<uint8_t>(r * 16 + k));
      CHECK(c.send((r + 1) % n, msg.data(), msg.size()).is_ok());
      std::fill(msg.begin(), msg.end(), 0xee);  // the library kept its own copy
    }
    CHECK(c.sends_in_flight() > 0);
  }
  std::vector<std::vector<std::vector<uint8_t>>> got(n);
  CHECK_TRUE(drive_until(*rig, [&] {
    bool all = true;
    for (uint32_t r = 0; r < n; ++r) {
      std::vector<uint8_t> m;
      while (rig->node(r).comm().try_recv((r + n - 1) % n, &m)) got[r].push_back(m);
      all &= got[r].size() == 5 && rig->node(r).comm().sends_in_flight() == 0;
    }
    return all;
  }));
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t src = (r + n - 1) % n;
    for (uint32_t k = 0; k < 5; ++k) {
      UNSIGNED_LONGS_EQUAL(100 + 3000 * k, got[r][k].size());
      for (uint8_t b : got[r][k]) UNSIGNED_LONGS_EQUAL(src * 16 + k, b);
    }
    UNSIGNED_LONGS_EQUAL(0, rig->node(r).comm().counters().p2p_pool_bytes);
  }
}

TEST(Comm, ErrorsComeBackAsStatuses) {
  LogCapture log;
  auto rig = booted_rig("2x2x1");
  CHECK_TRUE(rig != nullptr);
  Comm& c = rig->node(0).comm();
  std::vector<int64_t> buf(4);
  CollArgs a = sum_i64(buf);
  Status st = c.start(a, "no-such-algo");
  STRCMP_CONTAINS("unknown algorithm 'no-such-algo' (known: ", st.message().c_str());
  a.dtype = DType::kDouble;
  a.op = ROp::kBxor;
  STRCMP_CONTAINS("bxor is defined for integer types only", c.start(a).message().c_str());
  a.dtype = DType::kInt64;
  a.op = ROp::kSum;
  STRCMP_CONTAINS("not applicable", c.start(a, "cube300").message().c_str());
  a.recv = nullptr;
  STRCMP_CONTAINS("no receive buffer", c.start(a).message().c_str());

  // Mismatched sizes across nodes: node 0 has 5 elements, the others 7.
  const uint32_t n = rig->node_count();
  std::vector<std::vector<int64_t>> bufs(n);
  for (uint32_t r = 0; r < n; ++r) bufs[r].assign(r == 0 ? 5 : 7, 1);
  auto sts = run_coll(*rig, world_comms(*rig), [&](size_t i) { return sum_i64(bufs[i]); }, "recursive-doubling",
                      600 * kMs);
  bool named = false;
  for (const Status& s : sts) named |= s.message().find("mismatched sizes across nodes") != std::string::npos;
  CHECK_TRUE_TEXT(named, sts[0].to_string().c_str());
}

// --job coll prints one fingerprint per node; a rooted, blocked or reduced
// result is the same whichever algorithm computes it.
TEST(Comm, CollJobFingerprintsAgreeAcrossAlgorithms) {
  auto shas = [](const std::string& dims, const std::map<std::string, std::string>& args) {
    LogCapture log;
    SimOptions o = options(dims, "coll", 3);
    o.job_args = args;
    SimRig rig(o);
    CHECK_TRUE(rig.build().is_ok());
    const SimSummary s = rig.run();
    CHECK_EQUAL_TEXT(s.nodes, s.passed, s.first_error.c_str());
    std::set<std::string> found;
    size_t lines = 0, pos = 0;
    while ((pos = log.text().find("result node=", pos)) != std::string::npos) {
      const size_t h = log.text().find("sha256=", pos);
      found.insert(log.text().substr(h + 7, 64));
      ++lines;
      pos = h;
    }
    UNSIGNED_LONGS_EQUAL(s.nodes, lines);
    return found;
  };
  std::map<std::string, std::string> a = {{"coll", "allreduce"}, {"dtype", "int32"}, {"op", "bxor"},
                                          {"count", "333"}, {"data-seed", "9"}};
  const auto ring = shas("2x2x2", {{"coll", "allreduce"}, {"dtype", "int32"}, {"op", "bxor"}, {"count", "333"},
                                   {"data-seed", "9"}, {"algo", "ring"}});
  UNSIGNED_LONGS_EQUAL(1, ring.size());  // every node holds the same result
  a["algo"] = "recursive-doubling";
  CHECK(shas("2x2x2", a) == ring);
  a["algo"] = "tree";
  CHECK(shas("2x2x2", a) == ring);
  // Same eight contributions on other shapes: same result.
  a.erase("algo");
  CHECK(shas("8x1x1", a) == ring);
  CHECK(shas("4x2x1", a) == ring);
  // Alltoall: every node's output differs, but not by algorithm.
  std::map<std::string, std::string> t = {{"coll", "alltoall"}, {"count", "5"}, {"algo", "pairwise"}};
  const auto pw = shas("2x2x2", t);
  UNSIGNED_LONGS_EQUAL(8, pw.size());
  t["algo"] = "bruck";
  CHECK(shas("2x2x2", t) == pw);
}

// Every collective and algorithm, on a fabric that drops 5% and corrupts
// 1% of frames: the link layer retransmits, every case still passes.
TEST(Comm, EveryCollectiveSurvivesALossyFabric) {
  for (const char* dims : {"2x2x2", "4x2x1"}) {
    LogCapture log;
    SimOptions o = options(dims, "selftest", 5, "drop=0.05,corrupt=0.01");
    o.job_args["level"] = "quick";
    SimRig rig(o);
    CHECK_TRUE(rig.build().is_ok());
    const SimSummary s = rig.run();
    CHECK_EQUAL_TEXT(s.nodes, s.passed, (std::string(dims) + ": " + s.first_error).c_str());
    const Job* job = rig.node(0).job();
    size_t pass = 0;
    std::set<std::string> colls;
    for (const auto& c : job->cases()) {
      CHECK_TEXT(c.verdict != CaseVerdict::kFail, (c.coll + " " + c.algo + " " + c.name).c_str());
      pass += c.verdict == CaseVerdict::kPass;
      if (c.verdict == CaseVerdict::kPass) colls.insert(c.coll);
    }
    UNSIGNED_LONGS_EQUAL(kCollKinds, colls.size());  // every collective ran
    CHECK(pass > 100);
    uint64_t retransmits = 0;
    for (uint32_t r = 0; r < rig.node_count(); ++r)
      for (uint16_t i = 0; i < rig.node(r).net().port_count(); ++i)
        retransmits += rig.node(r).net().link(i).counters().retransmits;
    CHECK(retransmits > 0);
  }
}
