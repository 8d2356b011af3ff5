// Runner for suite `deploy` (docs/deploy.md).
//   --only=pure       the topology file, toroid-topo, toroid-node --topology
//   --only=af_xdp     the deploy-like rig over AF_XDP (network namespaces,
//                     veths); exit 77 (skip) saying why when this machine
//                     cannot: not root, no namespaces or veths, no AF_XDP
//   --only=af_packet  the same rig over af_packet (skip: no namespaces/veths)
// Other arguments go to CppUTest (-v, -g GROUP, -n NAME, ...).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "firmware/rig/kernel_links.h"

#include <CppUTest/CommandLineTestRunner.h>

int main(int argc, char** argv) {
  std::string only;
  std::vector<const char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--only=", 7) == 0)
      only = argv[i] + 7;
    else
      args.push_back(argv[i]);
  }
  if (only == "af_xdp" || only == "af_packet") {
    const std::string why = toroid::rig::KernelLinks::missing(only == "af_xdp");
    if (!why.empty()) {
      std::printf("SKIP: the %s rig cannot run here: %s\n", only.c_str(), why.c_str());
      return 77;
    }
    args.insert(args.end(), {"-g", only == "af_xdp" ? "DeployRigAfXdp" : "DeployRigAfPacket"});
  } else if (only == "pure") {
    args.insert(args.end(), {"-g", "Topology", "-g", "DeployCli"});
  }
  return CommandLineTestRunner::RunAllTests(static_cast<int>(args.size()), args.data());
}
