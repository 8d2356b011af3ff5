// The sim rig's seeded fault plan, parsed from the --faults SPEC:
//   drop=P,corrupt=P,dup=P,reorder=P     probabilities in [0, 1], per frame
//   delay=D                              extra fixed latency on every frame ("2us")
//   jitter=D                             extra uniform random latency in [0, D]
//   linkdown=X.Y.Z:DIR@T                 the cable at node X,Y,Z direction DIR
//                                        (x+ x- y+ y- z+ z-) is cut at time T
//                                        ("@300us"; "@0" or no "@" = dead from boot)
// linkdown may repeat. Unknown keys and out-of-range values are errors that
// name the key.
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
};

struct FaultPlan {
  double drop = 0;
  double corrupt = 0;
  double dup = 0;
  double reorder = 0;
  uint64_t delay_ns = 0;
  uint64_t jitter_ns = 0;
  std::vector<LinkDownSpec> linkdown;
  bool any_random() const { return drop > 0 || corrupt > 0 || dup > 0 || reorder > 0 || jitter_ns > 0; }
  std::string to_string() const;  // canonical SPEC, "none" when empty
};

// Empty spec or "none" gives an empty plan.
Result<FaultPlan> parse_fault_plan(const std::string& spec, const Dims& dims);

}  // namespace toroid
