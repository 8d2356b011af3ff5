#include "collectives/schedule/cube_allreduce.h"

#include <array>
#include <utility>

namespace toroid::schedule {

namespace {

constexpr uint32_t kCubeRanks = 8;

uint32_t bit(uint32_t rank, int axis) { return (rank >> axis) & 1u; }
uint32_t flip(uint32_t rank, int axis) { return rank ^ (1u << axis); }

// Counter-clockwise ring positions in a (u, v) square and back.
constexpr uint32_t kCcwPos[2][2] = {{0, 1}, {3, 2}};  // [v][u]
constexpr uint32_t kCcwU[4] = {0, 1, 1, 0};
constexpr uint32_t kCcwV[4] = {0, 0, 1, 1};

// The rank at ring position `pos` of the face of normal `a` at side `side`.
uint32_t at_pos(int a, uint32_t side, uint32_t pos) {
  const int ua = (a + 1) % 3, va = (a + 2) % 3;
  uint32_t u = kCcwU[pos % 4], v = kCcwV[pos % 4];
  if (side == 0) std::swap(u, v);  // the a = 0 face turns the other way seen along +a
  return (side << a) | (u << ua) | (v << va);
}

// The plan's parts: part 4a + k of `count` elements.
struct Parts {
  uint64_t count;
  uint64_t off(int a, uint32_t k) const { return cube_part_off(count, 4 * a + k % 4); }
  uint64_t len(int a, uint32_t k) const {
    return cube_part_off(count, 4 * a + k % 4 + 1) - cube_part_off(count, 4 * a + k % 4);
  }
};

void send_part(Step& st, const Parts& p, uint32_t peer, int a, uint32_t k) {
  st.sends.push_back(Send{peer, Buf::kOut, p.off(a, k), p.len(a, k)});
}
void recv_part(Step& st, const Parts& p, uint32_t peer, int a, uint32_t k, Act act) {
  st.recvs.push_back(Recv{peer, Buf::kOut, p.off(a, k), p.len(a, k), act});
}

// Two sub-segments {k1, k2} of segment a, in ascending order, as one message
// when they are adjacent in memory, else two. Both ends compute the same list.
std::vector<std::pair<uint64_t, uint64_t>> pair_ranges(const Parts& p, int a, uint32_t k1, uint32_t k2) {
  if (k1 > k2) std::swap(k1, k2);
  if (k2 == k1 + 1) return {{p.off(a, k1), p.len(a, k1) + p.len(a, k2)}};
  return {{p.off(a, k1), p.len(a, k1)}, {p.off(a, k2), p.len(a, k2)}};
}

}  // namespace

std::string cube_applicable(const Dims& shape) {
  if (shape == Dims{{2, 2, 2}}) return "";
  return "needs a 2x2x2 communicator (this one is " + shape.to_string() + ")";
}

CubeFace cube_face(uint32_t rank, int a) {
  const int ua = (a + 1) % 3, va = (a + 2) % 3;
  const uint32_t side = bit(rank, a), u = bit(rank, ua), v = bit(rank, va);
  CubeFace f;
  f.pos = side == 1 ? kCcwPos[v][u] : kCcwPos[u][v];
  f.sigma = (f.pos + (side == 1 ? 0 : 1)) % 4;
  f.next = at_pos(a, side, f.pos + 1);
  f.prev = at_pos(a, side, f.pos + 3);
  f.opp = flip(rank, a);
  f.pair = flip(rank, ua);
  f.third = flip(rank, va);
  return f;
}

uint32_t cube_steps(CubeMethod m) { return m == CubeMethod::k300 ? 8 : 6; }

Result<Plan> cube_allreduce_plan(const Dims& shape, uint32_t rank, uint64_t count, CubeMethod m, bool in_place) {
  if (std::string why = cube_applicable(shape); !why.empty())
    return error(Code::kInvalid, "cube%u allreduce %s", static_cast<unsigned>(m), why.c_str());
  if (rank >= kCubeRanks) return error(Code::kInvalid, "cube allreduce: rank %u of 8", rank);
  if (m != CubeMethod::k300 && m != CubeMethod::k400)
    return error(Code::kInvalid, "cube allreduce: no method %u (300 or 400)", static_cast<unsigned>(m));
  const Parts parts{count};
  std::array<CubeFace, 3> f;
  for (int a = 0; a < 3; ++a) f[a] = cube_face(rank, a);
  // Figure 30's condition, checked rather than trusted: the u-neighbour holds
  // what the opposite rank's u-neighbour does not, and vice versa.
  for (int a = 0; a < 3; ++a) {
    const CubeFace w = cube_face(f[a].pair, a), o = cube_face(f[a].opp, a), wo = cube_face(w.opp, a);
    if (o.sigma != w.sigma || wo.sigma != f[a].sigma || w.sigma == f[a].sigma)
      return error(Code::kInternal, "cube allreduce: ring start nodes of face pair %d do not match (rank %u)", a,
                   rank);
  }

  Plan plan;
  // Phase 1: reduce-scatter in the three face rings. In step t a rank sends
  // sub-segment sigma-1-t (its own data at t = 0, else what it reduced in
  // step t-1) and reduces sub-segment sigma-2-t from its predecessor; the
  // last step completes sigma.
  for (uint32_t t = 0; t < 3; ++t) {
    Step st;
    for (int a = 0; a < 3; ++a) send_part(st, parts, f[a].next, a, f[a].sigma + 3 - t);
    for (int a = 0; a < 3; ++a) recv_part(st, parts, f[a].prev, a, f[a].sigma + 2 - t, Act::kReduce);
    plan.steps.push_back(std::move(st));
  }
  if (m == CubeMethod::k300) {
    // 2a: swap face sums with the opposite rank. Its sigma is the
    // u-neighbour's, a slot this rank no longer needs.
    Step swap;
    for (int a = 0; a < 3; ++a) send_part(swap, parts, f[a].opp, a, f[a].sigma);
    for (int a = 0; a < 3; ++a)
      recv_part(swap, parts, f[a].opp, a, cube_face(f[a].opp, a).sigma, Act::kCopy);
    plan.steps.push_back(std::move(swap));
    // 2b: reduce-scatter with the u-neighbour: give it the opposite face's
    // sum of its sigma, take the opposite face's sum of ours.
    Step rs;
    for (int a = 0; a < 3; ++a) send_part(rs, parts, f[a].pair, a, cube_face(f[a].pair, a).sigma);
    for (int a = 0; a < 3; ++a) recv_part(rs, parts, f[a].pair, a, f[a].sigma, Act::kReduce);
    plan.steps.push_back(std::move(rs));
    // Phase 3: allgather in the face rings, same direction as phase 1.
    for (uint32_t t = 0; t < 3; ++t) {
      Step st;
      for (int a = 0; a < 3; ++a) send_part(st, parts, f[a].next, a, f[a].sigma + 4 - t);
      for (int a = 0; a < 3; ++a) recv_part(st, parts, f[a].prev, a, f[a].sigma + 3 - t, Act::kCopy);
      plan.steps.push_back(std::move(st));
    }
  } else {
    // 2a: swap face sums with the u-neighbour.
    Step swap;
    for (int a = 0; a < 3; ++a) send_part(swap, parts, f[a].pair, a, f[a].sigma);
    for (int a = 0; a < 3; ++a)
      recv_part(swap, parts, f[a].pair, a, cube_face(f[a].pair, a).sigma, Act::kCopy);
    plan.steps.push_back(std::move(swap));
    // 2b: allreduce both sub-segments with the opposite rank (it holds the
    // same two, summed over the opposite face).
    Step ar;
    for (int a = 0; a < 3; ++a)
      for (auto [off, n] : pair_ranges(parts, a, f[a].sigma, cube_face(f[a].pair, a).sigma))
        ar.sends.push_back(Send{f[a].opp, Buf::kOut, off, n});
    for (int a = 0; a < 3; ++a)
      for (auto [off, n] : pair_ranges(parts, a, f[a].sigma, cube_face(f[a].pair, a).sigma))
        ar.recvs.push_back(Recv{f[a].opp, Buf::kOut, off, n, Act::kReduce});
    plan.steps.push_back(std::move(ar));
    // Phase 3: swap the two finished sub-segments with the v-neighbour, which
    // holds the other two.
    Step ag;
    for (int a = 0; a < 3; ++a)
      for (auto [off, n] : pair_ranges(parts, a, f[a].sigma, cube_face(f[a].pair, a).sigma))
        ag.sends.push_back(Send{f[a].third, Buf::kOut, off, n});
    for (int a = 0; a < 3; ++a) {
      const CubeFace v = cube_face(f[a].third, a);
      for (auto [off, n] : pair_ranges(parts, a, v.sigma, cube_face(v.pair, a).sigma))
        ag.recvs.push_back(Recv{f[a].third, Buf::kOut, off, n, Act::kCopy});
    }
    plan.steps.push_back(std::move(ag));
  }
  if (!in_place) plan.steps.front().before.push_back(Copy{Buf::kIn, 0, Buf::kOut, 0, count});
  return plan;
}

}  // namespace toroid::schedule
