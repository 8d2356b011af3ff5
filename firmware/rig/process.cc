#include "firmware/rig/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "base/clock.h"

namespace toroid::rig {

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kSec + static_cast<uint64_t>(ts.tv_nsec);
}

Result<Child> spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) return error(Code::kInvalid, "spawn: empty argv");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return error(Code::kIo, "pipe: %s", std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return error(Code::kIo, "fork: %s", std::strerror(err));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(126);  // the rig died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execv(args[0], args.data());
    char msg[512];
    const int n = snprintf(msg, sizeof msg, "toroid-rig: cannot run %s: %s\n", args[0], strerror(errno));
    if (n > 0) (void)!write(2, msg, static_cast<size_t>(n));
    _exit(127);
  }
  close(fds[1]);
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return Child{pid, fds[0]};
}

bool LineBuffer::next(std::string* line) {
  const size_t nl = buf_.find('\n', pos_);
  if (nl == std::string::npos) {
    if (pos_ > 0) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    return false;
  }
  line->assign(buf_, pos_, nl - pos_);
  if (!line->empty() && line->back() == '\r') line->pop_back();
  pos_ = nl + 1;
  return true;
}

std::string LineBuffer::take_rest() {
  std::string r = buf_.substr(pos_);
  buf_.clear();
  pos_ = 0;
  return r;
}

int64_t proc_cpu_ticks(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return -1;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // Fields after "(comm)": state is field 3; utime and stime are 14 and 15.
  const char* p = std::strrchr(buf, ')');
  if (!p) return -1;
  p += 2;
  int field = 3;
  unsigned long long ut = 0, st = 0;
  while (*p && field < 14) {
    if (*p++ == ' ') ++field;
  }
  if (std::sscanf(p, "%llu %llu", &ut, &st) != 2) return -1;
  return static_cast<int64_t>(ut + st);
}

uint64_t proc_status_kb(pid_t pid, const char* field) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char line[256];
  const size_t flen = std::strlen(field);
  unsigned long long v = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, field, flen) == 0 && line[flen] == ':') {
      std::sscanf(line + flen + 1, "%llu", &v);
      break;
    }
  }
  std::fclose(f);
  return v;
}

long clock_ticks_per_second() { return sysconf(_SC_CLK_TCK); }

std::string describe_exit(int status) {
  char b[96];
  if (WIFEXITED(status)) {
    snprintf(b, sizeof b, "exited with status %d", WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    snprintf(b, sizeof b, "killed by SIG%s", abbrev ? abbrev : std::to_string(WTERMSIG(status)).c_str());
  } else {
    snprintf(b, sizeof b, "ended (wait status %d)", status);
  }
  return b;
}

Result<std::string> run_command(const std::vector<std::string>& argv, uint64_t timeout_ns) {
  auto c = spawn(argv);
  if (!c) return c.status();
  std::string cmd, out;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  const uint64_t deadline = mono_ns() + timeout_ns;
  int status = 0;
  bool exited = false, killed = false;
  for (;;) {
    char buf[4096];
    const ssize_t n = read(c->out_fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (!exited && waitpid(c->pid, &status, WNOHANG) == c->pid) exited = true;
    if (n == 0 && exited) break;
    if (n == 0) {  // output closed, process still there
      if (waitpid(c->pid, &status, 0) == c->pid) exited = true;
      break;
    }
    if (mono_ns() >= deadline && !killed) {
      kill(c->pid, SIGKILL);
      killed = true;
    }
    timespec ts{0, 2 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  close(c->out_fd);
  if (!exited) waitpid(c->pid, &status, 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (killed) return error(Code::kTimeout, "%s: no answer within %.1f s", cmd.c_str(), static_cast<double>(timeout_ns) / 1e9);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status(Code::kIo, cmd + ": " + describe_exit(status) + (out.empty() ? "" : ": " + out));
  return out;
}

std::string ms_arg(uint64_t ns) { return std::to_string((ns + kMs - 1) / kMs) + "ms"; }

namespace {
int g_wake_pipe[2] = {-1, -1};
volatile sig_atomic_t g_interrupts = 0;

void wake() {
  if (g_wake_pipe[1] >= 0) {
    const char b = 1;
    (void)!write(g_wake_pipe[1], &b, 1);
  }
}
void on_interrupt(int) {
  g_interrupts = g_interrupts + 1;
  wake();
}
void on_child(int) { wake(); }
}  // namespace

void install_supervisor_signals() {
  if (g_wake_pipe[0] < 0 && pipe2(g_wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_wake_pipe[0] = g_wake_pipe[1] = -1;
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_interrupt;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  sa.sa_handler = on_child;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int signal_wake_fd() { return g_wake_pipe[0]; }

void drain_signal_wake() {
  char b[64];
  while (g_wake_pipe[0] >= 0 && read(g_wake_pipe[0], b, sizeof b) > 0) {
  }
}

int interrupts_received() { return g_interrupts; }

}  // namespace toroid::rig
