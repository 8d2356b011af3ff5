// Opens the ports a personality names, for a node that runs as a process
// (host rig, qemu guest, deployment). The personality's driver word picks
// the backend and its address is the rest of the driver's spec:
//
//   port = port0 x+ memif role=server,socket=/tmp/toroid-rig.X/0-0-0x.sock,id=0
//   port = port1 x- af_packet iface=eth1
//   port = port2 y+ pci 0000:00:04.0
//   port = port3 y- uring path=/tmp/toroid-rig.X/0-0-0y.sock,role=client
//   port = port4 z+ af_xdp iface=ens1f0,queue=0 mtu=1500 numa=0
//
// becomes the spec "DRIVER:ADDRESS" that DpdkPort (memif, af_xdp,
// af_packet, pci) or UringPort (uring) parses. An ADDRESS is one word: no spaces (the
// personality splits on them); commas separate the driver's keys, so a
// socket path must hold neither.
//
// One process, one EAL: DPDK comes up only when a DPDK port is named, once,
// with every DPDK spec passed to eal_init (memif servers are probed there
// and bind their sockets at once), and one DpdkPacketPool serves every port.
// Without DPDK ports the pool is a HeapPacketPool.
//
// Kernel NICs: an af_xdp port that cannot be set up (no AF_XDP in the
// kernel, no XDP on the driver, the queue taken) falls back to af_packet on
// the same interface unless its spec says fallback=none; the frames on the
// wire are the same, so the other end does not care. The port's mtu caps
// its frames (a NIC with a smaller MTU is refused); its NUMA node (from the
// personality, else the NIC's sysfs entry) places the node's lcore on that
// node's CPUs when every port agrees and no CPU was given. notes() says
// what was decided.
//
// Lifetime: open() -> start() -> (the node runs) -> close(). Everything that
// holds packets (the Node) must be gone before close(): it destroys the
// pool. close() is also what makes a dead node's neighbours see carrier
// loss, so the rig quiesces every node before any of them closes (a memif
// peer that disconnects under a poller can crash it inside the PMD).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "drivers/port.h"
#include "firmware/personality.h"

namespace toroid {

enum class HostDriver : uint8_t { kDpdk, kUring };

// "memif", "af_packet", "pci" -> kDpdk; "uring" -> kUring; false if unknown.
bool host_driver_of(const std::string& driver, HostDriver* out);
// "DRIVER:ADDRESS", the spec the backend parses.
std::string host_port_spec(const PortSpec& ps);
// Every port's driver known and its spec well-formed (nothing is opened):
// the error names the port ("personality: port port1 (x-): ...").
Status check_host_ports(const Personality& p);

struct HostPortOptions {
  std::string tag;               // EAL file-prefix tag, e.g. "n1-0-1" (the pid is appended)
  int cpu = -1;                  // the EAL lcore's CPU (--lcores 0@cpu) ...
  std::string cpu_list;          // ... or a list it may float over; both unset: this
                                 // process's affinity mask (many nodes on few cores)
  std::string eal_log_level = "error";
  std::vector<std::string> eal_args;  // extra EAL arguments
  uint32_t pool_packets = 8191;  // DPDK: mbufs (2^q - 1); heap: the cap
  uint32_t frame_room = 2048;    // bytes per buffer after the headroom (DPDK: at least
                                 // the largest memif bsize the ports name)
};

class HostPorts {
 public:
  // Validates the personality's ports, brings EAL up if a DPDK port is
  // named, creates the pool and opens every port in personality order.
  // Errors name the port.
  static Result<std::unique_ptr<HostPorts>> open(const Personality& p, const HostPortOptions& opt);
  ~HostPorts();
  HostPorts(const HostPorts&) = delete;
  HostPorts& operator=(const HostPorts&) = delete;

  // Connects every port within timeout_ns: clients first, then servers (a
  // uring server blocks in accept; a client's connect completes against the
  // peer's listen backlog, so no two nodes wait on each other), then waits
  // for every DPDK link to come up (memif's handshake runs in EAL's
  // interrupt thread). The error names the port that did not come up.
  Status start(uint64_t timeout_ns);
  // Closes every port (memif disconnects, uring sockets close, memif server
  // sockets are removed), destroys the pool and cleans EAL up. Idempotent.
  void close();

  // ports()[i] is the personality's ports[i].
  const std::vector<Port*>& ports() const { return raw_; }
  PacketPool& pool() { return *pool_; }
  bool uses_dpdk() const { return dpdk_; }
  // "port1 (x-)", for messages.
  std::string label(size_t i) const;
  // Wait fds of the ports that have one (uring), for EventLoop::add_wait_fd.
  std::vector<int> wait_fds() const;
  // What open() decided that the node should log (fallbacks, placement).
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  HostPorts() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<Port*> raw_;
  std::vector<std::string> notes_;
  PacketPool* pool_ = nullptr;
  bool dpdk_ = false;
};

// The CPUs this process may run on, as an EAL-style list ("0-1", "0,2-3").
std::string affinity_cpu_list();

// One end of a raw two-node link (port0 of node 0 or 1 of a 2x1x1
// partition), opened and started: what the link tools (toroid-wake,
// toroid-linkbench) measure with no netstack. memif bsize 9216 when jumbo.
struct RawLinkEnd {
  std::string driver;    // memif | uring
  std::string socket;    // the link's unix socket path
  bool server = false;   // node 0, the memif server / socket listener
  std::string job;       // personality job name (for logs)
  std::string tag;       // EAL file prefix tag
  uint32_t pool_packets = 1023;
  bool jumbo = false;    // 9000-byte frames
  std::string cpu_list;  // EAL lcore CPUs ("" = this process's affinity)
};
Result<std::unique_ptr<HostPorts>> open_raw_link_end(const RawLinkEnd& e);

}  // namespace toroid
