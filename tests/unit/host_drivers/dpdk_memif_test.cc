// DPDK ports in one process: memif server and client on one socket (both
// ends here), the Packet <-> mbuf mapping, reference counts against the
// mempool's own count, jumbo frames, and af_packet over a veth pair.
// EAL is brought up once by main() (see main.cc); every group here is named
// Dpdk* so that main can leave them out when EAL cannot start.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/tuning.h"
#include "drivers/dpdk/dpdk_pool.h"
#include "drivers/dpdk/dpdk_port.h"
#include "drivers/dpdk/eal.h"
#include "flow.h"
#include "host_test_util.h"
#include "memif_pair.h"
#include "tests/skip.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using host_test::Flow;
using host_test::pump;
using host_test::make_pool;
using host_test::memif;
using host_test::MemifPair;
using host_test::open_pair;

namespace {

bool exists(const std::string& path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0;
}

Flow flow(Port* tx, Port* rx, PacketPool* pool, uint16_t rx_index) {
  Flow f;
  f.tx = tx;
  f.rx = rx;
  f.pool = pool;
  f.rx_index = rx_index;
  return f;
}

}  // namespace

TEST_GROUP(DpdkMemif) {
  std::string dir;
  void setup() override {
    CHECK(host_test::dpdk_env().ready);
    dir = host_test::dpdk_env().dir;
  }
};

TEST(DpdkMemif, PairProbedAtInitLinksUpAndServerSocketGoesAwayOnClose) {
  const auto& env = host_test::dpdk_env();
  auto pool = make_pool(4095, 2048);
  CHECK(pool != nullptr);
  {
    // The server's socket exists from EAL init (memif binds at probe).
    CHECK(exists(env.std_socket));
    MemifPair p = open_pair(env.std_server, pool.get(), env.std_client, pool.get());
    CHECK(p.ok());
    STRCMP_EQUAL("memif", p.server->info().driver.c_str());
    CHECK_TRUE(p.server->info().medium_integrity);  // shared memory: the link skips its CRC
    CHECK_TRUE(p.client->info().medium_integrity);
    UNSIGNED_LONGS_EQUAL(1518, p.server->info().max_frame);
    UNSIGNED_LONGS_EQUAL(1518, p.client->info().max_frame);
    STRCMP_EQUAL(("memif:" + env.std_socket + "#0").c_str(), p.server->info().name.c_str());
    CHECK(p.server->device_name().rfind("net_memif", 0) == 0);
    CHECK(p.server->link_state() == LinkState::kUp);
    CHECK(p.client->link_state() == LinkState::kUp);
    LONGS_EQUAL(-1, p.server->wait_fd());

    // The client stops: the server sees its link go down.
    p.client->stop();
    CHECK(p.client->link_state() == LinkState::kDown);
    for (int i = 0; i < 2000 && p.server->link_state() == LinkState::kUp; ++i) usleep(1000);
    CHECK(p.server->link_state() == LinkState::kDown);
    p.client->close();
    CHECK(exists(env.std_socket));  // the server is still open
    p.server->close();
    CHECK_FALSE(exists(env.std_socket));
  }
  UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
  UNSIGNED_LONGS_EQUAL(pool->capacity(), pool->available());
}

TEST(DpdkMemif, FramesOf60To1518BytesRoundTripIntactBothWays) {
  auto pool = make_pool(4095, 2048);
  CHECK(pool != nullptr);
  const std::string sock = dir + "/rt.sock";
  {
    MemifPair p = open_pair(memif("server", sock), pool.get(), memif("client", sock), pool.get());
    CHECK(p.ok());
    Flow sc = flow(p.server.get(), p.client.get(), pool.get(), 2);
    Flow cs = flow(p.client.get(), p.server.get(), pool.get(), 1);
    uint64_t bytes = 0;
    for (uint32_t len = 60; len <= 1518; ++len) {
      sc.sizes.push_back(len);
      cs.sizes.push_back(1578 - len);
      bytes += len;
    }
    CHECK(pump(30.0, sc, cs));
    STRCMP_EQUAL("", sc.error.c_str());
    STRCMP_EQUAL("", cs.error.c_str());
    UNSIGNED_LONGLONGS_EQUAL(sc.sizes.size(), p.server->stats().tx_packets);
    UNSIGNED_LONGLONGS_EQUAL(bytes, p.server->stats().tx_bytes);
    UNSIGNED_LONGLONGS_EQUAL(sc.sizes.size(), p.client->stats().rx_packets);
    UNSIGNED_LONGLONGS_EQUAL(bytes, p.client->stats().rx_bytes);
    UNSIGNED_LONGLONGS_EQUAL(cs.sizes.size(), p.server->stats().rx_packets);
    p.server->refresh_stats();
    UNSIGNED_LONGLONGS_EQUAL(0, p.server->stats().rx_dropped);
  }
  CHECK_FALSE(exists(sock));
  UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
  UNSIGNED_LONGS_EQUAL(pool->capacity(), pool->available());
}

TEST(DpdkMemif, APacketIsItsMbufNoCopyOnEitherSide) {
  auto pool = make_pool(4095, 2048);
  CHECK(pool != nullptr);
  rte_mempool* mp = pool->mempool();
  const std::string sock = dir + "/zc.sock";
  {
    MemifPair p = open_pair(memif("server", sock), pool.get(), memif("client", sock), pool.get());
    CHECK(p.ok());
    Packet* x = pool->alloc();
    CHECK(x);
    rte_mbuf* m = reinterpret_cast<rte_mbuf*>(x) - 1;
    POINTERS_EQUAL(x, rte_mbuf_to_priv(m));
    POINTERS_EQUAL(mp, rte_mempool_from_obj(m));
    POINTERS_EQUAL(mp, m->pool);
    POINTERS_EQUAL(m->buf_addr, x->buf);
    POINTERS_EQUAL(reinterpret_cast<uint8_t*>(m) + sizeof(rte_mbuf) + rte_pktmbuf_priv_size(mp), x->buf);
    UNSIGNED_LONGS_EQUAL(m->buf_len, x->buf_len);
    UNSIGNED_LONGS_EQUAL(tuning::kPacketHeadroom, x->data_off);
    POINTERS_EQUAL(rte_pktmbuf_mtod(m, uint8_t*), x->data());
    host_test::fill_frame(x, 42, 700);
    // The netstack prepends headers in place: that moves data_off, and
    // tx_burst hands the mbuf the same view.
    CHECK(x->prepend(46) != nullptr);
    const uint32_t sent_len = x->len;
    UNSIGNED_LONGS_EQUAL(1, p.server->tx_burst(&x, 1));

    Packet* got[4];
    uint16_t n = 0;
    for (int i = 0; i < 100000 && n == 0; ++i) n = p.client->rx_burst(got, 4);
    UNSIGNED_LONGS_EQUAL(1, n);
    Packet* y = got[0];
    rte_mbuf* my = reinterpret_cast<rte_mbuf*>(y) - 1;
    POINTERS_EQUAL(mp, rte_mempool_from_obj(my));  // an mbuf of our pool, not a copy elsewhere
    POINTERS_EQUAL(y, rte_mbuf_to_priv(my));
    POINTERS_EQUAL(rte_pktmbuf_mtod(my, uint8_t*), y->data());
    UNSIGNED_LONGS_EQUAL(my->data_len, y->len);
    UNSIGNED_LONGS_EQUAL(sent_len, y->len);
    UNSIGNED_LONGS_EQUAL(2, y->port);
    UNSIGNED_LONGS_EQUAL(1, y->refcnt);
    POINTERS_EQUAL(pool.get(), y->pool);
    CHECK(y->adj(46));
    CHECK(host_test::frame_ok(y, 42, 700));
    y->free();
  }
  UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
  UNSIGNED_LONGS_EQUAL(pool->capacity(), pool->available());
}

TEST(DpdkMemif, ASharedPacketReturnsToTheMempoolExactlyOnceAndASmallOneLeavesAsACopy) {
  auto pool = make_pool(4095, 2048);
  CHECK(pool != nullptr);
  const std::string sock = dir + "/ref.sock";
  {
    MemifPair p = open_pair(memif("server", sock), pool.get(), memif("client", sock), pool.get());
    CHECK(p.ok());
    const uint32_t base = pool->available();
    Packet* x = pool->alloc();
    host_test::fill_frame(x, 7, 500);
    x->ref();  // a link keeps it for retransmission
    UNSIGNED_LONGS_EQUAL(2, x->refcnt);
    rte_mbuf* m = reinterpret_cast<rte_mbuf*>(x) - 1;
    UNSIGNED_LONGS_EQUAL(1, p.server->tx_burst(&x, 1));
    // tx_burst took one reference: ours is the last Packet reference, and
    // the mbuf is still ours (memif copied the frame and dropped its own).
    UNSIGNED_LONGS_EQUAL(1, x->refcnt);
    UNSIGNED_LONGS_EQUAL(1, rte_mbuf_refcnt_read(m));
    UNSIGNED_LONGS_EQUAL(base - 1, pool->available());
    UNSIGNED_LONGLONGS_EQUAL(1, p.server->counters().tx_shared);

    Packet* got[4];
    uint16_t n = 0;
    for (int i = 0; i < 100000 && n == 0; ++i) n = p.client->rx_burst(got, 4);
    UNSIGNED_LONGS_EQUAL(1, n);
    CHECK(host_test::frame_ok(got[0], 7, 500));
    got[0]->free();
    UNSIGNED_LONGS_EQUAL(base - 1, pool->available());
    CHECK(host_test::frame_ok(x, 7, 500));  // untouched while shared
    x->free();                              // the last owner: back to the mempool, once
    UNSIGNED_LONGS_EQUAL(base, pool->available());
    UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);

    // And an unshared packet: the PMD's reference was the only one.
    Packet* z = pool->alloc();
    host_test::fill_frame(z, 8, 64);
    UNSIGNED_LONGS_EQUAL(1, p.server->tx_burst(&z, 1));
    UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
    n = 0;
    for (int i = 0; i < 100000 && n == 0; ++i) n = p.client->rx_burst(got, 4);
    UNSIGNED_LONGS_EQUAL(1, n);
    got[0]->free();
    UNSIGNED_LONGS_EQUAL(base, pool->available());

    // Up to kTxCopyMaxBytes the PMD takes a copy of its own and frees it:
    // the original's mbuf is never shared (no atomic refcount drop in the
    // PMD). One byte more: shared with the PMD, as larger frames are.
    for (const uint32_t len : {tuning::kTxCopyMaxBytes, tuning::kTxCopyMaxBytes + 1}) {
      const bool copied = len <= tuning::kTxCopyMaxBytes;
      const uint64_t copies0 = p.server->counters().tx_small_copies, shared0 = p.server->counters().tx_shared;
      Packet* y = pool->alloc();
      host_test::fill_frame(y, len, len);
      y->ref();  // a link keeps it for retransmission
      rte_mbuf* ym = reinterpret_cast<rte_mbuf*>(y) - 1;
      UNSIGNED_LONGS_EQUAL(1, p.server->tx_burst(&y, 1));
      UNSIGNED_LONGLONGS_EQUAL(copied ? 1 : 0, p.server->counters().tx_small_copies - copies0);
      UNSIGNED_LONGLONGS_EQUAL(copied ? 0 : 1, p.server->counters().tx_shared - shared0);
      UNSIGNED_LONGS_EQUAL(1, y->refcnt);
      n = 0;
      for (int i = 0; i < 100000 && n == 0; ++i) n = p.client->rx_burst(got, 4);
      UNSIGNED_LONGS_EQUAL(1, n);
      CHECK(host_test::frame_ok(got[0], len, len));
      got[0]->free();
      UNSIGNED_LONGS_EQUAL(1, rte_mbuf_refcnt_read(ym));  // the PMD has let go either way
      CHECK(host_test::frame_ok(y, len, len));
      y->free();
      UNSIGNED_LONGS_EQUAL(base, pool->available());
    }
  }
  UNSIGNED_LONGS_EQUAL(pool->capacity(), pool->available());
}

TEST(DpdkMemif, AFullRingTakesFewerAndLeavesTheRestAsHandedIn) {
  auto pool = make_pool(4095, 2048);
  CHECK(pool != nullptr);
  const std::string sock = dir + "/full.sock";
  {
    // rsize=4: 16-slot rings, so 64 frames cannot all go at once.
    MemifPair p =
        open_pair(memif("server", sock, ",rsize=4"), pool.get(), memif("client", sock, ",rsize=4"), pool.get());
    CHECK(p.ok());
    const uint32_t base = pool->available();
    std::vector<Packet*> mine(64), offer;
    for (uint32_t i = 0; i < 64; ++i) {
      mine[i] = pool->alloc();
      host_test::fill_frame(mine[i], i, 200);
      mine[i]->ref();  // shared, as the link's window would hold them
    }
    offer = mine;
    const uint16_t k = p.server->tx_burst(offer.data(), 64);
    CHECK(k > 0 && k < 64);
    UNSIGNED_LONGLONGS_EQUAL(64 - k, p.server->stats().tx_full);
    for (uint32_t i = 0; i < 64; ++i) {
      rte_mbuf* m = reinterpret_cast<rte_mbuf*>(mine[i]) - 1;
      UNSIGNED_LONGS_EQUAL(i < k ? 1 : 2, mine[i]->refcnt);
      UNSIGNED_LONGS_EQUAL(1, rte_mbuf_refcnt_read(m));
    }
    // The rest go as the receiver frees slots; all arrive in order.
    Flow f = flow(p.server.get(), p.client.get(), pool.get(), 2);
    f.sizes.assign(64, 200);
    f.next = 64;
    f.received = 0;
    f.pending.assign(offer.begin() + k, offer.end());
    CHECK(pump(10.0, f));
    STRCMP_EQUAL("", f.error.c_str());
    for (Packet* x : mine) {
      UNSIGNED_LONGS_EQUAL(1, x->refcnt);
      x->free();
    }
    UNSIGNED_LONGS_EQUAL(base, pool->available());
  }
  UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
}

TEST(DpdkMemif, JumboFramesUpTo9000BytesWithBsize9216) {
  auto pool = make_pool(2047, 9216);
  CHECK(pool != nullptr);
  const std::string sock = dir + "/jumbo.sock";
  {
    MemifPair p =
        open_pair(memif("server", sock, ",bsize=9216"), pool.get(), memif("client", sock, ",bsize=9216"), pool.get());
    CHECK(p.ok());
    UNSIGNED_LONGS_EQUAL(9000, p.server->info().max_frame);
    UNSIGNED_LONGS_EQUAL(9000, p.client->info().max_frame);
    Flow sc = flow(p.server.get(), p.client.get(), pool.get(), 2);
    Flow cs = flow(p.client.get(), p.server.get(), pool.get(), 1);
    for (uint32_t len = 1519; len <= 9000; len += 7) {
      sc.sizes.push_back(len);
      cs.sizes.push_back(10519 - len);
    }
    sc.sizes.push_back(9000);
    cs.sizes.push_back(9000);
    CHECK(pump(30.0, sc, cs));
    STRCMP_EQUAL("", sc.error.c_str());
    STRCMP_EQUAL("", cs.error.c_str());
    UNSIGNED_LONGLONGS_EQUAL(0, p.client->counters().rx_multiseg);
  }
  UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
  UNSIGNED_LONGS_EQUAL(pool->capacity(), pool->available());
}

TEST(DpdkMemif, AFrameLargerThanOneMbufIsDroppedAndCounted) {
  auto big = make_pool(2047, 9216);
  auto small = make_pool(1023, 2048);
  CHECK(big != nullptr && small != nullptr);
  const std::string sock = dir + "/mix.sock";
  {
    MemifPair p =
        open_pair(memif("server", sock, ",bsize=9216"), big.get(), memif("client", sock, ",bsize=9216"), small.get());
    CHECK(p.ok());
    UNSIGNED_LONGS_EQUAL(2048, p.client->info().max_frame);  // capped by its pool
    Packet* x[2] = {big->alloc(), big->alloc()};
    host_test::fill_frame(x[0], 0, 5000);
    host_test::fill_frame(x[1], 1, 1000);
    UNSIGNED_LONGS_EQUAL(2, p.server->tx_burst(x, 2));
    Packet* got[4];
    uint16_t n = 0;
    for (int i = 0; i < 100000 && n == 0; ++i) n = p.client->rx_burst(got, 4);
    UNSIGNED_LONGS_EQUAL(1, n);
    CHECK(host_test::frame_ok(got[0], 1, 1000));
    got[0]->free();
    UNSIGNED_LONGLONGS_EQUAL(1, p.client->counters().rx_multiseg);
    UNSIGNED_LONGLONGS_EQUAL(1, p.client->stats().rx_dropped);
  }
  UNSIGNED_LONGS_EQUAL(small->capacity(), small->available());
  UNSIGNED_LONGS_EQUAL(big->capacity(), big->available());
}

TEST(DpdkMemif, APacketFromAHeapPoolIsCopiedIntoAnMbuf) {
  auto pool = make_pool(4095, 2048);
  HeapPacketPool heap(2048 + tuning::kPacketHeadroom, 64);
  CHECK(pool != nullptr);
  const std::string sock = dir + "/heap.sock";
  {
    MemifPair p = open_pair(memif("server", sock), pool.get(), memif("client", sock), pool.get());
    CHECK(p.ok());
    Packet* x = heap.alloc();
    host_test::fill_frame(x, 3, 900);
    UNSIGNED_LONGS_EQUAL(1, p.server->tx_burst(&x, 1));
    UNSIGNED_LONGLONGS_EQUAL(0, heap.stats().in_use);  // its reference was dropped after the copy went
    UNSIGNED_LONGLONGS_EQUAL(1, p.server->counters().tx_copies);
    Packet* got[4];
    uint16_t n = 0;
    for (int i = 0; i < 100000 && n == 0; ++i) n = p.client->rx_burst(got, 4);
    UNSIGNED_LONGS_EQUAL(1, n);
    CHECK(host_test::frame_ok(got[0], 3, 900));
    got[0]->free();
  }
  UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
  UNSIGNED_LONGS_EQUAL(pool->capacity(), pool->available());
}

TEST(DpdkMemif, ErrorsAreClearAndEalRunsOnce) {
  auto pool = make_pool(1023, 2048);
  CHECK(pool != nullptr);
  Status st = eal_init(EalOptions{});
  CHECK(st.code() == Code::kBusy);

  DpdkPortConfig cfg;
  cfg.pool = pool.get();
  cfg.spec = "memif:role=server,socket=/nonexistent-toroid-dir/x.sock,id=0";
  auto r = DpdkPort::open(cfg);
  CHECK(!r.is_ok());
  CHECK(r.status().code() == Code::kNotFound);
  CHECK(r.status().message().find("/nonexistent-toroid-dir") != std::string::npos);

  // A client with no server: open works, start times out naming the socket.
  cfg.spec = memif("client", dir + "/nobody.sock");
  auto c = DpdkPort::open(cfg);
  CHECK_TEXT(c.is_ok(), c.status().to_string().c_str());
  st = c.value()->start(100 * kMs);
  CHECK(st.code() == Code::kTimeout);
  CHECK(st.message().find("nobody.sock") != std::string::npos);
  CHECK(c.value()->link_state() == LinkState::kDown);
  c.value().reset();

  // A stale server socket (its process died) is removed and reused.
  const std::string stale = dir + "/stale.sock";
  {
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    std::snprintf(un.sun_path, sizeof un.sun_path, "%s", stale.c_str());
    CHECK(bind(fd, reinterpret_cast<sockaddr*>(&un), sizeof un) == 0);
    ::close(fd);  // the file stays, nobody listens
  }
  CHECK(exists(stale));
  {
    MemifPair p = open_pair(memif("server", stale), pool.get(), memif("client", stale), pool.get());
    CHECK(p.ok());
  }
  CHECK_FALSE(exists(stale));
}

// af_packet PMD on a veth pair (needs root and `ip`; SKIP, counted,
// otherwise). The kernel may put its own frames on the link: they are not
// 0x88B5 and the flow skips them.
TEST(DpdkMemif, AfPacketOverAVethPair) {
  const std::string a = "tvd" + std::to_string(getpid() % 100000) + "a";
  const std::string b = "tvd" + std::to_string(getpid() % 100000) + "b";
  const std::string add = "ip link add " + a + " type veth peer name " + b +
                          " >/dev/null 2>&1 && sysctl -qw net.ipv6.conf." + a + ".disable_ipv6=1 net.ipv6.conf." + b +
                          ".disable_ipv6=1 >/dev/null 2>&1; ip link set " + a + " up && ip link set " + b + " up";
  if (geteuid() != 0) TOROID_SKIP("creating a veth pair needs root");
  if (std::system(add.c_str()) != 0) TOROID_SKIP("cannot create a veth pair here (ip link add ... type veth failed)");
  struct VethGuard {
    std::string name;
    ~VethGuard() { (void)!std::system(("ip link del " + name + " >/dev/null 2>&1").c_str()); }
  } guard{a};
  auto pool = make_pool(4095, 2048);
  CHECK(pool != nullptr);
  {
    DpdkPortConfig cfg;
    cfg.pool = pool.get();
    cfg.spec = "af_packet:iface=" + a;
    auto pa = DpdkPort::open(cfg);
    CHECK_TEXT(pa.is_ok(), pa.status().to_string().c_str());
    cfg.spec = "af_packet:iface=" + b;
    cfg.index = 1;
    auto pb = DpdkPort::open(cfg);
    CHECK_TEXT(pb.is_ok(), pb.status().to_string().c_str());
    STRCMP_EQUAL("af_packet", pa.value()->info().driver.c_str());
    UNSIGNED_LONGS_EQUAL(1514, pa.value()->info().max_frame);
    CHECK_FALSE(pa.value()->info().medium_integrity);  // a wire: the link keeps its CRC
    CHECK(pa.value()->start(kSec).is_ok());
    CHECK(pb.value()->start(kSec).is_ok());
    CHECK(pa.value()->wait_link_up(2 * kSec).is_ok());
    Flow ab = flow(pa.value().get(), pb.value().get(), pool.get(), 1);
    ab.eth = true;
    ab.burst = 8;
    for (uint32_t i = 0; i < 300; ++i) ab.sizes.push_back(60 + (i * 37) % 1455);
    const bool all = pump(5.0, ab);
    std::printf("\n  (af_packet over veth: %zu/%zu frames arrived)\n", ab.received, ab.sizes.size());
    CHECK(all);
    STRCMP_EQUAL("", ab.error.c_str());
    ab.drop_pending();
  }
  UNSIGNED_LONGLONGS_EQUAL(0, pool->stats().in_use);
}
