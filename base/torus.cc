#include "base/torus.h"

#include <cstring>
#include <vector>

namespace toroid {

namespace {
const char* const kDirNames[kNumDirs] = {"x+", "x-", "y+", "y-", "z+", "z-"};

// Parses a decimal unsigned integer that spans [s, end); false if empty,
// non-digit or too large.
bool parse_uint(const std::string& s, uint32_t* out) {
  if (s.empty() || s.size() > 9) return false;
  uint32_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint32_t>(ch - '0');
  }
  *out = v;
  return true;
}

std::vector<std::string> split_any(const std::string& s, const char* seps) {
  std::vector<std::string> parts;
  std::string cur;
  for (char ch : s) {
    if (std::strchr(seps, ch)) { parts.push_back(cur); cur.clear(); }
    else cur.push_back(ch);
  }
  parts.push_back(cur);
  return parts;
}
}  // namespace

std::string Dims::to_string() const {
  return std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
}

std::string Coord::to_string() const {
  return std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]);
}

const char* dir_name(Dir d) { return kDirNames[static_cast<int>(d)]; }

bool parse_dir(const std::string& s, Dir* out) {
  for (int i = 0; i < kNumDirs; ++i) {
    if (s == kDirNames[i]) { *out = static_cast<Dir>(i); return true; }
  }
  return false;
}

Result<Dims> parse_dims(const std::string& s) {
  auto parts = split_any(s, "xX");
  if (parts.size() > static_cast<size_t>(kDims))
    return error(Code::kInvalid, "dims '%s': at most %d dimensions (XxYxZ)", s.c_str(), kDims);
  Dims d;
  for (size_t i = 0; i < parts.size(); ++i) {
    uint32_t v;
    if (!parse_uint(parts[i], &v))
      return error(Code::kInvalid, "dims '%s': '%s' is not a number (expected XxYxZ, e.g. 4x4x2)",
                   s.c_str(), parts[i].c_str());
    if (v == 0) return error(Code::kInvalid, "dims '%s': a dimension of size 0", s.c_str());
    if (v > static_cast<uint32_t>(kMaxDimSize))
      return error(Code::kInvalid, "dims '%s': %u is larger than the maximum %d", s.c_str(), v, kMaxDimSize);
    d.n[i] = v;
  }
  return d;
}

Result<Coord> parse_coord(const std::string& s, const Dims& dims) {
  auto parts = split_any(s, ",.");
  if (parts.size() != static_cast<size_t>(kDims))
    return error(Code::kInvalid, "coordinate '%s': expected X,Y,Z", s.c_str());
  Coord c;
  for (int i = 0; i < kDims; ++i) {
    uint32_t v;
    if (!parse_uint(parts[i], &v))
      return error(Code::kInvalid, "coordinate '%s': '%s' is not a number", s.c_str(), parts[i].c_str());
    if (v >= dims.n[i])
      return error(Code::kOutOfRange, "coordinate '%s' is outside dims %s (%c=%u must be < %u)", s.c_str(),
                   dims.to_string().c_str(), "xyz"[i], v, dims.n[i]);
    c.c[i] = v;
  }
  return c;
}

uint32_t rank_of(const Coord& c, const Dims& d) { return c.c[0] + d.n[0] * (c.c[1] + d.n[1] * c.c[2]); }

Coord coord_of(uint32_t rank, const Dims& d) {
  Coord c;
  c.c[0] = rank % d.n[0];
  rank /= d.n[0];
  c.c[1] = rank % d.n[1];
  c.c[2] = rank / d.n[1];
  return c;
}

Coord neighbour(const Coord& c, Dir dir, const Dims& d) {
  Coord r = c;
  const int k = dir_dim(dir);
  const uint32_t n = d.n[k];
  r.c[k] = dir_plus(dir) ? (c.c[k] + 1) % n : (c.c[k] + n - 1) % n;
  return r;
}

}  // namespace toroid
