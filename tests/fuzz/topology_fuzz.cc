// Fuzz target: a deployment's topology file (docs/deploy.md), as
// `toroid-node --topology FILE --rank R` and `toroid-topo check` read it:
// parse, the whole-file checks (with the port drivers' address parsers), the
// cabling plan, and every rank's personality.
// Checked: a topology that parses and passes check_topology gives every
// rank a personality that validates (given a job, which a topology may
// leave to toroid-node --job); written out by topology_text() it
// reads back and passes the checks again; an error carries a message.
#include <cstdint>
#include <string>

#include "firmware/personality.h"
#include "firmware/topology.h"
#include "firmware/topology_check.h"
#include "fuzz_text.h"

using namespace toroid;
using namespace toroid::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto r = parse_topology_text(text, "fuzz");
  if (!r.is_ok()) {
    if (r.status().message().empty()) violated("a topology error without a message");
    return 0;
  }
  const Topology& t = r.value();
  if (t.nodes.size() > 512) return 0;  // the checks are quadratic in places: keep each input fast
  const auto problems = check_topology(t);
  if (!problems.empty()) {
    for (const auto& p : problems)
      if (p.empty()) violated("an empty topology problem line");
    return 0;
  }
  (void)cabling_plan(t);
  for (const TopoNode& n : t.nodes) {
    auto p = personality_for_rank(t, n.rank);
    if (!p.is_ok()) {
      std::fprintf(stderr, "rank %u: %s\n", n.rank, p.status().message().c_str());
      violated("a checked topology gives a rank no personality");
    }
    // The job is optional in a topology (toroid-node --job names it then).
    Personality pers = p.value();
    if (pers.job.empty()) pers.job = "selftest";
    if (Status st = validate(pers); !st) {
      std::fprintf(stderr, "rank %u: %s\n", n.rank, st.message().c_str());
      violated("a checked topology gives a rank a personality that does not validate");
    }
  }
  const std::string written = topology_text(t, "fuzz");
  auto back = parse_topology_text(written, "written");
  if (!back.is_ok()) {
    std::fprintf(stderr, "written:\n%s\nerror: %s\n", written.c_str(), back.status().message().c_str());
    violated("a checked topology, written out, does not read back");
  }
  if (!check_topology(back.value()).empty()) violated("a checked topology, written out and read back, fails the checks");
  if (back.value().nodes.size() != t.nodes.size()) violated("a topology read back has another number of nodes");
  return 0;
}
