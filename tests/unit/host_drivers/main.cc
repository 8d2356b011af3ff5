// Runner for the host driver tests. The DPDK half needs EAL, which comes up
// once per process, so main() brings it up before any test and tears it
// down after all of them.
//   --only=uring   io_uring tests and spec parsing (no EAL)
//   --only=dpdk    DPDK tests; exit 77 (skip) if EAL cannot initialise
//   (neither)      both; if EAL fails the DPDK tests are left out and the
//                  exit status is 77 when everything else passed
// Other arguments go to CppUTest (-v, -g GROUP, -n NAME, ...).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "drivers/dpdk/eal.h"
#include "host_test_util.h"

#include <CppUTest/CommandLineTestRunner.h>

namespace host_test {
DpdkEnv& dpdk_env() {
  static DpdkEnv env;
  return env;
}
}  // namespace host_test

namespace {

toroid::Status init_dpdk() {
  auto& env = host_test::dpdk_env();
  env.dir = "/tmp/toroid-test-" + std::to_string(getpid());
  if (mkdir(env.dir.c_str(), 0700) != 0 && errno != EEXIST)
    return toroid::error(toroid::Code::kIo, "mkdir %s: %s", env.dir.c_str(), std::strerror(errno));
  env.std_socket = env.dir + "/std.sock";
  env.std_server = "memif:role=server,socket=" + env.std_socket + ",id=0";
  env.std_client = "memif:role=client,socket=" + env.std_socket + ",id=0";
  toroid::EalOptions opt;
  opt.tag = "unit";
  // Listed client first on purpose: eal_init must still probe the server first.
  opt.port_specs = {env.std_client, env.std_server};
  // The pools the tests create: 4095 standard, 2047 jumbo, 1023 standard.
  opt.memory_mb =
      toroid::eal_memory_mb(4095, 2048) + toroid::eal_memory_mb(2047, 9216) + toroid::eal_memory_mb(1023, 2048);
  toroid::Status st = toroid::eal_init(opt);
  if (!st) {
    rmdir(env.dir.c_str());
    return st;
  }
  std::string args;
  for (const auto& a : toroid::eal_args()) args += " " + a;
  std::printf("EAL up:%s\n", args.c_str());
  env.ready = true;
  return st;
}

void cleanup_dpdk() {
  auto& env = host_test::dpdk_env();
  toroid::eal_cleanup();
  // Anything left in the socket directory is a bug the tests report; clear
  // it so the next run starts clean.
  const std::string left = env.dir + "/std.sock";
  unlink(left.c_str());
  rmdir(env.dir.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  enum class Only { kAll, kUring, kDpdk } only = Only::kAll;
  std::vector<const char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--only=uring") == 0)
      only = Only::kUring;
    else if (std::strcmp(argv[i], "--only=dpdk") == 0)
      only = Only::kDpdk;
    else
      args.push_back(argv[i]);
  }
  bool dpdk = false;
  if (only != Only::kUring) {
    toroid::Status st = init_dpdk();
    if (st) {
      dpdk = true;
    } else {
      std::printf("DPDK tests skipped: EAL cannot initialise here: %s\n", st.to_string().c_str());
      if (only == Only::kDpdk) return 77;
    }
  }
  if (only == Only::kDpdk) {
    args.push_back("-g");
    args.push_back("Dpdk");
  } else if (only == Only::kUring || !dpdk) {
    args.push_back("-xg");
    args.push_back("Dpdk");
  }
  const int rc = CommandLineTestRunner::RunAllTests(static_cast<int>(args.size()), args.data());
  if (dpdk) cleanup_dpdk();
  if (only == Only::kAll && !dpdk && rc == 0) return 77;
  return rc;
}
