#include "collectives/schedule/line_bcast.h"

namespace toroid::schedule {

std::vector<LineSend> line_sends(int dim, uint32_t n, uint32_t pos) {
  std::vector<LineSend> out;
  const uint32_t hp = line_hops_plus(n), hm = line_hops_minus(n);
  if (hp) out.push_back(LineSend{dir_of(dim, true), hp, (pos + hp) % n});
  if (hm) out.push_back(LineSend{dir_of(dim, false), hm, (pos + n - hm) % n});
  return out;
}

LineArrival line_arrival(int dim, uint32_t n, uint32_t src, uint32_t pos) {
  if (n < 2 || src == pos) return LineArrival{dir_of(dim, true), 0};
  const uint32_t ahead = (pos + n - src) % n;  // hops from src going plus
  if (ahead <= line_hops_plus(n)) return LineArrival{dir_of(dim, false), ahead};  // went plus: minus port
  return LineArrival{dir_of(dim, true), n - ahead};
}

uint32_t line_source(uint32_t n, uint32_t pos, Dir port, uint32_t hops) {
  if (n == 0) return 0;
  hops %= n;
  return dir_plus(port) ? (pos + hops) % n : (pos + n - hops) % n;
}

std::vector<int> line_multicast_phases(const Dims& dims) {
  std::vector<int> out;
  for (int d = 0; d < kDims; ++d)
    if (dims.n[d] > 1) out.push_back(d);
  return out;
}

McastRole line_multicast_role(const Coord& me, const Coord& root, const Dims& dims) {
  McastRole r;
  for (int d = kDims - 1; d >= 0; --d) {
    if (dims.n[d] > 1 && me.c[d] != root.c[d]) {
      r.recv_dim = d;
      break;
    }
  }
  r.root = r.recv_dim < 0;
  if (!r.root) {
    r.src = me;
    r.src.c[r.recv_dim] = root.c[r.recv_dim];
    r.arrival = line_arrival(r.recv_dim, dims.n[r.recv_dim], root.c[r.recv_dim], me.c[r.recv_dim]);
  }
  for (int d = r.recv_dim + 1; d < kDims; ++d) {
    if (dims.n[d] < 2) continue;
    for (const LineSend& s : line_sends(d, dims.n[d], me.c[d])) r.sends.push_back(McastSend{d, s});
  }
  return r;
}

}  // namespace toroid::schedule
