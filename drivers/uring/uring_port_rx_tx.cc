// UringPort data path: rx_burst / tx_burst. Never waits: CQEs are peeked,
// and io_uring_enter runs only to start a send chain or re-arm the receive.
//
// Ownership (see uring_port.h and docs/drivers.md):
//   tx: tx_burst takes one reference per packet it accepts; the packet sits
//       in txq_ until its chain is submitted, then in the kernel until its
//       send CQE, when that reference is freed.
//   rx: a recv CQE holds its provided buffer until rx_burst copies the frame
//       into a fresh Packet (refcnt 1, the caller's) and returns the buffer.
#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "drivers/uring/uring_internal.h"
#include "drivers/uring/uring_port.h"

namespace toroid {

namespace {

bool peer_gone(int err) { return err == EPIPE || err == ECONNRESET || err == ENOTCONN || err == ESHUTDOWN; }

}  // namespace

bool UringPort::submit() {
  ++ctr_.submits;
  const int ret = io_uring_submit(ring_);
  if (ret >= 0) {
    sqes_pending_ = false;
    return true;
  }
  // The SQEs stay in the submission ring: the next call submits them.
  sqes_pending_ = true;
  return ret == -EAGAIN || ret == -EBUSY || ret == -EINTR;
}

void UringPort::arm_recv() {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_);
  if (!sqe) return;  // SQ full: the next rx_burst tries again
  if (multishot_)
    io_uring_prep_recv_multishot(sqe, fd_, nullptr, 0, 0);
  else
    io_uring_prep_recv(sqe, fd_, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = uring::kBufGroup;
  io_uring_sqe_set_data64(sqe, uring::kRecvTag);
  recv_armed_ = true;
  ++ctr_.recv_arms;
}

void UringPort::on_send_done(Packet* p, int32_t res) {
  --tx_inflight_;
  --tx_owned_;
  if (res < 0) {
    ++ctr_.tx_errors;  // -ECANCELED: an earlier send of its chain failed
    if (kind_ != UringPortKind::kPacket && peer_gone(-res)) down_ = true;
  } else if (static_cast<uint32_t>(res) != p->len) {
    ++ctr_.tx_errors;
  }
  p->free();  // the reference tx_burst took
}

void UringPort::reap() {
  io_uring_cqe* cqes[tuning::kBurst];
  for (;;) {
    const unsigned n = io_uring_peek_batch_cqe(ring_, cqes, tuning::kBurst);
    unsigned used = 0;
    for (; used < n; ++used) {
      const io_uring_cqe* c = cqes[used];
      const uint64_t ud = c->user_data;
      if (ud == uring::kRecvTag) {
        if (rxq_count_ == rxq_cap_) break;  // deliver some first; the CQE waits in the ring
        if (!(c->flags & IORING_CQE_F_MORE)) recv_armed_ = false;
        rxq_[(rxq_head_ + rxq_count_) % rxq_cap_] = RxEvent{c->res, c->flags};
        ++rxq_count_;
      } else if (ud != uring::kCancelTag) {
        on_send_done(reinterpret_cast<Packet*>(ud), c->res);
      }
    }
    if (used) {
      io_uring_cq_advance(ring_, used);
      signalled_ = true;
    }
    if (used < tuning::kBurst) return;
  }
}

void UringPort::submit_sends() {
  // One linked chain at a time: a send that has to wait for socket space
  // holds back the rest of its chain, and the next chain starts only when
  // this one is done, so frames leave in the order tx_burst took them.
  if (tx_inflight_ > 0 || txq_count_ == 0) return;
  uint32_t m = io_uring_sq_space_left(ring_);
  if (m > txq_count_) m = txq_count_;
  for (uint32_t i = 0; i < m; ++i) {
    Packet* p = txq_[txq_head_];
    txq_head_ = txq_head_ + 1 == tx_slots_ ? 0 : txq_head_ + 1;
    io_uring_sqe* sqe = io_uring_get_sqe(ring_);
    io_uring_prep_send(sqe, fd_, p->data(), p->len, MSG_NOSIGNAL);
    io_uring_sqe_set_data(sqe, p);
    if (i + 1 < m) sqe->flags |= IOSQE_IO_LINK;
  }
  txq_count_ -= m;
  tx_inflight_ += m;
  if (m) submit();
}

uint16_t UringPort::tx_burst(Packet** pkts, uint16_t n) {
  if (!ring_ready_ || down_) {
    stats_.tx_full += n;
    return 0;
  }
  if (sqes_pending_) submit();
  reap();
  const uint32_t free_slots = tx_slots_ - tx_owned_;
  const uint16_t k = static_cast<uint16_t>(n < free_slots ? n : free_slots);
  uint32_t tail = txq_head_ + txq_count_;
  for (uint16_t i = 0; i < k; ++i) {
    Packet* p = pkts[i];
    if (p->len == 0) {
      // A zero-length record reads as EOF on SOCK_SEQPACKET: never send one.
      ++ctr_.tx_zero_len;
      p->free();
      continue;
    }
    if (tail >= tx_slots_) tail -= tx_slots_;
    txq_[tail++] = p;
    ++txq_count_;
    ++tx_owned_;
    ++stats_.tx_packets;
    stats_.tx_bytes += p->len;
  }
  stats_.tx_full += n - k;
  submit_sends();
  reap();  // sends that completed inline free their slots now
  submit_sends();
  return k;
}

void UringPort::return_buffer(uint16_t bid) {
  io_uring_buf_ring_add(br_, rx_buf(bid), rx_buf_size_, bid, io_uring_buf_ring_mask(rx_bufs_),
                        static_cast<int>(buffers_returned_));
  ++buffers_returned_;
}

void UringPort::drain_eventfd() {
  uint64_t v;
  (void)!read(efd_, &v, sizeof v);  // EAGAIN when nothing was signalled
  ++ctr_.eventfd_drains;
  signalled_ = false;
  idle_polls_ = 0;
}

uint16_t UringPort::rx_burst(Packet** pkts, uint16_t n) {
  if (!ring_ready_) return 0;
  if (sqes_pending_) submit();
  reap();
  uint16_t got = 0;
  for (int pass = 0; pass < 2; ++pass) {
    while (got < n && rxq_count_ > 0) {
      const RxEvent e = rxq_[rxq_head_];
      const bool has_buf = e.flags & IORING_CQE_F_BUFFER;
      const uint16_t bid = static_cast<uint16_t>(e.flags >> IORING_CQE_BUFFER_SHIFT);
      if (e.res > 0) {
        const uint32_t len = static_cast<uint32_t>(e.res);
        if (len > info_.max_frame) {
          ++ctr_.rx_oversize;
          ++stats_.rx_dropped;
        } else {
          Packet* p = pool_->alloc();
          if (!p) {
            ++ctr_.rx_pool_empty;  // keep the frame (and its buffer) for the next call
            break;
          }
          std::memcpy(p->data(), rx_buf(bid), len);
          p->len = len;
          p->port = index_;
          pkts[got++] = p;
          ++stats_.rx_packets;
          stats_.rx_bytes += len;
        }
      } else if (e.res == 0) {
        if (kind_ != UringPortKind::kPacket) down_ = true;  // EOF: the peer closed its end
      } else if (e.res == -ENOBUFS) {
        ++ctr_.rx_nobuf_kernel;  // every buffer was full: multishot stopped, re-armed below
      } else if (e.res == -EINVAL && multishot_) {
        multishot_ = false;  // a kernel without multishot recv: re-arm single recvs
      } else if (e.res != -ECANCELED && e.res != -EINTR && e.res != -EAGAIN) {
        ++ctr_.rx_errors;
        if (kind_ != UringPortKind::kPacket) down_ = true;
      }
      if (has_buf) return_buffer(bid);
      rxq_head_ = rxq_head_ + 1 == rxq_cap_ ? 0 : rxq_head_ + 1;
      --rxq_count_;
    }
    if (buffers_returned_) {
      io_uring_buf_ring_advance(br_, static_cast<int>(buffers_returned_));
      buffers_returned_ = 0;
    }
    if (!recv_armed_ && !down_ && rxq_count_ == 0) {
      arm_recv();
      submit();
    }
    if (tx_inflight_ == 0 && txq_count_ > 0) submit_sends();
    if (got > 0) {
      idle_polls_ = 0;
      break;
    }
    if (pass == 1) break;
    // Nothing to deliver: clear the eventfd so the idle loop can sleep on
    // it, then look once more for a CQE posted before the drain.
    if (!signalled_ && ++idle_polls_ < uring::kIdleDrainPolls) break;
    drain_eventfd();
    reap();
  }
  return got;
}

}  // namespace toroid
