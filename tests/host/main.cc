// Runner for suite `host`.
//   --only=pure    wiring, personalities, node event lines, the bench
//                  sweep's aggregation and the bench job on a sim rig (no processes)
//   --only=uring   rigs over io_uring sockets (the bench sweep and the link
//                  bench too: groups HostRigUring*), and the node's command line
//   --only=memif   rigs over DPDK memif; exit 77 (skip) when EAL cannot
//                  come up on this machine (toroid-node --check-eal says why)
// Other arguments go to CppUTest (-v, -g GROUP, -n NAME, ...).
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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
  if (only == "memif") {
    const char* node = std::getenv("TOROID_NODE");
    if (!node) {
      std::printf("TOROID_NODE is not set (meson sets it)\n");
      return 1;
    }
    const std::string cmd = std::string("timeout 60 ") + node + " --check-eal 2>&1";
    const int st = std::system(cmd.c_str());
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      std::printf("memif rig tests skipped: EAL cannot come up here\n");
      return 77;
    }
    args.insert(args.end(), {"-g", "HostRigMemif"});
  } else if (only == "uring") {
    args.insert(args.end(), {"-g", "HostRigUring", "-g", "HostNodeCli"});
  } else if (only == "pure") {
    args.insert(args.end(), {"-g", "HostWiring", "-g", "HostEvents", "-g", "HostBench"});
  }
  return CommandLineTestRunner::RunAllTests(static_cast<int>(args.size()), args.data());
}
