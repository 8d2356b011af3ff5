#include "firmware/host_port_factory.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/clock.h"
#include "base/tuning.h"
#include "drivers/dpdk/dpdk_pool.h"
#include "drivers/dpdk/dpdk_port.h"
#include "drivers/dpdk/dpdk_spec.h"
#include "drivers/dpdk/eal.h"
#include "drivers/packet.h"
#include "drivers/uring/uring_port.h"
#include "firmware/topology.h"

namespace toroid {

namespace {

constexpr uint32_t kAfXdpFillMbufs = 2048;

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kSec + static_cast<uint64_t>(ts.tv_nsec);
}

std::string label_of(const PortSpec& ps) { return ps.name + " (" + dir_name(ps.dir) + ")"; }

// Uring's own checks happen in UringPort::open; these catch what would
// otherwise surface later and less clearly.
Status check_uring_spec(const std::string& spec) {
  const std::string rest = spec.substr(spec.find(':') + 1);
  if (rest.empty()) return error(Code::kInvalid, "uring needs an address (path=P,role=server|client, fd=N or iface=NAME)");
  return Status::ok();
}

// A memif client connects in dev_start, but the server turns it away ("ID
// not found") when its own dev_start has not run yet, and the PMD does not
// retry: the link would never come up. So: start, give the handshake a
// moment, and if the link is not up, stop and connect again, with growing
// waits, until the deadline.
Status start_memif_client(DpdkPort& port, uint64_t deadline) {
  uint64_t wait = 100 * kMs;
  for (;;) {
    const uint64_t now = mono_ns();
    Status st = port.start(now < deadline ? deadline - now : 1);
    if (!st) return st;
    const uint64_t after = mono_ns();
    const uint64_t left = after < deadline ? deadline - after : 0;
    if (port.wait_link_up(std::min(wait, left ? left : 1))) return Status::ok();
    if (mono_ns() >= deadline) return port.wait_link_up(1);  // its timeout message
    port.stop();
    wait = std::min(wait * 2, kSec);
  }
}

// "0-1,3" -> CPUs 0, 1, 3; false if malformed.
bool parse_cpu_list(const std::string& list, cpu_set_t* set) {
  CPU_ZERO(set);
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(pos, end - pos);
    pos = end + 1;
    const size_t dash = item.find('-');
    char* e = nullptr;
    const long a = std::strtol(item.c_str(), &e, 10);
    long b = a;
    if (dash != std::string::npos) b = std::strtol(item.c_str() + dash + 1, &e, 10);
    if (item.empty() || *e || a < 0 || b < a || b >= CPU_SETSIZE) return false;
    for (long c = a; c <= b; ++c) CPU_SET(static_cast<int>(c), set);
  }
  return CPU_COUNT(set) > 0;
}

Status apply_affinity(int cpu, const std::string& list) {
  if (cpu < 0 && list.empty()) return Status::ok();
  cpu_set_t set;
  if (cpu >= 0) {
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
  } else if (!parse_cpu_list(list, &set)) {
    return error(Code::kInvalid, "CPU list '%s' is malformed (e.g. 0-1 or 0,2)", list.c_str());
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return error(Code::kIo, "sched_setaffinity: %s", std::strerror(errno));
  return Status::ok();
}

// A small integer from a sysfs file; -1 when absent (a veth has no device).
int sysfs_int(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return -1;
  int v = -1;
  if (std::fscanf(f, "%d", &v) != 1) v = -1;
  std::fclose(f);
  return v;
}

// The NUMA node of a port: the personality's, else the NIC's; -1 unknown.
int port_numa(const PortSpec& ps) {
  if (ps.numa >= 0) return ps.numa;
  if (ps.driver == "pci") {
    auto s = parse_dpdk_port_spec(host_port_spec(ps));
    return s ? sysfs_int("/sys/bus/pci/devices/" + s->pci_addr + "/numa_node") : -1;
  }
  const std::string iface = address_field(ps.address, "iface");
  return iface.empty() ? -1 : sysfs_int("/sys/class/net/" + iface + "/device/numa_node");
}

// The CPUs of NUMA node n that this process may use, as a list; "" if none.
std::string numa_cpus(int n) {
  FILE* f = std::fopen(("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist").c_str(), "r");
  if (!f) return "";
  char buf[1024] = {};
  const bool ok = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  cpu_set_t node, mine;
  std::string list(buf);
  while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) list.pop_back();
  if (!ok || !parse_cpu_list(list, &node) || sched_getaffinity(0, sizeof mine, &mine) != 0) return "";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &node) || !CPU_ISSET(c, &mine)) continue;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
  }
  return out;
}

}  // namespace

bool host_driver_of(const std::string& driver, HostDriver* out) {
  if (driver == "memif" || driver == "af_xdp" || driver == "af_packet" || driver == "pci") {
    *out = HostDriver::kDpdk;
    return true;
  }
  if (driver == "uring") {
    *out = HostDriver::kUring;
    return true;
  }
  return false;
}

std::string host_port_spec(const PortSpec& ps) { return ps.driver + ":" + ps.address; }

Status check_host_ports(const Personality& p) {
  for (const auto& ps : p.ports) {
    HostDriver d;
    if (!host_driver_of(ps.driver, &d))
      return error(Code::kInvalid, "personality: port %s: unknown driver '%s' (memif, af_xdp, af_packet, pci, uring)",
                   label_of(ps).c_str(), ps.driver.c_str());
    if (ps.address.empty())
      return error(Code::kInvalid, "personality: port %s: driver %s needs an address", label_of(ps).c_str(),
                   ps.driver.c_str());
    Status st;
    if (d == HostDriver::kDpdk) {
      auto s = parse_dpdk_port_spec(host_port_spec(ps));
      if (!s) st = s.status();
    } else {
      st = check_uring_spec(host_port_spec(ps));
    }
    if (!st) return error(Code::kInvalid, "personality: port %s: %s", label_of(ps).c_str(), st.message().c_str());
  }
  return Status::ok();
}

std::string affinity_cpu_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "";
  std::string out;
  int start = -1;
  for (int c = 0; c <= CPU_SETSIZE; ++c) {
    const bool in = c < CPU_SETSIZE && CPU_ISSET(c, &set);
    if (in && start < 0) start = c;
    if (!in && start >= 0) {
      if (!out.empty()) out += ',';
      out += std::to_string(start);
      if (c - 1 > start) {
        out += '-';
        out += std::to_string(c - 1);
      }
      start = -1;
    }
  }
  return out;
}

struct HostPorts::Impl {
  Personality p;
  std::unique_ptr<DpdkPacketPool> dpdk_pool;
  std::unique_ptr<HeapPacketPool> heap_pool;
  // One of the two per port, in personality order.
  std::vector<std::unique_ptr<DpdkPort>> dpdk;
  std::vector<std::unique_ptr<UringPort>> uring;
  bool eal = false;
  bool closed = false;
};

Result<std::unique_ptr<HostPorts>> HostPorts::open(const Personality& p, const HostPortOptions& opt) {
  Status st = check_host_ports(p);
  if (!st) return st;
  std::unique_ptr<HostPorts> hp(new HostPorts());
  hp->impl_ = std::make_unique<Impl>();
  Impl& m = *hp->impl_;
  m.p = p;
  std::vector<std::string> dpdk_specs;
  // A memif port with a bigger slot (bsize=9216: 9000-byte frames) needs
  // buffers that hold one slot: the pool's room grows to the largest bsize,
  // or to the largest frame a port's MTU allows.
  uint32_t frame_room = opt.frame_room;
  for (const auto& ps : p.ports) {
    HostDriver d;
    (void)host_driver_of(ps.driver, &d);
    if (d != HostDriver::kDpdk) continue;
    dpdk_specs.push_back(host_port_spec(ps));
    if (auto s = parse_dpdk_port_spec(dpdk_specs.back()); s && s->kind == DpdkPortKind::kMemif && s->bsize)
      frame_room = std::max(frame_room, s->bsize);
    // A topology MTU needs buffers that hold its frames (Ethernet header too).
    if (ps.mtu) frame_room = std::max(frame_room, (ps.mtu + 14 + 63) / 64 * 64);
  }
  hp->dpdk_ = !dpdk_specs.empty();
  // DPDK 22.11's AF_XDP PMD fills each socket's fill ring with 2048 mbufs
  // of the pool (ETH_AF_XDP_DFLT_NUM_DESCS, not configurable). A pool too
  // small to leave the node 1023 of its own grows to the next 2^q - 1 that
  // leaves it 4095.
  uint32_t pool_packets = opt.pool_packets;
  uint64_t fill = 0;
  bool has_pci = false;
  for (const auto& spec : dpdk_specs) {
    auto s = parse_dpdk_port_spec(spec);
    if (s && s->kind == DpdkPortKind::kAfXdp) fill += kAfXdpFillMbufs;
    if (s && s->kind == DpdkPortKind::kPci) has_pci = true;
  }
  if (fill && pool_packets < fill + 1023) {
    uint64_t q = 1;
    while (q - 1 < fill + 4095) q <<= 1;
    pool_packets = static_cast<uint32_t>(q - 1);
    hp->notes_.push_back("packet pool: " + std::to_string(pool_packets) + " mbufs (" + std::to_string(fill) +
                         " of them in the AF_XDP ports' fill rings)");
  }
  // NUMA: when every port that knows its node names the same one, the
  // node's thread runs there (its buffers are then allocated there too).
  HostPortOptions place = opt;
  int numa = -1;
  bool numa_mixed = false;
  for (const auto& ps : p.ports) {
    const int n = port_numa(ps);
    if (n < 0) continue;
    if (numa >= 0 && n != numa) numa_mixed = true;
    numa = numa < 0 ? n : numa;
  }
  if (numa_mixed) {
    hp->notes_.push_back("ports are on different NUMA nodes: the node's CPU is not placed by NUMA");
  } else if (numa >= 0 && opt.cpu < 0 && opt.cpu_list.empty()) {
    const std::string cpus = numa_cpus(numa);
    if (!cpus.empty()) {
      place.cpu_list = cpus;
      hp->notes_.push_back("ports on NUMA node " + std::to_string(numa) + ": the node runs on CPUs " + cpus);
    } else {
      hp->notes_.push_back("ports on NUMA node " + std::to_string(numa) +
                           ", but none of its CPUs is in this process's affinity: not placed");
    }
  }
  if (hp->dpdk_) {
    EalOptions eo;
    eo.tag = opt.tag;
    eo.port_specs = dpdk_specs;
    eo.pool_mbufs = pool_packets;
    eo.pool_frame_room = frame_room;
    eo.cpu = place.cpu;
    eo.cpu_list = place.cpu_list;
    if (eo.cpu < 0 && eo.cpu_list.empty()) eo.cpu_list = affinity_cpu_list();
    eo.log_level = opt.eal_log_level;
    eo.extra_args = opt.eal_args;
    st = eal_init(eo);
    if (!st) return error(st.code(), "EAL: %s", st.message().c_str());
    m.eal = true;
    DpdkPoolConfig pc;
    pc.name = "toroid-pool";
    pc.mbufs = pool_packets;
    pc.frame_room = frame_room;
    // AF_XDP maps the pool as its UMEM: it must be packed in one piece.
    pc.packed = fill > 0 && !has_pci;
    auto pool = DpdkPacketPool::create(pc);
    if (!pool) {
      hp->close();
      return error(pool.status().code(), "packet pool: %s", pool.status().message().c_str());
    }
    m.dpdk_pool = std::move(pool.value());
    hp->pool_ = m.dpdk_pool.get();
  } else {
    // No EAL to pin the thread: apply --cpu / --cpus ourselves.
    if (Status ast = apply_affinity(place.cpu, place.cpu_list); !ast) return ast;
    m.heap_pool = std::make_unique<HeapPacketPool>(tuning::kPacketHeadroom + opt.frame_room, opt.pool_packets);
    hp->pool_ = m.heap_pool.get();
  }
  m.dpdk.resize(p.ports.size());
  m.uring.resize(p.ports.size());
  for (size_t i = 0; i < p.ports.size(); ++i) {
    const PortSpec& ps = p.ports[i];
    HostDriver d;
    (void)host_driver_of(ps.driver, &d);
    Status ost;
    if (d == HostDriver::kDpdk) {
      DpdkPortConfig c;
      c.spec = host_port_spec(ps);
      c.index = static_cast<uint16_t>(i);
      c.pool = m.dpdk_pool.get();
      c.mtu = ps.mtu;
      auto r = DpdkPort::open(c);
      auto spec = parse_dpdk_port_spec(c.spec);
      // Same interface, a packet socket instead of an XDP socket; not for a
      // port the topology got wrong (kInvalid: the same error again).
      if (!r && r.status().code() != Code::kInvalid && spec && spec->kind == DpdkPortKind::kAfXdp &&
          spec->fallback) {
        const std::string why = r.status().message();
        c.spec = "af_packet:iface=" + spec->iface;
        r = DpdkPort::open(c);
        if (r)
          hp->notes_.push_back("port " + label_of(ps) + ": AF_XDP on " + spec->iface + " queue " +
                               std::to_string(spec->queue) + " cannot be used here (" + why +
                               "); using af_packet on the same interface");
        else
          r = error(r.status().code(), "AF_XDP: %s; the af_packet fallback: %s", why.c_str(),
                    r.status().message().c_str());
      }
      if (r) {
        m.dpdk[i] = std::move(r.value());
        hp->raw_.push_back(m.dpdk[i].get());
      } else {
        ost = r.status();
      }
    } else {
      UringPortConfig c;
      c.spec = host_port_spec(ps);
      c.index = static_cast<uint16_t>(i);
      c.pool = hp->pool_;
      auto r = UringPort::open(c);
      if (r) {
        m.uring[i] = std::move(r.value());
        hp->raw_.push_back(m.uring[i].get());
      } else {
        ost = r.status();
      }
    }
    if (!ost) {
      hp->close();
      return error(ost.code(), "port %s: %s", label_of(ps).c_str(), ost.message().c_str());
    }
  }
  return hp;
}

HostPorts::~HostPorts() { close(); }

std::string HostPorts::label(size_t i) const {
  return i < impl_->p.ports.size() ? label_of(impl_->p.ports[i]) : "port?";
}

std::vector<int> HostPorts::wait_fds() const {
  std::vector<int> fds;
  for (const Port* port : raw_) {
    const int fd = port->wait_fd();
    if (fd >= 0) fds.push_back(fd);
  }
  return fds;
}

Status HostPorts::start(uint64_t timeout_ns) {
  Impl& m = *impl_;
  const uint64_t deadline = mono_ns() + timeout_ns;
  auto left = [&] {
    const uint64_t now = mono_ns();
    return now < deadline ? deadline - now : 1;
  };
  auto is_client = [&](size_t i) {
    if (m.dpdk[i])
      return m.dpdk[i]->spec().kind == DpdkPortKind::kMemif && m.dpdk[i]->spec().role == MemifRole::kClient;
    return m.uring[i]->kind() == UringPortKind::kUnixClient;
  };
  // Pass 0: DPDK servers (dev_start only enables the interface: a memif
  // server refuses a client, "ID not found", until then). Pass 1: clients.
  // Pass 2: uring servers, which block in accept.
  for (int pass = 0; pass < 3; ++pass) {
    for (size_t i = 0; i < raw_.size(); ++i) {
      const bool client = is_client(i);
      const int my_pass = client ? 1 : m.dpdk[i] ? 0 : 2;
      if (my_pass != pass) continue;
      Status st;
      if (m.dpdk[i] && client) {
        st = start_memif_client(*m.dpdk[i], deadline);
      } else if (m.dpdk[i]) {
        st = m.dpdk[i]->start(left());
      } else {
        st = m.uring[i]->start(left());
      }
      if (!st) return error(st.code(), "port %s: %s", label(i).c_str(), st.message().c_str());
    }
  }
  for (size_t i = 0; i < raw_.size(); ++i) {
    if (!m.dpdk[i]) continue;
    Status st = m.dpdk[i]->wait_link_up(left());
    if (!st) return error(st.code(), "port %s: %s", label(i).c_str(), st.message().c_str());
  }
  // Kernel NICs: nothing that arrived before the node boots matters (it can
  // only be a neighbour's hello, which repeats), and DPDK's af_packet PMD
  // opens its socket for every interface and binds it to its own only
  // afterwards, so its ring may hold frames from the node's other cables:
  // they would read as a miswired port. Drop them all now.
  for (size_t i = 0; i < raw_.size(); ++i) {
    if (!m.dpdk[i] || m.dpdk[i]->spec().kind == DpdkPortKind::kMemif || m.dpdk[i]->spec().kind == DpdkPortKind::kPci)
      continue;
    Packet* burst[32];
    for (uint16_t n; (n = raw_[i]->rx_burst(burst, 32)) > 0;)
      for (uint16_t k = 0; k < n; ++k) burst[k]->free();
  }
  return Status::ok();
}

void HostPorts::close() {
  if (!impl_ || impl_->closed) return;
  Impl& m = *impl_;
  m.closed = true;
  raw_.clear();
  // Ports before the pool they receive into; the pool before EAL.
  for (auto& u : m.uring) u.reset();
  for (auto& d : m.dpdk) d.reset();
  pool_ = nullptr;
  m.heap_pool.reset();
  m.dpdk_pool.reset();
  if (m.eal) eal_cleanup();
  m.eal = false;
}

Result<std::unique_ptr<HostPorts>> open_raw_link_end(const RawLinkEnd& e) {
  Personality p;
  p.dims = Dims{{2, 1, 1}};
  p.coord.c = {e.server ? 0u : 1u, 0, 0};
  p.has_dims = p.has_coord = true;
  p.job = e.job;
  PortSpec ps;
  ps.name = "port0";
  ps.dir = e.server ? Dir::kXp : Dir::kXm;
  ps.driver = e.driver;
  const char* role = e.server ? "server" : "client";
  ps.address = e.driver == "memif"
                   ? std::string("role=") + role + ",socket=" + e.socket + ",id=0" + (e.jumbo ? ",bsize=9216" : "")
                   : "path=" + e.socket + ",role=" + role;
  p.ports.push_back(ps);
  HostPortOptions o;
  o.tag = e.tag;
  o.pool_packets = e.pool_packets;
  if (e.jumbo) o.frame_room = 9216;
  o.cpu_list = e.cpu_list;
  auto hp = HostPorts::open(p, o);
  if (!hp) return hp.status();
  if (Status st = hp.value()->start(10 * kSec); !st) return st;
  return hp;
}

}  // namespace toroid
