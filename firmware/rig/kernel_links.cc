#include "firmware/rig/kernel_links.h"

#include <dirent.h>
#include <glob.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/clock.h"
#include "firmware/rig/process.h"
#include "firmware/topology_gen.h"

namespace toroid::rig {

namespace {

constexpr uint64_t kIpTimeoutNs = 10 * kSec;  // one `ip` command; they take milliseconds
constexpr int kAfXdp = 44;                    // AF_XDP (older libc headers lack it)

std::string ns_name(pid_t pid, const Coord& c) {
  char b[64];
  snprintf(b, sizeof b, "toroid-%d-%u-%u-%u", static_cast<int>(pid), c.c[0], c.c[1], c.c[2]);
  return b;
}

// The interface in node c's namespace that serves its port along dir.
std::string iface_at(const Dims& dims, const Coord& c, Dir dir) {
  if (dir_plus(dir)) return cable_iface(c, dir, true);
  return cable_iface(neighbour(c, dir, dims), opposite(dir), false);
}

}  // namespace

const char* KernelLinks::ip_path() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (access(p, X_OK) == 0) return p;
  return nullptr;
}

Status KernelLinks::ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ip_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_command(argv, kIpTimeoutNs);
  return r ? Status::ok() : r.status();
}

std::string KernelLinks::missing(bool xdp) {
  if (geteuid() != 0) return "not root: network namespaces and veth pairs need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)";
  if (!ip_path()) return "no `ip` command (Debian package iproute2)";
  const std::string probe = "toroid-probe-" + std::to_string(getpid());
  auto add = run_command({ip_path(), "netns", "add", probe}, kIpTimeoutNs);
  if (!add) return "the kernel cannot make network namespaces here: " + add.status().message();
  auto veth = run_command({ip_path(), "-n", probe, "link", "add", "tprobe+", "type", "veth", "peer", "name", "tprobe-"},
                          kIpTimeoutNs);
  (void)run_command({ip_path(), "netns", "del", probe}, kIpTimeoutNs);
  if (!veth) return "the kernel cannot make veth pairs here: " + veth.status().message();
  if (!xdp) return "";
  const int fd = socket(kAfXdp, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return std::string("the kernel has no AF_XDP sockets (") + std::strerror(errno) +
           "; CONFIG_XDP_SOCKETS): the af_packet driver still works";
  close(fd);
  glob_t g{};
  const bool pmd = glob("/usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so*", 0, nullptr, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  if (!pmd) return "DPDK's AF_XDP PMD (librte_net_af_xdp, Debian's librte-net-af-xdp23) is not installed";
  return "";
}

void KernelLinks::remove_stale(const std::function<void(const std::string&)>& say) {
  DIR* d = opendir("/run/netns");
  if (!d || !ip_path()) {
    if (d) closedir(d);
    return;
  }
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    int pid = 0;
    unsigned x, y, z;
    if (std::sscanf(e->d_name, "toroid-%d-%u-%u-%u", &pid, &x, &y, &z) != 4 || pid <= 0) continue;
    if (kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(e->d_name);
  }
  closedir(d);
  for (const auto& ns : stale) {
    auto r = run_command({ip_path(), "netns", "del", ns}, kIpTimeoutNs);
    say(r ? "rig: removed network namespace " + ns + " left by a rig that is gone"
          : "rig: could not remove stale namespace " + ns + ": " + r.status().message());
  }
}

Result<std::unique_ptr<KernelLinks>> KernelLinks::create(const Dims& dims, const std::vector<VethSwap>& swaps,
                                                         std::function<void(const std::string&)> say) {
  if (!ip_path()) return error(Code::kNotFound, "no `ip` command (Debian package iproute2)");
  remove_stale(say);
  std::unique_ptr<KernelLinks> k(new KernelLinks());
  k->dims_ = dims;
  k->say_ = std::move(say);
  const pid_t pid = getpid();
  // From the first namespace on, the destructor removes what exists.
  for (uint32_t r = 0; r < dims.nodes(); ++r) {
    const std::string ns = ns_name(pid, coord_of(r, dims));
    if (Status st = k->ip({"netns", "add", ns}); !st) return st;
    k->ns_.push_back(ns);
  }
  for (uint32_t r = 0; r < dims.nodes(); ++r) {
    const Coord c = coord_of(r, dims);
    for (int d = 0; d < kDims; ++d) {
      const Dir plus = dir_of(d, true);
      if (!has_link(plus, dims)) continue;
      CableNames n{k->ns_[r], cable_iface(c, plus, true), k->ns_[rank_of(neighbour(c, plus, dims), dims)],
                   cable_iface(c, plus, false)};
      if (Status st = k->ip({"link", "add", n.if_plus, "netns", n.ns_plus, "type", "veth", "peer", "name", n.if_minus,
                             "netns", n.ns_minus});
          !st)
        return st;
      k->cables_.push_back(n);
    }
  }
  // A miscabled machine: two of a node's cables plugged into each other's
  // ports. The names stay with the ports; the pairs behind them swap.
  for (const auto& s : swaps) {
    const std::string& ns = k->ns_[rank_of(s.node, dims)];
    const std::string a = iface_at(dims, s.node, s.a), b = iface_at(dims, s.node, s.b);
    for (const auto& step : {std::vector<std::string>{a, "tswap"}, {b, a}, {"tswap", b}}) {
      if (Status st = k->ip({"-n", ns, "link", "set", "dev", step[0], "name", step[1]}); !st) return st;
    }
    k->say_("rig: swapped the veths of node " + s.node.to_string() + " ports " + dir_name(s.a) + " and " +
            dir_name(s.b) + " (" + a + " <-> " + b + "): a miscabled machine");
  }
  // Up, and without IPv6 link-local addresses (no neighbour discovery
  // chatter on the torus links).
  for (uint32_t r = 0; r < dims.nodes(); ++r) {
    const Coord c = coord_of(r, dims);
    for (int d = 0; d < kNumDirs; ++d) {
      const Dir dir = static_cast<Dir>(d);
      if (!has_link(dir, dims)) continue;
      const std::string ifn = iface_at(dims, c, dir);
      (void)k->ip({"-n", k->ns_[r], "link", "set", "dev", ifn, "addrgenmode", "none"});
      if (Status st = k->ip({"-n", k->ns_[r], "link", "set", "dev", ifn, "up"}); !st) return st;
    }
  }
  return k;
}

const std::string& KernelLinks::netns(const Coord& c) const { return ns_[rank_of(c, dims_)]; }

void KernelLinks::remove() {
  if (removed_) return;
  removed_ = true;
  size_t pairs = 0, spaces = 0;
  std::string failed;
  for (const auto& n : cables_) {
    // Deleting one end deletes the pair. After a swap a name may sit on the
    // pair already deleted through its other end: then the other name.
    if (ip({"-n", n.ns_plus, "link", "del", "dev", n.if_plus}) ||
        ip({"-n", n.ns_minus, "link", "del", "dev", n.if_minus})) {
      ++pairs;
    }
  }
  for (const auto& ns : ns_) {
    if (Status st = ip({"netns", "del", ns}); st)
      ++spaces;
    else
      failed += "\n  " + st.message();
  }
  char line[160];
  snprintf(line, sizeof line, "rig: removed %zu veth pairs and %zu of %zu network namespaces (toroid-%d-*)", pairs,
           spaces, ns_.size(), static_cast<int>(getpid()));
  say_(line + (failed.empty() ? std::string() : "; failures:" + failed));
}

KernelLinks::~KernelLinks() { remove(); }

}  // namespace toroid::rig
