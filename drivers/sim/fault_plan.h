// The sim rig's seeded fault plan, parsed from the --faults SPEC:
//   drop=P,corrupt=P,dup=P,reorder=P     probabilities in [0, 1], per frame
//   delay=D                              extra fixed latency on every frame ("2us")
//   jitter=D                             extra uniform random latency in [0, D]
//   linkdown=X.Y.Z:DIR@T[+D]            the cable at node X,Y,Z direction DIR
//                                        (x+ x- y+ y- z+ z-) is cut at time T
//                                        ("@300us"; "@0" or no "@" = dead from boot),
//                                        for D ("+2ms": mended then; default: for good)
//   reboot=X.Y.Z@T                       node X,Y,Z restarts at T: a new boot (new
//                                        boot id), its state gone, its job run again
//   stop=X.Y.Z@T[+D]                     node X,Y,Z freezes at T for D (default: for
//                                        good): it runs nothing, frames wait for it (a hung
//                                        process, SIGSTOP)
// linkdown, reboot and stop may repeat. Unknown keys and out-of-range values
// are errors that name the key.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/torus.h"

namespace toroid {

struct LinkDownSpec {
  Coord node;
  Dir dir = Dir::kXp;
  uint64_t at_ns = 0;
  uint64_t for_ns = 0;  // 0: for good
};

// A fault of a whole node (reboot, stop): the sim rig applies it.
struct NodeFaultSpec {
  Coord node;
  uint64_t at_ns = 0;
  uint64_t for_ns = 0;  // stop: how long (0: for good)
};

struct FaultPlan {
  double drop = 0;
  double corrupt = 0;
  double dup = 0;
  double reorder = 0;
  uint64_t delay_ns = 0;
  uint64_t jitter_ns = 0;
  std::vector<LinkDownSpec> linkdown;
  std::vector<NodeFaultSpec> reboot;
  std::vector<NodeFaultSpec> stop;
  bool any_random() const { return drop > 0 || corrupt > 0 || dup > 0 || reorder > 0 || jitter_ns > 0; }
  std::string to_string() const;  // canonical SPEC, "none" when empty
};

// Empty spec or "none" gives an empty plan.
Result<FaultPlan> parse_fault_plan(const std::string& spec, const Dims& dims);

}  // namespace toroid
