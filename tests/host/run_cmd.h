// Running the project's programs from tests: a command with its output
// captured, bounded in time (a hang fails the test instead of stalling the
// suite), optionally with extra environment variables; and the checks that
// nothing it started outlived it.
#pragma once
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <CppUTest/TestHarness.h>

namespace testutil {

inline double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Run {
  int status = -1;  // exit status; 128 + signal if killed
  bool overran = false;
  double wall_s = 0;
  std::string out;  // stdout and stderr
  bool has(const std::string& s) const { return out.find(s) != std::string::npos; }
};

// Runs `bin args` (split on spaces), killing it past bound_s; sends SIGINT
// after sigint_s if that is >= 0.
inline Run run_cmd(const char* bin, const std::string& args, double bound_s, double sigint_s = -1,
            const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::vector<std::string> words = {bin};
  std::istringstream in(args);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int fds[2];
  CHECK(pipe2(fds, O_CLOEXEC) == 0);
  const double t0 = now_s();
  const pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  Run r;
  bool sent_int = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int n = poll(&p, 1, 50);
    if (n > 0) {
      char buf[8192];
      const ssize_t k = read(fds[0], buf, sizeof buf);
      if (k > 0) {
        r.out.append(buf, static_cast<size_t>(k));
        continue;
      }
      if (k == 0) break;
    }
    const double el = now_s() - t0;
    if (sigint_s >= 0 && !sent_int && el >= sigint_s) {
      kill(pid, SIGINT);
      sent_int = true;
    }
    if (el > bound_s && !r.overran) {
      r.overran = true;
      kill(pid, SIGKILL);
    }
  }
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  r.wall_s = now_s() - t0;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

inline const char* env_bin(const char* name) {
  const char* b = std::getenv(name);
  CHECK_TEXT(b != nullptr, "TOROID_RIG / TOROID_NODE are not set (meson sets them)");
  return b;
}

// Processes whose command line mentions `needle` (our run dir): none may
// outlive the rig.
inline int processes_mentioning(const std::string& needle) {
  int count = 0;
  DIR* d = opendir("/proc");
  if (!d) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string path = std::string("/proc/") + e->d_name + "/cmdline";
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;
    char buf[4096];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    for (size_t i = 0; i < n; ++i)
      if (buf[i] == 0) buf[i] = ' ';
    buf[n] = 0;
    if (std::strstr(buf, needle.c_str()) && std::atoi(e->d_name) != getpid()) ++count;
  }
  closedir(d);
  return count;
}

// "<line containing needle>" or "".
inline std::string line_with(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const size_t b = text.rfind('\n', at);
  const size_t e = text.find('\n', at);
  return text.substr(b == std::string::npos ? 0 : b + 1, e == std::string::npos ? std::string::npos : e - b - 1);
}

// A private directory under /tmp for one test, removed with what is in it.
struct TempDir {
  std::string path;
  void make(const char* prefix) {
    std::string tmpl = std::string("/tmp/") + prefix + ".XXXXXX";
    CHECK(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  void clean() {
    if (!path.empty()) CHECK(std::system(("rm -rf '" + path + "'").c_str()) == 0);
  }
};

}  // namespace testutil
