#include <cstring>
#include <set>
#include <vector>

#include "drivers/packet.h"
#include "drivers/port.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {
constexpr uint32_t kSlab = tuning::kPoolSlabPackets;
}

TEST_GROUP(PacketPool){};

TEST(PacketPool, StartsEmptyAndGrowsBySlabs) {
  HeapPacketPool pool(512, 10 * kSlab);
  UNSIGNED_LONGLONGS_EQUAL(0, pool.stats().capacity);
  UNSIGNED_LONGLONGS_EQUAL(512, pool.buf_size());

  std::vector<Packet*> held;
  for (uint32_t i = 0; i < 3 * kSlab + 1; ++i) {
    held.push_back(pool.alloc());
    CHECK(held.back() != nullptr);
    // Capacity is always the smallest whole number of slabs covering the packets out.
    UNSIGNED_LONGLONGS_EQUAL((i / kSlab + 1) * kSlab, pool.stats().capacity);
  }
  UNSIGNED_LONGLONGS_EQUAL(3 * kSlab + 1, pool.stats().in_use);
  UNSIGNED_LONGLONGS_EQUAL(3 * kSlab + 1, pool.stats().high_water);
  UNSIGNED_LONGLONGS_EQUAL(3 * kSlab + 1, pool.stats().allocs);
  for (Packet* p : held) p->free();
  UNSIGNED_LONGLONGS_EQUAL(0, pool.stats().in_use);
  UNSIGNED_LONGLONGS_EQUAL(3 * kSlab + 1, pool.stats().frees);
  UNSIGNED_LONGLONGS_EQUAL(3 * kSlab + 1, pool.stats().high_water);
  UNSIGNED_LONGLONGS_EQUAL(4 * kSlab, pool.stats().capacity);  // never shrinks
}

// Large buffers (the sim's jumbo frames) come in smaller slabs, so a slab
// stays under 64 KiB of buffers; small ones keep whole slabs.
TEST(PacketPool, LargeBuffersGrowInSmallerSlabs) {
  HeapPacketPool small(1152, 100);
  UNSIGNED_LONGS_EQUAL(kSlab, small.slab_packets());
  HeapPacketPool jumbo(9128, 100);
  UNSIGNED_LONGS_EQUAL(7, jumbo.slab_packets());  // 7 x 9152 B (cache-line strided) <= 64 KiB
  HeapPacketPool huge(100000, 100);
  UNSIGNED_LONGS_EQUAL(1, huge.slab_packets());
  std::vector<Packet*> held;
  for (uint32_t i = 0; i < 8; ++i) held.push_back(jumbo.alloc());
  UNSIGNED_LONGLONGS_EQUAL(14, jumbo.stats().capacity);
  for (Packet* p : held) {
    CHECK(p != nullptr);
    CHECK(p->tailroom() + p->headroom() == 9128);
    p->free();
  }
}

TEST(PacketPool, BuffersAreDistinctAndDoNotOverlap) {
  HeapPacketPool pool(300, 3 * kSlab);
  std::vector<Packet*> held;
  for (uint32_t i = 0; i < 3 * kSlab; ++i) held.push_back(pool.alloc());
  for (uint32_t i = 0; i < held.size(); ++i) {
    UNSIGNED_LONGLONGS_EQUAL(300, held[i]->buf_len);
    std::memset(held[i]->buf, static_cast<int>(i), 300);
  }
  for (uint32_t i = 0; i < held.size(); ++i) {
    for (uint32_t b = 0; b < 300; ++b) BYTES_EQUAL(static_cast<uint8_t>(i), held[i]->buf[b]);
    held[i]->free();
  }
}

TEST(PacketPool, ExhaustionReturnsNullAndIsCounted) {
  const uint32_t max = 2 * kSlab + 3;  // not a whole number of slabs
  HeapPacketPool pool(256, max);
  std::vector<Packet*> held;
  for (uint32_t i = 0; i < max; ++i) {
    Packet* p = pool.alloc();
    CHECK(p != nullptr);
    held.push_back(p);
  }
  UNSIGNED_LONGLONGS_EQUAL(max, pool.stats().capacity);  // the last slab is partial
  POINTERS_EQUAL(nullptr, pool.alloc());
  POINTERS_EQUAL(nullptr, pool.alloc());
  UNSIGNED_LONGLONGS_EQUAL(2, pool.stats().exhausted);
  UNSIGNED_LONGLONGS_EQUAL(max, pool.stats().in_use);
  UNSIGNED_LONGLONGS_EQUAL(max, pool.stats().allocs);  // failed allocs are not allocs
  held.back()->free();
  held.pop_back();
  Packet* again = pool.alloc();  // a freed packet is available again
  CHECK(again != nullptr);
  UNSIGNED_LONGLONGS_EQUAL(max, pool.stats().capacity);
  UNSIGNED_LONGLONGS_EQUAL(max, pool.stats().high_water);
  again->free();
  for (Packet* p : held) p->free();
  UNSIGNED_LONGLONGS_EQUAL(0, pool.stats().in_use);
}

TEST(PacketPool, FreeListIsReusedWithoutNewSlabs) {
  HeapPacketPool pool(256, 1000);
  std::set<Packet*> seen;
  for (int round = 0; round < 1000; ++round) {
    Packet* a = pool.alloc();
    Packet* b = pool.alloc();
    seen.insert(a);
    seen.insert(b);
    a->free();
    b->free();
  }
  UNSIGNED_LONGLONGS_EQUAL(kSlab, pool.stats().capacity);
  UNSIGNED_LONGLONGS_EQUAL(2, pool.stats().high_water);
  UNSIGNED_LONGLONGS_EQUAL(2000, pool.stats().allocs);
  UNSIGNED_LONGLONGS_EQUAL(2000, pool.stats().frees);
  CHECK(seen.size() <= 2);  // LIFO free list: the same two descriptors come back
}

TEST(PacketPool, AllocReturnsAResetPacket) {
  HeapPacketPool pool(512, 64);
  Packet* p = pool.alloc();
  POINTERS_EQUAL(&pool, p->pool);
  UNSIGNED_LONGLONGS_EQUAL(tuning::kPacketHeadroom, p->headroom());
  UNSIGNED_LONGLONGS_EQUAL(0, p->len);
  UNSIGNED_LONGLONGS_EQUAL(512 - tuning::kPacketHeadroom, p->tailroom());
  // Dirty it and give it back: the next alloc (same descriptor) is clean again.
  p->append(100);
  p->prepend(14);
  p->user = 77;
  p->port = 3;
  p->next = p;
  p->free();
  Packet* q = pool.alloc();
  POINTERS_EQUAL(p, q);
  UNSIGNED_LONGLONGS_EQUAL(tuning::kPacketHeadroom, q->headroom());
  UNSIGNED_LONGLONGS_EQUAL(0, q->len);
  UNSIGNED_LONGLONGS_EQUAL(0, q->user);
  UNSIGNED_LONGLONGS_EQUAL(0, q->port);
  POINTERS_EQUAL(nullptr, q->next);
  q->free();
}

TEST(PacketPool, SmallBuffersHaveNoHeadroom) {
  HeapPacketPool pool(64, 16);  // smaller than kPacketHeadroom
  Packet* p = pool.alloc();
  UNSIGNED_LONGLONGS_EQUAL(0, p->headroom());
  UNSIGNED_LONGLONGS_EQUAL(64, p->tailroom());
  p->free();
}

TEST(PacketPool, PrependAppendAdjRespectBounds) {
  HeapPacketPool pool(512, 16);
  Packet* p = pool.alloc();
  const uint32_t room = p->tailroom();
  POINTERS_EQUAL(nullptr, p->append(room + 1));
  UNSIGNED_LONGLONGS_EQUAL(0, p->len);
  uint8_t* d = p->append(10);
  POINTERS_EQUAL(p->data(), d);
  uint8_t* tail = p->append(room - 10);
  POINTERS_EQUAL(p->data() + 10, tail);
  UNSIGNED_LONGLONGS_EQUAL(0, p->tailroom());
  POINTERS_EQUAL(nullptr, p->append(1));

  POINTERS_EQUAL(nullptr, p->prepend(tuning::kPacketHeadroom + 1));
  uint8_t* h = p->prepend(tuning::kPacketHeadroom);
  POINTERS_EQUAL(p->buf, h);
  UNSIGNED_LONGLONGS_EQUAL(0, p->headroom());
  UNSIGNED_LONGLONGS_EQUAL(512, p->len);
  POINTERS_EQUAL(nullptr, p->prepend(1));

  CHECK_FALSE(p->adj(513));
  UNSIGNED_LONGLONGS_EQUAL(512, p->len);
  CHECK(p->adj(14));
  UNSIGNED_LONGLONGS_EQUAL(14, p->headroom());
  UNSIGNED_LONGLONGS_EQUAL(498, p->len);
  CHECK(p->adj(498));
  UNSIGNED_LONGLONGS_EQUAL(0, p->len);
  UNSIGNED_LONGLONGS_EQUAL(0, p->tailroom());  // consumed to the end of the buffer
  p->reset();
  CHECK(p->append(20) != nullptr);
  p->trim(5);
  UNSIGNED_LONGLONGS_EQUAL(15, p->len);
  p->trim(100);
  UNSIGNED_LONGLONGS_EQUAL(0, p->len);
  p->free();
}

TEST(PacketPool, CloneCopiesDataLenAndHeadroom) {
  HeapPacketPool a(512, 16);
  HeapPacketPool b(512, 16);
  Packet* p = a.alloc();
  uint8_t* d = p->append(200);
  for (int i = 0; i < 200; ++i) d[i] = static_cast<uint8_t>(i * 7);
  p->prepend(14);  // headroom now kPacketHeadroom - 14
  Packet* c = clone_packet(*p, b);
  CHECK(c != nullptr);
  POINTERS_EQUAL(&b, c->pool);
  CHECK(c->buf != p->buf);
  UNSIGNED_LONGLONGS_EQUAL(p->len, c->len);
  UNSIGNED_LONGLONGS_EQUAL(p->headroom(), c->headroom());
  MEMCMP_EQUAL(p->data(), c->data(), p->len);
  // Changing the copy leaves the original alone.
  c->data()[20] ^= 0xff;
  CHECK(p->data()[20] != c->data()[20]);
  c->free();
  p->free();
  UNSIGNED_LONGLONGS_EQUAL(0, a.stats().in_use);
  UNSIGNED_LONGLONGS_EQUAL(0, b.stats().in_use);
}

TEST(PacketPool, CloneFailsCleanlyWhenThePoolIsEmpty) {
  HeapPacketPool a(512, 16);
  HeapPacketPool empty(512, 0);
  Packet* p = a.alloc();
  p->append(10);
  POINTERS_EQUAL(nullptr, clone_packet(*p, empty));
  UNSIGNED_LONGLONGS_EQUAL(1, empty.stats().exhausted);
  // A frame too long for the target pool's buffers is not truncated.
  HeapPacketPool tiny(64, 16);
  p->append(100);
  POINTERS_EQUAL(nullptr, clone_packet(*p, tiny));
  UNSIGNED_LONGLONGS_EQUAL(0, tiny.stats().in_use);
  p->free();
}

TEST(PacketPool, PortStatsCounterTable) {
  PortStats s;
  s.rx_packets = 1;
  s.tx_full = 5;
  s.rx_dropped = 6;
  LONGS_EQUAL(6, kPortStatsFieldCount);
  STRCMP_EQUAL("rx_packets=1 tx_full=5 rx_dropped=6",
               format_counters(&s, kPortStatsFields, kPortStatsFieldCount).c_str());
}
