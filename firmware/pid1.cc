#include "firmware/pid1.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/clock.h"
#include "firmware/pid1_app.h"

namespace toroid {
namespace {

constexpr uint64_t kNsPerMs = 1000 * 1000;

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  // One write per line: the console is shared with the kernel's messages.
  std::string line = std::string("[pid1] ") + buf + "\n";
  fflush(stdout);
  ssize_t w = write(1, line.data(), line.size());
  (void)w;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

Status write_file(const std::string& path, const std::string& data) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return error(Code::kIo, "open %s: %s", path.c_str(), strerror(errno));
  ssize_t w = write(fd, data.data(), data.size());
  int e = errno;
  close(fd);
  if (w != static_cast<ssize_t>(data.size()))
    return Status(e == EEXIST ? Code::kBusy : Code::kIo, "write '" + data + "' to " + path + ": " + strerror(e));
  return Status::ok();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string readlink_base(const std::string& p) {
  char buf[512];
  ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = 0;
  const char* slash = strrchr(buf, '/');
  return slash ? slash + 1 : buf;
}

std::vector<std::string> list_dir(const std::string& p) {
  std::vector<std::string> out;
  if (DIR* d = opendir(p.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

void sleep_ms(unsigned ms) {
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

// Kernel command-line tokens (double quotes group, as the kernel's parser does).
std::vector<std::string> split_cmdline(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  bool in_q = false, any = false;
  for (char c : s) {
    if (c == '"') {
      in_q = !in_q;
      any = true;
    } else if ((c == ' ' || c == '\n' || c == '\t') && !in_q) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

bool valid_dir(const std::string& d) {
  return d.size() == 2 && (d[0] == 'x' || d[0] == 'y' || d[0] == 'z') && (d[1] == '+' || d[1] == '-');
}

// "00:04.0" or "0000:00:04.0" -> "0000:00:04.0"; "" if malformed.
std::string canonical_pci(const std::string& a) {
  std::string s = a.size() == 7 ? "0000:" + a : a;
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return "";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!isxdigit(static_cast<unsigned char>(s[i]))) return "";
  }
  if (s[11] < '0' || s[11] > '7') return "";
  for (char& c : s) c = static_cast<char>(tolower(c));
  return s;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// ---------------------------------------------------------------------------
// step 1: file systems

Status mount_one(const char* src, const char* dst, const char* type, const char* data = nullptr) {
  mkdir(dst, 0755);
  if (mount(src, dst, type, MS_NOSUID | (strcmp(type, "devtmpfs") == 0 ? 0 : MS_NOEXEC), data) != 0 &&
      errno != EBUSY)
    return error(Code::kIo, "mount %s on %s: %s", type, dst, strerror(errno));
  return Status::ok();
}

Status mount_base() {
  if (Status st = mount_one("proc", "/proc", "proc"); !st) return st;
  if (Status st = mount_one("sysfs", "/sys", "sysfs"); !st) return st;
  if (Status st = mount_one("devtmpfs", "/dev", "devtmpfs"); !st) return st;
  // The kernel opens /dev/console for init when the image has it; if it did
  // not, the console appears with devtmpfs.
  if (fcntl(1, F_GETFD) < 0) {
    int fd = open("/dev/console", O_RDWR | O_NOCTTY);
    if (fd >= 0) {
      dup2(fd, 0);
      dup2(fd, 1);
      dup2(fd, 2);
      if (fd > 2) close(fd);
    }
  }
  // EAL refuses plugins on a path with a world-writable directory, and the
  // kernel's rootfs starts out 0777 unless the image says otherwise.
  chmod("/", 0755);
  mkdir("/run", 0755);
  mkdir("/run/dpdk", 0755);  // DPDK's runtime dir (/var/run -> /run)
  mkdir("/tmp", 01777);
  return Status::ok();
}

long meminfo_kb(const std::string& key) {
  std::string mi;
  if (!read_file("/proc/meminfo", &mi)) return -1;
  size_t at = mi.find(key + ":");
  if (at == std::string::npos) return -1;
  return strtol(mi.c_str() + at + key.size() + 1, nullptr, 10);
}

// ---------------------------------------------------------------------------
// step 3: modules (modules.dep lists the whole closure, the first to load last)

class ModuleLoader {
 public:
  explicit ModuleLoader(std::string root) : root_(std::move(root)) {}

  Status init() {
    std::string dep;
    if (!read_file(root_ + "/modules.dep", &dep)) return error(Code::kNotFound, "no %s/modules.dep", root_.c_str());
    std::istringstream in(dep);
    std::string line;
    while (std::getline(in, line)) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string path = line.substr(0, colon);
      std::vector<std::string> deps;
      std::istringstream ds(line.substr(colon + 1));
      for (std::string d; ds >> d;) deps.push_back(d);
      path_[name_of(path)] = path;
      deps_[path] = deps;
    }
    std::string builtin;
    if (read_file(root_ + "/modules.builtin", &builtin)) {
      std::istringstream bs(builtin);
      for (std::string l; std::getline(bs, l);) builtin_.insert(name_of(l));
    }
    return Status::ok();
  }

  // Loads `name` and what it needs; logs what was loaded.
  Status load(const std::string& want) {
    const std::string name = normal(want);
    if (builtin_.count(name)) {
      say("module %s: built into the kernel", name.c_str());
      return Status::ok();
    }
    auto it = path_.find(name);
    if (it == path_.end()) return error(Code::kNotFound, "module %s is not in this image (%s)", name.c_str(), root_.c_str());
    const auto& deps = deps_[it->second];
    for (auto d = deps.rbegin(); d != deps.rend(); ++d)
      if (Status st = insert(*d); !st) return st;
    return insert(it->second);
  }

 private:
  static std::string normal(std::string n) {
    for (char& c : n)
      if (c == '-') c = '_';
    return n;
  }
  static std::string name_of(const std::string& path) {
    std::string b = path.substr(path.rfind('/') + 1);
    if (b.size() > 3 && b.compare(b.size() - 3, 3, ".ko") == 0) b.resize(b.size() - 3);
    return normal(trim(b));
  }

  Status insert(const std::string& rel) {
    const std::string name = name_of(rel);
    if (done_.count(name)) return Status::ok();
    const uint64_t t0 = mono_ns();
    const std::string path = root_ + "/" + rel;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return error(Code::kNotFound, "module %s: open %s: %s", name.c_str(), path.c_str(), strerror(errno));
    long r = syscall(SYS_finit_module, fd, "", 0);
    int e = errno;
    close(fd);
    if (r != 0 && e != EEXIST) return error(Code::kIo, "module %s: finit_module: %s", name.c_str(), strerror(e));
    done_.insert(name);
    say("module %s %s (%.1f ms)", name.c_str(), r == 0 ? "loaded" : "already loaded",
        static_cast<double>(mono_ns() - t0) / 1e6);
    return Status::ok();
  }

  std::string root_;
  std::map<std::string, std::string> path_;
  std::map<std::string, std::vector<std::string>> deps_;
  std::set<std::string> builtin_, done_;
};

// ---------------------------------------------------------------------------
// step 3b: the NICs

std::string pci_id(const std::string& addr) {
  std::string v, d;
  read_file("/sys/bus/pci/devices/" + addr + "/vendor", &v);
  read_file("/sys/bus/pci/devices/" + addr + "/device", &d);
  v = trim(v);
  d = trim(d);
  if (v.rfind("0x", 0) == 0) v = v.substr(2);
  if (d.rfind("0x", 0) == 0) d = d.substr(2);
  return v + ":" + d;
}

std::string present_nics() {
  std::string s;
  for (const auto& a : list_dir("/sys/bus/pci/devices")) {
    const std::string id = pci_id(a);
    if (id.rfind("1af4:", 0) == 0) s += (s.empty() ? "" : " ") + a + "(" + id + ")";
  }
  return s.empty() ? "none" : s;
}

Status check_port_device(const GuestConfig::Port& p, size_t i) {
  if (!exists("/sys/bus/pci/devices/" + p.pci))
    return error(Code::kNotFound, "port%zu (%s): no PCI device %s (virtio devices here: %s)", i, p.dir.c_str(),
                 p.pci.c_str(), present_nics().c_str());
  const std::string id = pci_id(p.pci);
  if (id != "1af4:1000" && id != "1af4:1041")
    return error(Code::kInvalid, "port%zu (%s): PCI device %s is %s, not a virtio-net NIC (1af4:1000 or 1af4:1041)", i,
                 p.dir.c_str(), p.pci.c_str(), id.c_str());
  return Status::ok();
}

Status bind_uio(const GuestConfig& c, uint64_t timeout_ns) {
  const std::string drv = "/sys/bus/pci/drivers/uio_pci_generic";
  for (size_t i = 0; i < c.ports.size(); ++i)
    if (Status st = check_port_device(c.ports[i], i); !st) return st;
  // Every virtio-net NIC of the VM is a torus port: hand them all to
  // uio_pci_generic by ID (transitional and modern device IDs).
  for (const char* id : {"1af4 1000", "1af4 1041"}) {
    Status st = write_file(drv + "/new_id", id);
    if (!st && st.code() != Code::kBusy) return st;
  }
  const uint64_t deadline = mono_ns() + timeout_ns;
  for (size_t i = 0; i < c.ports.size(); ++i) {
    const auto& p = c.ports[i];
    const std::string dev = "/sys/bus/pci/devices/" + p.pci;
    std::string bound;
    for (;;) {
      bound = readlink_base(dev + "/driver");
      if (bound == "uio_pci_generic") break;
      if (!bound.empty()) {  // bound elsewhere (virtio-pci loaded?): move it
        (void)write_file(dev + "/driver/unbind", p.pci);
        (void)write_file(drv + "/bind", p.pci);
      }
      if (mono_ns() > deadline)
        return error(Code::kTimeout, "port%zu (%s): %s not bound to uio_pci_generic after %llu ms (driver: %s)", i,
                     p.dir.c_str(), p.pci.c_str(), static_cast<unsigned long long>(timeout_ns / kNsPerMs),
                     bound.empty() ? "none" : bound.c_str());
      sleep_ms(5);
    }
    std::string uio = "?";
    for (const auto& e : list_dir(dev + "/uio")) uio = e;
    say("port%zu %s: %s (virtio-net %s) bound to uio_pci_generic (/dev/%s): DPDK virtio PMD, kernel bypassed", i,
        p.dir.c_str(), p.pci.c_str(), pci_id(p.pci).c_str(), uio.c_str());
  }
  return Status::ok();
}

Status iface_up(const std::string& ifname, bool* running) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return error(Code::kIo, "socket: %s", strerror(errno));
  ifreq ifr{};
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname.c_str());
  Status st;
  if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
    st = error(Code::kIo, "%s: SIOCGIFFLAGS: %s", ifname.c_str(), strerror(errno));
  } else if (!(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) st = error(Code::kIo, "%s: set up: %s", ifname.c_str(), strerror(errno));
  }
  if (st && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) *running = (ifr.ifr_flags & IFF_RUNNING) != 0;
  close(s);
  return st;
}

// Kernel mode: each port's NIC is the interface virtio_net made of that PCI
// device (found through sysfs, so names need not follow probe order),
// brought up; waits for its carrier.
Status find_ifaces(const GuestConfig& c, uint64_t timeout_ns, std::vector<std::string>* names) {
  for (size_t i = 0; i < c.ports.size(); ++i)
    if (Status st = check_port_device(c.ports[i], i); !st) return st;
  const uint64_t deadline = mono_ns() + timeout_ns;
  for (size_t i = 0; i < c.ports.size(); ++i) {
    const auto& p = c.ports[i];
    const std::string dev = "/sys/bus/pci/devices/" + p.pci;
    std::string ifname;
    bool running = false;
    for (;;) {
      if (ifname.empty()) {
        for (const auto& v : list_dir(dev))
          if (v.rfind("virtio", 0) == 0)
            for (const auto& n : list_dir(dev + "/" + v + "/net")) ifname = n;
      }
      if (!ifname.empty()) {
        if (Status st = iface_up(ifname, &running); !st) return st;
        if (running) break;
      }
      if (mono_ns() > deadline)
        return error(Code::kTimeout, "port%zu (%s): %s after %llu ms (driver: %s)", i, p.dir.c_str(),
                     ifname.empty() ? ("no interface for " + p.pci).c_str() : (ifname + " has no carrier").c_str(),
                     static_cast<unsigned long long>(timeout_ns / kNsPerMs),
                     readlink_base(dev + "/driver").empty() ? "none" : readlink_base(dev + "/driver").c_str());
      sleep_ms(5);
    }
    names->push_back(ifname);
    say("port%zu %s: %s (virtio-net %s) is %s, up: kernel virtio_net driver, %s through the kernel (fallback, no "
        "bypass)",
        i, p.dir.c_str(), p.pci.c_str(), pci_id(p.pci).c_str(), ifname.c_str(),
        c.kdrv == "uring" ? "io_uring AF_PACKET socket" : "DPDK net_af_packet");
  }
  return Status::ok();
}

std::string coord_for_verdict(const std::string& cmdline) {
  for (const auto& t : split_cmdline(cmdline))
    if (t.rfind("toroid.coord=", 0) == 0) return t.substr(13);
  return "?";
}

}  // namespace

// ---------------------------------------------------------------------------

Result<GuestConfig> parse_guest_cmdline(const std::string& cmdline) {
  GuestConfig c;
  std::set<std::string> seen;
  for (const auto& tok : split_cmdline(cmdline)) {
    if (tok.rfind("toroid.", 0) != 0) continue;
    // A control byte (a NUL above all) would reach toroid-node's argv, where
    // a NUL silently cuts the value short: refuse it, naming the key.
    for (const char ch : tok) {
      const auto u = static_cast<unsigned char>(ch);
      if (u < 0x20 || u == 0x7f) {
        const std::string key = tok.substr(7, tok.find('=') == std::string::npos ? std::string::npos : tok.find('=') - 7);
        std::string printable;
        for (const char k : key) printable += static_cast<unsigned char>(k) < 0x20 || k == 0x7f ? '?' : k;
        return error(Code::kInvalid, "kernel command line: toroid.%s: control character 0x%02x in the value",
                     printable.c_str(), u);
      }
    }
    const size_t eq = tok.find('=');
    const std::string key = tok.substr(7, eq == std::string::npos ? std::string::npos : eq - 7);
    if (eq == std::string::npos) return error(Code::kInvalid, "kernel command line: toroid.%s needs a value", key.c_str());
    const std::string val = tok.substr(eq + 1);
    const bool repeatable = key == "arg" || key == "eal_arg";
    if (!repeatable && !seen.insert(key).second)
      return error(Code::kInvalid, "kernel command line: toroid.%s given twice", key.c_str());
    auto bad = [&](const char* want) {
      return error(Code::kInvalid, "kernel command line: toroid.%s=%s: expected %s", key.c_str(), val.c_str(), want);
    };
    if (key == "dims") {
      c.dims = val;
    } else if (key == "coord") {
      c.coord = val;
    } else if (key == "job") {
      c.job = val;
    } else if (key == "seed") {
      if (!all_digits(val)) return bad("a number");
      c.seed = val;
    } else if (key == "net") {
      if (val != "uio" && val != "kernel") return bad("uio or kernel");
      c.net = val;
    } else if (key == "kdrv") {
      if (val != "af_packet" && val != "uring") return bad("af_packet or uring");
      c.kdrv = val;
    } else if (key == "ports") {
      std::set<std::string> dirs, addrs;
      std::istringstream in(val);
      for (std::string item; std::getline(in, item, ',');) {
        const size_t at = item.find('@');
        if (at == std::string::npos) return bad("DIR@PCI,... (e.g. x+@00:04.0,x-@00:05.0)");
        GuestConfig::Port p{item.substr(0, at), canonical_pci(item.substr(at + 1))};
        if (!valid_dir(p.dir)) return bad("directions x+ x- y+ y- z+ z- in DIR@PCI");
        if (p.pci.empty()) return bad("PCI addresses like 00:04.0 or 0000:00:04.0 in DIR@PCI");
        if (!dirs.insert(p.dir).second || !addrs.insert(p.pci).second)
          return error(Code::kInvalid, "kernel command line: toroid.ports: %s or %s named twice", p.dir.c_str(),
                       p.pci.c_str());
        c.ports.push_back(p);
      }
      if (c.ports.empty()) return bad("at least one DIR@PCI");
    } else if (key == "arg") {
      if (val.find('=') == std::string::npos || val[0] == '=') return bad("KEY=VALUE");
      c.node_flags.insert(c.node_flags.end(), {"--arg", val});
    } else if (key == "train_timeout" || key == "coll_timeout" || key == "job_timeout" || key == "linger" ||
               key == "link_timeout") {
      uint64_t ns;
      if (!parse_duration_ns(val.c_str(), &ns)) return bad("a duration (e.g. 60s, 500ms)");
      std::string flag = "--" + key;
      for (char& ch : flag)
        if (ch == '_') ch = '-';
      c.node_flags.insert(c.node_flags.end(), {flag, val});
    } else if (key == "log") {
      c.node_flags.insert(c.node_flags.end(), {"--log-level", val});
    } else if (key == "eal_log") {
      c.node_flags.insert(c.node_flags.end(), {"--eal-log-level", val});
    } else if (key == "eal_arg") {
      c.node_flags.insert(c.node_flags.end(), {"--eal-arg", val});
    } else if (key == "pool") {
      if (!all_digits(val)) return bad("a number of packet buffers");
      c.node_flags.insert(c.node_flags.end(), {"--pool", val});
    } else if (key == "hugetlbfs") {
      if (val != "0" && val != "1") return bad("0 or 1");
      c.hugetlbfs = val == "1";
    } else if (key == "app") {
      if (val[0] != '/') return bad("the absolute path of the application's description in the image");
      c.app = val;
    } else if (key == "modules") {
      std::istringstream in(val);
      for (std::string m; std::getline(in, m, ',');)
        if (!m.empty()) c.modules.push_back(m);
    } else {
      return error(Code::kInvalid,
                   "kernel command line: unknown key toroid.%s (known: dims coord job seed ports net kdrv arg "
                   "train_timeout coll_timeout job_timeout linger link_timeout log eal_log eal_arg pool hugetlbfs "
                   "modules app)",
                   key.c_str());
    }
  }
  for (const char* k : {"dims", "coord", "job", "ports"})
    if (!seen.count(k)) return error(Code::kInvalid, "kernel command line: toroid.%s is missing", k);
  return c;
}

std::vector<std::string> guest_modules(const GuestConfig& c) {
  std::vector<std::string> m;
  if (c.net == "uio") {
    m = {"uio", "uio_pci_generic"};
  } else {
    m = {"virtio_pci", "virtio_net"};
  }
  m.insert(m.end(), c.modules.begin(), c.modules.end());
  return m;
}

std::vector<std::string> guest_node_args(const GuestConfig& c, const std::vector<std::string>& port_addrs) {
  std::vector<std::string> a = {"--dims", c.dims, "--coord", c.coord, "--job", c.job};
  if (!c.seed.empty()) a.insert(a.end(), {"--seed", c.seed});
  for (size_t i = 0; i < c.ports.size() && i < port_addrs.size(); ++i) {
    std::string spec = "port" + std::to_string(i) + ":" + c.ports[i].dir + ":";
    if (c.net == "uio") {
      spec += "pci:" + port_addrs[i];
    } else {
      spec += (c.kdrv == "uring" ? "uring:iface=" : "af_packet:iface=") + port_addrs[i];
    }
    a.insert(a.end(), {"--port", spec});
  }
  a.insert(a.end(), c.node_flags.begin(), c.node_flags.end());
  return a;
}

bool is_pid1() { return getpid() == 1; }

std::string verdict_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c == '\n' ? ' ' : c;
  }
  return q + "\"";
}

Status pid1_boot(Pid1Options& o) {
  const uint64_t t0 = mono_ns();
  if (Status st = mount_base(); !st) return error(st.code(), "pid1: %s", st.message().c_str());
  utsname u{};
  uname(&u);
  std::string image;
  read_file("/etc/toroid-image", &image);
  say("toroid-node is PID 1: kernel %s, uptime %.2f s; mounted /proc /sys /dev", u.release,
      static_cast<double>(t0) / 1e9);

  if (o.cmdline.empty() && !read_file("/proc/cmdline", &o.cmdline))
    return error(Code::kIo, "pid1: cannot read /proc/cmdline");
  auto cr = parse_guest_cmdline(o.cmdline);
  if (!cr) return error(cr.status().code(), "pid1: %s", cr.status().message().c_str());
  o.config = cr.value();
  const GuestConfig& c = o.config;
  say("personality from the kernel command line: dims %s coord %s job %s seed %s, %zu ports, net %s", c.dims.c_str(),
      c.coord.c_str(), c.job.c_str(), c.seed.empty() ? "(default)" : c.seed.c_str(), c.ports.size(),
      c.net == "uio" ? "uio (DPDK virtio PMD, kernel bypass)"
                     : (c.kdrv == "uring" ? "kernel (virtio_net + io_uring af_packet)"
                                          : "kernel (virtio_net + DPDK af_packet)"));

  const long huge_total = meminfo_kb("HugePages_Total");
  const long huge_kb = meminfo_kb("Hugepagesize");
  const bool mount_huge = c.hugetlbfs == 1 || (c.hugetlbfs == -1 && huge_total > 0);
  if (mount_huge) {
    if (Status st = mount_one("nodev", "/dev/hugepages", "hugetlbfs"); !st)
      return error(st.code(), "pid1: %s", st.message().c_str());
    say("hugetlbfs on /dev/hugepages: %ld pages of %ld kB", huge_total, huge_kb);
  }
  if (c.net == "uio" && huge_total <= 0)
    return error(Code::kInvalid,
                 "pid1: toroid.net=uio needs hugepages (the virtio PMD over uio_pci_generic uses physical "
                 "addresses): add hugepages=N to the kernel command line, or use toroid.net=kernel");

  std::string root = o.modules_root;
  if (root.empty()) root = std::string("/lib/modules/") + u.release;
  ModuleLoader loader(root);
  if (Status st = loader.init(); !st) return error(st.code(), "pid1: %s", st.message().c_str());
  for (const auto& m : guest_modules(c))
    if (Status st = loader.load(m); !st) return error(st.code(), "pid1: %s", st.message().c_str());

  std::vector<std::string> addrs;
  if (c.net == "uio") {
    if (Status st = bind_uio(c, o.settle_timeout_ns); !st) return error(st.code(), "pid1: %s", st.message().c_str());
    for (const auto& p : c.ports) addrs.push_back(p.pci);
  } else {
    if (Status st = find_ifaces(c, o.settle_timeout_ns, &addrs); !st)
      return error(st.code(), "pid1: %s", st.message().c_str());
  }
  o.node_args = guest_node_args(c, addrs);
  o.port_addrs = addrs;
  say("ready in %.0f ms", static_cast<double>(mono_ns() - t0) / 1e6);
  return Status::ok();
}

void pid1_poweroff() {
  fflush(stdout);
  fflush(stderr);
  sync();
  reboot(RB_POWER_OFF);
  say("reboot(RB_POWER_OFF) failed: %s; halting here", strerror(errno));
  for (;;) pause();
}

void pid1_main(int argc, char** argv, int (*run_node)(int, char**)) {
  (void)argc;
  Pid1Options o;
  Status st = pid1_boot(o);
  if (!st) {
    say("boot failed: %s", st.message().c_str());
    std::string line = "verdict node=" + coord_for_verdict(o.cmdline) +
                       " FAIL reason=" + verdict_quote(st.message()) + " cases=0 ms=0\n";
    ssize_t w = write(1, line.data(), line.size());
    (void)w;
    pid1_poweroff();
  }
  if (!o.config.app.empty()) {
    const int rc = pid1_run_app(o);
    say("application done (status %d); powering off", rc);
    pid1_poweroff();
  }
  std::vector<std::string> args;
  args.push_back(argc > 0 && argv[0] ? argv[0] : "/init");
  args.insert(args.end(), o.node_args.begin(), o.node_args.end());
  std::string cmd;
  for (const auto& a : args) cmd += " " + a;
  say("running:%s", cmd.c_str());
  std::vector<char*> av;
  for (auto& a : args) av.push_back(a.data());
  av.push_back(nullptr);
  const int rc = run_node(static_cast<int>(args.size()), av.data());
  say("toroid-node exited with status %d; powering off", rc);
  pid1_poweroff();
}

}  // namespace toroid
