// The application of a guest node (the qemu rig's `toroid mpirun --rig qemu`,
// docs/qemu.md): as Blue Gene/L's compute node kernel ran the one
// application of its node, PID 1 runs the program the image carries instead
// of the node's own job, hands it the node's personality the way the host
// launcher does (a personality file named by TOROID_MPI_PERSONALITY, read by
// MPI_Init), relays its output to the console and reports its exit status.
//
// The kernel command line names the application's description in the image,
// `toroid.app=/etc/toroid-app`, a file of "KEY VALUE" lines:
//
//   exec /app/bin/heat3d        the program (required, once)
//   arg 20                      argv[1], argv[2], ... in order (repeatable)
//   env TOROID_REPRO=exact      a variable for the program (repeatable)
//   timeout 600s                how long PID 1 waits for it (default 600s)
//
// '#' starts a comment line. A value runs to the end of its line, spaces
// included.
//
// On the console: "[pid1] ..." lines, every line the program writes to
// stdout as "app.out: LINE" and to stderr as "app.err: LINE", then
// "app node=X,Y,Z status=N" and the node's verdict line (PASS when the
// program exited 0).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "firmware/pid1.h"

namespace toroid {

struct GuestApp {
  std::string exec;
  std::vector<std::string> args;  // argv[1..]
  std::vector<std::string> env;   // KEY=VALUE
  uint64_t timeout_ns = 600ull * 1000 * 1000 * 1000;
};

// Errors name the source and line ("/etc/toroid-app line 3: ...").
Result<GuestApp> parse_guest_app(const std::string& text, const std::string& source);

// The personality file the program reads (job "train": the application is
// the job), for a config whose ports resolved to `port_addrs` as in
// guest_node_args.
Result<std::string> guest_app_personality(const GuestConfig& c, const std::vector<std::string>& port_addrs);

// The program's environment: the app's own variables, then the node's
// settings from the kernel command line as the MPI library reads them
// (train/coll/link timeouts, linger, log levels), PATH, and
// TOROID_MPI_PERSONALITY=personality_path. The app's own win.
std::vector<std::string> guest_app_env(const GuestConfig& c, const GuestApp& app, const std::string& personality_path);

struct AppExit {
  int status = -1;    // exit code, 128+N for signal N, -1 when it did not run
  std::string why;    // empty when it exited 0
};

// Forks and execs the program in its own session (stdin /dev/null), relays
// its output lines to fd 1 until it exits, kills it (the whole session) when
// app.timeout_ns passes. Never throws; errors are in the result.
AppExit run_guest_app(const GuestApp& app, const std::vector<std::string>& env);

// pid1_main's path when toroid.app is given: reads the description, writes
// the personality, runs the program, prints its status and the verdict.
// Returns the program's status.
int pid1_run_app(const Pid1Options& o);

}  // namespace toroid
