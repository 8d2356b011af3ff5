// SHA-256 against the FIPS 180-4 example vectors and a long message fed in
// uneven pieces (the block-boundary paths).
#include <string>
#include <vector>

#include "base/sha256.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

TEST_GROUP(Sha256){};

TEST(Sha256, KnownVectors) {
  STRCMP_EQUAL("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", sha256_hex("", 0).c_str());
  STRCMP_EQUAL("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", sha256_hex("abc", 3).c_str());
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  STRCMP_EQUAL("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
               sha256_hex(two.data(), two.size()).c_str());
}

TEST(Sha256, MillionAsInPieces) {
  std::vector<char> a(1000000, 'a');
  Sha256 h;
  size_t off = 0, step = 1;
  while (off < a.size()) {
    const size_t n = std::min(step, a.size() - off);
    h.update(a.data() + off, n);
    off += n;
    step = step * 3 % 997 + 1;
  }
  STRCMP_EQUAL("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", h.hex().c_str());
}
