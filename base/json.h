// A JSON string literal for reports (`--json` outputs): quotes, backslashes
// and control characters escaped.
#pragma once
#include <cstdio>
#include <string>

namespace toroid {

inline std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

}  // namespace toroid
