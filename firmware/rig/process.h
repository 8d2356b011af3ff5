// Child processes for the host rig: spawn with the child's stdout and
// stderr on one pipe (lines stay whole: each is one write under PIPE_BUF),
// split what arrives into lines, read a child's CPU time and memory from
// /proc. Only the rig's own children are ever signalled, by pid.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace toroid::rig {

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // read end (non-blocking, close-on-exec): stdout + stderr
};

// fork + exec argv[0]. The child gets its own process group (a terminal's
// Ctrl-C reaches the rig only; the rig stops nodes in order) and SIGTERM
// when the rig dies (PR_SET_PDEATHSIG).
Result<Child> spawn(const std::vector<std::string>& argv);

// Accumulates bytes and hands out complete lines (without the newline).
class LineBuffer {
 public:
  void feed(const char* data, size_t n) { buf_.append(data, n); }
  bool next(std::string* line);
  // What is left without a newline (at EOF).
  std::string take_rest();

 private:
  std::string buf_;
  size_t pos_ = 0;
};

// utime + stime of every thread of pid, in clock ticks; -1 if unreadable.
int64_t proc_cpu_ticks(pid_t pid);
// A field of /proc/pid/status in KiB ("VmRSS", "VmHWM"); 0 if unreadable.
uint64_t proc_status_kb(pid_t pid, const char* field);
long clock_ticks_per_second();
// "exited with status 1", "killed by SIGSEGV".
std::string describe_exit(int wait_status);

uint64_t mono_ns();
// "1500ms": ns rounded up to whole ms, the form the node's timeout flags take.
std::string ms_arg(uint64_t ns);

// A supervisor's signals (the host rig, toroid-mpirun): SIGINT, SIGTERM and
// SIGHUP are counted, SIGCHLD only wakes, SIGPIPE is ignored. Each handler
// writes a byte to a self-pipe whose read end the supervisor polls beside
// its children's output. Idempotent.
void install_supervisor_signals();
int signal_wake_fd();        // the pipe's read end; -1 if it could not be made
void drain_signal_wake();    // empties the pipe after poll() found it readable
int interrupts_received();   // SIGINT/SIGTERM/SIGHUP seen so far

// Runs argv[0] (a full path) to completion, at most timeout_ns (then
// SIGKILL), and returns what it printed; a non-zero exit is an error that
// names the command and carries its output.
Result<std::string> run_command(const std::vector<std::string>& argv, uint64_t timeout_ns);

}  // namespace toroid::rig
