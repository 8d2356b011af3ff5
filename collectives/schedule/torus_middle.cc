#include "collectives/schedule/torus_middle.h"

namespace toroid::schedule {

Coord torus_middle_root(const Dims& dims) {
  Coord c;
  for (int d = 0; d < kDims; ++d) c.c[d] = line_middle(dims.n[d]);
  return c;
}

std::vector<MiddleRole> torus_middle_roles(const Coord& me, const Dims& dims) {
  std::vector<MiddleRole> roles;
  bool active = true;  // every node takes part in the first phase
  for (int d = 0; d < kDims; ++d) {
    const uint32_t n = dims.n[d];
    if (n < 2) continue;
    MiddleRole r;
    r.dim = d;
    r.active = active;
    const uint32_t m = line_middle(n), p = me.c[d];
    if (active) {
      if (p < m) {  // before the middle: stream plus
        r.recv_minus = p > 0;
        r.sends = true;
        r.send_dir = dir_of(d, true);
      } else if (p > m) {  // after it: stream minus
        r.recv_plus = p < n - 1;
        r.sends = true;
        r.send_dir = dir_of(d, false);
      } else {  // the middle: both streams meet here
        r.recv_minus = m > 0;
        r.recv_plus = m < n - 1;
      }
      r.inputs = static_cast<int>(r.recv_minus) + static_cast<int>(r.recv_plus);
    }
    roles.push_back(r);
    active = active && p == m;  // only the middles go on
  }
  return roles;
}

}  // namespace toroid::schedule
