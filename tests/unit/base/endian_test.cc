#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/endian.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {
struct __attribute__((packed)) WireThing {
  uint8_t kind;
  Be16 len;
  Be32 seq;
  Be64 stamp;
};
static_assert(sizeof(WireThing) == 15);
static_assert(alignof(Be64) == 1);

template <typename T>
void bytes_equal(const T& v, const uint8_t* want, size_t n) {
  uint8_t got[16];
  LONGS_EQUAL(n, sizeof v);
  std::memcpy(got, &v, n);
  MEMCMP_EQUAL(want, got, n);
}
}  // namespace

TEST_GROUP(Endian) {};

TEST(Endian, Be16Layout) {
  Be16 v;
  v.set(0x1234);
  const uint8_t want[] = {0x12, 0x34};
  bytes_equal(v, want, 2);
  UNSIGNED_LONGS_EQUAL(0x1234, v.get());
}

TEST(Endian, Be32Layout) {
  Be32 v;
  v.set(0x01020304u);
  const uint8_t want[] = {0x01, 0x02, 0x03, 0x04};
  bytes_equal(v, want, 4);
  UNSIGNED_LONGS_EQUAL(0x01020304u, v.get());
}

TEST(Endian, Be64Layout) {
  Be64 v;
  v.set(0x0102030405060708ull);
  const uint8_t want[] = {1, 2, 3, 4, 5, 6, 7, 8};
  bytes_equal(v, want, 8);
  UNSIGNED_LONGLONGS_EQUAL(0x0102030405060708ull, v.get());
}

TEST(Endian, ReadsFromRawWireBytes) {
  const uint8_t wire[15] = {9, 0x00, 0x2a, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0x01, 0x00};
  WireThing w;
  std::memcpy(&w, wire, sizeof w);
  LONGS_EQUAL(9, w.kind);
  UNSIGNED_LONGS_EQUAL(42, w.len.get());
  UNSIGNED_LONGS_EQUAL(0xdeadbeefu, w.seq.get());
  UNSIGNED_LONGLONGS_EQUAL(256, w.stamp.get());
  LONGS_EQUAL(1, offsetof(WireThing, len));
  LONGS_EQUAL(3, offsetof(WireThing, seq));
}
