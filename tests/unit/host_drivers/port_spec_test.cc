// DPDK port spec parsing (no EAL needed).
#include <string>

#include "drivers/dpdk/dpdk_spec.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

TEST_GROUP(PortSpec){};

TEST(PortSpec, MemifServerWithJumboBuffers) {
  auto s = parse_dpdk_port_spec("memif:role=server,socket=/run/toroid/n0-x+.sock,id=3,bsize=9216");
  CHECK_TEXT(s.is_ok(), s.status().to_string().c_str());
  CHECK(s->kind == DpdkPortKind::kMemif);
  CHECK(s->role == MemifRole::kServer);
  STRCMP_EQUAL("/run/toroid/n0-x+.sock", s->socket.c_str());
  UNSIGNED_LONGS_EQUAL(3, s->id);
  UNSIGNED_LONGS_EQUAL(9216, s->memif_bsize());
  STRCMP_EQUAL("net_memif", s->vdev_driver());
  STRCMP_EQUAL("memif", s->driver_name());
  STRCMP_EQUAL("id=3,role=server,socket=/run/toroid/n0-x+.sock,socket-abstract=no,bsize=9216", s->devargs().c_str());
}

TEST(PortSpec, MemifClientDefaults) {
  auto s = parse_dpdk_port_spec("memif:role=client,socket=/tmp/a.sock,id=0");
  CHECK(s.is_ok());
  CHECK(s->role == MemifRole::kClient);
  UNSIGNED_LONGS_EQUAL(kMemifDefaultBsize, s->memif_bsize());
  STRCMP_EQUAL("id=0,role=client,socket=/tmp/a.sock,socket-abstract=no", s->devargs().c_str());
}

TEST(PortSpec, AfPacketAndPci) {
  auto a = parse_dpdk_port_spec("af_packet:iface=eth1");
  CHECK(a.is_ok());
  CHECK(a->kind == DpdkPortKind::kAfPacket);
  STRCMP_EQUAL("iface=eth1,qpairs=1", a->devargs().c_str());
  auto p = parse_dpdk_port_spec("pci:0000:00:04.0");
  CHECK(p.is_ok());
  CHECK(p->kind == DpdkPortKind::kPci);
  STRCMP_EQUAL("0000:00:04.0", p->pci_addr.c_str());
  CHECK(p->vdev_driver() == nullptr);
  auto q = parse_dpdk_port_spec("pci:00:05.0");
  CHECK(q.is_ok());
  STRCMP_EQUAL("0000:00:05.0", q->pci_addr.c_str());
}

TEST(PortSpec, AfXdpQueueAndFallback) {
  auto a = parse_dpdk_port_spec("af_xdp:iface=t0.0.0x+");
  CHECK_TEXT(a.is_ok(), a.status().to_string().c_str());
  CHECK(a->kind == DpdkPortKind::kAfXdp);
  STRCMP_EQUAL("net_af_xdp", a->vdev_driver());
  STRCMP_EQUAL("af_xdp", a->driver_name());
  STRCMP_EQUAL("iface=t0.0.0x+,start_queue=0,queue_count=1", a->devargs().c_str());
  CHECK(a->fallback);
  auto b = parse_dpdk_port_spec("af_xdp:iface=ens1f0,queue=3,fallback=none");
  CHECK_TEXT(b.is_ok(), b.status().to_string().c_str());
  UNSIGNED_LONGS_EQUAL(3, b->queue);
  CHECK_FALSE(b->fallback);
  STRCMP_EQUAL("iface=ens1f0,start_queue=3,queue_count=1", b->devargs().c_str());
}

TEST(PortSpec, BadSpecsNameTheProblem) {
  const char* bad[] = {"memif",
                       "memif:socket=/x.sock,id=0",
                       "memif:role=server,id=0",
                       "memif:role=master,socket=/x.sock",
                       "memif:role=server,socket=x.sock",
                       "memif:role=server,socket=/x.sock,bsize=70000",
                       "memif:role=server,socket=/x.sock,rsize=15",
                       "memif:role=server,socket=/x.sock,colour=blue",
                       "af_packet:",
                       "af_packet:iface=",
                       "pci:0000:00:04",
                       "pci:zz:00.0",
                       "vhost:iface=x",
                       "af_xdp:queue=1",
                       "af_xdp:iface=eth0,queue=x",
                       "af_xdp:iface=eth0,fallback=maybe",
                       "af_xdp:iface=eth/0",
                       "af_packet:iface=eth0,queue=1"};
  for (const char* b : bad) {
    auto s = parse_dpdk_port_spec(b);
    CHECK_TEXT(!s.is_ok(), b);
    CHECK(s.status().code() == Code::kInvalid);
    CHECK_TEXT(s.status().message().find(b) != std::string::npos, s.status().message().c_str());
  }
}
