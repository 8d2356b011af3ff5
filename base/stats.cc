#include "base/stats.h"

#include <cstring>

namespace toroid {

namespace {
uint64_t field(const void* block, const CounterField& f) {
  uint64_t v;
  std::memcpy(&v, static_cast<const char*>(block) + f.offset, sizeof v);
  return v;
}
}  // namespace

std::string format_counters(const void* block, const CounterField* fields, int n, bool all_fields) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    const uint64_t v = field(block, fields[i]);
    if (v == 0 && !all_fields) continue;
    if (!out.empty()) out += ' ';
    out += fields[i].name;
    out += '=';
    out += std::to_string(v);
  }
  return out;
}

void add_counters(void* dst, const void* src, const CounterField* fields, int n) {
  for (int i = 0; i < n; ++i) {
    uint64_t v = field(dst, fields[i]) + field(src, fields[i]);
    std::memcpy(static_cast<char*>(dst) + fields[i].offset, &v, sizeof v);
  }
}

}  // namespace toroid
