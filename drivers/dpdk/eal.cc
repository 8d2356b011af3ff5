#include "drivers/dpdk/eal.h"

#include <dirent.h>
#include <rte_alarm.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "drivers/dpdk/burst_guard.h"
#include "drivers/dpdk/dpdk_internal.h"
#include "drivers/dpdk/dpdk_port.h"

namespace toroid {

namespace {

enum class EalState : uint8_t { kNone, kReady, kFailed, kCleaned };

// Process-wide by nature: EAL itself is. Touched only from the node's
// thread (control path), never from the data path.
EalState g_state = EalState::kNone;
std::vector<std::string> g_args;

// Fixed-size, no heap: entries outlive the tests that create them (parked
// memif servers), and nothing here may allocate per port.
struct Device {
  char spec[256];    // DpdkPortSpec::text
  char name[64];     // vdev name or PCI address
  char socket[112];  // memif server: its socket path (unlinked when parked)
  bool vdev;
  bool parked;
};
constexpr int kMaxDevices = 2 * RTE_MAX_ETHPORTS;
Device g_dev[kMaxDevices];
int g_ndev = 0;

Device* find_dev(const std::string& spec) {
  for (int i = 0; i < g_ndev; ++i)
    if (spec == g_dev[i].spec) return &g_dev[i];
  return nullptr;
}

bool copy_str(char* dst, size_t cap, const std::string& src) {
  if (src.size() >= cap) return false;
  std::memcpy(dst, src.c_str(), src.size() + 1);
  return true;
}

Device* add_dev(const std::string& spec, const std::string& name, const std::string& socket, bool vdev) {
  if (g_ndev == kMaxDevices) return nullptr;
  Device& d = g_dev[g_ndev];
  if (!copy_str(d.spec, sizeof d.spec, spec) || !copy_str(d.name, sizeof d.name, name) ||
      !copy_str(d.socket, sizeof d.socket, socket))
    return nullptr;
  d.vdev = vdev;
  d.parked = false;
  return &g_dev[g_ndev++];
}

uint32_t g_vdev_seq = 0;

constexpr int kMaxOpenPorts = RTE_MAX_ETHPORTS;
DpdkPort* g_ports[kMaxOpenPorts];
int g_nports = 0;

uint64_t hugepages_free() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long n = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "HugePages_Free: %llu", &n) == 1) break;
  std::fclose(f);
  return n;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

}  // namespace

uint32_t eal_memory_mb(uint32_t mbufs, uint32_t frame_room) {
  // rte_mbuf header + our Packet + headroom + room, plus the mempool's
  // per-object header and cache-line padding.
  const uint64_t elt =
      sizeof(rte_mbuf) + dpdk::kPacketPrivSize + RTE_PKTMBUF_HEADROOM + frame_room + 2 * RTE_CACHE_LINE_SIZE;
  const uint64_t bytes = elt * mbufs + 16 * uint64_t{mbufs};  // + the mempool's ring
  return static_cast<uint32_t>((bytes + (1u << 20) - 1) >> 20) + kEalBaseMemoryMb;
}

Status eal_init(const EalOptions& opt) {
  switch (g_state) {
    case EalState::kNone:
      break;
    case EalState::kReady:
      return error(Code::kBusy, "EAL is already initialised in this process");
    case EalState::kFailed:
    case EalState::kCleaned:
      return error(Code::kBusy, "EAL can be initialised only once per process (rte_eal_init does not run twice)");
  }

  std::vector<DpdkPortSpec> specs;
  for (const auto& text : opt.port_specs) {
    auto s = parse_dpdk_port_spec(text);
    if (!s) return s.status();
    specs.push_back(std::move(s.value()));
  }

  std::vector<std::string> a;
  a.emplace_back("toroid");
  const std::string tag = opt.tag.empty() ? "node" : opt.tag;
  a.emplace_back("--file-prefix=toroid-" + tag + "-" + std::to_string(getpid()));
  bool huge = false;
  switch (opt.hugepages) {
    case EalOptions::Huge::kAuto:
      huge = hugepages_free() > 0;
      break;
    case EalOptions::Huge::kOn:
      huge = true;
      break;
    case EalOptions::Huge::kOff:
      huge = false;
      break;
  }
  // --in-memory: no hugepage files, no shared config. EAL refuses it with
  // --no-huge (which implies legacy memory); --no-shconf is the part of it
  // that still applies there.
  if (huge) {
    a.emplace_back("--in-memory");
  } else {
    a.emplace_back("--no-huge");
    a.emplace_back("--no-shconf");
  }
  const uint32_t mb = opt.memory_mb ? opt.memory_mb : eal_memory_mb(opt.pool_mbufs, opt.pool_frame_room);
  a.emplace_back("-m");
  a.emplace_back(std::to_string(mb));
  if (!opt.cpu_list.empty()) {
    a.emplace_back("--lcores=0@(" + opt.cpu_list + ")");
  } else {
    int cpu = opt.cpu >= 0 ? opt.cpu : sched_getcpu();
    if (cpu < 0) cpu = 0;
    a.emplace_back("--lcores=0@" + std::to_string(cpu));
  }
  a.emplace_back("--log-level=" + opt.log_level);
  a.emplace_back("--no-telemetry");

  bool any_pci = false;
  for (const auto& s : specs) {
    if (s.kind != DpdkPortKind::kPci) continue;
    a.emplace_back("-a");
    a.emplace_back(s.pci_addr);
    any_pci = true;
  }
  if (!any_pci) a.emplace_back("--no-pci");

  g_ndev = 0;
  bool table_full = false;
  auto add_vdevs = [&](DpdkPortKind kind, bool servers) {
    for (const auto& s : specs) {
      if (s.kind != kind) continue;
      if (kind == DpdkPortKind::kMemif && (s.role == MemifRole::kServer) != servers) continue;
      const std::string name = std::string(s.vdev_driver()) + std::to_string(g_vdev_seq++);
      const bool server = kind == DpdkPortKind::kMemif && servers;
      if (!add_dev(s.text, name, server ? s.socket : std::string(), true)) table_full = true;
      a.emplace_back("--vdev=" + name + "," + s.devargs());
    }
  };
  add_vdevs(DpdkPortKind::kMemif, true);
  add_vdevs(DpdkPortKind::kMemif, false);
  add_vdevs(DpdkPortKind::kAfPacket, false);
  for (const auto& s : specs)
    if (s.kind == DpdkPortKind::kPci && !add_dev(s.text, s.pci_addr, std::string(), false)) table_full = true;
  if (table_full) {
    g_ndev = 0;
    return error(Code::kInvalid, "eal_init: more than %d ports, or a port spec longer than %zu bytes", kMaxDevices,
                 sizeof(Device::spec) - 1);
  }
  for (const auto& s : specs) {
    if (s.kind != DpdkPortKind::kMemif || s.role != MemifRole::kServer) continue;
    Status st = dpdk::prepare_server_socket(s.socket);  // memif binds at probe, inside rte_eal_init
    if (!st) {
      g_ndev = 0;
      return st;
    }
  }
  for (const auto& e : opt.extra_args) a.push_back(e);

  g_args = a;
  std::vector<std::string> storage = a;  // rte_eal_init may permute argv
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  dpdk::burst_guard_init();
  const int ret = rte_eal_init(static_cast<int>(storage.size()), argv.data());
  if (ret < 0) {
    g_state = EalState::kFailed;
    g_ndev = 0;
    return error(Code::kIo, "rte_eal_init failed: %s (args: %s)", rte_strerror(rte_errno), join(g_args).c_str());
  }
  g_state = EalState::kReady;
  return Status::ok();
}

bool eal_ready() { return g_state == EalState::kReady; }

const std::vector<std::string>& eal_args() { return g_args; }

void eal_cleanup() {
  if (g_state != EalState::kReady) return;
  while (g_nports > 0) g_ports[g_nports - 1]->close();  // close() unregisters
  // Devices named at init but never opened: memif servers are parked (their
  // socket file removed), the others removed from their bus.
  bool parked = false;
  for (int i = 0; i < g_ndev; ++i) {
    Device& d = g_dev[i];
    if (d.socket[0]) {
      if (!d.parked) {
        uint16_t id;
        if (rte_eth_dev_get_port_by_name(d.name, &id) == 0)
          dpdk::run_on_intr_thread([](void* a) { (void)rte_eth_dev_stop(*static_cast<uint16_t*>(a)); }, &id);
        unlink(d.socket);
        d.parked = true;
      }
      parked = true;
    } else if (d.vdev) {
      (void)rte_eal_hotplug_remove("vdev", d.name);
    }
  }
  g_ndev = 0;
  // rte_eal_cleanup removes every vdev (eal_bus_cleanup), which would hit
  // the memif listener bug (see park_device) and then unmap memory under
  // EAL's still-running interrupt thread. With a memif server in this
  // process we leave EAL to process exit: --no-huge/--in-memory memory and
  // --no-shconf leave nothing behind but the runtime directory, removed here.
  const std::string run_dir = rte_eal_get_runtime_dir();
  if (!parked) rte_eal_cleanup();
  if (DIR* dir = opendir(run_dir.c_str())) {
    while (dirent* e = readdir(dir)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      unlink((run_dir + "/" + e->d_name).c_str());
    }
    closedir(dir);
    rmdir(run_dir.c_str());
  }
  g_state = EalState::kCleaned;
}

namespace dpdk {

std::string device_name_for(const DpdkPortSpec& s, bool* probed) {
  *probed = false;
  if (const Device* d = find_dev(s.text)) {
    uint16_t id;
    *probed = rte_eth_dev_get_port_by_name(d->name, &id) == 0;
    return d->name;
  }
  const bool vdev = s.kind != DpdkPortKind::kPci;
  const std::string name = vdev ? std::string(s.vdev_driver()) + std::to_string(g_vdev_seq++) : s.pci_addr;
  const bool server = s.kind == DpdkPortKind::kMemif && s.role == MemifRole::kServer;
  if (!add_dev(s.text, name, server ? s.socket : std::string(), vdev)) return std::string();
  return name;
}

void park_device(const std::string& spec_text) {
  if (Device* d = find_dev(spec_text)) d->parked = true;
}

bool device_parked(const std::string& spec_text) {
  const Device* d = find_dev(spec_text);
  return d && d->parked;
}

void forget_device(const std::string& spec_text) {
  if (Device* d = find_dev(spec_text)) *d = g_dev[--g_ndev];
}

namespace {
struct IntrCall {
  void (*fn)(void*);
  void* arg;
  std::atomic<bool> done{false};
};
void intr_trampoline(void* p) {
  auto* c = static_cast<IntrCall*>(p);
  c->fn(c->arg);
  c->done.store(true, std::memory_order_release);
}
}  // namespace

void run_on_intr_thread(void (*fn)(void*), void* arg) {
  IntrCall call{fn, arg};
  if (rte_eal_alarm_set(1, intr_trampoline, &call) != 0) {
    fn(arg);  // no alarm (should not happen once EAL is up): run it here
    return;
  }
  // The interrupt thread runs the alarm within microseconds; memif's own
  // handlers are short. Wait as long as it takes: returning early would
  // leave the alarm holding a pointer to this stack frame.
  while (!call.done.load(std::memory_order_acquire)) {
    timespec ts{0, 50 * 1000};
    nanosleep(&ts, nullptr);
  }
}

// A server is about to bind `path`: its directory must exist, and a socket
// file left by a dead process (connect refused) is removed. A live listener
// is an error: two servers for one link.
Status prepare_server_socket(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return error(Code::kNotFound, "memif socket directory %s does not exist", dir.c_str());
  if (lstat(path.c_str(), &st) != 0) return Status::ok();
  if (!S_ISSOCK(st.st_mode))
    return error(Code::kInvalid, "memif socket path %s exists and is not a socket", path.c_str());
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return error(Code::kIo, "socket: %s", std::strerror(errno));
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::strncpy(un.sun_path, path.c_str(), sizeof un.sun_path - 1);
  const int rc = connect(fd, reinterpret_cast<sockaddr*>(&un), sizeof un);
  const int err = errno;
  ::close(fd);
  if (rc == 0) return error(Code::kBusy, "memif socket %s is in use by a live server", path.c_str());
  if (err != ECONNREFUSED) return error(Code::kIo, "memif socket %s: connect: %s", path.c_str(), std::strerror(err));
  if (unlink(path.c_str()) != 0)
    return error(Code::kIo, "cannot remove stale memif socket %s: %s", path.c_str(), std::strerror(errno));
  return Status::ok();
}

void register_port(DpdkPort* p) {
  if (g_nports < kMaxOpenPorts) g_ports[g_nports++] = p;
}

void unregister_port(DpdkPort* p) {
  for (int i = 0; i < g_nports; ++i) {
    if (g_ports[i] == p) {
      g_ports[i] = g_ports[--g_nports];
      return;
    }
  }
}

}  // namespace dpdk
}  // namespace toroid
