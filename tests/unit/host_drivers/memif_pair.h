// A memif server and client in this process, started and linked up, for
// the DPDK tests (dpdk_memif_test.cc, dpdk_burst_guard_test.cc).
#pragma once
#include <cstdio>
#include <memory>
#include <string>

#include "base/clock.h"
#include "drivers/dpdk/dpdk_pool.h"
#include "drivers/dpdk/dpdk_port.h"

namespace host_test {

using toroid::DpdkPacketPool;
using toroid::DpdkPoolConfig;
using toroid::DpdkPort;
using toroid::DpdkPortConfig;
using toroid::kSec;
using toroid::Packet;
using toroid::Status;

inline std::string memif(const char* role, const std::string& socket, const char* extra = "") {
  return std::string("memif:role=") + role + ",socket=" + socket + ",id=0" + extra;
}

inline std::unique_ptr<DpdkPacketPool> make_pool(uint32_t mbufs, uint32_t room) {
  DpdkPoolConfig c;
  c.mbufs = mbufs;
  c.frame_room = room;
  auto r = DpdkPacketPool::create(c);
  if (!r) {
    std::printf("pool: %s\n", r.status().to_string().c_str());
    return nullptr;
  }
  return std::move(r.value());
}

// Opens server then client (in one process the server must exist first),
// starts both and waits for the link. Empty on failure (printed).
struct MemifPair {
  std::unique_ptr<DpdkPort> server, client;
  bool ok() const { return server && client; }
};

inline MemifPair open_pair(const std::string& sspec, DpdkPacketPool* spool, const std::string& cspec, DpdkPacketPool* cpool) {
  MemifPair p;
  auto open = [](const std::string& spec, DpdkPacketPool* pool, uint16_t index, const char* role) {
    DpdkPortConfig cfg;
    cfg.spec = spec;
    cfg.pool = pool;
    cfg.index = index;
    auto port = DpdkPort::open(cfg);
    if (!port) std::printf("open %s: %s\n", role, port.status().to_string().c_str());
    return port;
  };
  auto s = open(sspec, spool, 1, "server");
  if (!s) return p;
  auto c = open(cspec, cpool, 2, "client");
  if (!c) return p;
  Status st = s.value()->start(kSec);
  if (st) st = c.value()->start(2 * kSec);
  if (st) st = s.value()->wait_link_up(5 * kSec);
  if (st) st = c.value()->wait_link_up(5 * kSec);
  if (!st) {
    std::printf("start: %s\n", st.to_string().c_str());
    return p;
  }
  // A memif sender needs free slots, which its receiver posts when it polls
  // rx: the first rx_burst on each side primes the rings (a node polls
  // every port from boot on, so this only matters to one-shot tests).
  Packet* none[1];
  if (s.value()->rx_burst(none, 1) + c.value()->rx_burst(none, 1) != 0) std::printf("unexpected frame at link up\n");
  p.server = std::move(s.value());
  p.client = std::move(c.value());
  return p;
}

}  // namespace host_test
