// What the text fuzz targets share: argv from NUL-separated input, and the
// invariant failure that libFuzzer reports as a crash.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace toroid::fuzz {

[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
  std::abort();
}

// "a\0b\0c" -> {"a", "b", "c"}; empty input -> {}.
inline std::vector<std::string> split_nul(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  for (;;) {
    const size_t z = s.find('\0', start);
    out.push_back(s.substr(start, z == std::string::npos ? std::string::npos : z - start));
    if (z == std::string::npos) break;
    start = z + 1;
  }
  return out;
}

}  // namespace toroid::fuzz
