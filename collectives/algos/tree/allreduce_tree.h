// allreduce `tree` (seed 004 B): every (datatype, op) mapped onto the
// combine network's integer ALU by the seed's methods (the codec table in
// collectives/schedule/tree_codec.h): integer SUM natively (unsigned) or by
// bias / sign extension (signed), MIN/MAX by order keys, bitwise ops on the
// raw bytes, logical ops on one bit per value, MINLOC/MAXLOC packed (value
// key high, 2^32 - 1 - index low, so ties go to the lower index), float SUM
// by the two-pass exact method (TreeFloatSum: always correctly rounded, so
// bit-identical on every node and every shape), float MIN/MAX by the
// totalOrder transform. Also the internal kAluWord datatype (exact mode's
// integer passes): the engine runs the Reducer's ALU op directly.
//
// Cost: one pass up and down the tree, 2 x depth hops (depth = the torus
// radius), pipelined; per node pass.bytes() sent up and received down: 1x
// the data for unsigned SUM, bitwise ops and MIN/MAX of 32/64-bit types,
// 2x for signed 32/64-bit SUM (sign extension), 4x for int8/int16 SUM and
// MIN/MAX (4-byte words), 1/8 bit per value for logical ops; float SUM 24
// bytes per value in pass 1 and 16 to 512 in pass 2 (tree_arith.h).
// Limits: needs a combine-network class spanning the communicator; no PROD
// ("the combine ALU has no multiply"); fewer than 2^32 operands per pass.
// Float MIN/MAX return the default quiet NaN for any NaN (the datatype
// kernels keep the first NaN's payload). Logical ops write 0/1 also on a
// one-node communicator.
#pragma once
#include <string>

#include "collectives/algos/tree/tree_runner.h"
#include "collectives/coll.h"

namespace toroid {

std::string tree_allreduce_applicable(const CommInfo& comm, const CollArgs& args);

class TreeAllreduce final : public TreeAlgo {
 public:
  Status start(Comm& comm, const CollArgs& args) override;

};

}  // namespace toroid
