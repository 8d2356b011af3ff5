// Data for the collective jobs (--job coll and the self-test): every node's
// input depends only on (data seed, its linear rank, the element index),
// never on the partition shape, so every node can generate every other
// node's contribution and verify its own result exactly; and the same
// contributions summed on 2x2x2, 4x2x1 and 8x1x1 must give the same bits in
// exact mode.
//
// Values follow per-(datatype, op) patterns whose reduction over the ranks
// has a closed form (coll_pattern.h): wrapping integer SUM/PROD, bitwise ops
// over random masks, small ranges with ties for MIN/MAX and the loc ops
// (index = the rank), sparse zeros for the logical ops, floats of mixed signs
// spread over 36 binades for SUM (so the order of additions changes the
// rounding) and values near 1 for PROD. So a node checks its result in
// O(count), whatever the partition size.
//
// Checking: integer and MIN/MAX/bitwise/logical/loc results are exact;
// float SUM is compared with the correctly rounded sum: equal bits in exact
// mode, within the classical error bound of recursive summation otherwise;
// float PROD within its bound. Rows read from a user's file are reduced
// directly (O(nodes) per element), the sum with the exact big-integer
// accumulator below (written for this check, independent of the library's
// exact mode).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "collectives/dtype.h"
#include "firmware/jobs/coll_pattern.h"

namespace toroid::colldata {

// Element `index` of rank `rank` for (dtype, op), written to out
// (elem_size(dtype, op) bytes; loc ops: the value then the int32 rank).
void element(DType t, ROp op, uint64_t seed, uint64_t rank, uint64_t index, uint8_t* out);
void fill(DType t, ROp op, uint64_t seed, uint64_t rank, uint64_t first, uint64_t count, uint8_t* out);

// An element source: either generated (seed) or rows of a user's file.
class Source {
 public:
  Source(DType t, ROp op, uint64_t seed) : t_(t), op_(op), seed_(seed) {}
  // Rows of `nodes` x `count` elements, row r being rank r's contribution.
  Status load_file(const std::string& path, uint64_t nodes, uint64_t count);
  void get(uint64_t rank, uint64_t index, uint8_t* out) const;
  // For checks that take the same indices from many ranks (gathered,
  // all-to-all): the keys of indices first..first+n-1 once (keys->at(i) is
  // first + i's), then each rank's elements first..first+count-1 from them
  // (at out). Same bits as get().
  void keys(uint64_t first, uint64_t n, std::vector<PatternKeys>* keys) const;
  void rows_keyed(const PatternKeys* keys, uint64_t rank, uint64_t first, uint64_t count, uint8_t* out) const;
  void rows(uint64_t rank, uint64_t first, uint64_t count, uint8_t* out) const;
  bool from_file() const { return !file_.empty(); }
  uint64_t seed() const { return seed_; }

 private:
  DType t_;
  ROp op_;
  uint64_t seed_;
  uint64_t count_ = 0;
  size_t esize_ = 0;
  std::vector<uint8_t> file_;
};

// The reduction of element `index` over ranks 0..nodes-1 of `src`, in rank
// order, written to out. For float SUM the correctly rounded sum; sets
// *bound to the allowed absolute error of a non-exact algorithm (0 for exact
// ops), computed from the inputs.
void reduce_reference(const Source& src, DType t, ROp op, uint64_t nodes, uint64_t index, uint8_t* out,
                      double* bound);
// The same by reducing every rank's element in rank order (what
// reduce_reference does for file data; tests check the closed forms with it).
void reduce_direct(const Source& src, DType t, ROp op, uint64_t nodes, uint64_t index, uint8_t* out,
                   double* bound);

// Whether got is acceptable for want: equal bits, or (floats, bound > 0)
// within bound (NaN matches NaN, infinities must be equal).
bool close_enough(DType t, const uint8_t* got, const uint8_t* want, double bound);

// "12.5" / "-7" / "nan" for messages.
std::string format_element(DType t, ROp op, const uint8_t* p);

// Correctly rounded sum of doubles/floats (exposed for tests): the IEEE
// rules of collectives/arith/tree_arith.h for NaN, infinities and zeros.
double exact_sum(const double* x, size_t n);
float exact_sum(const float* x, size_t n);

}  // namespace toroid::colldata
