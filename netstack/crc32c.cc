// CRC32C: the portable table version, the SSE4.2 single chain, and the
// choice between them and the folding versions (crc32c_fold.cc,
// crc32c_hybrid.cc, crc32c_fold128.cc), made once
// by CPUID so that one binary runs everywhere and uses what it finds.
#include "netstack/crc32c.h"

#include <nmmintrin.h>

#include <array>
#include <cstring>

namespace toroid {
namespace crc32c_impl {
namespace {

// The reflected Castagnoli polynomial.
constexpr uint32_t kPolyReflected = 0x82F63B78u;

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (kPolyReflected & (0u - (c & 1u)));
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

using Fn = uint32_t (*)(const void*, size_t, uint32_t);

Fn choose() {
  if (fold_supported()) return fold;
  if (hybrid_supported()) return hybrid;
  if (fold128_supported()) return fold128;
  if (single_chain_supported()) return single_chain;
  return portable;
}

}  // namespace

uint32_t portable(const void* data, size_t len, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (len--) c = (c >> 8) ^ kTable[(c ^ *p++) & 0xff];
  return ~c;
}

__attribute__((target("sse4.2"))) uint32_t single_chain(const void* data, size_t len, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  while (len >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
    p += 8;
    len -= 8;
  }
  auto c32 = static_cast<uint32_t>(c);
  while (len--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

bool single_chain_supported() {
  // Needed when the first call comes from another constructor, before
  // libgcc's own has filled in the CPU features.
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

bool fold_supported() {
  // libgcc sets the AVX-512 bits only when the OS saves the ZMM state.
  return single_chain_supported() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
}

const char* chosen() {
  const Fn f = choose();
  return f == fold           ? "fold"
         : f == hybrid       ? "hybrid"
         : f == fold128      ? "fold128"
         : f == single_chain ? "single-chain"
                             : "portable";
}

}  // namespace crc32c_impl

uint32_t crc32c(const void* data, size_t len, uint32_t crc) {
  static const crc32c_impl::Fn fn = crc32c_impl::choose();
  return fn(data, len, crc);
}

}  // namespace toroid
