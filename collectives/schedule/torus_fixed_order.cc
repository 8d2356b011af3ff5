#include "collectives/schedule/torus_fixed_order.h"

namespace toroid::schedule {

std::vector<FixedOrderPhase> torus_fixed_order_phases(const Coord& me, const Dims& dims) {
  std::vector<FixedOrderPhase> phases;
  for (int d = 0; d < kDims; ++d) {
    const uint32_t n = dims.n[d];
    if (n < 2) continue;
    FixedOrderPhase ph;
    ph.dim = d;
    ph.n = n;
    ph.pos = me.c[d];
    ph.sends = line_sends(d, n, ph.pos);
    ph.from.reserve(n);
    for (uint32_t s = 0; s < n; ++s) ph.from.push_back(line_arrival(d, n, s, ph.pos));
    phases.push_back(std::move(ph));
  }
  return phases;
}

std::vector<uint32_t> fixed_order_combine_order(uint32_t n) {
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  return order;
}

}  // namespace toroid::schedule
