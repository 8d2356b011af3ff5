// Fuzz target: the personality, as a key = value file and as command-line
// flags (the two share one parser), and its text form read back.
// Input: first byte picks the form; the rest is the file, or the flags
// separated by NUL bytes (argv as the kernel hands it over).
// Checked: whatever parses and validates is written out by
// personality_text() and reads back to the same personality (describe()
// equal, ports equal); an error always carries a message.
#include <cstdint>
#include <string>
#include <vector>

#include "firmware/personality.h"
#include "fuzz_text.h"

using namespace toroid;
using namespace toroid::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  Result<Personality> r = Personality{};
  if (data[0] & 1) {
    std::vector<std::string> args = split_nul(rest);
    // --personality FILE reads a file: not the bytes under test (and the
    // fuzzer could name a device that blocks).
    for (const std::string& a : args)
      if (a == "--personality") return 0;
    r = parse_personality_args(args);
  } else {
    r = parse_personality_text(rest, "fuzz");
  }
  if (!r.is_ok()) {
    if (r.status().message().empty()) violated("a personality error without a message");
    return 0;
  }
  const Personality& p = r.value();
  if (!validate(p).is_ok()) return 0;
  const std::string text = personality_text(p, "fuzz");
  auto back = parse_personality_text(text, "written");
  if (!back.is_ok()) {
    std::fprintf(stderr, "written:\n%s\nerror: %s\n", text.c_str(), back.status().message().c_str());
    violated("a valid personality, written out, does not read back");
  }
  const Personality& q = back.value();
  if (q.describe() != p.describe() || q.ports.size() != p.ports.size() || q.job_args != p.job_args)
    violated("a personality read back differs from the one written");
  for (size_t i = 0; i < p.ports.size(); ++i) {
    const PortSpec &a = p.ports[i], &b = q.ports[i];
    if (a.name != b.name || a.dir != b.dir || a.driver != b.driver || a.address != b.address || a.mtu != b.mtu ||
        a.numa != b.numa || a.cable != b.cable)
      violated("a port read back differs from the one written");
  }
  return 0;
}
