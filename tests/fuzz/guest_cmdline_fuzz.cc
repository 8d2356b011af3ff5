// Fuzz target: the kernel command line a QEMU node boots with (toroid-node
// as PID 1 reads its toroid.* keys: dims, coordinates, ports as DIR@PCI,
// durations, pass-through flags), and what it derives from it: the modules
// to load and the toroid-node arguments.
// Checked: an accepted command line gives node arguments in flag/value
// pairs, ports with known directions and no direction or PCI address
// twice; an error carries a message.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "firmware/pid1.h"
#include "fuzz_text.h"

using namespace toroid;
using namespace toroid::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string cmdline(reinterpret_cast<const char*>(data), size);
  auto r = parse_guest_cmdline(cmdline);
  if (!r.is_ok()) {
    if (r.status().message().empty()) violated("a command-line error without a message");
    return 0;
  }
  const GuestConfig& c = r.value();
  if (c.node_flags.size() % 2 != 0) violated("pass-through node flags not in flag/value pairs");
  std::set<std::string> dirs, pcis;
  static const std::set<std::string> kDirs = {"x+", "x-", "y+", "y-", "z+", "z-"};
  for (const auto& p : c.ports) {
    if (!kDirs.count(p.dir)) violated("a port with an unknown direction was accepted");
    if (p.pci.empty()) violated("a port without a PCI address was accepted");
    if (!dirs.insert(p.dir).second || !pcis.insert(p.pci).second) violated("a direction or PCI address accepted twice");
  }
  (void)guest_modules(c);
  std::vector<std::string> addrs;
  for (size_t i = 0; i < c.ports.size(); ++i) addrs.push_back(c.ports[i].pci);
  const auto args = guest_node_args(c, addrs);
  for (const auto& a : args)
    if (a.find('\0') != std::string::npos) violated("a node argument with a NUL byte");
  return 0;
}
