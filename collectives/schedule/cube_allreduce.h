// Schedule of seed 001's cube allreduce, methods 300 and 400 (Huawei, "data
// synchronisation in a computing system"; pure: unit-tested without a network).
//
// Eight ranks at the corners of a 2x2x2 box, rank = x + 2y + 4z, each with
// three links (one per axis; on a 2x2x2 torus the plus and minus neighbour
// of an axis are the same node). The cube has six faces in three opposite
// pairs, one pair per normal axis a (the patent's R, G, B: here a = 2, 1, 0);
// every rank lies on one face of each pair. The vector of `count` elements is
// cut into 12 parts: segment a (one per face pair) times 4 sub-segments
// (one per rank of a face); part 4a + k covers [off(4a+k), off(4a+k+1)) with
// off(j) = floor(j * count / 12).
//
// Phase 1, reduce-scatter in every face ring, all six faces at once, 3 steps.
// A face of normal a is a ring in the plane of axes (u, v) = (a+1, a+2) mod 3,
// travelled counter-clockwise seen from outside the cube (right-hand rule,
// thumb out): the face at a = 1 goes (0,0) -> (1,0) -> (1,1) -> (0,1), the
// face at a = 0 the other way round. Two faces that share an edge travel it
// in opposite directions, so the six rings use each of the 24 directed links
// exactly once per step: both directions of every link carry data. A rank at
// ring position p (0..3) ends holding the face's sum of sub-segment
// sigma = (p + c) mod 4, with c = 0 on the a = 1 face and c = 1 on the a = 0
// face: the ring start nodes (the ranks that send sub-segment 0 first) are
// chosen so that opposite faces end with matching sub-segment positions (the
// patent's figure 30): if ranks s and t are neighbours along u on one face and
// s', t' their opposite ranks, sigma(s) = sigma'(t') and sigma(t) = sigma'(s').
//
// Phase 2, combine with the opposite face (partner along u: axis a+1):
//   method 300: opposite ranks swap their face sums (1 step), then the two
//     u-neighbours, which now hold the same two sub-segments, reduce-scatter
//     (1 step): each ends with the full sum of its sigma.
//   method 400: u-neighbours swap their face sums (1 step), then opposite
//     ranks, which now hold the same two sub-segments, allreduce them (1 step).
// Phase 3, allgather in every face:
//   method 300: the face ring again, same direction, 3 steps.
//   method 400: one swap of two sub-segments with the v-neighbour (axis a+2).
// The partner axes a+1 (phase 2) and a+2 (method 400's phase 3) differ for the
// three face pairs, so every phase-2/3 step is again one message each way on
// every link. (With these ring starts the two sub-segments a method-400 pair
// holds are always {0,1} or {2,3}, adjacent in memory: one message.)
//
// Cost: 8 steps (method 300) or 6 (method 400) against 14 for three
// bidirectional rings; every step puts count/12 elements (method 400's last
// two steps: count/6) on each direction of each link, 8 * count/12 = 2/3 count
// per directed link in all, so the pure transfer time is 2q/(3b) for q bytes
// per rank on links of bandwidth b (each way). Every part's sum is computed
// once in phase 1 and once per opposite pair in phase 2 with the same two
// operands (a + b on one side, b + a on the other: bit-identical, all our ops
// commute bit for bit), then only copied: every rank ends bit-identical, in
// an order fixed by the partition.
//
// Limits: exactly a 2x2x2 communicator. It does not generalise as such: it
// needs every face to be a 4-ring whose rank set is a face of the box and
// every rank to lie on exactly one face of each pair, which holds only for
// the 2x2x2 cube. For larger tori the same ideas give the bidirectional
// multi-dimensional ring (one ring per dimension and direction, data split
// between them): the torus group's ring allreduce. Counts below 12 leave some
// parts empty; their messages still travel with no data (the step structure
// and the synchronisation stay the same) and the result is still exact.
#pragma once
#include <cstdint>
#include <string>

#include "base/status.h"
#include "base/torus.h"
#include "collectives/schedule/plan.h"

namespace toroid::schedule {

enum class CubeMethod : uint16_t { k300 = 300, k400 = 400 };

// "" for a 2x2x2 shape, else why not.
std::string cube_applicable(const Dims& shape);

// One rank's place on the face of normal axis a (0..2) it lies on.
struct CubeFace {
  uint32_t next;   // ring successor (phase 1 and method 300's phase 3 send to it)
  uint32_t prev;   // ring predecessor
  uint32_t opp;    // the opposite rank (on the other face of the pair): differs in axis a
  uint32_t pair;   // the phase-2 u-neighbour: differs in axis (a+1) mod 3
  uint32_t third;  // method 400's phase-3 v-neighbour: differs in axis (a+2) mod 3
  uint32_t pos;    // ring position 0..3
  uint32_t sigma;  // the sub-segment whose face sum it holds after phase 1
};
CubeFace cube_face(uint32_t rank, int a);

// First element of part j (0..12) of a vector of `count` elements.
inline uint64_t cube_part_off(uint64_t count, uint32_t j) { return j * (count / 12) + j * (count % 12) / 12; }

uint32_t cube_steps(CubeMethod m);  // 8 or 6

// The plan of rank `rank` on a 2x2x2 communicator; kInvalid for another shape
// or rank.
Result<Plan> cube_allreduce_plan(const Dims& shape, uint32_t rank, uint64_t count, CubeMethod m, bool in_place);

}  // namespace toroid::schedule
