// The messenger's matching as MPI uses it: synchronous sends done only once
// a receive took them, cancelling a send none of whose data left, and one
// whose data left (the receiver drops it unless a receive took it), withdrawn
// receives, probes that see the earliest matching message, wildcard
// receives in each source's send order.
#include <cstring>
#include <vector>

#include "tests/sim/coll_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

constexpr uint16_t kCtx = 0x8123;

Messenger& msgr(SimRig& rig, uint32_t r) { return rig.node(r).comm().msgr(); }
Coord at(SimRig& rig, uint32_t r) { return coord_of(r, rig.node(0).comm().shape()); }

void settle(SimRig& rig, uint64_t ns = 200 * kUs) {
  const uint64_t end = rig.fabric().now() + ns;
  drive_until(rig, [&] { return rig.fabric().now() >= end; }, ns + kUs);
}

RecvReq recv_req(int32_t src, uint32_t tag, bool any_tag, uint8_t* buf, uint64_t cap) {
  RecvReq r;
  r.src = src;
  r.context = kCtx;
  r.tag = tag;
  r.any_tag = any_tag;
  r.buf = buf;
  r.cap = cap;
  return r;
}

}  // namespace

TEST_GROUP(P2pMatch){};

TEST(P2pMatch, SynchronousSendIsDoneOnlyOnceAReceiveTookIt) {
  LogCapture log;
  auto rig = booted_rig("2x2x1");
  CHECK_TRUE(rig != nullptr);
  std::vector<uint8_t> data(20000, 7), small(8, 9), got(20000), got2(8);
  MsgSendOptions sync;
  sync.sync = true;
  auto hs = msgr(*rig, 0).send(at(*rig, 3), kCtx, 5, data.data(), data.size(), sync);
  auto hp = msgr(*rig, 0).send(at(*rig, 3), kCtx, 6, small.data(), small.size());
  CHECK_TRUE(hs.is_ok() && hp.is_ok());
  settle(*rig);
  CHECK_TRUE(msgr(*rig, 0).send_done(*hp));   // a plain send is done when its data left
  CHECK_FALSE(msgr(*rig, 0).send_done(*hs));  // the synchronous one waits for the match
  RecvReq r2 = recv_req(0, 6, false, got2.data(), got2.size());
  CHECK_TRUE(msgr(*rig, 3).post(&r2).is_ok());  // takes the later message first: the sync one still waits
  settle(*rig);
  CHECK_TRUE(r2.done());
  CHECK_FALSE(msgr(*rig, 0).send_done(*hs));
  RecvReq r = recv_req(0, 5, false, got.data(), got.size());
  CHECK_TRUE(msgr(*rig, 3).post(&r).is_ok());
  CHECK_TRUE(drive_until(*rig, [&] { return r.done() && msgr(*rig, 0).send_done(*hs); }));
  CHECK_TRUE(r.status().is_ok());
  CHECK_TRUE(got == data);
  // An empty synchronous message to itself, received first: done at once.
  std::vector<uint8_t> none;
  RecvReq self = recv_req(1, 9, false, nullptr, 0);
  CHECK_TRUE(msgr(*rig, 1).post(&self).is_ok());
  auto he = msgr(*rig, 1).send(at(*rig, 1), kCtx, 9, nullptr, 0, sync);
  CHECK_TRUE(he.is_ok());
  CHECK_TRUE(drive_until(*rig, [&] { return self.done() && msgr(*rig, 1).send_done(*he); }));
}

// A receive posted first takes a long synchronous message at its first
// segment and acknowledges it at once; the ack is back while later segments
// are still leaving (the destination's credit paces them). The send is done
// once its last segment has left, not left waiting for an ack that came.
// (MPICH's pt2pt/sendself hung here: MPI_Ssend of 128 KiB to itself.)
TEST(P2pMatch, ALongSynchronousSendAckedBeforeItsLastSegmentLeftIsDone) {
  LogCapture log;
  auto rig = booted_rig("2x1x1");
  CHECK_TRUE(rig != nullptr);
  MsgSendOptions sync;
  sync.sync = true;
  for (uint32_t dst : {1u, 0u}) {  // a neighbour, then itself
    std::vector<uint8_t> data(2 << 20), got(data.size());
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + dst);
    RecvReq r = recv_req(0, 11, false, got.data(), got.size());
    CHECK_TRUE(msgr(*rig, dst).post(&r).is_ok());
    const uint64_t bad = msgr(*rig, 0).counters().bad_segments;
    auto h = msgr(*rig, 0).send(at(*rig, dst), kCtx, 11, data.data(), data.size(), sync);
    CHECK_TRUE(h.is_ok());
    CHECK_TRUE_TEXT(drive_until(*rig, [&] { return r.done() && msgr(*rig, 0).send_done(*h); }),
                    dst ? "to a neighbour" : "to itself");
    CHECK_TRUE(r.status().is_ok());
    CHECK_TRUE(got == data);
    UNSIGNED_LONGLONGS_EQUAL(bad, msgr(*rig, 0).counters().bad_segments);  // no ack was taken for a stray
  }
}

TEST(P2pMatch, OnlyASendNoneOfWhoseDataLeftCanBeCancelled) {
  LogCapture log;
  auto rig = booted_rig("2x1x1");
  CHECK_TRUE(rig != nullptr);
  // The first message fills the end-to-end window (nobody receives it);
  // the second waits behind it without a segment out.
  std::vector<uint8_t> big(4u << 20, 1), second(100, 2);
  auto h1 = msgr(*rig, 0).send(at(*rig, 1), kCtx, 1, big.data(), big.size());
  auto h2 = msgr(*rig, 0).send(at(*rig, 1), kCtx, 2, second.data(), second.size());
  CHECK_TRUE(h1.is_ok() && h2.is_ok());
  settle(*rig);
  CHECK_FALSE(msgr(*rig, 0).send_done(*h1));
  CHECK_FALSE(msgr(*rig, 0).cancel_unsent(*h1));  // part of it reached the receiver
  CHECK_TRUE(msgr(*rig, 0).cancel_unsent(*h2));
  CHECK_TRUE(msgr(*rig, 0).send_done(*h2));
  // The receiver gets the first message whole, and never the cancelled one.
  std::vector<uint8_t> got(big.size());
  RecvReq r = recv_req(kAnySource, 0, true, got.data(), got.size());
  CHECK_TRUE(msgr(*rig, 1).post(&r).is_ok());
  CHECK_TRUE(drive_until(*rig, [&] { return r.done(); }));
  CHECK_TRUE(r.status().is_ok());
  UNSIGNED_LONGS_EQUAL(1, r.msg_tag());
  settle(*rig);
  MsgEnvelope env;
  CHECK_FALSE(msgr(*rig, 1).probe(kAnySource, kCtx, 0, true, &env));
}

// MPI_Cancel of a send whose data left: the receiver drops the message when
// no receive took it (whole and waiting, part way in, or synchronous), not
// when one did; later messages of the same sender still arrive in order.
TEST(P2pMatch, ASentMessageIsDroppedAtTheReceiverUnlessAReceiveTookIt) {
  LogCapture log;
  auto rig = booted_rig("2x2x1");
  CHECK_TRUE(rig != nullptr);
  Messenger& tx = msgr(*rig, 0);
  Messenger& rx = msgr(*rig, 3);
  using CS = Messenger::CancelState;
  auto answered = [&](uint64_t h) { return drive_until(*rig, [&] { return tx.cancel_result(h) != CS::kPending; }); };
  MsgSendOptions sync;
  sync.sync = true;
  // Two small messages arrive whole with no receive; a synchronous one
  // waits for its match; a 4 MiB one is part way in (the window).
  std::vector<uint8_t> a(100, 1), b(100, 2), c(100, 3), big(4u << 20, 4);
  auto ha = tx.send(at(*rig, 3), kCtx, 1, a.data(), a.size());
  auto hb = tx.send(at(*rig, 3), kCtx, 2, b.data(), b.size());
  auto hc = tx.send(at(*rig, 3), kCtx, 3, c.data(), c.size(), sync);
  auto hbig = tx.send(at(*rig, 3), kCtx, 4, big.data(), big.size());
  CHECK_TRUE(ha.is_ok() && hb.is_ok() && hc.is_ok() && hbig.is_ok());
  settle(*rig);
  CHECK_TRUE(tx.send_done(*hb));
  CHECK_FALSE(tx.send_done(*hc));
  CHECK_FALSE(tx.send_done(*hbig));
  CHECK(tx.cancel_result(*hb) == CS::kNone);
  for (uint64_t h : {*hb, *hc, *hbig}) {
    CHECK_TRUE(tx.request_cancel(h));
    CHECK(tx.cancel_result(h) == CS::kPending);
    CHECK_TRUE(answered(h));
    CHECK(tx.cancel_result(h) == CS::kCancelled);
  }
  UNSIGNED_LONGLONGS_EQUAL(3, rx.counters().cancelled);
  // The synchronous and the part-way sends are over: nothing more of them leaves.
  CHECK_TRUE(drive_until(*rig, [&] { return tx.send_done(*hc) && tx.send_done(*hbig); }));
  settle(*rig);
  // A message sent afterwards still arrives; any-tag receives take the first
  // message and that one, nothing that was dropped.
  std::vector<uint8_t> d(50, 5), got(big.size());
  auto hd = tx.send(at(*rig, 3), kCtx, 5, d.data(), d.size());
  CHECK_TRUE(hd.is_ok());
  for (uint32_t want : {1u, 5u}) {
    RecvReq r = recv_req(0, 0, true, got.data(), got.size());
    CHECK_TRUE(rx.post(&r).is_ok());
    CHECK_TRUE(drive_until(*rig, [&] { return r.done(); }));
    CHECK_TRUE(r.status().is_ok());
    UNSIGNED_LONGS_EQUAL(want, r.msg_tag());
  }
  settle(*rig);
  MsgEnvelope env;
  CHECK_FALSE(rx.probe(kAnySource, kCtx, 0, true, &env));
  UNSIGNED_LONGLONGS_EQUAL(0, rx.counters().held_bytes);
  // A message a receive took is not dropped: the send completed normally.
  CHECK_TRUE(tx.request_cancel(*hd));
  CHECK_TRUE(answered(*hd));
  CHECK(tx.cancel_result(*hd) == CS::kNotCancelled);
  UNSIGNED_LONGLONGS_EQUAL(3, rx.counters().cancelled);
  tx.forget_cancel(*hd);
  CHECK(tx.cancel_result(*hd) == CS::kNone);
  // A handle nothing was sent with is not asked about.
  CHECK_FALSE(tx.request_cancel(*hd + 1000));
}

TEST(P2pMatch, WildcardsMatchEachSourcesMessagesInSendOrderAndProbesSeeTheEarliest) {
  LogCapture log;
  auto rig = booted_rig("2x2x1");
  CHECK_TRUE(rig != nullptr);
  // A receive posted and withdrawn before anything arrives takes nothing.
  uint8_t scratch[16];
  RecvReq gone = recv_req(kAnySource, 0, true, scratch, sizeof scratch);
  CHECK_TRUE(msgr(*rig, 3).post(&gone).is_ok());
  CHECK_TRUE(msgr(*rig, 3).unpost(&gone));
  // Sources 0 and 1 each send three messages with tags 10, 11, 10.
  std::vector<std::vector<uint8_t>> payload;
  for (uint32_t src : {0u, 1u})
    for (uint32_t k = 0; k < 3; ++k) {
      payload.push_back(std::vector<uint8_t>(8 + k, static_cast<uint8_t>(src * 10 + k)));
      CHECK_TRUE(msgr(*rig, src).send(at(*rig, 3), kCtx, k == 1 ? 11 : 10, payload.back().data(), payload.back().size()).is_ok());
    }
  settle(*rig);
  CHECK_FALSE(gone.done());
  MsgEnvelope env;
  CHECK_TRUE(msgr(*rig, 3).probe(1, kCtx, 11, false, &env));
  UNSIGNED_LONGS_EQUAL(1, env.source);
  UNSIGNED_LONGS_EQUAL(9, env.length);  // source 1's second message
  CHECK_FALSE(msgr(*rig, 3).probe(2, kCtx, 0, true, &env));
  // Any tag from source 0: its three messages in send order.
  for (uint32_t k = 0; k < 3; ++k) {
    uint8_t buf[16];
    RecvReq r = recv_req(0, 0, true, buf, sizeof buf);
    CHECK_TRUE(msgr(*rig, 3).post(&r).is_ok());
    CHECK_TRUE(drive_until(*rig, [&] { return r.done(); }));
    UNSIGNED_LONGS_EQUAL(k == 1 ? 11 : 10, r.msg_tag());
    UNSIGNED_LONGS_EQUAL(8 + k, r.length());
  }
  // Tag 10 from any source: source 1's first, then its third (the tag-11
  // one is skipped, not overtaken by order).
  for (uint32_t want : {8u, 10u}) {
    uint8_t buf[16];
    RecvReq r = recv_req(kAnySource, 10, false, buf, sizeof buf);
    CHECK_TRUE(msgr(*rig, 3).post(&r).is_ok());
    CHECK_TRUE(drive_until(*rig, [&] { return r.done(); }));
    UNSIGNED_LONGS_EQUAL(1, r.source());
    UNSIGNED_LONGS_EQUAL(want, r.length());
  }
  // A receive too small for the last one reports the truncation with both sizes.
  uint8_t tiny[4];
  RecvReq t = recv_req(1, 11, false, tiny, sizeof tiny);
  CHECK_TRUE(msgr(*rig, 3).post(&t).is_ok());
  CHECK_TRUE(drive_until(*rig, [&] { return t.done(); }));
  CHECK_TRUE(t.status().code() == Code::kOutOfRange);
  STRCMP_CONTAINS("truncated", t.status().message().c_str());
  UNSIGNED_LONGS_EQUAL(9, t.length());
}

// Ranks send rank 0 two messages each: ranks 1..15, then, after a reset of
// every messenger, ranks 1..31. Rank 0's peer table grows from 16 slots to
// 32 in the first round and to 64 in the second, re-indexing peers that the
// reset cleared: each message must land in the receive posted for its own
// source and tag, with its own bytes, and nothing may be left over.
TEST(P2pMatch, MessagesOfEverySourceMatchAcrossPeerTableGrowthAndAReset) {
  LogCapture log;
  auto rig = booted_rig("4x4x2");
  CHECK_TRUE(rig != nullptr);
  for (int round = 0; round < 2; ++round) {
    const uint32_t n = round == 0 ? 16 : 32;
    if (round == 1)
      for (uint32_t r = 0; r < 32; ++r) msgr(*rig, r).reset(Status::ok());
    std::vector<std::vector<uint8_t>> got(2 * n, std::vector<uint8_t>(64, 0));
    std::vector<RecvReq> reqs(2 * n);
    // Posted from the highest source down, the second message of each first.
    for (uint32_t s = n - 1; s >= 1; --s)
      for (uint32_t k : {1u, 0u}) {
        reqs[2 * s + k] = recv_req(static_cast<int32_t>(s), 100 + k, false, got[2 * s + k].data(), 64);
        CHECK_TRUE(msgr(*rig, 0).post(&reqs[2 * s + k]).is_ok());
      }
    std::vector<std::vector<uint8_t>> sent;
    for (uint32_t s = 1; s < n; ++s)
      for (uint32_t k : {0u, 1u}) {
        sent.emplace_back(8 + s + k, static_cast<uint8_t>(round * 64 + 2 * s + k));
        CHECK_TRUE(msgr(*rig, s).send(at(*rig, 0), kCtx, 100 + k, sent.back().data(), sent.back().size()).is_ok());
      }
    CHECK_TRUE(drive_until(*rig, [&] {
      for (uint32_t s = 1; s < n; ++s)
        if (!reqs[2 * s].done() || !reqs[2 * s + 1].done()) return false;
      return true;
    }));
    for (uint32_t s = 1; s < n; ++s)
      for (uint32_t k : {0u, 1u}) {
        const RecvReq& r = reqs[2 * s + k];
        CHECK_TRUE(r.status().is_ok());
        UNSIGNED_LONGS_EQUAL(s, r.source());
        UNSIGNED_LONGS_EQUAL(8 + s + k, r.length());
        for (uint32_t i = 0; i < 8 + s + k; ++i) UNSIGNED_LONGS_EQUAL(round * 64 + 2 * s + k, got[2 * s + k][i]);
      }
    MsgEnvelope env;
    CHECK_FALSE(msgr(*rig, 0).probe(kAnySource, kCtx, 0, true, &env));  // nothing unexpected is left
  }
}
