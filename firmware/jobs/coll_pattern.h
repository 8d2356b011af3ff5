// Generated input data for the collective jobs, chosen so that the reduction
// of an element over ranks 0..N-1 has a closed form: checking a result costs
// O(count) per node, not O(N * count), which is what lets the self-test verify
// itself on a 65,536-node partition (and on reduce-scatter, where every node
// checks a different slice).
//
// Element `index` of rank r depends only on (seed, r, index), never on the
// partition, so every node can generate any other node's input, and the same
// contributions on 2x2x2, 4x2x1 and 8x1x1 give the same exact-mode bits.
// Per element, random keys (from seed and index) choose the pattern's
// parameters; the rank enters as follows (w = the type's width, every
// integer result taken mod 2^w):
//
//   integer SUM     a + b r + c r^2                 sum: a N + b S1 + c S2
//   integer PROD    c d^r (c, d odd)                product: c^N d^(N(N-1)/2)
//   BXOR            a ^ g(r), g linear over GF(2)   a if N odd, ^ g(r_0 ^ .. ^ r_{N-1})
//   BAND / BOR      a | m(r mod 64) / a & M(r mod 64)   over the first min(N, 64) masks
//   MIN .. MAXLOC   q(r) = (r m + s) mod 9, m coprime to 9: -4..4 (unsigned 0..8,
//                   floats x 0.5), period 9, so ties, and the lowest rank wins
//   LAND .. LXOR    0 where (r + s) mod 7 == 0, else 1 + (r + t) mod 3
//   float SUM       +-(A + B r) 2^(E + 6 (r mod 7)), the sign fixed per r mod 7:
//                   mixed signs, 36 binades, so the order of additions changes the rounding;
//                   the exact sum is an integer times 2^E, rounded once
//   float PROD      (r even ? c : 2 - c) 2^((r + s) mod 3 - 1), c in [1, 1 + 2^-10)
//
// The float SUM closed form needs |A + B r| exact in the type: always for
// double, for float up to N = 2^20 ranks; beyond, the caller reduces directly.
#pragma once
#include <cstdint>

#include "collectives/dtype.h"

namespace toroid::colldata {

// Element `index` of rank `rank` (elem_size(t, op) bytes; loc ops: the value
// then the int32 rank).
void pattern_element(DType t, ROp op, uint64_t seed, uint64_t rank, uint64_t index, uint8_t* out);
// Elements first .. first + count - 1 of rank `rank`, one after another at
// out (identical bits to pattern_element for each; one call for a row).
void pattern_row(DType t, ROp op, uint64_t seed, uint64_t rank, uint64_t first, uint64_t count, uint8_t* out);

// The same in two steps, for callers that generate one index for many ranks
// (a gathered or all-to-all result): the keys of (seed, index) once, then
// the element of each rank from them. Identical bits to pattern_element.
struct PatternKeys {
  uint64_t a, b, c;
};
PatternKeys pattern_keys(uint64_t seed, uint64_t index);
void pattern_element_keyed(DType t, ROp op, const PatternKeys& k, uint64_t rank, uint8_t* out);
// count elements of rank `rank`, element i from keys[i], one after another
// at out (identical bits to pattern_element_keyed for each).
void pattern_row_keyed(DType t, ROp op, const PatternKeys* keys, uint64_t rank, uint64_t count, uint8_t* out);

// The reduction of element `index` over ranks 0..nodes-1, as the rank-order
// reduction gives it (float SUM: correctly rounded; float PROD: within a
// few ulps of long double), and *bound the error a non-exact algorithm may
// make (0 for exact ops). False when no closed form applies.
bool pattern_reduce(DType t, ROp op, uint64_t seed, uint64_t nodes, uint64_t index, uint8_t* out, double* bound);

}  // namespace toroid::colldata
