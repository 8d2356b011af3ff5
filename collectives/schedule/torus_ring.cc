#include "collectives/schedule/torus_ring.h"

namespace toroid::schedule {

std::vector<RingPhase> torus_ring_phases(const Dims& dims, const Coord& me) {
  std::vector<RingPhase> phases;
  for (int d = 0; d < kDims; ++d) {
    if (dims.n[d] < 2) continue;
    if (dims.n[d] == 2) {
      // Both ends of the one cable 0(+) - 1(-): data goes both ways on it.
      const bool plus = me.c[d] == 0;
      phases.push_back(RingPhase{d, 1, dir_of(d, plus), dir_of(d, plus)});
      continue;
    }
    phases.push_back(RingPhase{d, dims.n[d] - 1, dir_of(d, true), dir_of(d, false)});
  }
  return phases;
}

uint32_t elems_per_packet(uint32_t payload_bytes, uint32_t elem_bytes) {
  return elem_bytes == 0 ? 0 : payload_bytes / elem_bytes;
}

uint32_t packets_per_step(uint32_t count, uint32_t per_packet) {
  if (count == 0 || per_packet == 0) return 1;
  return (count + per_packet - 1) / per_packet;
}

}  // namespace toroid::schedule
