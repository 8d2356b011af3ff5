// UringPort over a socketpair, a unix socket path, and AF_PACKET on a veth
// pair: frames intact and in order, backpressure through the send slots,
// peer close, the wait fd, and no packet left out of its pool.
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/clock.h"
#include "drivers/packet.h"
#include "drivers/uring/uring_port.h"
#include "flow.h"
#include "host_test_util.h"
#include "tests/skip.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using host_test::Flow;
using host_test::pump;

namespace {

constexpr uint32_t kBuf = kUringMaxFrame + tuning::kPacketHeadroom;

struct Pair {
  std::unique_ptr<UringPort> a, b;
};

// Two ports over the two ends of a socketpair, started.
Pair socket_pair(PacketPool& pool, UringPortConfig base = {}) {
  int sv[2];
  Pair p;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return p;
  base.pool = &pool;
  base.spec = "uring:fd=" + std::to_string(sv[0]);
  base.index = 1;
  auto a = UringPort::open(base);
  base.spec = "uring:fd=" + std::to_string(sv[1]);
  base.index = 2;
  auto b = UringPort::open(base);
  if (!a || !b) {
    std::printf("open: %s / %s\n", a.status().to_string().c_str(), b.status().to_string().c_str());
    return p;
  }
  p.a = std::move(a.value());
  p.b = std::move(b.value());
  Status sa = p.a->start(kSec), sb = p.b->start(kSec);
  if (!sa || !sb) {
    std::printf("start: %s / %s\n", sa.to_string().c_str(), sb.to_string().c_str());
    p.a.reset();
    p.b.reset();
  }
  return p;
}

bool readable(int fd, int timeout_ms) {
  pollfd pfd{fd, POLLIN, 0};
  return poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & POLLIN);
}

}  // namespace

TEST_GROUP(UringPort) {
  std::unique_ptr<HeapPacketPool> pool;
  void setup() override { pool = std::make_unique<HeapPacketPool>(kBuf, 2048); }
  void teardown() override {
    // Every test destroys its ports first: then nothing may be out of the pool.
    UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
    pool.reset();
  }
};

TEST(UringPort, EveryFrameSizeArrivesIntactInOrderAndCounted) {
  Pair p = socket_pair(*pool);
  CHECK(p.a && p.b);
  STRCMP_EQUAL("uring", p.a->info().driver.c_str());
  UNSIGNED_LONGS_EQUAL(kUringMaxFrame, p.a->info().max_frame);
  CHECK_TRUE(p.a->info().medium_integrity);  // a unix socket: the link skips its CRC
  CHECK(p.a->link_state() == LinkState::kUp);
  CHECK(p.a->multishot());

  Flow f;
  f.tx = p.a.get();
  f.rx = p.b.get();
  f.pool = pool.get();
  f.rx_index = 2;
  uint64_t bytes = 0;
  for (uint32_t len = 1; len <= p.a->info().max_frame; ++len) {
    f.sizes.push_back(len);
    bytes += len;
  }
  CHECK(pump(30.0, f));
  STRCMP_EQUAL("", f.error.c_str());
  UNSIGNED_LONGLONGS_EQUAL(f.sizes.size(), p.a->stats().tx_packets);
  UNSIGNED_LONGLONGS_EQUAL(bytes, p.a->stats().tx_bytes);
  UNSIGNED_LONGLONGS_EQUAL(f.sizes.size(), p.b->stats().rx_packets);
  UNSIGNED_LONGLONGS_EQUAL(bytes, p.b->stats().rx_bytes);
  UNSIGNED_LONGLONGS_EQUAL(0, p.b->stats().rx_dropped);
  UNSIGNED_LONGLONGS_EQUAL(0, p.a->counters().tx_errors);
  // One multishot recv served them all, unless the buffer ring ran dry.
  CHECK(p.b->counters().recv_arms <= 1 + p.b->counters().rx_nobuf_kernel);
}

TEST(UringPort, TxBurstTakesOnlyAsManyAsFreeSendSlots) {
  UringPortConfig cfg;
  cfg.tx_slots = 8;
  Pair p = socket_pair(*pool, cfg);
  CHECK(p.a && p.b);

  // More than the free slots in one call: 8 taken, the caller keeps 12.
  Flow f;
  f.tx = p.a.get();
  f.rx = p.b.get();
  f.pool = pool.get();
  f.rx_index = 2;
  f.sizes.assign(20, 100);
  for (uint32_t i = 0; i < 20; ++i) {
    Packet* x = pool->alloc();
    host_test::fill_frame(x, i, 100);
    f.pending.push_back(x);
  }
  f.next = 20;
  const uint16_t k = p.a->tx_burst(f.pending.data(), 20);
  UNSIGNED_LONGS_EQUAL(8, k);
  UNSIGNED_LONGLONGS_EQUAL(12, p.a->stats().tx_full);
  f.pending.erase(f.pending.begin(), f.pending.begin() + k);
  CHECK(pump(10.0, f));
  STRCMP_EQUAL("", f.error.c_str());

  // Now a receiver that does not read: the socket fills, sends wait in the
  // kernel holding their slots, and tx_burst takes nothing more.
  Flow g;
  g.tx = p.a.get();
  g.rx = p.b.get();
  g.pool = pool.get();
  g.rx_index = 2;
  g.sizes.assign(2000, 9000);
  uint16_t last = 1;
  for (int round = 0; round < 5000 && last > 0; ++round) {
    while (g.pending.size() < 16 && g.next < g.sizes.size()) {
      Packet* x = pool->alloc();
      host_test::fill_frame(x, static_cast<uint32_t>(g.next), 9000);
      g.pending.push_back(x);
      ++g.next;
    }
    last = p.a->tx_burst(g.pending.data(), static_cast<uint16_t>(g.pending.size()));
    g.pending.erase(g.pending.begin(), g.pending.begin() + last);
  }
  UNSIGNED_LONGS_EQUAL(0, last);
  UNSIGNED_LONGS_EQUAL(8, p.a->tx_owned());
  CHECK(g.next < g.sizes.size());  // the pipe filled before everything went
  // The receiver reads again: every frame arrives, in order.
  CHECK(pump(20.0, g));
  STRCMP_EQUAL("", g.error.c_str());
  UNSIGNED_LONGLONGS_EQUAL(0, p.a->counters().tx_errors);
}

TEST(UringPort, BurstsBothWaysAtOnce) {
  Pair p = socket_pair(*pool);
  CHECK(p.a && p.b);
  std::mt19937 rng(7);
  Flow ab, ba;
  ab.tx = p.a.get();
  ab.rx = p.b.get();
  ab.rx_index = 2;
  ba.tx = p.b.get();
  ba.rx = p.a.get();
  ba.rx_index = 1;
  ab.pool = ba.pool = pool.get();
  for (int i = 0; i < 3000; ++i) {
    ab.sizes.push_back(1 + rng() % kUringMaxFrame);
    ba.sizes.push_back(1 + rng() % 1500);
  }
  CHECK(pump(30.0, ab, ba));
  STRCMP_EQUAL("", ab.error.c_str());
  STRCMP_EQUAL("", ba.error.c_str());
  UNSIGNED_LONGLONGS_EQUAL(3000, p.a->stats().rx_packets);
  UNSIGNED_LONGLONGS_EQUAL(3000, p.b->stats().rx_packets);
}

TEST(UringPort, AFrameLongerThanMaxFrameIsDroppedAndCounted) {
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  UringPortConfig cfg;
  cfg.pool = pool.get();
  cfg.spec = "uring:fd=" + std::to_string(sv[0]);
  auto a = UringPort::open(cfg);
  cfg.spec = "uring:fd=" + std::to_string(sv[1]);
  cfg.max_frame = 1000;
  auto b = UringPort::open(cfg);
  CHECK(a.is_ok() && b.is_ok());
  CHECK(a.value()->start(kSec).is_ok());
  CHECK(b.value()->start(kSec).is_ok());
  UNSIGNED_LONGS_EQUAL(1000, b.value()->info().max_frame);
  Packet* x[3] = {pool->alloc(), pool->alloc(), pool->alloc()};
  host_test::fill_frame(x[0], 0, 1001);
  host_test::fill_frame(x[1], 1, 1000);
  host_test::fill_frame(x[2], 2, 5000);
  UNSIGNED_LONGS_EQUAL(3, a.value()->tx_burst(x, 3));
  Packet* got[4];
  uint16_t n = 0;
  for (int i = 0; i < 1000 && n == 0; ++i) n = b.value()->rx_burst(got, 4);
  UNSIGNED_LONGS_EQUAL(1, n);
  CHECK(host_test::frame_ok(got[0], 1, 1000));  // never a truncated frame
  got[0]->free();
  UNSIGNED_LONGLONGS_EQUAL(2, b.value()->counters().rx_oversize);
  UNSIGNED_LONGLONGS_EQUAL(2, b.value()->stats().rx_dropped);
}

TEST(UringPort, SingleRecvFallbackCarriesFramesToo) {
  UringPortConfig cfg;
  cfg.multishot = false;
  Pair p = socket_pair(*pool, cfg);
  CHECK(p.a && p.b);
  CHECK(!p.b->multishot());
  Flow f;
  f.tx = p.a.get();
  f.rx = p.b.get();
  f.pool = pool.get();
  f.rx_index = 2;
  for (uint32_t i = 0; i < 500; ++i) f.sizes.push_back(60 + i * 17);
  CHECK(pump(10.0, f));
  STRCMP_EQUAL("", f.error.c_str());
  CHECK(p.b->counters().recv_arms >= 500);  // one recv per frame
}

TEST(UringPort, PeerCloseTakesTheLinkDown) {
  Pair p = socket_pair(*pool);
  CHECK(p.a && p.b);
  CHECK(p.b->link_state() == LinkState::kUp);
  p.a.reset();
  // The socket says so at once...
  CHECK(p.b->link_state() == LinkState::kDown);
  // ...and the receive sees EOF; then tx_burst takes nothing.
  Packet* got[8];
  for (int i = 0; i < 100; ++i) UNSIGNED_LONGS_EQUAL(0, p.b->rx_burst(got, 8));
  Packet* x = pool->alloc();
  host_test::fill_frame(x, 0, 64);
  UNSIGNED_LONGS_EQUAL(0, p.b->tx_burst(&x, 1));
  x->free();
  CHECK(p.b->link_state() == LinkState::kDown);
}

TEST(UringPort, CloseWithSendsInFlightFreesTheirPackets) {
  UringPortConfig cfg;
  cfg.tx_slots = 32;
  Pair p = socket_pair(*pool, cfg);
  CHECK(p.a && p.b);
  // Fill the pipe (the receiver never reads) until sends wait in the kernel.
  for (int round = 0; round < 2000 && p.a->tx_owned() < 32; ++round) {
    Packet* x = pool->alloc();
    host_test::fill_frame(x, 0, 9000);
    if (p.a->tx_burst(&x, 1) == 0) x->free();
  }
  UNSIGNED_LONGS_EQUAL(32, p.a->tx_owned());
  CHECK(pool->stats().in_use >= 32);
  p.a.reset();  // cancels the waiting sends: their packets go back
  p.b.reset();
  UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
}

TEST(UringPort, WaitFdBecomesReadableWhenAFrameArrives) {
  Pair p = socket_pair(*pool);
  CHECK(p.a && p.b);
  const int fd = p.b->wait_fd();
  CHECK(fd >= 0);
  Packet* got[8];
  // Idle: rx_burst drains the eventfd, so the idle loop could sleep on it.
  for (int i = 0; i < 3; ++i) UNSIGNED_LONGS_EQUAL(0, p.b->rx_burst(got, 8));
  CHECK_FALSE(readable(fd, 0));

  Packet* x = pool->alloc();
  host_test::fill_frame(x, 5, 300);
  UNSIGNED_LONGS_EQUAL(1, p.a->tx_burst(&x, 1));
  CHECK(readable(fd, 1000));
  UNSIGNED_LONGS_EQUAL(1, p.b->rx_burst(got, 8));
  CHECK(host_test::frame_ok(got[0], 5, 300));
  got[0]->free();
  UNSIGNED_LONGS_EQUAL(0, p.b->rx_burst(got, 8));
  CHECK_FALSE(readable(fd, 0));
  // The sender's wait fd, too, has only a send completion to report.
  UNSIGNED_LONGS_EQUAL(0, p.a->rx_burst(got, 8));
  CHECK_FALSE(readable(p.a->wait_fd(), 0));
}

TEST(UringPort, ServerAndClientOverAPath) {
  const std::string path = "/tmp/toroid-uring-" + std::to_string(getpid()) + ".sock";
  UringPortConfig cfg;
  cfg.pool = pool.get();
  cfg.spec = "uring:path=" + path + ",role=server";
  auto server = UringPort::open(cfg);
  CHECK_TEXT(server.is_ok(), server.status().to_string().c_str());
  cfg.spec = "uring:path=" + path + ",role=client";
  auto client = UringPort::open(cfg);
  CHECK_TEXT(client.is_ok(), client.status().to_string().c_str());
  // A connect lands in the listen backlog, so one thread can do both.
  Status st = client.value()->start(2 * kSec);
  CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  st = server.value()->start(2 * kSec);
  CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  STRCMP_EQUAL(("uring:" + path).c_str(), server.value()->info().name.c_str());
  CHECK_TRUE(server.value()->info().medium_integrity);
  CHECK_TRUE(client.value()->info().medium_integrity);

  Flow f;
  f.tx = client.value().get();
  f.rx = server.value().get();
  f.pool = pool.get();
  f.sizes.assign(100, 1000);
  CHECK(pump(10.0, f));
  STRCMP_EQUAL("", f.error.c_str());

  struct stat sb;
  CHECK(stat(path.c_str(), &sb) == 0);
  server.value()->close();
  CHECK(stat(path.c_str(), &sb) != 0);  // the server removed its socket
  client.value().reset();
  server.value().reset();
}

TEST(UringPort, ClientGivesUpWithATimeoutNamingThePort) {
  UringPortConfig cfg;
  cfg.pool = pool.get();
  cfg.spec = "uring:path=/tmp/toroid-uring-nobody-" + std::to_string(getpid()) + ".sock,role=client";
  auto client = UringPort::open(cfg);
  CHECK(client.is_ok());
  Status st = client.value()->start(50 * kMs);
  CHECK(st.code() == Code::kTimeout);
  CHECK(st.message().find("toroid-uring-nobody") != std::string::npos);
  CHECK(client.value()->link_state() == LinkState::kDown);
}

TEST(UringPort, BadSpecsAreRejectedWithTheReason) {
  UringPortConfig cfg;
  cfg.pool = pool.get();
  const char* bad[] = {"uring:",
                       "uring:fd=x",
                       "uring:path=/tmp/x.sock",
                       "uring:path=/tmp/x,role=boss",
                       "uring:fd=3,iface=eth0",
                       "uring:color=red",
                       "memif:role=server",
                       "uring:role=server"};
  for (const char* s : bad) {
    cfg.spec = s;
    auto r = UringPort::open(cfg);
    CHECK_TEXT(!r.is_ok(), s);
    CHECK(r.status().code() == Code::kInvalid);
    CHECK_TEXT(r.status().message().find(s) != std::string::npos, r.status().message().c_str());
  }
  // A descriptor that is not a SEQPACKET socket.
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  cfg.spec = "uring:fd=" + std::to_string(sv[0]);
  auto r = UringPort::open(cfg);
  CHECK(!r.is_ok());
  ::close(sv[0]);
  ::close(sv[1]);
  // A frame size the pool's buffers cannot hold.
  cfg.spec = "uring:fd=0";
  cfg.max_frame = kBuf;
  CHECK(!UringPort::open(cfg).is_ok());
}

// AF_PACKET on the two ends of a veth pair (needs root and `ip`; SKIP,
// counted, otherwise).
TEST(UringPort, AfPacketOverAVethPair) {
  const std::string a = "tvu" + std::to_string(getpid() % 100000) + "a";
  const std::string b = "tvu" + std::to_string(getpid() % 100000) + "b";
  const std::string add = "ip link add " + a + " type veth peer name " + b + " >/dev/null 2>&1 && ip link set " + a +
                          " up && ip link set " + b + " up";
  if (geteuid() != 0) TOROID_SKIP("creating a veth pair needs root");
  if (std::system(add.c_str()) != 0) TOROID_SKIP("cannot create a veth pair here (ip link add ... type veth failed)");
  struct VethGuard {
    std::string name;
    ~VethGuard() { (void)!std::system(("ip link del " + name + " >/dev/null 2>&1").c_str()); }
  } guard{a};
  {
    UringPortConfig cfg;
    cfg.pool = pool.get();
    cfg.spec = "uring:iface=" + a;
    auto pa = UringPort::open(cfg);
    CHECK_TEXT(pa.is_ok(), pa.status().to_string().c_str());
    cfg.spec = "uring:iface=" + b;
    auto pb = UringPort::open(cfg);
    CHECK_TEXT(pb.is_ok(), pb.status().to_string().c_str());
    UNSIGNED_LONGS_EQUAL(1514, pa.value()->info().max_frame);  // veth MTU 1500 + Ethernet header
    CHECK_FALSE(pa.value()->info().medium_integrity);          // a wire: the link keeps its CRC
    CHECK(pa.value()->start(kSec).is_ok());
    CHECK(pb.value()->start(kSec).is_ok());
    // veth carrier comes up a moment after "ip link set up".
    for (int i = 0; i < 200 && pa.value()->link_state() != LinkState::kUp; ++i) usleep(5000);
    CHECK(pa.value()->link_state() == LinkState::kUp);

    Flow ab, ba;
    ab.eth = ba.eth = true;
    ab.tx = pa.value().get();
    ab.rx = pb.value().get();
    ba.tx = pb.value().get();
    ba.rx = pa.value().get();
    ab.pool = ba.pool = pool.get();
    ab.burst = ba.burst = 8;  // veth queues are short; the kernel drops what overflows
    for (uint32_t i = 0; i < 200; ++i) {
      ab.sizes.push_back(60 + (i * 37) % 1455);
      ba.sizes.push_back(1514 - (i * 11) % 1400);
    }
    // Frames can be dropped by the kernel (no flow control on a veth):
    // what arrives must be intact and in order, and the count is reported.
    const bool all = pump(5.0, ab, ba);
    std::printf("\n  (AF_PACKET over veth: %zu/%zu and %zu/%zu frames arrived)\n", ab.received, ab.sizes.size(),
                ba.received, ba.sizes.size());
    CHECK(all);
    STRCMP_EQUAL("", ab.error.c_str());
    STRCMP_EQUAL("", ba.error.c_str());
    ab.drop_pending();
    ba.drop_pending();
  }
}
