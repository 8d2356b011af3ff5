// Link framing over sim ports: the bytes Link puts on the wire match the spec,
// bodies of every size come through intact and in order, every malformed
// frame kind is rejected by validate() and counted (never passed up), the tx
// queue honours its cap, and no packet is ever leaked. (The reliable
// protocol on top of the framing: reliable_link_test.cc.)
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

#include "base/rng.h"
#include "net_rig.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::nettest;
using wire::FrameType;

namespace {

uint64_t rejects(const LinkCounters& c) {
  return c.rx_short + c.rx_bad_ethertype + c.rx_bad_version + c.rx_bad_type + c.rx_bad_length + c.rx_crc_errors +
         c.rx_no_crc_refused + c.rx_oversize;
}

// Body of frame `seq`: its seq in the first four bytes (when it fits), then test bytes.
std::vector<uint8_t> seq_body(uint32_t seq, uint32_t len) {
  auto v = make_body(seq, len);
  if (len >= 4) std::memcpy(v.data(), &seq, 4);
  return v;
}


}  // namespace

TEST_GROUP(Link) {
  std::unique_ptr<Rig> rig;
  RecordingClient ca, cb;
  uint32_t a = 0, b = 0;
  SimPort* pa = nullptr;
  SimPort* pb = nullptr;

  void make(uint64_t seed = 1, LinkModel model = LinkModel{}, FaultPlan plan = FaultPlan{}) {
    rig = std::make_unique<Rig>(seed, model, std::move(plan));
    a = rig->add_node();
    b = rig->add_node();
    std::tie(pa, pb) = rig->cable(a, b);
  }
  void setup() override { make(); }
  void teardown() override {
    rig->teardown();
    UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
    rig.reset();
  }

  // Validate `p` on a link of its own; frees p either way. Returns the result.
  bool validate_one(Link& l, Packet* p, FrameType* type, std::vector<uint8_t>* body = nullptr) {
    const bool ok = l.validate(p, type);
    if (ok && body) body->assign(p->data(), p->data() + p->len);
    p->free();
    return ok;
  }
};

TEST(Link, FrameOnTheWireMatchesTheSpecByteForByte) {
  uint8_t mac[6];
  Link& la = rig->add_link(0, pa, &ca);
  wire::node_mac(mac, 1, 2, 3, 0);  // what Rig::add_link gives index 0
  const auto body = make_body(5, 100);
  Packet* p = packet_with(rig->pool(a), body);
  CHECK(la.send_raw(FrameType::kHello, p));
  UNSIGNED_LONGS_EQUAL(1, la.tx_queued());
  CHECK(rig->settle() > 0);

  Packet* f = nullptr;
  UNSIGNED_LONGS_EQUAL(1, pb->rx_burst(&f, 1));  // no Link on b: the raw frame
  UNSIGNED_LONGS_EQUAL(kOverhead + body.size(), f->len);
  const uint8_t* d = f->data();
  for (int i = 0; i < 6; ++i) UNSIGNED_LONGS_EQUAL(0xff, d[i]);  // point-to-point: broadcast dst
  MEMCMP_EQUAL(mac, d + 6, 6);
  UNSIGNED_LONGS_EQUAL(0x88, d[12]);
  UNSIGNED_LONGS_EQUAL(0xB5, d[13]);
  UNSIGNED_LONGS_EQUAL(wire::kWireVersion, d[14]);
  UNSIGNED_LONGS_EQUAL(3, d[15]);  // kHello
  // flags vc seq ack sack credits: a hello is unsequenced and carries no link state.
  for (int i = 16; i < 38; ++i) UNSIGNED_LONGS_EQUAL(0, d[i]);
  UNSIGNED_LONGS_EQUAL(0, d[38]);    // length, big-endian
  UNSIGNED_LONGS_EQUAL(100, d[39]);
  UNSIGNED_LONGS_EQUAL(0, d[40]);    // partition tag: none named
  UNSIGNED_LONGS_EQUAL(0, d[41]);
  MEMCMP_EQUAL(body.data(), d + kOverhead, body.size());

  // CRC32C over link header (crc field zero) + body, stored big-endian.
  std::vector<uint8_t> covered(d + 14, d + f->len);
  for (int i = 28; i < 32; ++i) covered.at(i) = 0;
  const uint32_t crc = ref_crc32c(covered.data(), covered.size());
  UNSIGNED_LONGS_EQUAL(crc >> 24, d[42]);
  UNSIGNED_LONGS_EQUAL((crc >> 16) & 0xff, d[43]);
  UNSIGNED_LONGS_EQUAL((crc >> 8) & 0xff, d[44]);
  UNSIGNED_LONGS_EQUAL(crc & 0xff, d[45]);
  f->free();

  UNSIGNED_LONGLONGS_EQUAL(1, la.counters().tx_frames);
  UNSIGNED_LONGLONGS_EQUAL(kOverhead + 100, la.counters().tx_bytes);
}

// A data frame: type 1, its VC, consecutive seqs from 0, and the sender's
// receive state (nothing received yet: ack 0, no sack, no credits freed).
TEST(Link, DataFramesOnTheWireCarrySeqVcAndAckFields) {
  Link& la = rig->add_link(0, pa, &ca);
  rig->freeze(b);  // nobody on b: the frames stay on its port, unacked
  for (uint8_t i = 0; i < 3; ++i)
    CHECK(la.send(static_cast<uint8_t>(i + 1), packet_with(rig->pool(a), seq_body(i, 20 + i))));
  rig->run_for(1 * kUs);
  const auto frames = drain(pb);
  UNSIGNED_LONGS_EQUAL(3, frames.size());
  for (uint32_t i = 0; i < 3; ++i) {
    UNSIGNED_LONGS_EQUAL(static_cast<int>(FrameType::kData), frames[i].type);
    UNSIGNED_LONGS_EQUAL(i, frames[i].f.seq);
    UNSIGNED_LONGS_EQUAL(i + 1, frames[i].f.vc);
    UNSIGNED_LONGS_EQUAL(0, frames[i].f.flags);
    UNSIGNED_LONGS_EQUAL(0, frames[i].f.ack);
    UNSIGNED_LONGS_EQUAL(0, frames[i].f.sack);
    for (int v = 0; v < wire::kNumVcs; ++v) UNSIGNED_LONGS_EQUAL(0, frames[i].f.credits[v]);
    CHECK(frames[i].body == seq_body(i, 20 + i));
  }
  UNSIGNED_LONGS_EQUAL(3, la.unacked());
  UNSIGNED_LONGLONGS_EQUAL(3, la.counters().data_sent);
}

// Reliable data on every VC and hellos mixed in, both ways at once, over a
// clean wire: every body arrives intact, data in send order on its VC.
TEST(Link, RoundTripOfEveryBodySizeBothWays) {
  LinkConfig cfg = rig->link_config();
  cfg.tx_cap = 4096;
  Link& la = rig->add_link(0, pa, &ca, cfg);
  Link& lb = rig->add_link(1, pb, &cb, cfg);
  // Every size 0..64, then a sweep to the largest body, with the edges.
  std::vector<uint32_t> sizes;
  for (uint32_t s = 0; s <= 64; ++s) sizes.push_back(s);
  for (uint32_t s = 65; s < kMaxBody; s += 37) sizes.push_back(s);
  sizes.push_back(kMaxBody - 1);
  sizes.push_back(kMaxBody);
  Rng rng(3);
  for (int i = 0; i < 200; ++i) sizes.push_back(static_cast<uint32_t>(rng.below(kMaxBody + 1)));

  const auto n = static_cast<uint32_t>(sizes.size());
  uint32_t hellos_sent = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const auto vc = static_cast<uint8_t>(i % wire::kNumVcs);
    rig->feed(la, vc, packet_with(rig->pool(a), seq_body(i, sizes[i])));
    rig->feed(lb, static_cast<uint8_t>(3 - vc), packet_with(rig->pool(b), seq_body(i + 100000, sizes[i])));
    if (i % 10 == 0) {
      CHECK(la.send_raw(FrameType::kHello, packet_with(rig->pool(a), seq_body(i + 200000, sizes[i]))));
      CHECK(lb.send_raw(FrameType::kHello, packet_with(rig->pool(b), seq_body(i + 300000, sizes[i]))));
      ++hellos_sent;
    }
  }
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());  // the clients freed all they were given, the links all they kept

  for (int side = 0; side < 2; ++side) {
    const RecordingClient& rc = side == 0 ? cb : ca;
    const uint32_t base = side == 0 ? 0 : 100000;
    uint32_t data = 0, hellos = 0;
    for (const FrameRecord& f : rc.frames) {
      if (f.type == FrameType::kHello) {
        CHECK(f.body == seq_body(base + 200000 + 10 * hellos, sizes[10 * hellos]));
        ++hellos;
        continue;
      }
      const std::string at = "frame " + std::to_string(data) + " size " + std::to_string(sizes[data]);
      CHECK_TEXT(f.type == FrameType::kData, at.c_str());
      const auto vc = static_cast<uint8_t>(data % wire::kNumVcs);
      UNSIGNED_LONGS_EQUAL_TEXT(side == 0 ? vc : 3 - vc, f.vc, at.c_str());
      UNSIGNED_LONGS_EQUAL_TEXT(side == 0 ? 1 : 0, f.index, at.c_str());
      CHECK_TEXT(f.body == seq_body(base + data, sizes[data]), at.c_str());
      ++data;
    }
    UNSIGNED_LONGS_EQUAL(n, data);
    UNSIGNED_LONGS_EQUAL(hellos_sent, hellos);
  }
  for (const Link* l : {&la, &lb}) {
    const LinkCounters& c = l->counters();
    UNSIGNED_LONGLONGS_EQUAL(n, c.data_sent);
    UNSIGNED_LONGLONGS_EQUAL(n, c.data_delivered);
    UNSIGNED_LONGLONGS_EQUAL(0, rejects(c));
    UNSIGNED_LONGLONGS_EQUAL(0, c.tx_queue_full);
    UNSIGNED_LONGLONGS_EQUAL(0, c.out_of_window + c.credit_violations);
    CHECK(c.tx_frames >= n + hellos_sent);  // data, hellos, and acks
    UNSIGNED_LONGLONGS_EQUAL(0, c.credit_stalls + c.window_stalls);  // the feeder asks can_send() first
  }
  // Byte counters count whole frames, as the port does; a clean wire loses nothing.
  UNSIGNED_LONGLONGS_EQUAL(la.counters().tx_bytes, pa->stats().tx_bytes);
  UNSIGNED_LONGLONGS_EQUAL(la.counters().tx_bytes, lb.counters().rx_bytes);
  UNSIGNED_LONGLONGS_EQUAL(la.counters().tx_frames, lb.counters().rx_frames);
  UNSIGNED_LONGLONGS_EQUAL(lb.counters().tx_bytes, la.counters().rx_bytes);
  UNSIGNED_LONGLONGS_EQUAL(0, rig->fabric().stats().oversize);
}

TEST(Link, PollPassesUpAtMostOneBurst) {
  LinkConfig cfg = rig->link_config();
  cfg.tx_cap = 4096;
  Link& la = rig->add_link(0, pa, &ca, cfg);
  Link& lb = rig->add_link(1, pb, &cb);
  for (uint32_t i = 0; i < 3 * tuning::kBurst; ++i)
    CHECK(la.send_raw(FrameType::kHello, packet_with(rig->pool(a), seq_body(i, 20))));
  // Push everything onto b's rx ring without polling b.
  rig->freeze(b);
  while (la.tx_queued()) {
    la.poll();
    rig->fabric().run();
  }
  UNSIGNED_LONGS_EQUAL(3 * tuning::kBurst, pb->rx_queued());
  CHECK(lb.poll());
  UNSIGNED_LONGS_EQUAL(tuning::kBurst, cb.frames.size());
  rig->freeze(b, false);
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(3 * tuning::kBurst, cb.frames.size());
  CHECK_FALSE(lb.poll());  // idle
}

TEST(Link, ValidateAcceptsAHandBuiltFrameAndStripsTheHeaders) {
  Link& l = rig->add_link(0, pa, &ca);
  for (uint32_t len : {0u, 1u, 7u, 8u, 9u, 100u, kMaxBody}) {
    for (uint8_t type = 1; type <= wire::kMaxFrameType; ++type) {
      const auto body = seq_body(len, len);
      Packet* p = build_frame(rig->pool(a), type, body);
      FrameType got{};
      std::vector<uint8_t> out;
      CHECK(validate_one(l, p, &got, &out));
      UNSIGNED_LONGS_EQUAL(type, static_cast<int>(got));
      CHECK(out == body);
    }
  }
  UNSIGNED_LONGLONGS_EQUAL(0, rejects(l.counters()));
  UNSIGNED_LONGLONGS_EQUAL(0, l.counters().rx_frames);  // validate() counts rejects only; poll() counts frames
  CHECK(ca.frames.empty());
}

// Real NICs pad frames to the 60-byte Ethernet minimum: a short body arrives
// with trailing zeros, which the length field tells apart and trims off.
TEST(Link, PaddedShortFramesAreTrimmedToTheirLength) {
  Link& l = rig->add_link(0, pa, &ca);
  for (uint32_t len : {0u, 1u, 7u, 13u}) {
    const auto body = seq_body(len, len);
    Packet* p = build_frame(rig->pool(a), 3, body);
    CHECK(p->len < kMinEthFrame);
    const uint32_t pad = kMinEthFrame - p->len;
    std::memset(p->append(pad), 0, pad);
    FrameType got{};
    std::vector<uint8_t> out;
    CHECK_TEXT(validate_one(l, p, &got, &out), "padded frame accepted");
    CHECK(out == body);
  }
  // Padding beyond the minimum frame is not padding: rejected.
  Packet* p = build_frame(rig->pool(a), 1, seq_body(1, 30));
  p->append(8);
  FrameType t{};
  CHECK_FALSE(validate_one(l, p, &t));
  UNSIGNED_LONGLONGS_EQUAL(1, l.counters().rx_bad_length);
}

TEST(Link, ValidateRejectsEachMalformedKindAndCountsIt) {
  Link& l = rig->add_link(0, pa, &ca);
  const auto body = seq_body(1, 50);
  struct Case {
    const char* what;
    uint64_t LinkCounters::*counter;
    void (*mutate)(Packet*);
  };
  const Case cases[] = {
      {"empty", &LinkCounters::rx_short, [](Packet* p) { p->len = 0; }},
      {"one byte", &LinkCounters::rx_short, [](Packet* p) { p->len = 1; }},
      {"ethernet only", &LinkCounters::rx_short, [](Packet* p) { p->len = 14; }},
      {"one short of the headers", &LinkCounters::rx_short, [](Packet* p) { p->len = kOverhead - 1; }},
      {"ipv4 ethertype", &LinkCounters::rx_bad_ethertype, [](Packet* p) { eth_of(p)->ethertype.set(0x0800); }},
      {"ethertype byte-swapped", &LinkCounters::rx_bad_ethertype, [](Packet* p) { eth_of(p)->ethertype.set(0xB588); }},
      {"ethertype off by one", &LinkCounters::rx_bad_ethertype, [](Packet* p) { eth_of(p)->ethertype.set(0x88B6); }},
      {"version 0", &LinkCounters::rx_bad_version, [](Packet* p) { lh_of(p)->version = 0; reseal(p); }},
      {"version 2", &LinkCounters::rx_bad_version, [](Packet* p) { lh_of(p)->version = 2; reseal(p); }},
      {"version 255", &LinkCounters::rx_bad_version, [](Packet* p) { lh_of(p)->version = 255; reseal(p); }},
      {"length + 1", &LinkCounters::rx_bad_length, [](Packet* p) { lh_of(p)->length.set(51); reseal(p); }},
      {"length - 1", &LinkCounters::rx_bad_length, [](Packet* p) { lh_of(p)->length.set(49); reseal(p); }},
      {"length 0", &LinkCounters::rx_bad_length, [](Packet* p) { lh_of(p)->length.set(0); reseal(p); }},
      {"length 0xffff", &LinkCounters::rx_bad_length, [](Packet* p) { lh_of(p)->length.set(0xffff); reseal(p); }},
      {"length little-endian", &LinkCounters::rx_bad_length, [](Packet* p) { lh_of(p)->length.raw = 50; reseal(p); }},
      {"frame trimmed, length kept", &LinkCounters::rx_bad_length, [](Packet* p) { p->trim(1); }},
      {"payload byte", &LinkCounters::rx_crc_errors, [](Packet* p) { p->data()[kOverhead + 25] ^= 0x10; }},
      {"last payload byte", &LinkCounters::rx_crc_errors, [](Packet* p) { p->data()[p->len - 1] ^= 0x80; }},
      {"crc field", &LinkCounters::rx_crc_errors, [](Packet* p) { lh_of(p)->crc.set(lh_of(p)->crc.get() ^ 1); }},
      {"crc zero", &LinkCounters::rx_crc_errors, [](Packet* p) { lh_of(p)->crc.set(0); }},
      {"seq without reseal", &LinkCounters::rx_crc_errors, [](Packet* p) { lh_of(p)->seq.set(7); }},
      {"type without reseal", &LinkCounters::rx_crc_errors, [](Packet* p) { lh_of(p)->type = 2; }},
      // A sim port does not declare medium integrity: a frame without a CRC
      // is refused, whatever its crc field holds.
      {"no-crc flag, crc 0", &LinkCounters::rx_no_crc_refused,
       [](Packet* p) { lh_of(p)->flags |= wire::kLinkNoCrc; lh_of(p)->crc.set(0); }},
      {"no-crc flag, resealed", &LinkCounters::rx_no_crc_refused,
       [](Packet* p) { lh_of(p)->flags |= wire::kLinkNoCrc; reseal(p); }},
      {"type 0", &LinkCounters::rx_bad_type, [](Packet* p) { lh_of(p)->type = 0; reseal(p); }},
      {"type max + 1", &LinkCounters::rx_bad_type, [](Packet* p) { lh_of(p)->type = wire::kMaxFrameType + 1; reseal(p); }},
      {"type 255", &LinkCounters::rx_bad_type, [](Packet* p) { lh_of(p)->type = 255; reseal(p); }},
  };
  for (const Case& c : cases) {
    Packet* p = build_frame(rig->pool(a), 1, body);
    c.mutate(p);
    const LinkCounters before = l.counters();
    FrameType t{};
    CHECK_FALSE_TEXT(validate_one(l, p, &t), c.what);
    UNSIGNED_LONGLONGS_EQUAL_TEXT((before.*c.counter) + 1, (l.counters().*c.counter), c.what);
    UNSIGNED_LONGLONGS_EQUAL_TEXT(rejects(before) + 1, rejects(l.counters()), c.what);
  }
  const LinkCounters& k = l.counters();
  UNSIGNED_LONGLONGS_EQUAL(4, k.rx_short);
  UNSIGNED_LONGLONGS_EQUAL(3, k.rx_bad_ethertype);
  UNSIGNED_LONGLONGS_EQUAL(3, k.rx_bad_version);
  UNSIGNED_LONGLONGS_EQUAL(6, k.rx_bad_length);
  UNSIGNED_LONGLONGS_EQUAL(6, k.rx_crc_errors);
  UNSIGNED_LONGLONGS_EQUAL(2, k.rx_no_crc_refused);
  UNSIGNED_LONGLONGS_EQUAL(3, k.rx_bad_type);
  UNSIGNED_LONGLONGS_EQUAL(0, k.rx_frames);
  CHECK(ca.frames.empty());
}

// A frame longer than the port's max_frame is refused and counted however
// well formed (length field and CRC agree): forwarded, it would leave this
// node longer than its other ports carry (found by the torus-route fuzzer).
// One of exactly max_frame bytes is taken.
TEST(Link, AFrameLongerThanThePortCarriesIsRefusedAndCounted) {
  Link& l = rig->add_link(0, pa, &ca);
  FrameType t{};
  std::vector<uint8_t> out;
  CHECK(validate_one(l, build_frame(rig->pool(a), 1, seq_body(1, kMaxFrame - kOverhead)), &t, &out));
  UNSIGNED_LONGS_EQUAL(kMaxFrame - kOverhead, out.size());
  CHECK_FALSE(validate_one(l, build_frame(rig->pool(a), 1, seq_body(2, kMaxFrame - kOverhead + 1)), &t));
  UNSIGNED_LONGLONGS_EQUAL(1, l.counters().rx_oversize);
  UNSIGNED_LONGLONGS_EQUAL(1, rejects(l.counters()));
}

// Every single-bit error in a frame lands where the field it hits says:
// MACs are not covered (and not used), EtherType/version/length have their
// own checks, the kLinkNoCrc bit is refused on this port (no medium
// integrity), and everything else the CRC catches.
TEST(Link, EverySingleBitFlipIsClassified) {
  Link& l = rig->add_link(0, pa, &ca);
  const auto body = seq_body(2, 40);
  const uint32_t frame_len = kOverhead + 40;
  uint32_t accepted = 0;
  for (uint32_t bit = 0; bit < frame_len * 8; ++bit) {
    Packet* p = build_frame(rig->pool(a), static_cast<uint8_t>(FrameType::kData), body);
    p->data()[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    const uint32_t byte = bit / 8;
    uint64_t LinkCounters::*want = &LinkCounters::rx_crc_errors;
    if (byte < 12) want = nullptr;
    else if (byte < 14) want = &LinkCounters::rx_bad_ethertype;
    else if (byte == 14) want = &LinkCounters::rx_bad_version;
    else if (byte == 38 || byte == 39) want = &LinkCounters::rx_bad_length;
    else if (byte == 16 && (1u << (bit % 8)) == wire::kLinkNoCrc) want = &LinkCounters::rx_no_crc_refused;
    const LinkCounters before = l.counters();
    FrameType t{};
    std::vector<uint8_t> out;
    const bool ok = validate_one(l, p, &t, &out);
    const std::string at = "bit " + std::to_string(bit);
    if (!want) {
      CHECK_TEXT(ok, at.c_str());
      CHECK_TEXT(out == body, at.c_str());
      ++accepted;
    } else {
      CHECK_FALSE_TEXT(ok, at.c_str());
      UNSIGNED_LONGLONGS_EQUAL_TEXT((before.*want) + 1, (l.counters().*want), at.c_str());
    }
  }
  UNSIGNED_LONGS_EQUAL(12 * 8, accepted);
  UNSIGNED_LONGLONGS_EQUAL(16, l.counters().rx_bad_ethertype);
  UNSIGNED_LONGLONGS_EQUAL(8, l.counters().rx_bad_version);
  UNSIGNED_LONGLONGS_EQUAL(16, l.counters().rx_bad_length);
  UNSIGNED_LONGLONGS_EQUAL(1, l.counters().rx_no_crc_refused);
  UNSIGNED_LONGLONGS_EQUAL((frame_len - 12 - 2 - 1 - 2) * 8 - 1, l.counters().rx_crc_errors);
  UNSIGNED_LONGLONGS_EQUAL(0, l.counters().rx_bad_type);
}

// A sim port does not declare medium integrity (it corrupts on purpose):
// data and acks leave with a CRC that checks and without kLinkNoCrc.
TEST(Link, OnAPortWithoutIntegrityDataAndAcksCarryTheirCrc) {
  CHECK_FALSE(pa->info().medium_integrity);
  Link& la = rig->add_link(0, pa, &ca);
  rig->freeze(b);  // b's frames stay on its port
  // A data frame from the peer: la answers it with a bare ack.
  Packet* in = build_frame(rig->pool(b), static_cast<uint8_t>(FrameType::kData), seq_body(7, 30));
  UNSIGNED_LONGS_EQUAL(1, pb->tx_burst(&in, 1));
  rig->run_for(3 * kUs);
  for (uint32_t i = 0; i < 3; ++i) CHECK(la.send(0, packet_with(rig->pool(a), seq_body(i, 100 + 400 * i))));
  rig->run_for(3 * kUs);
  uint32_t data = 0, acks = 0;
  Packet* f;
  while (pb->rx_burst(&f, 1) == 1) {
    const wire::LinkHeader* lh = lh_of(f);
    CHECK_EQUAL(0, lh->flags & wire::kLinkNoCrc);
    std::vector<uint8_t> covered(f->data() + sizeof(wire::EthHeader), f->data() + f->len);
    for (int i = 28; i < 32; ++i) covered.at(i) = 0;
    UNSIGNED_LONGS_EQUAL(ref_crc32c(covered.data(), covered.size()), lh->crc.get());
    data += lh->type == static_cast<uint8_t>(FrameType::kData);
    acks += lh->type == static_cast<uint8_t>(FrameType::kAck);
    f->free();
  }
  CHECK(data >= 3);
  CHECK(acks >= 1);
}

TEST(Link, MalformedFramesFromTheWireAreDroppedAndCounted) {
  Link& lb = rig->add_link(1, pb, &cb);
  HeapPacketPool& pool = rig->pool(a);
  auto good = [&](uint32_t seq) {
    FrameFields f;
    f.seq = seq;
    return build_frame(pool, static_cast<uint8_t>(FrameType::kData), seq_body(seq, 30 + seq), f);
  };
  auto bad = [&](void (*mutate)(Packet*)) {
    Packet* p = build_frame(pool, static_cast<uint8_t>(FrameType::kData), seq_body(99, 60));
    mutate(p);
    return p;
  };
  std::vector<Packet*> frames = {
      good(0),
      bad([](Packet* p) { p->len = 20; }),
      good(1),
      bad([](Packet* p) { eth_of(p)->ethertype.set(0x86DD); }),
      bad([](Packet* p) { lh_of(p)->version = 9; reseal(p); }),
      good(2),
      bad([](Packet* p) { lh_of(p)->length.set(61); reseal(p); }),
      bad([](Packet* p) { p->data()[kOverhead + 3] ^= 0x01; }),
      bad([](Packet* p) { lh_of(p)->type = 0; reseal(p); }),
      bad([](Packet* p) { lh_of(p)->type = wire::kMaxFrameType + 1; reseal(p); }),
      bad([](Packet* p) { lh_of(p)->flags |= wire::kLinkNoCrc; lh_of(p)->crc.set(0); }),
      good(3),
  };
  // The raw port, not a Link: these frames go out exactly as built.
  UNSIGNED_LONGS_EQUAL(frames.size(), pa->tx_burst(frames.data(), static_cast<uint16_t>(frames.size())));
  CHECK(rig->settle() > 0);
  const auto acks = drain(pa);  // b acknowledged the good ones
  CHECK(!acks.empty());
  UNSIGNED_LONGS_EQUAL(static_cast<int>(FrameType::kAck), acks.back().type);
  UNSIGNED_LONGS_EQUAL(4, acks.back().f.ack);
  UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());  // rejects were freed, goods freed by the client

  UNSIGNED_LONGS_EQUAL(4, cb.frames.size());
  for (uint32_t i = 0; i < 4; ++i) {
    CHECK(cb.frames[i].type == FrameType::kData);
    CHECK(cb.frames[i].body == seq_body(i, 30 + i));
  }
  const LinkCounters& k = lb.counters();
  UNSIGNED_LONGLONGS_EQUAL(4, k.rx_frames);
  UNSIGNED_LONGLONGS_EQUAL(4, k.data_delivered);
  UNSIGNED_LONGLONGS_EQUAL(30 + 31 + 32 + 33 + 4 * kOverhead, k.rx_bytes);
  UNSIGNED_LONGLONGS_EQUAL(1, k.rx_short);
  UNSIGNED_LONGLONGS_EQUAL(1, k.rx_bad_ethertype);
  UNSIGNED_LONGLONGS_EQUAL(1, k.rx_bad_version);
  UNSIGNED_LONGLONGS_EQUAL(1, k.rx_bad_length);
  UNSIGNED_LONGLONGS_EQUAL(1, k.rx_crc_errors);
  UNSIGNED_LONGLONGS_EQUAL(2, k.rx_bad_type);
  UNSIGNED_LONGLONGS_EQUAL(1, k.rx_no_crc_refused);
}

// With a bit flipped in every frame, the client still sees only intact bodies
// (unsequenced hellos here: validation alone, nothing resent).
TEST(Link, ACorruptingWireNeverCorruptsWhatIsPassedUp) {
  FaultPlan plan;
  plan.corrupt = 1.0;
  make(77, LinkModel{}, plan);
  LinkConfig cfg = rig->link_config();
  cfg.tx_cap = 4096;
  Link& la = rig->add_link(0, pa, &ca, cfg);
  Link& lb = rig->add_link(1, pb, &cb);
  constexpr uint32_t kFrames = 3000;
  constexpr uint32_t kLen = 64;
  for (uint32_t i = 0; i < kFrames; ++i) CHECK(la.send_raw(FrameType::kHello, packet_with(rig->pool(a), seq_body(i, kLen))));
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGLONGS_EQUAL(kFrames, rig->fabric().stats().corrupted);
  UNSIGNED_LONGLONGS_EQUAL(kFrames, rig->fabric().stats().frames_delivered);

  uint32_t last = 0;
  for (size_t i = 0; i < cb.frames.size(); ++i) {
    uint32_t seq;
    std::memcpy(&seq, cb.frames[i].body.data(), 4);
    CHECK(cb.frames[i].body == seq_body(seq, kLen));
    CHECK(i == 0 || seq > last);  // in order, no duplicates
    last = seq;
  }
  const LinkCounters& k = lb.counters();
  UNSIGNED_LONGLONGS_EQUAL(kFrames, k.rx_frames + rejects(k));
  UNSIGNED_LONGLONGS_EQUAL(cb.frames.size(), k.rx_frames);
  // Only the 96 MAC bits of 880 are unchecked: about 11% get through.
  CHECK(k.rx_frames > kFrames * 8 / 100 && k.rx_frames < kFrames * 16 / 100);
  CHECK(k.rx_crc_errors > kFrames / 2);
  CHECK(k.rx_bad_ethertype > 0 && k.rx_bad_version > 0 && k.rx_bad_length > 0);
  UNSIGNED_LONGLONGS_EQUAL(0, k.rx_bad_type);  // a flipped type bit is a CRC error first
  UNSIGNED_LONGLONGS_EQUAL(0, k.rx_short);
}

TEST(Link, SendRefusesPastTheTxCapAndTheCallerKeepsThePacket) {
  constexpr uint32_t kCap = 4;
  LinkConfig cfg = rig->link_config();
  cfg.tx_cap = kCap;
  Link& la = rig->add_link(0, pa, &ca, cfg);
  Link& lb = rig->add_link(1, pb, &cb);
  UNSIGNED_LONGS_EQUAL(kCap, la.tx_space());
  for (uint32_t i = 0; i < kCap; ++i) {
    CHECK(la.send_raw(FrameType::kHello, packet_with(rig->pool(a), seq_body(i, 10))));
    UNSIGNED_LONGS_EQUAL(kCap - 1 - i, la.tx_space());
    UNSIGNED_LONGS_EQUAL(i + 1, la.tx_queued());
  }
  Packet* extra = packet_with(rig->pool(a), seq_body(kCap, 10));
  const uint16_t off = extra->data_off;
  CHECK_FALSE(la.send_raw(FrameType::kHello, extra));
  CHECK_FALSE(la.send_raw(FrameType::kHello, extra));
  UNSIGNED_LONGLONGS_EQUAL(2, la.counters().tx_queue_full);
  // Refused untouched: same body, no headers prepended.
  UNSIGNED_LONGS_EQUAL(10, extra->len);
  UNSIGNED_LONGS_EQUAL(off, extra->data_off);
  MEMCMP_EQUAL(seq_body(kCap, 10).data(), extra->data(), 10);
  UNSIGNED_LONGS_EQUAL(kCap, la.tx_queued());
  UNSIGNED_LONGLONGS_EQUAL(kCap + 1, rig->pool(a).stats().in_use);

  CHECK(la.poll());  // flushes the queue to the port
  UNSIGNED_LONGS_EQUAL(0, la.tx_queued());
  UNSIGNED_LONGS_EQUAL(kCap, la.tx_space());
  CHECK(la.send_raw(FrameType::kHello, extra));
  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(kCap + 1, cb.frames.size());
  for (uint32_t i = 0; i <= kCap; ++i) CHECK(cb.frames[i].body == seq_body(i, 10));
  UNSIGNED_LONGLONGS_EQUAL(kCap + 1, la.counters().tx_frames);
  UNSIGNED_LONGLONGS_EQUAL(kCap + 1, lb.counters().rx_frames);
  UNSIGNED_LONGLONGS_EQUAL(2, la.counters().tx_queue_full);
}

// A port that takes part of a burst: the Link keeps the rest, in order, and
// counts only what the port took.
TEST(Link, PartialTxBurstKeepsTheRestInOrder) {
  LinkModel slow;
  slow.bytes_per_ns = 0.5;
  slow.tx_backlog_ns = 0;  // the port takes a frame only while the wire is idle
  make(5, slow);
  Link& la = rig->add_link(0, pa, &ca);
  Link& lb = rig->add_link(1, pb, &cb);
  constexpr uint32_t kFrames = 50;
  for (uint32_t i = 0; i < kFrames; ++i) CHECK(la.send_raw(FrameType::kHello, packet_with(rig->pool(a), seq_body(i, 100 + i))));
  CHECK(la.poll());
  UNSIGNED_LONGS_EQUAL(kFrames - 1, la.tx_queued());
  UNSIGNED_LONGLONGS_EQUAL(1, la.counters().tx_frames);
  UNSIGNED_LONGLONGS_EQUAL(kOverhead + 100, la.counters().tx_bytes);
  CHECK(pa->stats().tx_full > 0);

  CHECK(rig->settle() > 0);
  UNSIGNED_LONGS_EQUAL(0, la.tx_queued());
  UNSIGNED_LONGS_EQUAL(kFrames, cb.frames.size());
  for (uint32_t i = 0; i < kFrames; ++i) CHECK(cb.frames[i].body == seq_body(i, 100 + i));
  UNSIGNED_LONGLONGS_EQUAL(kFrames, la.counters().tx_frames);
  UNSIGNED_LONGLONGS_EQUAL(kFrames, lb.counters().rx_frames);
  UNSIGNED_LONGLONGS_EQUAL(pa->stats().tx_bytes, la.counters().tx_bytes);
}

TEST(Link, SendRawRefusesDataFrames) {
  Link& la = rig->add_link(0, pa, &ca);
  Packet* p = packet_with(rig->pool(a), seq_body(1, 10));
  CHECK_FALSE(la.send_raw(FrameType::kData, p));  // unsequenced data would read as seq 0
  UNSIGNED_LONGS_EQUAL(10, p->len);
  UNSIGNED_LONGS_EQUAL(0, la.tx_queued());
  p->free();
}

TEST(Link, DestroyingALinkFreesItsQueuedFrames) {
  Link& la = rig->add_link(0, pa, &ca);
  for (uint32_t i = 0; i < 20; ++i) CHECK(la.send_raw(FrameType::kHello, packet_with(rig->pool(a), seq_body(i, 10))));
  // Data frames are referenced twice (tx queue and window) until sent.
  for (uint8_t i = 0; i < 8; ++i)
    CHECK(la.send(static_cast<uint8_t>(i % wire::kNumVcs), packet_with(rig->pool(a), seq_body(i, 10))));
  UNSIGNED_LONGLONGS_EQUAL(28, rig->pool(a).stats().in_use);
  UNSIGNED_LONGS_EQUAL(28, la.tx_queued());
  rig->teardown();  // never polled: the frames are still on the Link's queue
  UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
}

// Sent but unacknowledged data is held by the window after the port took
// it; destroying the Link gives those references back too.
TEST(Link, DestroyingALinkFreesItsUnackedFrames) {
  Link& la = rig->add_link(0, pa, &ca);
  rig->freeze(b);
  for (uint8_t i = 0; i < 8; ++i) CHECK(la.send(0, packet_with(rig->pool(a), seq_body(i, 10))));
  rig->run_for(3 * kUs);
  UNSIGNED_LONGS_EQUAL(0, la.tx_queued());
  UNSIGNED_LONGS_EQUAL(8, la.unacked());
  UNSIGNED_LONGS_EQUAL(8, pb->rx_queued());
  rig->teardown();
  UNSIGNED_LONGLONGS_EQUAL(0, rig->in_use());
}
