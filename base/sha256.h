// SHA-256 (FIPS 180-4), for result fingerprints that outside tools can
// recompute (`sha256sum` of a collective's output buffer).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace toroid {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t len);
  void final(uint8_t out[32]);
  std::string hex();  // finalises; lower-case hex of the digest

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t used_ = 0;
  uint64_t bytes_ = 0;
};

std::string sha256_hex(const void* data, size_t len);

}  // namespace toroid
