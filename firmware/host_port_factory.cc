#include "firmware/host_port_factory.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

namespace toroid {

namespace {

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

}  // namespace

bool host_driver_of(const std::string& driver, HostDriver* out) {
  if (driver == "memif" || driver == "af_packet" || driver == "pci") {
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
      return error(Code::kInvalid, "personality: port %s: unknown driver '%s' (memif, af_packet, pci, uring)",
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
  // buffers that hold one slot: the pool's room grows to the largest bsize.
  uint32_t frame_room = opt.frame_room;
  for (const auto& ps : p.ports) {
    HostDriver d;
    (void)host_driver_of(ps.driver, &d);
    if (d != HostDriver::kDpdk) continue;
    dpdk_specs.push_back(host_port_spec(ps));
    if (auto s = parse_dpdk_port_spec(dpdk_specs.back()); s && s->kind == DpdkPortKind::kMemif && s->bsize)
      frame_room = std::max(frame_room, s->bsize);
  }
  hp->dpdk_ = !dpdk_specs.empty();
  if (hp->dpdk_) {
    EalOptions eo;
    eo.tag = opt.tag;
    eo.port_specs = dpdk_specs;
    eo.pool_mbufs = opt.pool_packets;
    eo.pool_frame_room = frame_room;
    eo.cpu = opt.cpu;
    eo.cpu_list = opt.cpu_list;
    if (eo.cpu < 0 && eo.cpu_list.empty()) eo.cpu_list = affinity_cpu_list();
    eo.log_level = opt.eal_log_level;
    eo.extra_args = opt.eal_args;
    st = eal_init(eo);
    if (!st) return error(st.code(), "EAL: %s", st.message().c_str());
    m.eal = true;
    DpdkPoolConfig pc;
    pc.name = "toroid-pool";
    pc.mbufs = opt.pool_packets;
    pc.frame_room = frame_room;
    auto pool = DpdkPacketPool::create(pc);
    if (!pool) {
      hp->close();
      return error(pool.status().code(), "packet pool: %s", pool.status().message().c_str());
    }
    m.dpdk_pool = std::move(pool.value());
    hp->pool_ = m.dpdk_pool.get();
  } else {
    // No EAL to pin the thread: apply --cpu / --cpus ourselves.
    if (Status ast = apply_affinity(opt.cpu, opt.cpu_list); !ast) return ast;
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
      auto r = DpdkPort::open(c);
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
