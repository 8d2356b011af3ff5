// The node program as PID 1 of a guest's initramfs (the qemu rig, docs/qemu.md):
// what an init system would do, in the few steps a node needs, before the
// node runs, and the power-off after it.
//
//   1. mount proc, sysfs, devtmpfs (and hugetlbfs when the kernel reserved
//      hugepages: `hugepages=N` on its command line), create /run/dpdk;
//   2. read the personality from the kernel command line (toroid.* keys below);
//   3. load the kernel modules its network mode needs, with their
//      dependencies from modules.dep (finit_module; there is no modprobe):
//        toroid.net=uio     uio, uio_pci_generic; the NICs are bound to
//                           uio_pci_generic (new_id "1af4 1000"), virtio_pci is
//                           never loaded, and DPDK's virtio PMD drives them
//                           (kernel bypass; IOVA as PA, hence hugepages)
//        toroid.net=kernel  virtio_pci, virtio_net; each NIC is a kernel
//                           interface used through an AF_PACKET socket (io_uring
//                           port, or DPDK net_af_packet with toroid.kdrv=af_packet)
//   4. turn that into toroid-node's flags (the same ones the host rig gives);
//   5. after the node: sync and reboot(RB_POWER_OFF), so the VM exits.
//
// Every step logs one "[pid1] ..." line on the console; every wait is bounded.
//
// Kernel command-line keys (docs/qemu.md has the table):
//   toroid.dims=XxYxZ  toroid.coord=X,Y,Z  toroid.job=NAME  toroid.seed=N   (required: dims coord job)
//   toroid.ports=DIR@PCI,...    port i is the i-th entry, e.g. x+@00:04.0,x-@00:05.0
//   toroid.net=uio|kernel       (default uio)    toroid.kdrv=uring|af_packet (kernel mode; default uring)
//   toroid.arg=KEY=VALUE        a job argument (repeatable)
//   toroid.train_timeout=D toroid.coll_timeout=D toroid.job_timeout=D toroid.linger=D   durations (60s, 500ms)
//   toroid.log=LEVEL toroid.eal_log=LEVEL toroid.pool=N toroid.eal_arg=ARG (repeatable)
//   toroid.hugetlbfs=0|1        force the hugetlbfs mount off/on (default: on when hugepages exist)
//   toroid.modules=a,b          more modules to load
//   toroid.app=PATH             run the application PATH describes instead of the
//                               node's job (firmware/pid1_app.h; `toroid mpirun --rig qemu`)
//
// How toroid-node calls it (firmware/node_main.cc):
//
//   int main(int argc, char** argv) {
//     if (toroid::is_pid1()) toroid::pid1_main(argc, argv, run_node);  // never returns
//     return run_node(argc, argv);                                     // the old main
//   }
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace toroid {

// The toroid.* keys of a kernel command line, checked.
struct GuestConfig {
  std::string dims, coord, job, seed;
  std::string net = "uio";         // "uio" | "kernel"
  std::string kdrv = "uring";      // kernel mode's port driver: "uring" | "af_packet"
  struct Port {
    std::string dir;  // "x+"
    std::string pci;  // "0000:00:04.0"
  };
  std::vector<Port> ports;
  std::vector<std::string> node_flags;  // pass-through toroid-node flags: {"--train-timeout", "60s", ...}
  int hugetlbfs = -1;                   // -1: mount when the kernel reserved hugepages
  std::vector<std::string> modules;     // extra modules
  std::string app;                      // the application's description in the image ("" : the node's job)
};

// Parses the whole command line (other keys are ignored; an unknown toroid.*
// key, a bad value or a missing required key is an error naming it).
Result<GuestConfig> parse_guest_cmdline(const std::string& cmdline);

// Which modules a network mode loads, in request order (dependencies come
// from modules.dep).
std::vector<std::string> guest_modules(const GuestConfig& c);

// The toroid-node flags for a config whose ports resolved to `port_addrs`
// (uio: the PCI addresses; kernel: the interface names), in port order.
std::vector<std::string> guest_node_args(const GuestConfig& c, const std::vector<std::string>& port_addrs);

struct Pid1Options {
  std::string cmdline;                 // empty: read /proc/cmdline
  std::string modules_root;            // empty: /lib/modules/<uname -r>
  uint64_t settle_timeout_ns = 20ull * 1000 * 1000 * 1000;  // drivers binding, interfaces appearing
  // Filled by pid1_boot:
  GuestConfig config;
  std::vector<std::string> node_args;  // toroid-node's flags (without argv[0])
  std::vector<std::string> port_addrs; // each port's PCI address (uio) or interface (kernel)
};

bool is_pid1();
// A verdict line's quoted value: "..." with '"' and '\\' escaped, newlines
// made spaces (the launcher's parse_kv reads it back).
std::string verdict_quote(const std::string& s);
// Steps 1-4. On error the message says which step and what to change.
Status pid1_boot(Pid1Options& o);
// sync, then reboot(RB_POWER_OFF); never returns (pauses if that fails).
[[noreturn]] void pid1_poweroff();
// pid1_boot, then run_node(argv[0] + node_args) (or, with toroid.app, the
// application: pid1_run_app), then power off. A boot
// failure prints "verdict node=X,Y,Z FAIL reason=..." itself, so the rig
// always gets a verdict line.
[[noreturn]] void pid1_main(int argc, char** argv, int (*run_node)(int, char**));

}  // namespace toroid
