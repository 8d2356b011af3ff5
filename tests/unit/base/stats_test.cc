#include <cstdint>
#include <string>

#include "base/stats.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {
struct PortCounters {
  uint64_t rx_frames = 0;
  uint64_t tx_frames = 0;
  uint64_t unlisted = 0;  // not in the name table: must be left alone
  uint64_t crc_errors = 0;
};
const CounterField kFields[] = {
    TOROID_COUNTER(PortCounters, rx_frames),
    TOROID_COUNTER(PortCounters, tx_frames),
    TOROID_COUNTER(PortCounters, crc_errors),
};
constexpr int kN = sizeof kFields / sizeof kFields[0];
}  // namespace

TEST_GROUP(Stats) {};

TEST(Stats, CounterMacroNamesAndOffsets) {
  STRCMP_EQUAL("rx_frames", kFields[0].name);
  STRCMP_EQUAL("crc_errors", kFields[2].name);
  UNSIGNED_LONGS_EQUAL(offsetof(PortCounters, tx_frames), kFields[1].offset);
  UNSIGNED_LONGS_EQUAL(offsetof(PortCounters, crc_errors), kFields[2].offset);
}

TEST(Stats, FormatSkipsZeroFields) {
  PortCounters c;
  STRCMP_EQUAL("", format_counters(&c, kFields, kN).c_str());
  c.rx_frames = 3;
  c.crc_errors = 5;
  c.unlisted = 99;
  STRCMP_EQUAL("rx_frames=3 crc_errors=5", format_counters(&c, kFields, kN).c_str());
  STRCMP_EQUAL("rx_frames=3 tx_frames=0 crc_errors=5", format_counters(&c, kFields, kN, true).c_str());
  c.tx_frames = 18446744073709551615ull;
  STRCMP_EQUAL("rx_frames=3 tx_frames=18446744073709551615 crc_errors=5",
               format_counters(&c, kFields, kN).c_str());
}

TEST(Stats, AddCountersFieldByField) {
  PortCounters a, b;
  a.rx_frames = 1; a.tx_frames = 2; a.unlisted = 7; a.crc_errors = 3;
  b.rx_frames = 10; b.tx_frames = 20; b.unlisted = 70; b.crc_errors = 30;
  add_counters(&a, &b, kFields, kN);
  UNSIGNED_LONGLONGS_EQUAL(11, a.rx_frames);
  UNSIGNED_LONGLONGS_EQUAL(22, a.tx_frames);
  UNSIGNED_LONGLONGS_EQUAL(33, a.crc_errors);
  UNSIGNED_LONGLONGS_EQUAL(7, a.unlisted);
  UNSIGNED_LONGLONGS_EQUAL(10, b.rx_frames);  // source untouched
  add_counters(&a, &a, kFields, kN);          // aliasing doubles
  UNSIGNED_LONGLONGS_EQUAL(22, a.rx_frames);
}
