// DpdkPort data path: rx_burst / tx_burst. No allocation, no syscalls, no
// locks of ours; one rte_eth_*_burst per kBurst packets, each inside the
// port's burst guard (burst_guard.h: a PMD's teardown waits for it).
//
// Ownership at the boundary (see dpdk_port.h and docs/drivers.md):
//   rx: an mbuf the PMD filled becomes a Packet with refcnt 1 owned by the
//       caller; its pool counts it in use.
//   tx: the PMD takes one reference per packet it accepts; what it does not
//       accept is left exactly as it was handed in.
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstring>

#include "drivers/dpdk/burst_guard.h"
#include "drivers/dpdk/dpdk_internal.h"
#include "drivers/dpdk/dpdk_port.h"

namespace toroid {

namespace {

constexpr uint16_t kChunk = static_cast<uint16_t>(tuning::kBurst);

// The mbuf fields the PMD reads, from the Packet (single segment, direct).
inline void sync_for_tx(rte_mbuf* m, const Packet* p, uint16_t port_id) {
  m->data_off = p->data_off;
  m->data_len = static_cast<uint16_t>(p->len);
  m->pkt_len = p->len;
  m->nb_segs = 1;
  m->next = nullptr;
  m->port = port_id;
  m->ol_flags = 0;  // no offloads requested; our mbufs are never indirect or external
}

}  // namespace

uint16_t DpdkPort::rx_burst(Packet** pkts, uint16_t n) {
  if (!started_) return 0;
  uint16_t got = 0;
  rte_mbuf* mb[kChunk];
  while (got < n) {
    const uint16_t want = static_cast<uint16_t>(n - got < kChunk ? n - got : kChunk);
    dpdk::burst_enter(burst_slot_);
    const uint16_t k = rte_eth_rx_burst(port_id_, 0, mb, want);
    dpdk::burst_exit(burst_slot_);
    uint32_t kept = 0;
    for (uint16_t i = 0; i < k; ++i) {
      rte_mbuf* m = mb[i];
      if (m->nb_segs != 1) {
        // Larger than one mbuf: the pool's frame_room is below the peer's
        // frame size (memif bsize mismatch). Counted, never delivered split.
        ++ctr_.rx_multiseg;
        ++stats_.rx_dropped;
        rte_pktmbuf_free(m);
        continue;
      }
      Packet* p = dpdk::packet_of(m);
      p->data_off = m->data_off;
      p->len = m->data_len;
      p->port = index_;
      p->refcnt = 1;
      p->vc = 0;
      p->user = 0;
      p->next = nullptr;
      stats_.rx_bytes += p->len;
      pkts[got++] = p;
      ++kept;
    }
    stats_.rx_packets += kept;
    pool_->note_rx(kept);
    if (k < want) break;
  }
  return got;
}

uint16_t DpdkPort::tx_burst(Packet** pkts, uint16_t n) {
  if (!started_) {
    stats_.tx_full += n;
    return 0;
  }
  enum : uint8_t { kOwn, kShared, kCopy, kSmallCopy };
  uint16_t done = 0;
  rte_mbuf* mb[kChunk];
  uint8_t how[kChunk];
  while (done < n) {
    uint16_t want = static_cast<uint16_t>(n - done < kChunk ? n - done : kChunk);
    for (uint16_t i = 0; i < want; ++i) {
      Packet* p = pkts[done + i];
      if (p->pool != pool_ && !dynamic_cast<DpdkPacketPool*>(p->pool)) {
        // Not an mbuf (e.g. a HeapPacketPool frame): copy it into one.
        Packet* c = clone_packet(*p, *pool_);
        if (!c) {
          want = i;  // out of mbufs: the caller keeps this one and the rest
          break;
        }
        mb[i] = dpdk::mbuf_of(c);
        sync_for_tx(mb[i], c, port_id_);
        how[i] = kCopy;
        continue;
      }
      if (p->refcnt > 1 && p->len <= tuning::kTxCopyMaxBytes) {
        // A small frame another owner keeps (the link, for retransmission):
        // the PMD gets a copy of its own. Sharing the mbuf would make the
        // PMD's free an atomic refcount drop, and on memif that locked
        // instruction sits between the frame's stores into the ring and the
        // ring index store: it waits for the first to reach the peer's core
        // before the second can start (tens of ns on every small message).
        if (Packet* c = clone_packet(*p, *pool_)) {
          mb[i] = dpdk::mbuf_of(c);
          sync_for_tx(mb[i], c, port_id_);
          how[i] = kSmallCopy;
          continue;
        }
      }
      rte_mbuf* m = dpdk::mbuf_of(p);
      sync_for_tx(m, p, port_id_);
      if (p->refcnt > 1) {
        // The PMD becomes one more owner of the mbuf; ours keep theirs.
        --p->refcnt;
        rte_mbuf_refcnt_update(m, 1);
        how[i] = kShared;
      } else {
        how[i] = kOwn;
      }
      mb[i] = m;
    }
    uint16_t sent = 0;
    if (want) {
      dpdk::burst_enter(burst_slot_);
      sent = rte_eth_tx_burst(port_id_, 0, mb, want);
      dpdk::burst_exit(burst_slot_);
    }
    for (uint16_t i = 0; i < sent; ++i) {
      Packet* p = pkts[done + i];
      stats_.tx_bytes += p->len;
      switch (how[i]) {
        case kOwn:  // our last reference went to the PMD
          static_cast<DpdkPacketPool*>(p->pool)->note_handed_to_pmd();
          break;
        case kShared:
          ++ctr_.tx_shared;
          break;
        case kCopy:
        case kSmallCopy:
          ++(how[i] == kCopy ? ctr_.tx_copies : ctr_.tx_small_copies);
          pool_->note_handed_to_pmd();  // the copy is the PMD's now
          p->free();                    // the reference we took from the caller
          break;
      }
    }
    // Not taken: undo, so the caller holds exactly what it handed in.
    for (uint16_t i = sent; i < want; ++i) {
      if (how[i] == kShared) {
        rte_mbuf_refcnt_update(mb[i], -1);
        ++pkts[done + i]->refcnt;
      } else if (how[i] == kCopy || how[i] == kSmallCopy) {
        dpdk::packet_of(mb[i])->free();
      }
    }
    stats_.tx_packets += sent;
    done = static_cast<uint16_t>(done + sent);
    if (sent < want || want == 0) break;
  }
  stats_.tx_full += n - done;
  return done;
}

}  // namespace toroid
