// Torus geometry: dimensions, coordinates, the six link directions, and
// neighbour/rank arithmetic. Pure functions; every layer uses them.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace toroid {

constexpr int kDims = 3;
constexpr int kMaxDimSize = 256;  // coordinates travel as one byte each

struct Dims {
  std::array<uint32_t, kDims> n{1, 1, 1};
  uint32_t nodes() const { return n[0] * n[1] * n[2]; }
  bool operator==(const Dims&) const = default;
  std::string to_string() const;  // "4x4x2"
};

struct Coord {
  std::array<uint32_t, kDims> c{0, 0, 0};
  bool operator==(const Coord&) const = default;
  std::string to_string() const;  // "1,0,1"
};

// Six directions; a port is mapped to one by the personality.
enum class Dir : uint8_t { kXp = 0, kXm, kYp, kYm, kZp, kZm };
constexpr int kNumDirs = 6;
constexpr int dir_dim(Dir d) { return static_cast<int>(d) / 2; }
constexpr bool dir_plus(Dir d) { return (static_cast<int>(d) & 1) == 0; }
constexpr Dir dir_of(int dim, bool plus) { return static_cast<Dir>(dim * 2 + (plus ? 0 : 1)); }
constexpr Dir opposite(Dir d) { return static_cast<Dir>(static_cast<int>(d) ^ 1); }
const char* dir_name(Dir d);  // "x+", "x-", ...
bool parse_dir(const std::string& s, Dir* out);

// "4x4x2" (also "4", "4x4"); every size in [1, kMaxDimSize].
Result<Dims> parse_dims(const std::string& s);
// "1,0,1" or "1.0.1"; each coordinate inside dims.
Result<Coord> parse_coord(const std::string& s, const Dims& dims);

// Linear rank: x fastest. rank_of(coord_of(r)) == r.
uint32_t rank_of(const Coord& c, const Dims& d);
Coord coord_of(uint32_t rank, const Dims& d);
// Neighbour one hop along dir, wrapping around.
Coord neighbour(const Coord& c, Dir dir, const Dims& d);
// A direction has a link when its dimension is longer than one node.
inline bool has_link(Dir dir, const Dims& d) { return d.n[dir_dim(dir)] > 1; }

}  // namespace toroid
