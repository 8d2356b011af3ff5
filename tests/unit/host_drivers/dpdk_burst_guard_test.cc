// The burst guard (drivers/dpdk/burst_guard.h): a PMD's teardown on EAL's
// interrupt thread waits for the bursts that may have missed its cleared
// flag. Here: the memif PMD's disconnect really passes through the guard
// (the interposed rte_intr_callback_unregister), a teardown waits while a
// slot is inside a burst and goes on when it leaves, and gives up after
// 1 s on a burst that never ends; and the race itself, in one process: a
// server polled by one thread while its client disconnects again and again.
// Across processes (a neighbour killed while a node polls) it is the host
// rig's reboot soak (tests/host).
#include <dlfcn.h>
#include <rte_interrupts.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>

#include "base/clock.h"
#include "drivers/dpdk/burst_guard.h"
#include "drivers/dpdk/dpdk_pool.h"
#include "drivers/dpdk/dpdk_port.h"
#include "host_test_util.h"
#include "memif_pair.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

TEST_GROUP(DpdkBurstGuard) {
  void setup() override { CHECK(host_test::dpdk_env().ready); }
};

// The symbol the PMD plugins resolve is ours, not EAL's.
TEST(DpdkBurstGuard, TheInterruptUnregisterThePluginsCallIsTheGuards) {
  void* global = dlsym(RTLD_DEFAULT, "rte_intr_callback_unregister");
  void* next = dlsym(RTLD_NEXT, "rte_intr_callback_unregister");
  CHECK(global != nullptr);
  CHECK(next != nullptr);
  CHECK(global != next);  // the first definition in the global scope is this executable's
  Dl_info info{};
  CHECK(dladdr(next, &info) != 0);
  CHECK_TEXT(std::string(info.dli_fname).find("librte_eal") != std::string::npos, info.dli_fname);
}

// A memif peer that goes away: the disconnect, run by the PMD on the
// interrupt thread, goes through wait_for_bursts before the regions go.
TEST(DpdkBurstGuard, AMemifDisconnectPassesThroughTheGuard) {
  const std::string sock = host_test::dpdk_env().dir + "/guard.sock";
  auto pool = host_test::make_pool(1023, 2048);
  CHECK(pool != nullptr);
  host_test::MemifPair p = host_test::open_pair(host_test::memif("server", sock), pool.get(),
                                                host_test::memif("client", sock), pool.get());
  CHECK(p.ok());
  const uint64_t before = dpdk::burst_guard_stats().teardowns;
  p.client->stop();
  for (int i = 0; i < 2000 && p.server->link_state() == LinkState::kUp; ++i) usleep(1000);
  CHECK(p.server->link_state() == LinkState::kDown);
  // Both ends' control channels were unregistered through the guard.
  CHECK(dpdk::burst_guard_stats().teardowns >= before + 2);
  p.client->close();
  p.server->close();
}

TEST(DpdkBurstGuard, ATeardownWaitsForTheBurstInProgressAndOnlyForIt) {
  const int slot = dpdk::burst_slot_acquire();
  const int idle = dpdk::burst_slot_acquire();
  CHECK(slot >= 0 && idle >= 0 && slot != idle);
  const dpdk::BurstGuardStats before = dpdk::burst_guard_stats();
  dpdk::burst_enter(slot);
  std::atomic<bool> returned{false};
  std::atomic<int> waited{-1};
  std::thread teardown([&] {
    waited = dpdk::wait_for_bursts();
    returned = true;
  });
  usleep(50 * 1000);
  CHECK_FALSE(returned.load());  // held by the burst
  dpdk::burst_exit(slot);
  teardown.join();
  LONGS_EQUAL(1, waited.load());  // the idle slot was not waited for
  const dpdk::BurstGuardStats after = dpdk::burst_guard_stats();
  UNSIGNED_LONGLONGS_EQUAL(before.waited + 1, after.waited);
  UNSIGNED_LONGLONGS_EQUAL(before.timed_out, after.timed_out);
  // With no burst inside, a teardown goes straight through.
  LONGS_EQUAL(0, dpdk::wait_for_bursts());
  dpdk::burst_slot_release(slot);
  dpdk::burst_slot_release(idle);
}

TEST(DpdkBurstGuard, ABurstThatNeverEndsHoldsATeardownOneSecondAndIsCounted) {
  const int slot = dpdk::burst_slot_acquire();
  CHECK(slot >= 0);
  const uint64_t timed_out = dpdk::burst_guard_stats().timed_out;
  dpdk::burst_enter(slot);
  const double t0 = wall_seconds();
  LONGS_EQUAL(1, dpdk::wait_for_bursts());
  const double took = wall_seconds() - t0;
  CHECK(took >= 1.0 && took < 3.0);
  UNSIGNED_LONGLONGS_EQUAL(timed_out + 1, dpdk::burst_guard_stats().timed_out);
  dpdk::burst_exit(slot);
  dpdk::burst_slot_release(slot);
}

// The race itself, in one process: a thread polls the server as a node's
// loop does (rx and tx bursts, back to back) while its client disconnects
// and connects again, 200 times. Each disconnect makes the server's PMD, on
// the interrupt thread, clear its flag and unmap the regions the poller is
// reading, while the poller copies full frames out of them. With
// wait_for_bursts made to return at once, this test died of SIGSEGV in
// librte_net_memif's rx, under DpdkPort::rx_burst, in 5 runs of 5; with the
// guard about 230 of the 400 teardowns each run find a burst to wait for.
TEST(DpdkBurstGuard, AServerPolledWhileItsClientComesAndGoesSurvives) {
  const std::string sock = host_test::dpdk_env().dir + "/churn.sock";
  auto spool = host_test::make_pool(1023, 2048);
  auto cpool = host_test::make_pool(1023, 2048);
  CHECK(spool != nullptr && cpool != nullptr);
  host_test::MemifPair p = host_test::open_pair(host_test::memif("server", sock), spool.get(),
                                                host_test::memif("client", sock), cpool.get());
  CHECK(p.ok());
  DpdkPort* server = p.server.get();
  DpdkPort* client = p.client.get();

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> polls{0}, sent{0};
  PacketPool* pool = spool.get();
  std::thread poller([&] {
    Packet* rx[32];
    while (!stop.load(std::memory_order_relaxed)) {
      const uint16_t n = server->rx_burst(rx, 32);
      for (uint16_t i = 0; i < n; ++i) rx[i]->free();
      if (Packet* p = pool->alloc()) {
        std::memset(p->append(64), 0xa5, 64);
        if (server->tx_burst(&p, 1) == 1) sent.fetch_add(1, std::memory_order_relaxed);
        else p->free();
      }
      polls.fetch_add(1, std::memory_order_relaxed);
    }
  });
  const dpdk::BurstGuardStats before = dpdk::burst_guard_stats();
  int cycles = 0, failed = 0;
  Packet* rx[32];
  for (; cycles < 200 && failed == 0; ++cycles) {
    client->stop();
    for (int i = 0; i < 2000 && server->link_state() == LinkState::kUp; ++i) usleep(200);
    if (!client->start(2 * kSec).is_ok() || !client->wait_link_up(5 * kSec).is_ok()) ++failed;
    // Fill the server's rx ring with full frames, so that its bursts copy
    // for microseconds when the disconnect comes; take what it sends.
    for (int i = 0; i < 40; ++i) {
      Packet* tx[32];
      uint16_t m = 0;
      while (m < 32 && (tx[m] = cpool->alloc()) != nullptr) std::memset(tx[m++]->append(1500), 0x5a, 1500);
      const uint16_t took = client->tx_burst(tx, m);
      for (uint16_t k = took; k < m; ++k) tx[k]->free();
      const uint16_t n = client->rx_burst(rx, 32);
      for (uint16_t k = 0; k < n; ++k) rx[k]->free();
    }
  }
  stop = true;
  poller.join();
  LONGS_EQUAL(0, failed);
  LONGS_EQUAL(200, cycles);
  CHECK(sent.load() > 0);
  const dpdk::BurstGuardStats after = dpdk::burst_guard_stats();
  // Every disconnect went through the guard on both ends.
  CHECK(after.teardowns >= before.teardowns + 2 * 200);
  UNSIGNED_LONGLONGS_EQUAL(before.timed_out, after.timed_out);
  std::printf("\n  memif churn: 200 disconnects under a polling thread, %llu polls, %llu frames sent, "
              "%llu teardowns waited for a burst\n",
              static_cast<unsigned long long>(polls.load()), static_cast<unsigned long long>(sent.load()),
              static_cast<unsigned long long>(after.waited - before.waited));
  client->close();
  server->close();
}
