// Shared helpers of the generic group's schedule tests: deterministic inputs,
// the node counts and counts every test sweeps, and plan building for all
// ranks.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/rng.h"
#include "collectives/dtype.h"
#include "collectives/schedule/generic.h"
#include "tests/unit/collectives/plan_sim.h"

namespace toroid::gentest {

inline std::vector<uint32_t> node_counts() { return {1, 2, 3, 4, 5, 7, 8, 9, 16, 27, 64}; }
// 0, 1, an odd count, one just above n, and a larger one.
inline std::vector<uint64_t> counts_for(uint32_t n) { return {0, 1, 7, uint64_t{n} + 3, 3 * uint64_t{n} + 17}; }

// Element i of rank r's contribution (seeded, full range).
inline int64_t ival(uint32_t r, uint64_t i, uint64_t seed = 1) {
  return static_cast<int64_t>(mix64(seed * 0x100000001b3ull ^ (uint64_t{r} << 40) ^ i));
}
// Doubles of mixed signs spread over 2^-30 .. 2^30: the order of additions
// changes the rounding.
inline double dval(uint32_t r, uint64_t i, uint64_t seed = 7) {
  uint64_t m = mix64(seed ^ (uint64_t{r} << 36) ^ (i * 0x9E3779B97F4A7C15ull));
  double mant = static_cast<double>(m >> 11) / 9007199254740992.0 - 0.5;  // [-0.5, 0.5)
  return std::ldexp(mant, static_cast<int>((m >> 3) % 61) - 30);
}

using Builder = std::function<schedule::Plan(uint32_t n, uint32_t rank)>;
inline std::vector<schedule::Plan> plans_of(uint32_t n, const Builder& b) {
  std::vector<schedule::Plan> ps;
  for (uint32_t r = 0; r < n; ++r) ps.push_back(b(n, r));
  return ps;
}

// One rank's buffers: input `in` (elements of T) and `out_elems` elements of
// output, pre-filled with a poison pattern; in place, `in` is laid into out
// at element `in_at` (out grown to hold it).
template <typename T>
plansim::RankIO make_io(const std::vector<T>& in, uint64_t out_elems, bool in_place, uint64_t in_at = 0) {
  plansim::RankIO io;
  io.in_place = in_place;
  std::vector<T> out(std::max<uint64_t>(out_elems, in_place ? in_at + in.size() : 0));
  // (an empty vector's data() may be null, which memset must not get)
  if (!out.empty()) std::memset(static_cast<void*>(out.data()), 0xA5, out.size() * sizeof(T));
  if (in_place)
    std::copy(in.begin(), in.end(), out.begin() + in_at);
  else
    io.in = plansim::to_bytes(in);
  io.out = plansim::to_bytes(out);
  return io;
}

inline std::string where(const char* algo, uint32_t n, uint64_t count, bool in_place, uint32_t root = 0) {
  return std::string(algo) + " n=" + std::to_string(n) + " count=" + std::to_string(count) +
         (in_place ? " in place" : "") + (root ? " root=" + std::to_string(root) : "");
}

inline plansim::ReduceFn sum_i64() { return make_reducer(DType::kInt64, ROp::kSum).fn; }
inline plansim::ReduceFn xor_u32() { return make_reducer(DType::kUint32, ROp::kBxor).fn; }
inline plansim::ReduceFn sum_f64() { return make_reducer(DType::kDouble, ROp::kSum).fn; }

}  // namespace toroid::gentest
