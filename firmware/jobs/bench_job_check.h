// The bench job's buffers for one operation, and its check of every
// repetition (firmware/jobs/bench_job.h).
//
// Inputs come from the collective jobs' data source (coll_data.h: node r's
// element i depends only on the seed, r and i), so every node knows what
// every other node contributed and computes the expected output itself.
// Checking all of a 4 MiB result after every repetition would cost more than
// the operation, so the check reads all output elements up to 64 and a fixed
// sample beyond: for the block outputs (allgather, alltoall) the first,
// middle and last element of every block, otherwise 16 elements spread over
// the buffer, the first and last among them. The expected values are
// computed once per size; before each repetition the checked elements are
// overwritten with their complement, so a repetition that leaves them
// untouched cannot pass. After the timed repetitions of a size, one more,
// untimed, is checked whole: every output element poisoned before it and
// compared after it. Integer and data-moving results must match bit for
// bit, float sums within the error bound of their order (bit for bit in
// exact mode), as `--job coll` checks them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/coll.h"
#include "firmware/jobs/coll_data.h"

namespace toroid {

class BenchCheck {
 public:
  // Buffers of one operation (count as in CollArgs, root 0) for this node,
  // rank of size, with the inputs of data seed `seed`, and the expected
  // values of the elements it checks.
  void prepare(CollKind kind, DType t, ROp op, Repro r, uint64_t count, uint32_t rank, uint32_t size, uint64_t seed);
  // The operation's arguments (pointers into this object's buffers).
  CollArgs args();
  // Before a repetition: every checked element set to its expected value's
  // complement (not the source buffer of the bcast root).
  void poison();
  // After a repetition: ok, or the first wrong element ("element 17 (block
  // of rank 3) is 5, expected 6").
  Status check() const;
  // The untimed repetition: poison() and check() of every output element.
  void poison_whole();
  Status check_whole() const { return check_whole(0, whole_elements()); }
  // Output elements [from, to) only: the bench checks a large output in
  // slices between polls of the network (an exact float sum's expected
  // values cost about a microsecond each, and a node that stops polling for
  // half a second has its links declared down by its neighbours).
  Status check_whole(uint64_t from, uint64_t to) const;
  // Elements checked per repetition on this node; by the whole check.
  size_t checked() const { return pos_.size(); }
  uint64_t whole_elements() const;
  // Frees the buffers (between sizes and at the end of the sweep).
  void release();

 private:
  CollKind kind_ = CollKind::kBarrier;
  DType t_ = DType::kInt64;
  ROp op_ = ROp::kSum;
  Repro repro_ = Repro::kNone;
  uint64_t count_ = 0;
  uint32_t rank_ = 0, size_ = 1;
  size_t esize_ = 0;
  std::vector<uint8_t> send_, recv_;
  bool poison_ok_ = true;      // false on the bcast root: its output is the source
  std::vector<uint64_t> pos_;  // checked output elements
  std::vector<uint8_t> want_;  // their expected values, esize_ bytes each
  std::vector<double> bound_;  // allowed absolute error (float reductions outside exact mode)
  uint64_t seed_ = 0;

  // The expected value of output element p (and its error bound).
  void expected(const colldata::Source& src, uint64_t p, uint8_t* w, double* bound) const;
  Status compare(uint64_t p, const uint8_t* w, double bound) const;
};

}  // namespace toroid
