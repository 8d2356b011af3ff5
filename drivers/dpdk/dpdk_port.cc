// DpdkPort control path: open, start, link state, stop/close, stats merge.
// The burst functions are in dpdk_port_rx_tx.cc.
#include "drivers/dpdk/dpdk_port.h"

#include <net/if.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "base/clock.h"
#include "drivers/dpdk/burst_guard.h"
#include "drivers/dpdk/dpdk_internal.h"
#include "drivers/dpdk/eal.h"

namespace toroid {

namespace {

constexpr uint32_t kEthHeader = 14;           // what max_frame adds to an MTU
constexpr uint64_t kStartRetryNs = 20 * kMs;  // memif client: between connect attempts

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kSec + static_cast<uint64_t>(ts.tv_nsec);
}

void sleep_ns(uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / kSec), static_cast<long>(ns % kSec)};
  nanosleep(&ts, nullptr);
}

bool is_socket_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

uint32_t iface_mtu(const std::string& iface) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, iface.c_str(), IFNAMSIZ - 1);
  const int rc = ioctl(fd, SIOCGIFMTU, &ifr);
  ::close(fd);
  return rc == 0 ? static_cast<uint32_t>(ifr.ifr_mtu) : 0;
}

std::string port_name(const DpdkPortSpec& s) {
  switch (s.kind) {
    case DpdkPortKind::kMemif:
      return "memif:" + s.socket + "#" + std::to_string(s.id);
    case DpdkPortKind::kAfPacket:
      return "af_packet:" + s.iface;
    case DpdkPortKind::kAfXdp:
      return "af_xdp:" + s.iface + "#" + std::to_string(s.queue);
    case DpdkPortKind::kPci:
      return "pci:" + s.pci_addr;
  }
  return s.text;
}

}  // namespace

Result<std::unique_ptr<DpdkPort>> DpdkPort::open(const DpdkPortConfig& cfg) {
  if (!eal_ready()) return error(Code::kInvalid, "DpdkPort %s: EAL is not initialised", cfg.spec.c_str());
  if (!cfg.pool) return error(Code::kInvalid, "DpdkPort %s: no packet pool", cfg.spec.c_str());
  auto parsed = parse_dpdk_port_spec(cfg.spec);
  if (!parsed) return parsed.status();

  std::unique_ptr<DpdkPort> port(new DpdkPort());
  port->spec_ = std::move(parsed.value());
  port->pool_ = cfg.pool;
  port->index_ = cfg.index;
  port->burst_slot_ = dpdk::burst_slot_acquire();
  if (port->burst_slot_ < 0)
    return error(Code::kBusy, "port %s: %d DPDK ports are open in this process already", cfg.spec.c_str(),
                 dpdk::kBurstSlots);
  const DpdkPortSpec& s = port->spec_;

  if (dpdk::device_parked(s.text))
    return error(Code::kBusy,
                 "port %s: this memif server was closed earlier in this process and cannot be reopened "
                 "(DPDK 22.11 memif keeps its listener until exit; use another socket path)",
                 cfg.spec.c_str());
  bool probed = false;
  port->dev_name_ = dpdk::device_name_for(s, &probed);
  if (port->dev_name_.empty())
    return error(Code::kInvalid, "port %s: too many DPDK devices in this process, or the spec is too long",
                 cfg.spec.c_str());
  const char* dev = port->dev_name_.c_str();
  if (!probed) {
    Status st;
    if (s.kind == DpdkPortKind::kMemif && s.role == MemifRole::kServer) st = dpdk::prepare_server_socket(s.socket);
    int ret = 0;
    if (st) {
      if (s.kind == DpdkPortKind::kPci) {
        ret = rte_dev_probe(s.pci_addr.c_str());
        if (ret < 0) st = error(Code::kIo, "rte_dev_probe(%s): %s", dev, rte_strerror(-ret));
      } else {
        // EAL's generic hot-plug (librte_bus_vdev is a plugin, not linked).
        ret = rte_eal_hotplug_add("vdev", dev, s.devargs().c_str());
        if (ret < 0) st = error(Code::kIo, "hot-plug vdev %s,%s: %s", dev, s.devargs().c_str(), rte_strerror(-ret));
      }
    }
    if (!st) {
      dpdk::forget_device(s.text);
      return st;
    }
  }
  // From here the device exists: close() undoes everything on failure.
  port->open_ = true;
  dpdk::register_port(port.get());

  if (rte_eth_dev_get_port_by_name(dev, &port->port_id_) != 0)
    return error(Code::kNotFound, "port %s: no ethdev named %s after probe", cfg.spec.c_str(), dev);
  const uint16_t pid = port->port_id_;

  rte_eth_dev_info di;
  int ret = rte_eth_dev_info_get(pid, &di);
  if (ret != 0) return error(Code::kIo, "port %s: rte_eth_dev_info_get: %s", dev, rte_strerror(-ret));

  // The largest frame: what the device carries, capped by one mbuf.
  rte_eth_conf conf{};
  uint32_t frame = kDpdkStdFrame;
  const uint32_t room = std::min(cfg.pool->frame_room(), kDpdkMaxFrame);
  switch (s.kind) {
    case DpdkPortKind::kMemif:
      // memif reports 1518 but carries whatever its slots (bsize) hold when
      // both sides use the same bsize: 9000 with bsize=9216.
      frame = s.memif_bsize() > 2048 ? std::min(s.memif_bsize(), kDpdkMaxFrame) : kDpdkStdFrame;
      break;
    case DpdkPortKind::kAfPacket:
    case DpdkPortKind::kAfXdp: {
      // The interface's MTU is what the kernel lets through; a deployment's
      // topology may name a smaller one (both cable ends agree on it), never
      // a larger one.
      const uint32_t mtu = iface_mtu(s.iface);
      if (cfg.mtu && mtu && mtu < cfg.mtu)
        return error(Code::kInvalid, "port %s: the topology gives MTU %u but %s has MTU %u (ip link set %s mtu %u)",
                     cfg.spec.c_str(), cfg.mtu, s.iface.c_str(), mtu, s.iface.c_str(), cfg.mtu);
      frame = std::min<uint32_t>(di.max_rx_pktlen, mtu ? mtu + kEthHeader : kDpdkStdFrame);
      break;
    }
    case DpdkPortKind::kPci: {
      uint32_t mtu = std::min<uint32_t>(room - kEthHeader, di.max_mtu);
      if (cfg.mtu && cfg.mtu > mtu)
        return error(Code::kInvalid, "port %s: the topology gives MTU %u but the device carries at most %u here",
                     cfg.spec.c_str(), cfg.mtu, mtu);
      if (cfg.mtu) mtu = cfg.mtu;
      conf.rxmode.mtu = mtu;
      frame = mtu + kEthHeader;
      break;
    }
  }
  frame = std::min(frame, room);
  // Both ends of a cable take the topology's MTU: a port that cannot carry
  // it would receive frames it has to drop.
  if (cfg.mtu && frame < cfg.mtu + kEthHeader)
    return error(Code::kInvalid,
                 "port %s: the topology gives MTU %u, but this port carries at most %u-byte frames (MTU %u) here",
                 cfg.spec.c_str(), cfg.mtu, frame, frame - kEthHeader);
  if (cfg.mtu) frame = cfg.mtu + kEthHeader;

  ret = rte_eth_dev_configure(pid, 1, 1, &conf);
  if (ret != 0) return error(Code::kIo, "port %s: rte_eth_dev_configure: %s", dev, rte_strerror(-ret));
  uint16_t nrx = cfg.rx_desc, ntx = cfg.tx_desc;
  ret = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nrx, &ntx);
  if (ret != 0) return error(Code::kIo, "port %s: rte_eth_dev_adjust_nb_rx_tx_desc: %s", dev, rte_strerror(-ret));
  const int sock = rte_eth_dev_socket_id(pid);
  const unsigned socket_id = sock < 0 ? 0u : static_cast<unsigned>(sock);
  ret = rte_eth_rx_queue_setup(pid, 0, nrx, socket_id, nullptr, cfg.pool->mempool());
  if (ret != 0) return error(Code::kIo, "port %s: rte_eth_rx_queue_setup: %s", dev, rte_strerror(-ret));
  ret = rte_eth_tx_queue_setup(pid, 0, ntx, socket_id, nullptr);
  if (ret != 0) return error(Code::kIo, "port %s: rte_eth_tx_queue_setup: %s", dev, rte_strerror(-ret));
  // Frames carry the neighbour's MAC or broadcast; a NIC must not filter them.
  (void)rte_eth_promiscuous_enable(pid);

  port->info_.name = port_name(s);
  port->info_.driver = s.driver_name();
  port->info_.max_frame = frame;
  // memif is shared memory between processes on this host; af_packet and
  // PCI NICs (virtio in a QEMU guest included) reach a wire.
  port->info_.medium_integrity = s.kind == DpdkPortKind::kMemif;
  return port;
}

DpdkPort::~DpdkPort() {
  close();
  dpdk::burst_slot_release(burst_slot_);
}

Status DpdkPort::start(uint64_t timeout_ns) {
  if (!open_) return error(Code::kInvalid, "port %s: not open", info_.name.c_str());
  if (started_) return Status::ok();
  const bool client = spec_.kind == DpdkPortKind::kMemif && spec_.role == MemifRole::kClient;
  const uint64_t deadline = mono_ns() + timeout_ns;
  for (;;) {
    // A memif client connects in dev_start; wait for the server's socket
    // quietly rather than letting the PMD log every refused attempt.
    if (!client || is_socket_file(spec_.socket)) {
      const int ret = rte_eth_dev_start(port_id_);
      if (ret == 0) break;
      if (!client) return error(Code::kIo, "port %s: rte_eth_dev_start: %s", info_.name.c_str(), rte_strerror(-ret));
    }
    if (mono_ns() >= deadline) {
      char d[32];
      format_duration(timeout_ns, d, sizeof d);
      return error(Code::kTimeout, "port %s: no memif server accepted on %s within %s", info_.name.c_str(),
                   spec_.socket.c_str(), d);
    }
    sleep_ns(kStartRetryNs);
  }
  started_ = true;
  return Status::ok();
}

Status DpdkPort::wait_link_up(uint64_t timeout_ns) const {
  const uint64_t deadline = mono_ns() + timeout_ns;
  while (link_state() != LinkState::kUp) {
    if (mono_ns() >= deadline) {
      char d[32];
      format_duration(timeout_ns, d, sizeof d);
      return error(Code::kTimeout, "port %s: link not up within %s", info_.name.c_str(), d);
    }
    sleep_ns(kMs);
  }
  return Status::ok();
}

LinkState DpdkPort::link_state() const {
  if (!open_ || !started_) return LinkState::kDown;
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port_id_, &link) != 0) return LinkState::kDown;
  return link.link_status == RTE_ETH_LINK_UP ? LinkState::kUp : LinkState::kDown;
}

bool DpdkPort::reconnect() {
  if (!open_ || spec_.kind != DpdkPortKind::kMemif || spec_.role != MemifRole::kClient || !eal_ready()) return false;
  if (link_state() == LinkState::kUp || !is_socket_file(spec_.socket)) return false;
  stop();
  if (rte_eth_dev_start(port_id_) == 0) started_ = true;
  return true;
}

void DpdkPort::stop() {
  if (!open_ || !started_ || !eal_ready()) return;
  dpdk::run_on_intr_thread([](void* a) { (void)rte_eth_dev_stop(*static_cast<uint16_t*>(a)); }, &port_id_);
  started_ = false;
}

void DpdkPort::close() {
  if (!open_) return;
  if (eal_ready()) {
    stop();
    if (spec_.kind == DpdkPortKind::kMemif && spec_.role == MemifRole::kServer) {
      // Parked, not removed (see dpdk::park_device): the device stays
      // probed and stopped, its socket file goes now.
      if (is_socket_file(spec_.socket)) unlink(spec_.socket.c_str());
      dpdk::park_device(spec_.text);
    } else {
      if (spec_.kind == DpdkPortKind::kPci) {
        (void)rte_eth_dev_close(port_id_);
        (void)rte_eal_hotplug_remove("pci", spec_.pci_addr.c_str());
      } else {
        // The vdev's remove closes the ethdev. On the interrupt thread, like
        // stop: a memif client's close touches its control channel.
        dpdk::run_on_intr_thread(
            [](void* a) { (void)rte_eal_hotplug_remove("vdev", static_cast<std::string*>(a)->c_str()); }, &dev_name_);
      }
      dpdk::forget_device(spec_.text);
    }
  }
  dpdk::unregister_port(this);
  open_ = false;
  started_ = false;
}

void DpdkPort::refresh_stats() {
  if (!open_) return;
  rte_eth_stats st{};
  if (rte_eth_stats_get(port_id_, &st) != 0) return;
  ctr_.hw_imissed = st.imissed;
  ctr_.hw_ierrors = st.ierrors;
  ctr_.hw_oerrors = st.oerrors;
  ctr_.hw_rx_nombuf = st.rx_nombuf;
  const uint64_t dropped = st.imissed + st.ierrors + st.rx_nombuf;
  if (dropped > hw_dropped_seen_) {
    stats_.rx_dropped += dropped - hw_dropped_seen_;
    hw_dropped_seen_ = dropped;
  }
}

}  // namespace toroid
