// A PacketPool over an rte_mempool of mbufs: a Packet IS an mbuf.
//
// Each mbuf's private area (priv_size) holds the Packet descriptor, so
// Packet* <-> rte_mbuf* is pointer arithmetic (the descriptor sits right
// after the 128-byte rte_mbuf header, the buffer right after it) and a frame
// crosses the port boundary without a copy. Packet::buf/buf_len/pool are
// fixed when the pool is created; the rest is set on alloc and on rx.
//
// Reference counts: Packet::refcnt counts our owners (link queue, window,
// forward queue); the mbuf's own refcnt counts the PMD as one more owner
// while it holds a packet we still reference. DpdkPort::tx_burst maps one to
// the other (see dpdk_port.h). free() is rte_pktmbuf_free: the mbuf goes
// back to the mempool when the last of both kinds of owner lets go.
//
// PoolStats count our side: in_use is packets some owner of ours holds
// (allocated here or received by a port into this pool); a packet whose last
// reference went to the PMD counts as freed at that moment.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "drivers/packet.h"

struct rte_mempool;

namespace toroid {

struct DpdkPoolConfig {
  std::string name;       // mempool name (unique per process); empty: generated
  uint32_t mbufs = 8191;  // 2^q - 1 is what rte_mempool likes best
  // Bytes after the headroom: 2048 for standard frames; 9216 for 9000-byte
  // frames (memif: equal to the ports' bsize, so a slot fits one mbuf).
  uint32_t frame_room = 2048;
  uint32_t cache = 256;  // per-lcore cache (0 disables)
  // One piece of memory with the mbufs back to back (objects may cross page
  // boundaries: RTE_MEMPOOL_F_NO_IOVA_CONTIG). DPDK 22.11's AF_XDP PMD
  // registers the pool as its UMEM assuming exactly that (base of the first
  // chunk, mbufs x object size); a PCI NIC that DMAs by physical address
  // needs the default instead.
  bool packed = false;
};

class DpdkPacketPool final : public PacketPool {
 public:
  // Needs eal_init first.
  static Result<std::unique_ptr<DpdkPacketPool>> create(const DpdkPoolConfig& cfg);
  ~DpdkPacketPool() override;
  DpdkPacketPool(const DpdkPacketPool&) = delete;
  DpdkPacketPool& operator=(const DpdkPacketPool&) = delete;

  Packet* alloc() override;
  void free(Packet* p) override;
  uint32_t buf_size() const override { return buf_size_; }  // headroom + frame_room

  rte_mempool* mempool() const { return mp_; }
  uint32_t frame_room() const { return buf_size_ - headroom_; }
  // Mbufs in the mempool now (its lcore caches included).
  uint32_t available() const;
  uint32_t capacity() const { return static_cast<uint32_t>(stats_.capacity); }

  // Data-path bookkeeping for DpdkPort (same node, same thread).
  void note_rx(uint32_t n) {
    stats_.allocs += n;
    stats_.in_use += n;
    if (stats_.in_use > stats_.high_water) stats_.high_water = stats_.in_use;
  }
  void note_handed_to_pmd() {
    ++stats_.frees;
    --stats_.in_use;
  }

 private:
  DpdkPacketPool() = default;
  rte_mempool* mp_ = nullptr;
  uint32_t buf_size_ = 0;
  uint16_t headroom_ = 0;
};

}  // namespace toroid
