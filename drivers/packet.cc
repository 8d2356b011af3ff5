#include "drivers/packet.h"

#include <cassert>
#include <cstdlib>
#include <new>

namespace toroid {

namespace {
constexpr size_t kAlign = 64;  // cache line: descriptors and buffers never share one
constexpr size_t round_up(size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }
// A slab's buffers stay under this many bytes (fewer packets per slab for
// large buffers, e.g. the sim's jumbo frames), below glibc's mmap threshold
// (128 KiB): a slab is then heap memory, not a mapping of its own, so tens of
// thousands of pools neither cost a system call each nor run into the
// process's limit on mappings.
constexpr size_t kSlabBufferBytes = 64 * 1024;
}  // namespace

uint32_t HeapPacketPool::slab_packets() const {
  const size_t fit = kSlabBufferBytes / round_up(buf_size_ ? buf_size_ : 1);
  return static_cast<uint32_t>(fit < 1 ? 1 : fit < tuning::kPoolSlabPackets ? fit : tuning::kPoolSlabPackets);
}

// One allocation per slab: this header, then `count` descriptors, then
// `count` buffers of buf_size bytes each (cache-line strided). Slabs are
// chained so the destructor can release them; they are never freed earlier.
struct HeapPacketPool::Slab {
  Slab* next;
  uint32_t count;
};

HeapPacketPool::HeapPacketPool(uint32_t buf_size, uint32_t max_packets)
    : buf_size_(buf_size), max_packets_(max_packets) {}

HeapPacketPool::~HeapPacketPool() {
  // Packets still out (stats_.in_use > 0) dangle from here on: pools must
  // outlive every owner of their packets (queues, fabrics, stacks).
  while (slabs_) {
    Slab* next = slabs_->next;
    slabs_->~Slab();
    std::free(slabs_);
    slabs_ = next;
  }
}

void HeapPacketPool::reserve(uint32_t n) {
  while (stats_.capacity < n && grow()) {
  }
}

bool HeapPacketPool::grow() {
  if (stats_.capacity >= max_packets_) return false;
  const uint64_t left = max_packets_ - stats_.capacity;
  const uint32_t per_slab = slab_packets();
  const uint32_t count = static_cast<uint32_t>(left < per_slab ? left : per_slab);
  const size_t hdr = round_up(sizeof(Slab));
  const size_t descs = round_up(sizeof(Packet) * count);
  const size_t stride = round_up(buf_size_ ? buf_size_ : 1);
  const size_t bytes = hdr + descs + stride * count;
  void* mem = std::aligned_alloc(kAlign, round_up(bytes));
  if (!mem) return false;
  auto* slab = new (mem) Slab{slabs_, count};
  slabs_ = slab;
  auto* base = static_cast<uint8_t*>(mem);
  auto* pkts = reinterpret_cast<Packet*>(base + hdr);
  uint8_t* bufs = base + hdr + descs;
  // Push in reverse so the free list hands out the slab in address order.
  for (uint32_t i = count; i-- > 0;) {
    Packet* p = new (&pkts[i]) Packet();
    p->buf = bufs + stride * i;
    p->buf_len = buf_size_;
    p->pool = this;
    p->next = free_list_;
    free_list_ = p;
  }
  stats_.capacity += count;
  return true;
}

Packet* HeapPacketPool::alloc() {
  if (!free_list_ && !grow()) {
    ++stats_.exhausted;
    return nullptr;
  }
  Packet* p = free_list_;
  free_list_ = p->next;
  p->reset();
  p->port = 0;
  p->pool = this;
  ++stats_.allocs;
  if (++stats_.in_use > stats_.high_water) stats_.high_water = stats_.in_use;
  return p;
}

void HeapPacketPool::free(Packet* p) {
  assert(p && p->pool == this && "packet freed into a pool it did not come from");
  assert(stats_.in_use > 0 && "more frees than allocs: double free?");
  p->next = free_list_;
  free_list_ = p;
  ++stats_.frees;
  --stats_.in_use;
}

Packet* clone_packet(const Packet& p, PacketPool& pool) {
  Packet* c = pool.alloc();
  if (!c) return nullptr;
  // Keep the original's headroom when it fits, so the copy can take the
  // same headers; otherwise fall back to the pool's default headroom.
  if (static_cast<uint64_t>(p.data_off) + p.len <= c->buf_len) {
    c->data_off = p.data_off;
  } else if (static_cast<uint64_t>(c->data_off) + p.len > c->buf_len) {
    if (p.len > c->buf_len) { c->free(); return nullptr; }
    c->data_off = 0;
  }
  c->len = p.len;
  if (p.len) std::memcpy(c->data(), p.data(), p.len);
  return c;
}

}  // namespace toroid
