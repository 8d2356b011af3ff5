#include "drivers/dpdk/dpdk_pool.h"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include <cassert>
#include <cerrno>
#include <new>

#include "drivers/dpdk/dpdk_internal.h"
#include "drivers/dpdk/eal.h"

namespace toroid {

namespace {

uint32_t g_pool_seq = 0;

// The fixed half of every descriptor: its buffer and its pool never change.
void init_descriptor(rte_mempool* /*mp*/, void* opaque, void* obj, unsigned /*idx*/) {
  auto* m = static_cast<rte_mbuf*>(obj);
  Packet* p = new (rte_mbuf_to_priv(m)) Packet();
  p->buf = static_cast<uint8_t*>(m->buf_addr);
  p->buf_len = m->buf_len;
  p->pool = static_cast<DpdkPacketPool*>(opaque);
  // Fault the buffer's pages in now (--no-huge memory is 4 KiB pages of a
  // memfd, mapped lazily): a first touch on the data path costs a page
  // fault, microseconds that would land in some early operation's latency.
  volatile uint8_t* b = p->buf;
  for (uint32_t off = 0; off < p->buf_len; off += 4096) b[off] = 0;
  b[p->buf_len - 1] = 0;
}

}  // namespace

Result<std::unique_ptr<DpdkPacketPool>> DpdkPacketPool::create(const DpdkPoolConfig& cfg) {
  if (!eal_ready()) return error(Code::kInvalid, "DpdkPacketPool: EAL is not initialised (call eal_init first)");
  const uint32_t data_room = RTE_PKTMBUF_HEADROOM + cfg.frame_room;
  if (cfg.frame_room < 64 || data_room > UINT16_MAX)
    return error(Code::kInvalid, "DpdkPacketPool: frame_room %u out of range (64..%u)", cfg.frame_room,
                 UINT16_MAX - RTE_PKTMBUF_HEADROOM);
  if (cfg.mbufs == 0) return error(Code::kInvalid, "DpdkPacketPool: mbufs must be > 0");
  const std::string name = cfg.name.empty() ? "toroid_pool" + std::to_string(g_pool_seq++) : cfg.name;
  const uint32_t cache = cfg.cache > RTE_MEMPOOL_CACHE_MAX_SIZE ? RTE_MEMPOOL_CACHE_MAX_SIZE : cfg.cache;

  std::unique_ptr<DpdkPacketPool> pool(new DpdkPacketPool());
  rte_mempool* mp = nullptr;
  if (!cfg.packed) {
    mp = rte_pktmbuf_pool_create(name.c_str(), cfg.mbufs, cache, dpdk::kPacketPrivSize,
                                 static_cast<uint16_t>(data_room), static_cast<int>(rte_socket_id()));
    if (!mp)
      return error(Code::kIo, "rte_pktmbuf_pool_create(%s, %u mbufs of %u bytes): %s", name.c_str(), cfg.mbufs,
                   data_room, rte_strerror(rte_errno));
  } else {
    // What rte_pktmbuf_pool_create does, with RTE_MEMPOOL_F_NO_IOVA_CONTIG:
    // without it, 4 KiB pages (--no-huge) hold one 2.4 KiB mbuf each, and
    // the pool spans far more than mbufs x object size.
    const uint32_t elt = sizeof(rte_mbuf) + dpdk::kPacketPrivSize + data_room;
    mp = rte_mempool_create_empty(name.c_str(), cfg.mbufs, elt, cache, sizeof(rte_pktmbuf_pool_private),
                                  static_cast<int>(rte_socket_id()), RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (!mp)
      return error(Code::kIo, "rte_mempool_create_empty(%s, %u mbufs of %u bytes): %s", name.c_str(), cfg.mbufs,
                   data_room, rte_strerror(rte_errno));
    rte_pktmbuf_pool_private priv{};
    priv.mbuf_data_room_size = static_cast<uint16_t>(data_room);
    priv.mbuf_priv_size = dpdk::kPacketPrivSize;
    int ret = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr);
    if (ret == 0) {
      rte_pktmbuf_pool_init(mp, &priv);
      ret = rte_mempool_populate_default(mp);
      ret = ret < 0 ? ret : 0;
    }
    if (ret == 0 && mp->nb_mem_chunks != 1) ret = -ENOSPC;
    if (ret != 0) {
      rte_mempool_free(mp);
      return error(Code::kIo, "packed mbuf pool %s (%u mbufs of %u bytes): %s", name.c_str(), cfg.mbufs, data_room,
                   ret == -ENOSPC ? "not in one piece of memory (give EAL more memory, -m)" : rte_strerror(-ret));
    }
    rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  }
  rte_mempool_obj_iter(mp, init_descriptor, pool.get());
  pool->mp_ = mp;
  pool->buf_size_ = data_room;
  pool->headroom_ = RTE_PKTMBUF_HEADROOM;
  pool->stats_.capacity = cfg.mbufs;
  return pool;
}

DpdkPacketPool::~DpdkPacketPool() {
  // Packets still out dangle from here on, as with HeapPacketPool: close the
  // ports (their rx queues hold mbufs of this pool) before destroying it.
  if (mp_ && eal_ready()) rte_mempool_free(mp_);
}

uint32_t DpdkPacketPool::available() const { return rte_mempool_avail_count(mp_); }

Packet* DpdkPacketPool::alloc() {
  rte_mbuf* m = rte_pktmbuf_alloc(mp_);
  if (!m) {
    ++stats_.exhausted;
    return nullptr;
  }
  Packet* p = dpdk::packet_of(m);
  p->reset();
  p->port = 0;
  m->data_off = p->data_off;
  ++stats_.allocs;
  if (++stats_.in_use > stats_.high_water) stats_.high_water = stats_.in_use;
  return p;
}

void DpdkPacketPool::free(Packet* p) {
  assert(p && p->pool == this && "packet freed into a pool it did not come from");
  assert(stats_.in_use > 0 && "more frees than allocs: double free?");
  ++stats_.frees;
  --stats_.in_use;
  // The mbuf returns to the mempool now, or when the PMD lets go of it.
  rte_pktmbuf_free(dpdk::mbuf_of(p));
}

}  // namespace toroid
