#include "firmware/pid1_app.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/clock.h"
#include "firmware/personality.h"

namespace toroid {
namespace {

constexpr uint64_t kMsNs = 1000 * 1000;
constexpr const char* kPersonalityPath = "/run/toroid/personality";
constexpr size_t kMaxLine = 4096;  // a longer line is relayed in pieces

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// One write per console line: the kernel's messages share the console.
void emit(const std::string& line) {
  const std::string l = line + "\n";
  size_t off = 0;
  while (off < l.size()) {
    const ssize_t w = write(1, l.data() + off, l.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    off += static_cast<size_t>(w);
  }
}

void say(const std::string& text) { emit("[pid1] " + text); }

// The console lines of one of the program's streams.
struct Relay {
  int fd = -1;
  const char* prefix = "";
  std::string buf;

  void flush_lines(bool all) {
    size_t start = 0;
    for (;;) {
      const size_t nl = buf.find('\n', start);
      if (nl == std::string::npos) break;
      std::string line = buf.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      emit(prefix + line);
      start = nl + 1;
    }
    buf.erase(0, start);
    while (buf.size() >= kMaxLine || (all && !buf.empty())) {
      const size_t n = std::min(buf.size(), kMaxLine);
      emit(prefix + buf.substr(0, n));
      buf.erase(0, n);
    }
  }

  // false at end of file.
  bool read_some() {
    char b[4096];
    const ssize_t n = read(fd, b, sizeof b);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) {
      flush_lines(true);
      close(fd);
      fd = -1;
      return false;
    }
    buf.append(b, static_cast<size_t>(n));
    flush_lines(false);
    return true;
  }
};

int exit_status(int ws) {
  if (WIFEXITED(ws)) return WEXITSTATUS(ws);
  if (WIFSIGNALED(ws)) return 128 + WTERMSIG(ws);
  return -1;
}

std::string describe_status(int st) {
  if (st > 128 && st < 128 + 65) {
    const char* name = sigabbrev_np(st - 128);
    return "was killed by SIG" + std::string(name ? name : "?") + " (status " + std::to_string(st) + ")";
  }
  return "exited with status " + std::to_string(st);
}

}  // namespace

Result<GuestApp> parse_guest_app(const std::string& text, const std::string& source) {
  GuestApp app;
  bool have_exec = false, have_timeout = false;
  std::istringstream in(text);
  int lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp);
    const std::string val = sp == std::string::npos ? "" : line.substr(sp + 1);
    auto bad = [&](const std::string& why) {
      return error(Code::kInvalid, "%s line %d: %s", source.c_str(), lineno, why.c_str());
    };
    if (key == "exec") {
      if (have_exec) return bad("exec given twice");
      if (val.empty() || val[0] != '/') return bad("exec needs the program's absolute path in the image");
      app.exec = val;
      have_exec = true;
    } else if (key == "arg") {
      if (sp == std::string::npos) return bad("arg needs a value (\"arg \" for an empty one)");
      app.args.push_back(val);
    } else if (key == "env") {
      const size_t eq = val.find('=');
      if (eq == std::string::npos || eq == 0) return bad("env needs KEY=VALUE, got '" + val + "'");
      app.env.push_back(val);
    } else if (key == "timeout") {
      uint64_t ns = 0;
      if (have_timeout) return bad("timeout given twice");
      // A unit is required: a bare number would be nanoseconds.
      if (val.empty() || val.back() != 's' || !parse_duration_ns(val.c_str(), &ns) || ns == 0)
        return bad("timeout '" + val + "' is not a duration (600s)");
      app.timeout_ns = ns;
      have_timeout = true;
    } else {
      return bad("unknown key '" + key + "' (known: exec arg env timeout)");
    }
  }
  if (!have_exec) return error(Code::kInvalid, "%s: no exec line (the program to run)", source.c_str());
  return app;
}

Result<std::string> guest_app_personality(const GuestConfig& c, const std::vector<std::string>& port_addrs) {
  // The node's own flags, less its job and pass-through settings: the MPI
  // library boots the node with job "train" and reads the rest from its
  // environment (guest_app_env).
  GuestConfig ports_only = c;
  ports_only.node_flags.clear();
  ports_only.job = "train";
  auto p = parse_personality_args(guest_node_args(ports_only, port_addrs));
  if (!p) return p.status();
  if (Status st = validate(*p); !st) return st;
  return personality_text(*p, "personality of node " + c.coord + ", written by PID 1 from the kernel command line");
}

std::vector<std::string> guest_app_env(const GuestConfig& c, const GuestApp& app, const std::string& personality_path) {
  static constexpr const char* kFromFlag[][2] = {
      {"--train-timeout", "TOROID_MPI_TRAIN_TIMEOUT"}, {"--coll-timeout", "TOROID_MPI_TIMEOUT"},
      {"--link-timeout", "TOROID_MPI_LINK_TIMEOUT"},   {"--linger", "TOROID_MPI_LINGER"},
      {"--log-level", "TOROID_MPI_LOG"},               {"--eal-log-level", "TOROID_MPI_EAL_LOG"},
  };
  std::vector<std::string> env = app.env;
  auto has = [&](const std::string& key) {
    for (const auto& e : env)
      if (e.compare(0, key.size() + 1, key + "=") == 0) return true;
    return false;
  };
  for (size_t i = 0; i + 1 < c.node_flags.size(); i += 2)
    for (const auto& f : kFromFlag)
      if (c.node_flags[i] == f[0] && !has(f[1])) env.push_back(std::string(f[1]) + "=" + c.node_flags[i + 1]);
  if (!has("PATH")) env.push_back("PATH=/usr/bin:/usr/sbin");
  if (!has("HOME")) env.push_back("HOME=/tmp");
  env.push_back(std::string("TOROID_MPI_PERSONALITY=") + personality_path);
  return env;
}

AppExit run_guest_app(const GuestApp& app, const std::vector<std::string>& env) {
  AppExit r;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    r.why = std::string("pipe: ") + strerror(errno);
    return r;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    r.why = std::string("pipe: ") + strerror(errno);
    close(out[0]);
    close(out[1]);
    return r;
  }
  std::vector<std::string> argv_s = {app.exec};
  argv_s.insert(argv_s.end(), app.args.begin(), app.args.end());
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = env;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    r.why = std::string("fork: ") + strerror(errno);
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return r;
  }
  if (pid == 0) {
    // The child: its own session (so a timeout kills all of it), stdin
    // /dev/null, stdout and stderr to PID 1's pipes, cwd /tmp.
    setsid();
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (chdir("/tmp") != 0) dprintf(2, "chdir /tmp: %s (running in /)\n", strerror(errno));
    execve(argv[0], argv.data(), envp.data());
    dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  Relay streams[2] = {{out[0], "app.out: ", {}}, {err[0], "app.err: ", {}}};
  const uint64_t deadline = now_ns() + app.timeout_ns;
  bool timed_out = false;
  while (streams[0].fd >= 0 || streams[1].fd >= 0) {
    const uint64_t now = now_ns();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    pollfd p[2];
    int n = 0;
    Relay* which[2];
    for (auto& s : streams)
      if (s.fd >= 0) {
        p[n] = {s.fd, POLLIN, 0};
        which[n++] = &s;
      }
    const int ms = static_cast<int>(std::min<uint64_t>((deadline - now) / kMsNs + 1, 1000));
    const int k = poll(p, static_cast<nfds_t>(n), ms);
    if (k < 0 && errno != EINTR) break;
    for (int i = 0; i < n && k > 0; ++i)
      if (p[i].revents) which[i]->read_some();
  }
  // Both streams closed (or the deadline passed): the exit, within the
  // deadline too; a descendant holding the pipes open does not hold us.
  int ws = 0;
  pid_t got = 0;
  while (!timed_out && (got = waitpid(pid, &ws, WNOHANG)) == 0) {
    if (now_ns() >= deadline) {
      timed_out = true;
      break;
    }
    usleep(10 * 1000);
  }
  if (timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    got = waitpid(pid, &ws, 0);
    for (auto& s : streams)
      if (s.fd >= 0) {
        s.flush_lines(true);
        close(s.fd);
      }
    r.status = got == pid ? exit_status(ws) : 137;
    char t[64];
    snprintf(t, sizeof t, "%g s", static_cast<double>(app.timeout_ns) / 1e9);
    r.why = std::string("did not exit within ") + t + " (mpirun --timeout): killed";
    return r;
  }
  if (got != pid) {
    r.why = std::string("waitpid: ") + strerror(errno);
    return r;
  }
  r.status = exit_status(ws);
  if (r.status != 0) r.why = describe_status(r.status);
  return r;
}

int pid1_run_app(const Pid1Options& o) {
  const GuestConfig& c = o.config;
  const uint64_t t0 = now_ns();
  auto fail = [&](const std::string& why, int status) {
    say(why);
    emit("app node=" + c.coord + " status=" + std::to_string(status));
    emit("verdict node=" + c.coord + " FAIL reason=" + verdict_quote(why) + " cases=0 ms=" +
         std::to_string((now_ns() - t0) / kMsNs));
    return status;
  };
  std::string text;
  {
    std::ifstream f(c.app);
    if (!f) return fail("application: cannot read " + c.app + " (toroid.app): the image does not carry it", 127);
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  auto app = parse_guest_app(text, c.app);
  if (!app) return fail("application: " + app.status().message(), 127);
  struct stat st;
  if (stat(app->exec.c_str(), &st) != 0 || !(st.st_mode & S_IXUSR))
    return fail("application: " + app->exec + " is not an executable in the image", 127);
  auto pers = guest_app_personality(c, o.port_addrs);
  if (!pers) return fail("application: personality: " + pers.status().message(), 127);
  mkdir("/run/toroid", 0755);
  {
    std::ofstream f(kPersonalityPath);
    f << *pers;
    if (!f.flush()) return fail(std::string("application: cannot write ") + kPersonalityPath, 127);
  }
  const auto env = guest_app_env(c, *app, kPersonalityPath);
  std::string cmd = app->exec;
  for (const auto& a : app->args) cmd += " " + a;
  say("running the application: " + cmd + " (personality in " + kPersonalityPath + ", timeout " +
      std::to_string(app->timeout_ns / 1000000000ull) + " s)");
  const AppExit r = run_guest_app(*app, env);
  if (r.status < 0) return fail("application " + app->exec + ": " + r.why, 127);
  const std::string ms = std::to_string((now_ns() - t0) / kMsNs);
  say("application " + (r.status == 0 ? std::string("exited with status 0") : r.why) + " after " + ms + " ms");
  emit("app node=" + c.coord + " status=" + std::to_string(r.status));
  if (r.status == 0)
    emit("verdict node=" + c.coord + " PASS cases=0 ms=" + ms);
  else
    emit("verdict node=" + c.coord + " FAIL reason=" + verdict_quote("application " + app->exec + " " + r.why) +
         " cases=0 ms=" + ms);
  return r.status;
}

}  // namespace toroid
