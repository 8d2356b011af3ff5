// CRC32C: the published check values (RFC 3720 B.4, the Castagnoli "check"),
// agreement with a bitwise reference at every length and alignment, chaining
// over split buffers, and that every single-bit error is caught. Then each
// implementation crc32c() may choose (crc32c_impl), the single chain that
// was the only one before included, against the bitwise reference: all
// bit-identical for every length 0..10000, the folding versions at every
// alignment within a cache line (fold) or a 16-byte lane (fold128). The
// 512-bit fold needs AVX-512 VPCLMULQDQ, the 128-bit one PCLMULQDQ: a test
// of one the CPU lacks counts as skipped.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/rng.h"
#include "net_rig.h"
#include "netstack/crc32c.h"
#include "tests/skip.h"

// CppUTest last: its new/delete macros must not reach the standard headers.
#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::nettest;

namespace {

std::vector<uint8_t> random_bytes(uint64_t seed, size_t n) {
  Rng rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng.next());
  return v;
}

}  // namespace

TEST_GROUP(Crc32c){};

TEST(Crc32c, CheckValue) {
  const char* s = "123456789";
  UNSIGNED_LONGS_EQUAL(0xE3069283u, crc32c(s, 9));
  UNSIGNED_LONGS_EQUAL(0xE3069283u, ref_crc32c(s, 9));
}

TEST(Crc32c, EmptyInputIsZero) {
  UNSIGNED_LONGS_EQUAL(0u, crc32c(nullptr, 0));
  UNSIGNED_LONGS_EQUAL(0u, crc32c("x", 0));
  // Continuing over nothing leaves a previous result as it was.
  UNSIGNED_LONGS_EQUAL(0xE3069283u, crc32c("", 0, 0xE3069283u));
}

TEST(Crc32c, Rfc3720Vectors) {
  std::vector<uint8_t> v(32, 0);
  UNSIGNED_LONGS_EQUAL(0x8A9136AAu, crc32c(v.data(), v.size()));
  std::fill(v.begin(), v.end(), 0xff);
  UNSIGNED_LONGS_EQUAL(0x62A8AB43u, crc32c(v.data(), v.size()));
  for (int i = 0; i < 32; ++i) v[i] = static_cast<uint8_t>(i);
  UNSIGNED_LONGS_EQUAL(0x46DD794Eu, crc32c(v.data(), v.size()));
  for (int i = 0; i < 32; ++i) v[i] = static_cast<uint8_t>(31 - i);
  UNSIGNED_LONGS_EQUAL(0x113FDB5Cu, crc32c(v.data(), v.size()));
}

TEST(Crc32c, MatchesBitwiseReferenceAtEveryLengthAndAlignment) {
  const auto data = random_bytes(7, 600);
  for (size_t off = 0; off < 8; ++off) {
    for (size_t len = 0; off + len <= 520; ++len) {
      const uint32_t want = ref_crc32c(data.data() + off, len);
      const uint32_t got = crc32c(data.data() + off, len);
      if (got != want) {
        const std::string msg = "offset " + std::to_string(off) + " length " + std::to_string(len);
        FAIL(msg.c_str());
      }
    }
  }
}

TEST(Crc32c, IncrementalEqualsOneShotAtEverySplit) {
  const char* s = "123456789";
  for (size_t k = 0; k <= 9; ++k) UNSIGNED_LONGS_EQUAL(0xE3069283u, crc32c(s + k, 9 - k, crc32c(s, k)));

  const auto data = random_bytes(11, 257);
  const uint32_t whole = crc32c(data.data(), data.size());
  for (size_t k = 0; k <= data.size(); ++k) {
    const uint32_t split = crc32c(data.data() + k, data.size() - k, crc32c(data.data(), k));
    UNSIGNED_LONGS_EQUAL(whole, split);
  }
  // Three pieces, neither boundary aligned to the 8-byte inner loop.
  for (size_t a = 0; a <= 40; ++a) {
    for (size_t b = a; b <= 80; b += 3) {
      uint32_t c = crc32c(data.data(), a);
      c = crc32c(data.data() + a, b - a, c);
      c = crc32c(data.data() + b, data.size() - b, c);
      UNSIGNED_LONGS_EQUAL(whole, c);
    }
  }
}

TEST(Crc32c, EverySingleBitFlipIn9000BytesChangesTheCrc) {
  auto data = random_bytes(2024, 9000);  // a jumbo frame
  const uint32_t clean = crc32c(data.data(), data.size());
  UNSIGNED_LONGS_EQUAL(ref_crc32c(data.data(), data.size()), clean);
  uint32_t changed = 0;
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    if (crc32c(data.data(), data.size()) != clean) ++changed;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
  UNSIGNED_LONGS_EQUAL(9000u * 8, changed);
  UNSIGNED_LONGS_EQUAL(clean, crc32c(data.data(), data.size()));  // restored
}

TEST(Crc32c, DetectsAnyBurstUpTo32Bits) {
  // A CRC of degree 32 catches every error burst of length <= 32.
  auto data = random_bytes(5, 1500);
  const uint32_t clean = crc32c(data.data(), data.size());
  Rng rng(99);
  for (int trial = 0; trial < 5000; ++trial) {
    const size_t start = rng.below(data.size() * 8 - 32);
    const int len = 1 + static_cast<int>(rng.below(32));
    // Burst: first and last bit set, anything in between.
    const uint64_t inner = len > 2 ? rng.next() & ((uint64_t{1} << (len - 2)) - 1) : 0;
    const uint64_t pattern = 1 | (inner << 1) | (uint64_t{1} << (len - 1));
    for (int i = 0; i < len; ++i)
      if (pattern >> i & 1) data[(start + i) / 8] ^= static_cast<uint8_t>(1u << ((start + i) % 8));
    CHECK(crc32c(data.data(), data.size()) != clean);
    for (int i = 0; i < len; ++i)
      if (pattern >> i & 1) data[(start + i) / 8] ^= static_cast<uint8_t>(1u << ((start + i) % 8));
  }
}

namespace {

using CrcFn = uint32_t (*)(const void*, size_t, uint32_t);

// fn against the bitwise reference for every length 0..max_len at each
// offset in `offsets` from a 64-byte boundary, continuing a non-trivial CRC.
// The reference grows a byte at a time (length n+1 from length n), so this
// costs what fn costs. Returns the first disagreement, or "".
std::string first_mismatch(CrcFn fn, size_t max_len, const std::vector<size_t>& offsets) {
  const auto bytes = random_bytes(31, max_len + 128);
  const auto base = reinterpret_cast<uintptr_t>(bytes.data());
  const uint8_t* line = bytes.data() + ((64 - base % 64) % 64);
  for (size_t off : offsets) {
    const uint32_t seed = 0x5EED0000u + static_cast<uint32_t>(off);
    uint32_t want = seed;  // nothing more: the CRC passed in
    for (size_t len = 0; len <= max_len; ++len) {
      if (len > 0) want = ref_crc32c(line + off + len - 1, 1, want);
      if (fn(line + off, len, seed) != want) return "offset " + std::to_string(off) + " length " + std::to_string(len);
    }
  }
  return "";
}

std::vector<size_t> offsets_below(size_t n) {
  std::vector<size_t> v;
  for (size_t off = 0; off < n; ++off) v.push_back(off);
  return v;
}

}  // namespace

// The implementation every frame used before crc32c() chose between
// several: the yardstick the others must equal bit for bit.
TEST(Crc32c, SingleChainMatchesTheReferenceAtEveryLengthTo10000) {
  CHECK(crc32c_impl::single_chain_supported());  // every x86-64 CPU this runs on
  STRCMP_EQUAL("", first_mismatch(crc32c_impl::single_chain, 10000, offsets_below(8)).c_str());
}

TEST(Crc32c, PortableMatchesTheReferenceAtEveryLengthTo10000) {
  STRCMP_EQUAL("", first_mismatch(crc32c_impl::portable, 10000, {0, 5}).c_str());
  UNSIGNED_LONGS_EQUAL(0xE3069283u, crc32c_impl::portable("123456789", 9));
}

TEST(Crc32c, FoldMatchesTheReferenceAtEveryLengthAndAlignment) {
  if (!crc32c_impl::fold_supported()) TOROID_SKIP("no AVX-512 VPCLMULQDQ on this CPU");
  STRCMP_EQUAL("", first_mismatch(crc32c_impl::fold, 10000, offsets_below(64)).c_str());
  UNSIGNED_LONGS_EQUAL(0xE3069283u, crc32c_impl::fold("123456789", 9));
  // Long enough for every path: the 256-byte loop, 64-byte steps, the tail.
  const auto big = random_bytes(12, 65536 + 77);
  UNSIGNED_LONGS_EQUAL(crc32c_impl::single_chain(big.data() + 1, big.size() - 1),
                       crc32c_impl::fold(big.data() + 1, big.size() - 1));
}

TEST(Crc32c, Fold128MatchesTheReferenceAtEveryLengthAndAlignment) {
  if (!crc32c_impl::fold128_supported()) TOROID_SKIP("no PCLMULQDQ on this CPU");
  STRCMP_EQUAL("", first_mismatch(crc32c_impl::fold128, 10000, offsets_below(16)).c_str());
  UNSIGNED_LONGS_EQUAL(0xE3069283u, crc32c_impl::fold128("123456789", 9));
  // Every path: the 128-byte loop, the eight accumulators' merge, 16-byte
  // steps, the tail; and a start value carried in from an earlier piece.
  const auto big = random_bytes(13, 65536 + 77);
  UNSIGNED_LONGS_EQUAL(crc32c_impl::single_chain(big.data() + 1, big.size() - 1),
                       crc32c_impl::fold128(big.data() + 1, big.size() - 1));
  const uint32_t head = crc32c_impl::single_chain(big.data(), 1000);
  UNSIGNED_LONGS_EQUAL(crc32c_impl::single_chain(big.data(), big.size()),
                       crc32c_impl::fold128(big.data() + 1000, big.size() - 1000, head));
}

TEST(Crc32c, HybridMatchesTheReferenceAtEveryLengthAndAlignment) {
  if (!crc32c_impl::hybrid_supported()) TOROID_SKIP("no PCLMULQDQ on this CPU");
  // Every split of a chunk up to a jumbo frame and more, at every alignment
  // in a 16-byte lane, continuing a CRC passed in.
  STRCMP_EQUAL("", first_mismatch(crc32c_impl::hybrid, 10000, offsets_below(16)).c_str());
  // Past one chunk (16 KiB): every length around the chunk boundaries, and
  // a start value carried in from an earlier piece.
  const auto big = random_bytes(14, 3 * 16384 + 2000);
  for (size_t len = 16384 - 40; len <= 16384 + 1200; len += 7)
    UNSIGNED_LONGS_EQUAL(crc32c_impl::single_chain(big.data() + 3, len), crc32c_impl::hybrid(big.data() + 3, len));
  UNSIGNED_LONGS_EQUAL(crc32c_impl::single_chain(big.data(), big.size()), crc32c_impl::hybrid(big.data(), big.size()));
  const uint32_t head = crc32c_impl::single_chain(big.data(), 1000);
  UNSIGNED_LONGS_EQUAL(crc32c_impl::single_chain(big.data(), big.size()),
                       crc32c_impl::hybrid(big.data() + 1000, big.size() - 1000, head));
}

TEST(Crc32c, Crc32cRunsTheFastestImplementationTheCpuHas) {
  const char* want = crc32c_impl::fold_supported()           ? "fold"
                     : crc32c_impl::hybrid_supported()       ? "hybrid"
                     : crc32c_impl::fold128_supported()      ? "fold128"
                     : crc32c_impl::single_chain_supported() ? "single-chain"
                                                             : "portable";
  STRCMP_EQUAL(want, crc32c_impl::chosen());
  STRCMP_EQUAL("", first_mismatch(crc32c, 10000, {0, 1, 7, 8, 63}).c_str());
}
