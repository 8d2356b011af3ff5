// A Port over a kernel socket driven by io_uring: the host rig's driver when
// DPDK is not wanted (--driver uring), and AF_PACKET on a real or virtual
// interface (the qemu guest's NICs without DPDK).
//
//   uring:fd=N                           an inherited AF_UNIX SOCK_SEQPACKET end (socketpair)
//   uring:path=/x.sock,role=server       bind + listen on /x.sock, accept one peer
//   uring:path=/x.sock,role=client       connect to /x.sock, retrying until start()'s timeout
//   uring:iface=eth0                     AF_PACKET on eth0, EtherType 0x88B5 only
//
// One io_uring per port, its CQ signalling an eventfd (wait_fd) so the
// node's idle loop can sleep until a frame or a send completion arrives.
//
// rx: one multishot recv (IORING_RECV_MULTISHOT) over a provided-buffer ring
// of rx_bufs buffers registered with the kernel (io_uring_register_buf_ring);
// each frame is copied from its ring buffer into a Packet from the node's
// pool and the buffer goes straight back to the ring. Kernels without
// multishot recv (< 6.0) get single recvs re-armed after each frame.
// Registering the pool's own memory instead is impractical: HeapPacketPool
// grows lazily in slabs, and a provided buffer must be returned to the
// kernel before the Packet built from it could be freed.
//
// tx: a send SQE straight from each Packet's data (the kernel copies into
// its skb; AF_UNIX has no zero-copy send). The port owns a packet from
// tx_burst until its send CQE, then frees the one reference it took; it
// owns at most tx_slots packets, and tx_burst takes only as many as there
// are free slots. Sends go out as one IOSQE_IO_LINK chain at a time, so a
// send that must wait for socket space holds back the ones after it: frames
// leave in order even when the peer is slow.
//
// rx_burst/tx_burst never wait: they peek at CQEs; a submit (io_uring_enter)
// happens only when there is something to send or a recv to re-arm.
// Peer closed (EOF, EPIPE, ECONNRESET, POLLHUP) -> link_state() kDown, and
// tx_burst takes nothing more.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "drivers/port.h"

struct io_uring;
struct io_uring_buf_ring;

namespace toroid {

constexpr uint32_t kUringTxSlots = 64;  // packets a port owns until their send CQE
constexpr uint32_t kUringRxBufs = 64;   // provided receive buffers per port
constexpr uint32_t kUringMaxFrame = 9000;
constexpr uint16_t kUringEtherType = 0x88B5;  // AF_PACKET filter; = netstack/wire/eth.h kEtherType
static_assert((kUringRxBufs & (kUringRxBufs - 1)) == 0, "a buffer ring has a power-of-two size");
static_assert(kUringTxSlots >= 32, "at least one full burst (kBurst)");

enum class UringPortKind : uint8_t { kFd, kUnixServer, kUnixClient, kPacket };

struct UringPortConfig {
  std::string spec;
  uint16_t index = 0;          // the node's port number, set in Packet::port on rx
  PacketPool* pool = nullptr;  // rx frames are copied into its packets; tx_pool()
  // 0: what the pool's buffers hold after the headroom, capped at
  // kUringMaxFrame (AF_PACKET: and at the interface MTU + 14).
  uint32_t max_frame = 0;
  uint32_t tx_slots = kUringTxSlots;
  uint32_t rx_bufs = kUringRxBufs;  // power of two
  int sndbuf = 0;                   // SO_SNDBUF if > 0 (unix sockets); else the kernel default
  bool multishot = true;            // false forces re-armed single recvs (tests the fallback)
};

struct UringPortCounters {
  uint64_t tx_errors = 0;        // send CQE with an error (EPIPE...) or a short send
  uint64_t tx_zero_len = 0;      // zero-length packets (dropped: EOF on SEQPACKET)
  uint64_t rx_oversize = 0;      // frames longer than max_frame (dropped; in rx_dropped)
  uint64_t rx_errors = 0;        // recv CQE errors other than ENOBUFS
  uint64_t rx_nobuf_kernel = 0;  // the buffer ring ran dry (multishot stopped, re-armed)
  uint64_t rx_pool_empty = 0;    // rx_burst stopped early: the pool had no packet
  uint64_t recv_arms = 0;        // recv SQEs submitted (1 with multishot, unless re-armed)
  uint64_t submits = 0;          // io_uring_enter calls made by the data path
  uint64_t eventfd_drains = 0;
};

class UringPort final : public Port {
 public:
  // Parses the spec and creates the socket: fd adopts it, server binds and
  // listens (a stale socket file is removed), client and iface only check.
  static Result<std::unique_ptr<UringPort>> open(const UringPortConfig& cfg);
  ~UringPort() override;
  UringPort(const UringPort&) = delete;
  UringPort& operator=(const UringPort&) = delete;

  // Completes the connection (server: accept one peer; client: connect,
  // retrying while the server is not there yet) within timeout_ns, then sets
  // up the ring, the buffer ring and the eventfd and arms the receive.
  Status start(uint64_t timeout_ns);
  // Cancels what is in flight (freeing the packets), closes the socket and
  // the ring; a server unlinks its socket path. Idempotent; the destructor calls it.
  void close();

  uint16_t rx_burst(Packet** pkts, uint16_t n) override;
  uint16_t tx_burst(Packet** pkts, uint16_t n) override;
  const PortInfo& info() const override { return info_; }
  // kDown before start, after the peer closed or an error; also asks the
  // socket (poll POLLHUP/POLLRDHUP, AF_PACKET: IFF_RUNNING) so a dead peer
  // shows even before a burst call has seen it. Control path (a syscall).
  LinkState link_state() const override;
  PacketPool& tx_pool() override { return *pool_; }
  // An eventfd registered with the ring: readable after a CQE was posted.
  // rx_burst drains it when it has nothing more to deliver.
  int wait_fd() const override { return efd_; }

  const UringPortCounters& counters() const { return ctr_; }
  UringPortKind kind() const { return kind_; }
  bool multishot() const { return multishot_; }
  uint32_t tx_owned() const { return tx_owned_; }
  int socket_fd() const { return fd_; }

 private:
  struct RxEvent {
    int32_t res;
    uint32_t flags;
  };
  UringPort() = default;
  Status setup_ring();
  void reap();          // consume every CQE now in the ring
  void submit_sends();  // start the next linked chain if none is in flight
  void arm_recv();
  bool submit();  // io_uring_submit; false on a hard error
  void drain_eventfd();
  void on_send_done(Packet* p, int32_t res);
  void return_buffer(uint16_t bid);
  uint8_t* rx_buf(uint16_t bid) const { return rx_mem_ + static_cast<size_t>(bid) * rx_buf_size_; }

  UringPortKind kind_ = UringPortKind::kFd;
  std::string path_;              // unix socket path (server/client)
  bool unlink_on_close_ = false;  // we bound path_ (server)
  std::string iface_;
  PacketPool* pool_ = nullptr;
  PortInfo info_;
  UringPortCounters ctr_;
  uint16_t index_ = 0;
  int fd_ = -1;  // the connected socket / the packet socket
  int listen_fd_ = -1;
  int efd_ = -1;
  int sndbuf_ = 0;
  uint32_t ifindex_ = 0;

  io_uring* ring_ = nullptr;  // liburing stays out of this header
  bool ring_ready_ = false;
  bool down_ = false;
  bool multishot_ = true;
  bool recv_armed_ = false;
  bool signalled_ = false;   // CQEs reaped since the eventfd was last drained
  uint32_t idle_polls_ = 0;  // empty rx_bursts since the last drain

  // rx: provided buffers, and the recv CQEs reaped but not yet delivered
  // (each holds its buffer until rx_burst copies it out).
  io_uring_buf_ring* br_ = nullptr;
  size_t br_bytes_ = 0;
  uint8_t* rx_mem_ = nullptr;
  uint32_t rx_bufs_ = 0;
  uint32_t rx_buf_size_ = 0;
  uint32_t buffers_returned_ = 0;  // added to the ring since the last advance
  RxEvent* rxq_ = nullptr;         // FIFO of rxq_cap_ entries
  uint32_t rxq_cap_ = 0;
  uint32_t rxq_head_ = 0;
  uint32_t rxq_count_ = 0;

  // tx: packets taken but not yet submitted (FIFO), and the chain in flight.
  Packet** txq_ = nullptr;  // ring of tx_slots_ entries
  uint32_t tx_slots_ = 0;
  uint32_t txq_head_ = 0;
  uint32_t txq_count_ = 0;     // taken, not yet submitted
  uint32_t tx_inflight_ = 0;   // submitted, CQE not yet seen
  uint32_t tx_owned_ = 0;      // txq_count_ + tx_inflight_
  bool sqes_pending_ = false;  // prepared SQEs a failed submit left behind
};

}  // namespace toroid
