// CRC32C (Castagnoli): every frame is checksummed on send and on receive.
// crc32c() picks the fastest implementation the CPU runs, once, on first use;
// all of them give the same result for every input.
#pragma once
#include <cstddef>
#include <cstdint>

namespace toroid {

// crc32c(data) with the conventional init ~0 and final inversion;
// pass a previous result as `crc` to continue over split buffers.
uint32_t crc32c(const void* data, size_t len, uint32_t crc = 0);

// The implementations crc32c() chooses from, for the tests and the
// benchmarks. Same signature and results as crc32c(); call one only where
// its *_supported() is true.
namespace crc32c_impl {

// Any CPU: a 256-entry table, one byte at a time.
uint32_t portable(const void* data, size_t len, uint32_t crc = 0);
// SSE4.2: one dependent chain of crc32q, 8 bytes per instruction latency
// (about 3 cycles): ~9.7 GB/s on this project's machines at any size.
uint32_t single_chain(const void* data, size_t len, uint32_t crc = 0);
// AVX-512 + VPCLMULQDQ: carry-less multiply folding of 256 bytes per step,
// four independent 512-bit accumulators (crc32c_fold.cc); short inputs go
// to single_chain.
uint32_t fold(const void* data, size_t len, uint32_t crc = 0);
// SSE4.2 + PCLMULQDQ: the same folding on eight 128-bit accumulators
// (crc32c_fold128.cc), for CPUs without VPCLMULQDQ; short inputs go to
// single_chain.
uint32_t fold128(const void* data, size_t len, uint32_t crc = 0);
// SSE4.2 + PCLMULQDQ: fold128's folding over part of the message beside
// three crc32q chains over the rest, on the other execution port
// (crc32c_hybrid.cc); short inputs go to fold128.
uint32_t hybrid(const void* data, size_t len, uint32_t crc = 0);

bool single_chain_supported();
bool fold_supported();
bool fold128_supported();
bool hybrid_supported();
// What crc32c() runs here: "fold", "hybrid", "fold128", "single-chain" or
// "portable".
const char* chosen();

}  // namespace crc32c_impl
}  // namespace toroid
