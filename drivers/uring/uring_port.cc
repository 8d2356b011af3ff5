// UringPort control path: spec parsing, sockets, ring setup and teardown,
// link state. The burst functions are in uring_port_rx_tx.cc.
#include "drivers/uring/uring_port.h"

#include <arpa/inet.h>
#include <liburing.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/clock.h"
#include "drivers/uring/uring_internal.h"

namespace toroid {

namespace {

constexpr uint64_t kConnectRetryNs = 10 * kMs;
constexpr uint64_t kCloseDrainNs = 1 * kSec;  // close(): how long to wait for cancelled requests

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kSec + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t next_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

Result<std::unique_ptr<UringPort>> UringPort::open(const UringPortConfig& cfg) {
  if (!cfg.pool) return error(Code::kInvalid, "uring port %s: no packet pool", cfg.spec.c_str());
  if (cfg.tx_slots == 0 || cfg.rx_bufs == 0 || (cfg.rx_bufs & (cfg.rx_bufs - 1)) != 0 || cfg.rx_bufs > 32768)
    return error(Code::kInvalid, "uring port %s: tx_slots must be > 0 and rx_bufs a power of two <= 32768",
                 cfg.spec.c_str());
  auto parsed = uring::parse_spec(cfg.spec);
  if (!parsed) return parsed.status();
  uring::ParsedSpec& ps = parsed.value();

  std::unique_ptr<UringPort> port(new UringPort());
  port->kind_ = ps.kind;
  port->pool_ = cfg.pool;
  port->index_ = cfg.index;
  port->sndbuf_ = cfg.sndbuf;
  port->multishot_ = cfg.multishot;
  port->tx_slots_ = cfg.tx_slots;
  port->rx_bufs_ = cfg.rx_bufs;
  port->path_ = ps.path;
  port->iface_ = ps.iface;

  const uint32_t pool_room =
      cfg.pool->buf_size() > tuning::kPacketHeadroom ? cfg.pool->buf_size() - tuning::kPacketHeadroom : 0;
  uint32_t frame = cfg.max_frame ? cfg.max_frame : std::min(pool_room, kUringMaxFrame);
  if (frame == 0 || frame > pool_room)
    return error(Code::kInvalid, "uring port %s: max_frame %u does not fit the pool's buffers (%u after headroom)",
                 cfg.spec.c_str(), frame, pool_room);

  switch (ps.kind) {
    case UringPortKind::kFd: {
      int type = 0, domain = 0;
      socklen_t len = sizeof type;
      if (getsockopt(ps.fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
        return error(Code::kInvalid, "uring port %s: fd %d is not a socket: %s", cfg.spec.c_str(), ps.fd,
                     std::strerror(errno));
      len = sizeof domain;
      if (getsockopt(ps.fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX || type != SOCK_SEQPACKET)
        return error(Code::kInvalid, "uring port %s: fd %d is not an AF_UNIX SOCK_SEQPACKET socket", cfg.spec.c_str(),
                     ps.fd);
      port->fd_ = ps.fd;  // ours from now on: close() closes it
      port->info_.name = "uring:fd=" + std::to_string(ps.fd);
      break;
    }
    case UringPortKind::kUnixServer: {
      Status st = uring::remove_stale_socket(ps.path);
      if (!st) return error(st.code(), "uring port %s: %s", cfg.spec.c_str(), st.message().c_str());
      const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      if (fd < 0) return error(Code::kIo, "uring port %s: socket: %s", cfg.spec.c_str(), std::strerror(errno));
      port->listen_fd_ = fd;
      sockaddr_un un;
      uring::fill_unix_addr(ps.path, &un);
      if (bind(fd, reinterpret_cast<sockaddr*>(&un), sizeof un) != 0)
        return error(Code::kIo, "uring port %s: bind %s: %s", cfg.spec.c_str(), ps.path.c_str(), std::strerror(errno));
      port->unlink_on_close_ = true;
      if (listen(fd, 1) != 0)
        return error(Code::kIo, "uring port %s: listen: %s", cfg.spec.c_str(), std::strerror(errno));
      port->info_.name = "uring:" + ps.path;
      break;
    }
    case UringPortKind::kUnixClient:
      port->info_.name = "uring:" + ps.path;
      break;
    case UringPortKind::kPacket: {
      port->ifindex_ = if_nametoindex(ps.iface.c_str());
      if (port->ifindex_ == 0)
        return error(Code::kNotFound, "uring port %s: no interface %s", cfg.spec.c_str(), ps.iface.c_str());
      // Protocol 0 until bind: a socket created with a protocol receives from
      // every interface until it is bound, so a neighbour's frame on another
      // NIC could land on this port in between.
      const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
      if (fd < 0)
        return error(Code::kIo, "uring port %s: AF_PACKET socket: %s (needs CAP_NET_RAW)", cfg.spec.c_str(),
                     std::strerror(errno));
      port->fd_ = fd;
      sockaddr_ll ll{};
      ll.sll_family = AF_PACKET;
      ll.sll_protocol = htons(kUringEtherType);
      ll.sll_ifindex = static_cast<int>(port->ifindex_);
      if (bind(fd, reinterpret_cast<sockaddr*>(&ll), sizeof ll) != 0)
        return error(Code::kIo, "uring port %s: bind to %s: %s", cfg.spec.c_str(), ps.iface.c_str(),
                     std::strerror(errno));
      // Our own frames are not for us; the neighbour's may carry any MAC.
      const int one = 1;
      (void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
      packet_mreq mr{};
      mr.mr_ifindex = static_cast<int>(port->ifindex_);
      mr.mr_type = PACKET_MR_PROMISC;
      (void)setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr);
      ifreq ifr{};
      std::strncpy(ifr.ifr_name, ps.iface.c_str(), IFNAMSIZ - 1);
      if (ioctl(fd, SIOCGIFMTU, &ifr) == 0) frame = std::min(frame, static_cast<uint32_t>(ifr.ifr_mtu) + 14);
      port->info_.name = "uring:" + ps.iface;
      break;
    }
  }
  port->info_.driver = "uring";
  port->info_.max_frame = frame;
  // A unix socket copies each record whole between two processes on this
  // host; AF_PACKET reaches a real or virtual wire.
  port->info_.medium_integrity = ps.kind != UringPortKind::kPacket;
  return port;
}

UringPort::~UringPort() { close(); }

Status UringPort::start(uint64_t timeout_ns) {
  if (ring_ready_) return Status::ok();
  const uint64_t deadline = mono_ns() + timeout_ns;
  char dur[32];
  if (kind_ == UringPortKind::kUnixServer) {
    if (listen_fd_ < 0) return error(Code::kInvalid, "port %s: not listening", info_.name.c_str());
    for (;;) {
      const uint64_t now = mono_ns();
      if (now >= deadline) {
        format_duration(timeout_ns, dur, sizeof dur);
        return error(Code::kTimeout, "port %s: no peer connected within %s", info_.name.c_str(), dur);
      }
      pollfd pfd{listen_fd_, POLLIN, 0};
      const int ms = static_cast<int>(std::min<uint64_t>((deadline - now + kMs - 1) / kMs, 1000));
      const int rc = poll(&pfd, 1, ms);
      if (rc < 0 && errno != EINTR)
        return error(Code::kIo, "port %s: poll: %s", info_.name.c_str(), std::strerror(errno));
      if (rc <= 0) continue;
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
        return error(Code::kIo, "port %s: accept: %s", info_.name.c_str(), std::strerror(errno));
      }
      fd_ = fd;
      break;
    }
    ::close(listen_fd_);  // one peer per link
    listen_fd_ = -1;
  } else if (kind_ == UringPortKind::kUnixClient) {
    sockaddr_un un;
    uring::fill_unix_addr(path_, &un);
    for (;;) {
      const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      if (fd < 0) return error(Code::kIo, "port %s: socket: %s", info_.name.c_str(), std::strerror(errno));
      if (connect(fd, reinterpret_cast<sockaddr*>(&un), sizeof un) == 0) {
        fd_ = fd;
        break;
      }
      const int err = errno;
      ::close(fd);
      if (err != ENOENT && err != ECONNREFUSED && err != EAGAIN && err != EINTR)
        return error(Code::kIo, "port %s: connect: %s", info_.name.c_str(), std::strerror(err));
      if (mono_ns() >= deadline) {
        format_duration(timeout_ns, dur, sizeof dur);
        return error(Code::kTimeout, "port %s: no server accepted within %s (last: %s)", info_.name.c_str(), dur,
                     std::strerror(err));
      }
      timespec ts{0, static_cast<long>(kConnectRetryNs)};
      nanosleep(&ts, nullptr);
    }
  }
  if (sndbuf_ > 0 && kind_ != UringPortKind::kPacket)
    (void)setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf_, sizeof sndbuf_);
  Status st = setup_ring();
  if (!st) return st;
  arm_recv();
  if (!submit()) return error(Code::kIo, "port %s: io_uring_submit failed arming the receive", info_.name.c_str());
  return Status::ok();
}

Status UringPort::setup_ring() {
  ring_ = new io_uring{};
  // Every request in flight can post a CQE before we look: all sends, one
  // per provided buffer, and a few that carry no buffer (EOF, ENOBUFS).
  const uint32_t cq_entries = next_pow2(2 * (tx_slots_ + rx_bufs_) + 16);
  const uint32_t sq_entries = next_pow2(tx_slots_ + 8);
  // COOP_TASKRUN + TASKRUN_FLAG: completions that need our task (a recv
  // finishing after data arrived) do not interrupt a busy-polling node with
  // an IPI; the kernel flags them in the SQ ring and the CQ peek in reap()
  // enters the kernel to run them only then. A node asleep in epoll is
  // still woken. Kernels before 5.19 get the plain ring.
  io_uring_params params{};
  params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  params.cq_entries = cq_entries;
  int ret = io_uring_queue_init_params(sq_entries, ring_, &params);
  if (ret == -EINVAL) {
    params = io_uring_params{};
    params.flags = IORING_SETUP_CQSIZE;
    params.cq_entries = cq_entries;
    ret = io_uring_queue_init_params(sq_entries, ring_, &params);
  }
  if (ret < 0) {
    delete ring_;
    ring_ = nullptr;
    return error(Code::kUnsupported,
                 "port %s: io_uring_queue_init: %s (io_uring disabled? see /proc/sys/kernel/io_uring_disabled)",
                 info_.name.c_str(), std::strerror(-ret));
  }
  ring_ready_ = true;  // from here close() tears down whatever exists

  efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (efd_ < 0) return error(Code::kIo, "port %s: eventfd: %s", info_.name.c_str(), std::strerror(errno));
  ret = io_uring_register_eventfd(ring_, efd_);
  if (ret < 0)
    return error(Code::kIo, "port %s: io_uring_register_eventfd: %s", info_.name.c_str(), std::strerror(-ret));

  // One spare byte per buffer: a frame longer than max_frame shows as such
  // instead of arriving silently truncated.
  rx_buf_size_ = (info_.max_frame + 1 + 63) & ~63u;
  rx_mem_ = static_cast<uint8_t*>(
      std::aligned_alloc(4096, (static_cast<size_t>(rx_bufs_) * rx_buf_size_ + 4095) & ~size_t{4095}));
  if (!rx_mem_) return error(Code::kIo, "port %s: no memory for %u receive buffers", info_.name.c_str(), rx_bufs_);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  br_bytes_ = (rx_bufs_ * sizeof(io_uring_buf) + page - 1) & ~(page - 1);
  void* br = mmap(nullptr, br_bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (br == MAP_FAILED) {
    br_bytes_ = 0;
    return error(Code::kIo, "port %s: mmap buffer ring: %s", info_.name.c_str(), std::strerror(errno));
  }
  br_ = static_cast<io_uring_buf_ring*>(br);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(br_);
  reg.ring_entries = rx_bufs_;
  reg.bgid = uring::kBufGroup;
  ret = io_uring_register_buf_ring(ring_, &reg, 0);
  if (ret < 0)
    return error(Code::kUnsupported, "port %s: io_uring_register_buf_ring: %s (provided buffer rings need Linux 5.19)",
                 info_.name.c_str(), std::strerror(-ret));
  io_uring_buf_ring_init(br_);
  const int mask = io_uring_buf_ring_mask(rx_bufs_);
  for (uint32_t i = 0; i < rx_bufs_; ++i)
    io_uring_buf_ring_add(br_, rx_buf(static_cast<uint16_t>(i)), rx_buf_size_, static_cast<uint16_t>(i), mask,
                          static_cast<int>(i));
  io_uring_buf_ring_advance(br_, static_cast<int>(rx_bufs_));

  rxq_cap_ = rx_bufs_ + 4;
  rxq_ = new RxEvent[rxq_cap_];
  txq_ = new Packet*[tx_slots_];
  return Status::ok();
}

void UringPort::close() {
  if (ring_ready_) {
    // Nothing submitted stays in the kernel: cancel every request on the
    // socket and collect the CQEs, freeing the packets of the sends.
    while (txq_count_ > 0) {
      txq_[txq_head_]->free();
      txq_head_ = (txq_head_ + 1) % tx_slots_;
      --txq_count_;
      --tx_owned_;
    }
    if (fd_ >= 0 && (tx_inflight_ > 0 || recv_armed_)) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring_);
      if (sqe) {
        io_uring_prep_cancel_fd(sqe, fd_, IORING_ASYNC_CANCEL_ALL);
        io_uring_sqe_set_data64(sqe, uring::kCancelTag);
        io_uring_submit(ring_);
      }
      const uint64_t deadline = mono_ns() + kCloseDrainNs;
      while ((tx_inflight_ > 0 || recv_armed_) && mono_ns() < deadline) {
        io_uring_cqe* cqe = nullptr;
        __kernel_timespec ts{0, 10 * 1000 * 1000};
        (void)io_uring_wait_cqe_timeout(ring_, &cqe, &ts);
        rxq_count_ = 0;  // received frames nobody will read
        reap();
      }
    }
    io_uring_queue_exit(ring_);
    delete ring_;
    ring_ = nullptr;
    ring_ready_ = false;
  }
  if (br_) munmap(br_, br_bytes_);
  br_ = nullptr;
  std::free(rx_mem_);
  rx_mem_ = nullptr;
  delete[] rxq_;
  rxq_ = nullptr;
  delete[] txq_;
  txq_ = nullptr;
  if (efd_ >= 0) ::close(efd_);
  efd_ = -1;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
  if (unlink_on_close_) {
    unlink(path_.c_str());
    unlink_on_close_ = false;
  }
  down_ = true;
}

LinkState UringPort::link_state() const {
  if (!ring_ready_ || down_ || fd_ < 0) return LinkState::kDown;
  if (kind_ == UringPortKind::kPacket) {
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, iface_.c_str(), IFNAMSIZ - 1);
    if (ioctl(fd_, SIOCGIFFLAGS, &ifr) != 0) return LinkState::kDown;
    return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING) ? LinkState::kUp : LinkState::kDown;
  }
  pollfd pfd{fd_, POLLRDHUP, 0};
  if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR))) return LinkState::kDown;
  return LinkState::kUp;
}

}  // namespace toroid
