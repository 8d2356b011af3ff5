// Seed 004 B.5, B.7 and B.8: ALLGATHER through an integer SUM over zeros,
// logical ops on one bit per value, and the barrier that every global
// operation implies. See tree_arith.h, sections 6 to 8.
#include "collectives/arith/arith_util.h"
#include "collectives/arith/tree_arith.h"

namespace toroid::arith {

using detail::load;
using detail::store;

// --- ALLGATHER -------------------------------------------------------------------

Result<GatherLayout> plan_gather(uint32_t block, uint32_t nodes) {
  if (nodes == 0) return error(Code::kInvalid, "allgather: no nodes");
  const uint64_t bytes = uint64_t{block} * nodes;
  const uint64_t operands = (bytes + kGatherWidth - 1) / kGatherWidth;
  if (operands > UINT32_MAX) {
    return error(Code::kOutOfRange, "allgather: %u nodes x %u bytes need more than 2^32 operands", nodes, block);
  }
  return GatherLayout{block, nodes, static_cast<uint32_t>(operands)};
}

TreePass gather_pass(const GatherLayout& layout) {
  return TreePass{AluOp::kAdd, AluType::kUnsigned, kGatherWidth, layout.operands};
}

Status gather_encode(const GatherLayout& layout, uint32_t rank, const void* block, uint8_t* out) {
  if (rank >= layout.nodes) {
    return error(Code::kInvalid, "allgather: rank %u outside %u nodes", rank, layout.nodes);
  }
  if (gather_pass(layout).bytes() != 0) std::memset(out, 0, gather_pass(layout).bytes());
  if (layout.block != 0) std::memcpy(out + layout.slot(rank), block, layout.block);
  return Status::ok();
}

void gather_decode(const GatherLayout& layout, const uint8_t* in, void* gathered) {
  if (layout.gathered_bytes() != 0) std::memcpy(gathered, in, layout.gathered_bytes());
}

// --- LAND / LOR / LXOR -------------------------------------------------------------

TreePass logical_pass(Logic l, uint32_t n) {
  const AluOp op = l == Logic::kAnd ? AluOp::kAnd : l == Logic::kOr ? AluOp::kOr : AluOp::kXor;
  return TreePass{op, AluType::kUnsigned, 8, (n + 63) / 64};
}

void logical_encode(const int32_t* x, uint32_t n, uint8_t* out) {
  for (uint32_t w = 0; w < (n + 63) / 64; ++w) {
    uint64_t v = 0;
    for (uint32_t b = 0; b < 64 && 64 * w + b < n; ++b) v |= uint64_t{x[64 * w + b] != 0} << b;
    store(out + 8 * static_cast<size_t>(w), v);
  }
}

void logical_decode(const uint8_t* in, uint32_t n, int32_t* out) {
  for (uint32_t k = 0; k < n; ++k) {
    out[k] = static_cast<int32_t>((load<uint64_t>(in + 8 * static_cast<size_t>(k / 64)) >> (k % 64)) & 1);
  }
}

// --- barrier -------------------------------------------------------------------------

TreePass barrier_pass() { return TreePass{AluOp::kAnd, AluType::kUnsigned, 8, 2}; }

void barrier_encode(uint64_t epoch, uint8_t* out) {
  store(out, epoch);
  store(out + 8, ~epoch);
}

Status barrier_decode(uint64_t epoch, const uint8_t* in) {
  const auto all = load<uint64_t>(in);       // AND of the epochs
  const auto none = ~load<uint64_t>(in + 8);  // OR of the epochs
  if (all != epoch || none != epoch) {
    return error(Code::kInternal, "barrier: epoch %llu here, but nodes entered epochs spanning AND %llu .. OR %llu",
                 static_cast<unsigned long long>(epoch), static_cast<unsigned long long>(all),
                 static_cast<unsigned long long>(none));
  }
  return Status::ok();
}

}  // namespace toroid::arith
