#include "netstack/route.h"

namespace toroid {

uint8_t minimal_hints(const Coord& src, const Coord& dst, const Dims& dims, uint32_t salt) {
  uint8_t hints = 0;
  for (int d = 0; d < kDims; ++d) {
    const uint32_t n = dims.n[d];
    if (src.c[d] == dst.c[d]) continue;
    const uint32_t plus = (dst.c[d] + n - src.c[d]) % n;  // hops going plus
    const bool go_plus = plus < n - plus || (plus == n - plus && !((salt >> d) & 1u));
    hints |= static_cast<uint8_t>(1u << static_cast<int>(dir_of(d, go_plus)));
  }
  return hints;
}

uint8_t minimal_hints(const Coord& src, const Coord& dst, const Dims& dims) {
  return minimal_hints(src, dst, dims, 0);
}

uint8_t productive_dirs(const Coord& cur, const Coord& dst, uint8_t hints, const Dims& dims) {
  (void)dims;
  uint8_t out = 0;
  for (int d = 0; d < kDims; ++d) {
    if (cur.c[d] == dst.c[d]) continue;
    uint8_t h = static_cast<uint8_t>((hints >> (2 * d)) & 3u);
    // Both bits: plus, as on the deterministic route. Offering both ways
    // would let a packet (a corrupt or hostile one: senders set one bit)
    // bounce between two nodes forever; one way per dimension always ends.
    if (h == 3u) h = 1u;
    out |= static_cast<uint8_t>(h << (2 * d));
  }
  return out;
}

bool next_hop(const Coord& cur, const Coord& dst, uint8_t hints, uint8_t flags, const Dims& dims,
              Dateline dateline, Hop* out, bool* bad) {
  *bad = false;
  for (int d = 0; d < kDims; ++d) {
    if (cur.c[d] == dst.c[d]) continue;
    const uint8_t h = static_cast<uint8_t>((hints >> (2 * d)) & 3u);
    if (h == 0) {
      *bad = true;
      return false;
    }
    const Dir dir = dir_of(d, (h & 1u) != 0);  // plus wins if both are set
    out->dir = dir;
    out->vc = dateline_vc(cur.c[d], dir, dims.n[d], flags, dateline);
    return true;
  }
  return false;
}

}  // namespace toroid
