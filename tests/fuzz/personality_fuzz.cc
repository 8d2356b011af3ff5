// Fuzz target: the personality, as a key = value file and as command-line
// flags (the two share one parser), and its text form read back.
// Input: first byte picks the form; the rest is the file, or the flags
// separated by NUL bytes (argv as the kernel hands it over).
// Checked: flags that parse say what was read: the last --job, --partition
// and --arg KEY=VALUE are the personality's (blanks around them aside),
// and there are as many ports as --port flags; whatever parses and
// validates is written out by personality_text() and reads back to the same
// personality (describe() equal, ports equal); an error carries a message.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/text.h"
#include "firmware/personality.h"
#include "fuzz_text.h"

using namespace toroid;
using namespace toroid::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  Result<Personality> r = Personality{};
  std::vector<std::string> args;
  if (data[0] & 1) {
    args = split_nul(rest);
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
  // What the flags said (the last of each wins), against what was read.
  size_t port_flags = 0;
  std::string job, partition;
  std::map<std::string, std::string> job_args;
  bool args_known = true;  // "--arg K V" (no '=') is split at the blank: not modelled here
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& v = args[i + 1];
    if (args[i] == "--port") ++port_flags;
    if (args[i] == "--job") job = trim(v);
    if (args[i] == "--partition") partition = trim(v);
    if (args[i] == "--arg" && v.find('=') == std::string::npos) args_known = false;
    if (args[i] == "--arg") job_args[trim(v.substr(0, v.find('=')))] = trim(v.substr(v.find('=') + 1));
  }
  if (!args.empty()) {
    if (!job.empty() && p.job != job) violated("the last --job is not the job read");
    if (!partition.empty() && p.partition != partition) violated("the last --partition is not the partition read");
    if (p.ports.size() != port_flags) violated("not as many ports as --port flags");
    if (args_known && p.job_args != job_args) violated("the --arg flags are not the job arguments read");
  }
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
