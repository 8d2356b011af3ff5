// Packet buffers. A Packet is a descriptor in front of one contiguous buffer
// with headroom, in the spirit of rte_mbuf: headers are prepended in place,
// never copied. Every Packet comes from a PacketPool and goes back to the
// pool it came from (p->pool), whoever frees it; see docs/buffers.md for who
// owns a packet at each hop.
#pragma once
#include <cstdint>
#include <cstring>

#include "base/tuning.h"

namespace toroid {

class PacketPool;

struct Packet {
  uint8_t* buf = nullptr;     // start of the buffer
  uint32_t buf_len = 0;       // bytes in the buffer
  uint32_t len = 0;           // bytes of data
  uint16_t data_off = 0;      // data begins at buf + data_off
  uint16_t port = 0;          // rx port index, set by the driver
  uint16_t refcnt = 1;        // owners; the last free() returns it to its pool
  uint16_t vc = 0;            // virtual channel it arrived on / travels on
  uint32_t user = 0;          // scratch for the current owner
  PacketPool* pool = nullptr;
  Packet* next = nullptr;     // link for the current owner's queues

  uint8_t* data() { return buf + data_off; }
  const uint8_t* data() const { return buf + data_off; }
  uint32_t headroom() const { return data_off; }
  uint32_t tailroom() const { return buf_len - data_off - len; }

  // Grow the data at the front; nullptr if the headroom is too small.
  uint8_t* prepend(uint32_t n) {
    if (n > data_off) return nullptr;
    data_off = static_cast<uint16_t>(data_off - n);
    len += n;
    return data();
  }
  // Grow the data at the end; returns a pointer to the new bytes or nullptr.
  uint8_t* append(uint32_t n) {
    if (n > tailroom()) return nullptr;
    uint8_t* p = data() + len;
    len += n;
    return p;
  }
  // Drop n bytes from the front (a header that has been consumed).
  bool adj(uint32_t n) {
    if (n > len) return false;
    data_off = static_cast<uint16_t>(data_off + n);
    len -= n;
    return true;
  }
  void trim(uint32_t n) { len = n < len ? len - n : 0; }
  void reset() {
    data_off = static_cast<uint16_t>(tuning::kPacketHeadroom < buf_len ? tuning::kPacketHeadroom : 0);
    len = 0;
    user = 0;
    refcnt = 1;
    vc = 0;
    next = nullptr;
  }
  // One more owner (e.g. a link that keeps a frame for retransmission while
  // the port sends it). Whoever holds a shared packet must not modify it.
  void ref() { ++refcnt; }
  bool shared() const { return refcnt > 1; }
  inline void free();
};

struct PoolStats {
  uint64_t allocs = 0;
  uint64_t frees = 0;
  uint64_t exhausted = 0;   // alloc() returned nullptr
  uint64_t in_use = 0;
  uint64_t high_water = 0;  // most packets in use at once
  uint64_t capacity = 0;    // packets the pool has created so far
};

class PacketPool {
 public:
  virtual ~PacketPool() = default;
  // A reset packet (headroom reserved, len 0), or nullptr when exhausted.
  virtual Packet* alloc() = 0;
  virtual void free(Packet* p) = 0;
  virtual uint32_t buf_size() const = 0;
  const PoolStats& stats() const { return stats_; }

 protected:
  PoolStats stats_;
};

inline void Packet::free() {
  if (--refcnt == 0) pool->free(this);
}

// Heap-backed pool that grows lazily in slabs of kPoolSlabPackets (fewer
// when the buffers are large: slab_packets()), up to max_packets, and never gives memory back until destroyed. The slab
// allocation is the only heap use; alloc/free are a free-list pop/push.
class HeapPacketPool final : public PacketPool {
 public:
  HeapPacketPool(uint32_t buf_size, uint32_t max_packets);
  ~HeapPacketPool() override;
  HeapPacketPool(const HeapPacketPool&) = delete;
  HeapPacketPool& operator=(const HeapPacketPool&) = delete;

  Packet* alloc() override;
  void free(Packet* p) override;
  uint32_t buf_size() const override { return buf_size_; }
  // Packets per slab: kPoolSlabPackets, or as many as fit 64 KiB of buffers.
  uint32_t slab_packets() const;
  // Create up to n packets now (at most max_packets) instead of on demand.
  void reserve(uint32_t n);

 private:
  bool grow();
  uint32_t buf_size_;
  uint32_t max_packets_;
  Packet* free_list_ = nullptr;
  struct Slab;
  Slab* slabs_ = nullptr;
};

// Copy a packet (data only) into a fresh packet from `pool`; nullptr if empty.
Packet* clone_packet(const Packet& p, PacketPool& pool);

}  // namespace toroid
