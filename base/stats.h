// Plain counters, cheap enough to keep on in production (eRPC's dpath_stat_inc).
// A counter block is a struct of uint64_t fields plus a name table, so it can
// be printed and merged without a registry or locks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace toroid {

struct CounterField {
  const char* name;
  uint64_t offset;  // byte offset of the uint64_t field in its block
};

// "name=value name=value ..." for the nonzero fields (all fields if all_fields).
std::string format_counters(const void* block, const CounterField* fields, int n, bool all_fields = false);
// dst[i] += src[i] for every field.
void add_counters(void* dst, const void* src, const CounterField* fields, int n);

#define TOROID_COUNTER(type, field) ::toroid::CounterField{#field, offsetof(type, field)}

}  // namespace toroid
