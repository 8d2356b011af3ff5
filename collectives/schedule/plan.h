// A plan: one rank's part of a point-to-point collective as a list of steps,
// pure data that the plan runner (collectives/plan_runner.h) executes over
// the communicator's messages and unit tests check without a network.
//
// Offsets and lengths count elements (CollArgs::esize bytes each). Three
// buffers: kIn (the caller's send buffer; the same memory as kOut when the
// operation is in place), kOut (the caller's receive buffer) and kTmp (the
// plan's scratch, tmp_elems elements, owned by the runner).
//
// A step: local copies (`before`), then every send in list order (a message
// to `peer` carrying buf[off, off+n)), then every receive. A receive takes
// the next message from `peer` (messages of one pair arrive in order), which
// must hold exactly n elements, and copies it to buf[off..] or reduces it
// into buf[off..] (buf = buf OP message). Copies may complete in any arrival
// order; reductions apply in list order (so float results do not depend on
// timing) unless the step is `first_come`, where every receive completes in
// arrival order from any of its listed peers. A receive that would overwrite
// what a send of its step reads applies only after that send has left (so a
// step may receive into what it sends); a step ends when all its receives
// applied and all its sends left.
// n = 0 messages still travel: they synchronise (barriers).
#pragma once
#include <cstdint>
#include <vector>

namespace toroid::schedule {

enum class Buf : uint8_t { kIn, kOut, kTmp };
enum class Act : uint8_t { kCopy, kReduce };

struct Copy {
  Buf from;
  uint64_t from_off;
  Buf to;
  uint64_t to_off;
  uint64_t n;
};
struct Send {
  uint32_t peer;
  Buf buf;
  uint64_t off;
  uint64_t n;
};
struct Recv {
  uint32_t peer;
  Buf buf;
  uint64_t off;
  uint64_t n;
  Act act = Act::kCopy;
};
struct Step {
  std::vector<Copy> before;
  std::vector<Send> sends;
  std::vector<Recv> recvs;
  bool first_come = false;
};
struct Plan {
  std::vector<Step> steps;
  std::vector<Copy> finish;  // local copies after the last step
  uint64_t tmp_elems = 0;
};

}  // namespace toroid::schedule
