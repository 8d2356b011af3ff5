// DPDK's Environment Abstraction Layer, brought up once per process.
//
// A node process owns one EAL instance: its own --file-prefix, --in-memory
// (no files under /var/run/dpdk, no shared config with other nodes), one
// lcore (the calling thread, pinned to one CPU or floating over a list), and
// either hugepages or --no-huge anonymous memory sized to the mbuf pool.
// rte_eal_init cannot run twice in one process, even after rte_eal_cleanup,
// so eal_init refuses a second call; tests keep every DPDK case in one
// executable. Ports and pools are created after eal_init and must be
// destroyed before eal_cleanup (eal_cleanup closes ports still open).
//
// No DPDK headers here: the rig and the node's main include this freely.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace toroid {

// Memory EAL reserves beyond the mbuf pools (ethdev data, memif queues, the
// malloc heap's own bookkeeping), in MiB. Measured: 2 memif pairs and two
// pools start with -m 64 + pools; kept generous because --no-huge memory is
// only virtual until touched.
constexpr uint32_t kEalBaseMemoryMb = 64;

struct EalOptions {
  // Names this process's EAL instance: --file-prefix toroid-<tag>-<pid>.
  // The node's coordinates make good tags ("n1-0-1"); empty: "node".
  std::string tag;
  // Ports that will be opened: memif and af_packet specs become --vdev
  // arguments (servers first: in one process a memif client must find its
  // server's socket already created), pci specs an allow-list (-a) entry.
  // With no pci spec, --no-pci. Ports not named here can still be opened
  // later (DpdkPort::open hot-plugs them).
  std::vector<std::string> port_specs;
  // -m in MiB; 0: kEalBaseMemoryMb + what pool_mbufs mbufs of
  // pool_frame_room bytes need (eal_memory_mb).
  uint32_t memory_mb = 0;
  uint32_t pool_mbufs = 8191;
  uint32_t pool_frame_room = 2048;
  // Hugepages: kAuto uses them when /proc/meminfo shows HugePages_Free > 0.
  enum class Huge : uint8_t { kAuto, kOn, kOff };
  Huge hugepages = Huge::kAuto;
  // The one lcore runs on this CPU (--lcores 0@cpu); -1: the CPU the caller
  // is on now (sched_getcpu). Two nodes on two CPUs each pass their own.
  int cpu = -1;
  // Instead of one CPU, a list ("0-1", "0,2"): --lcores 0@(list) lets the
  // OS move the node between those CPUs (many nodes on few cores).
  std::string cpu_list;
  // EAL and PMD log level (error, warning, notice, info, debug).
  std::string log_level = "error";
  // Appended as they are (e.g. "--iova-mode=va").
  std::vector<std::string> extra_args;
};

// Brings EAL up; Status carries DPDK's own message on failure. A second call
// fails with kBusy (whatever the options), also after eal_cleanup.
Status eal_init(const EalOptions& opt);
bool eal_ready();
// The argument vector eal_init passed to rte_eal_init (for logs and docs).
const std::vector<std::string>& eal_args();
// Closes every DpdkPort still open (which removes memif server sockets),
// then rte_eal_cleanup. Pools should be destroyed before; a pool destroyed
// after this only forgets its memory.
void eal_cleanup();
// -m for a pool of `mbufs` mbufs of `frame_room` bytes each (plus headroom,
// mbuf header and Packet descriptor), plus kEalBaseMemoryMb.
uint32_t eal_memory_mb(uint32_t mbufs, uint32_t frame_room);

}  // namespace toroid
