// CRC32C (Castagnoli), computed with the CPU's SSE4.2 crc32 instruction,
// 8 bytes at a time. Every x86-64 CPU this runs on (and QEMU's -cpu max)
// has SSE4.2; Debian's DPDK requires it too.
#pragma once
#include <cstddef>
#include <cstdint>

namespace toroid {

// crc32c(data) with the conventional init ~0 and final inversion;
// pass a previous result as `crc` to continue over split buffers.
uint32_t crc32c(const void* data, size_t len, uint32_t crc = 0);

}  // namespace toroid
