// One collective operation as a checkable case, shared by `--job coll` and
// the self-test: builds this node's buffers from the data source (every
// node's input depends only on the data seed, its rank and the element
// index), starts nothing itself (args() goes to Comm::start), then checks
// this node's output against values computed from every rank's input, and
// fingerprints it.
//
// Input rows (what --input FILE holds per rank, `row_elems` elements):
//   allreduce, reduce, bcast, gather, allgather   count
//   scatter, alltoall, reduce-scatter             size * count (block j: elements j*count ..)
// bcast and scatter use only the root's row.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "collectives/coll.h"
#include "firmware/jobs/coll_data.h"

namespace toroid {

struct CaseSpec {
  CollKind kind = CollKind::kAllreduce;
  std::string algo;  // "" = the selector's choice
  DType dtype = DType::kInt64;
  ROp op = ROp::kSum;
  uint64_t count = 0;
  bool in_place = false;
  Repro repro = Repro::kNone;
  uint32_t root = 0;
  uint32_t buffer_blocks = 0;
  uint64_t seed = 1;
  // "int32 sum n=1001 in-place fixed-order"
  std::string label() const;
};

// Whether the kind has an in-place form (MPI's): allreduce, reduce, gather,
// allgather, reduce-scatter, alltoall.
bool has_in_place(CollKind k);
uint64_t row_elems(CollKind k, uint64_t size, uint64_t count);

class CollCase {
 public:
  // Buffers for this node (rank of size) from src.
  void prepare(const CaseSpec& spec, uint32_t rank, uint32_t size, const colldata::Source& src);
  CollArgs args();
  // After the operation finished ok: every element of this node's output
  // checked; the message names the first wrong element.
  Status verify() const;
  // This node's output (empty where the kind leaves none here).
  const uint8_t* output() const { return out_ptr_; }
  size_t output_bytes() const { return out_bytes_; }
  std::string sha256() const;
  uint64_t checked() const { return checked_; }
  // While verify() runs on a real clock, one round of `loop` every
  // kVerifyTickElems elements: a long check (a sanitizer build, nodes sharing
  // cores) must not keep the links from answering their neighbours'
  // keepalives. The nested round skips the poller the check runs in. Virtual
  // time does not move during a check, so a sim node runs none.
  static constexpr uint64_t kVerifyTickElems = 4096;
  void serve_loop_while_checking(EventLoop& loop) { loop_ = loop.clock().is_virtual() ? nullptr : &loop; }

 private:
  CaseSpec spec_;
  uint32_t rank_ = 0, size_ = 1;
  const colldata::Source* src_ = nullptr;
  size_t esize_ = 0;
  std::vector<uint8_t> send_, recv_;
  const uint8_t* out_ptr_ = nullptr;
  size_t out_bytes_ = 0;
  mutable uint64_t checked_ = 0;
  EventLoop* loop_ = nullptr;
};

}  // namespace toroid
