#include "mpi/launcher/mpirun.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "base/files.h"
#include "firmware/personality.h"
#include "firmware/rig/process.h"
#include "firmware/rig/wiring.h"
#include "mpi/launch_protocol.h"

namespace toroid::mpirun {

namespace {

constexpr uint64_t kStopGraceNs = 2 * kSec;   // "stop" sent: then SIGTERM
constexpr uint64_t kTermGraceNs = 3 * kSec;   // SIGTERM sent: then SIGKILL
constexpr int kOut = 1, kErr = 2, kCtl = 3;

int exit_code(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace

Dims dims_for(uint32_t n) {
  // Prime factors, largest first, each to the smallest dimension so far.
  std::vector<uint32_t> primes;
  for (uint32_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      primes.push_back(p);
      n /= p;
    }
  if (n > 1) primes.push_back(n);
  std::sort(primes.rbegin(), primes.rend());
  uint32_t d[3] = {1, 1, 1};
  for (uint32_t p : primes) *std::min_element(d, d + 3) *= p;
  std::sort(d, d + 3, [](uint32_t a, uint32_t b) { return a > b; });
  return Dims{{d[0], d[1], d[2]}};
}

Launcher::~Launcher() {
  for (auto& r : ranks_) {
    for (int fd : {r->out_fd, r->err_fd, r->ctl_fd})
      if (fd >= 0) close(fd);
    if (r->log) fclose(r->log);
  }
}

void Launcher::say(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "toroid-mpirun: %s\n", buf);
  fflush(stderr);
}

std::string Launcher::rank_name(const Rank& r) const {
  return "rank " + std::to_string(r.rank) + " (node " + r.coord.to_string() + ")";
}

int Launcher::setup() {
  if (Status st = mkdir_p(opt_.run_root); !st) {
    say("run dir: %s", st.message().c_str());
    return 2;
  }
  char stamp[32];
  const time_t now = time(nullptr);
  struct tm tmv;
  localtime_r(&now, &tmv);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
  const std::string base = opt_.run_root + "/mpirun-" + stamp;
  run_dir_ = base;
  for (int k = 2; mkdir(run_dir_.c_str(), 0755) != 0; ++k) {
    if (errno != EEXIST || k > 1000) {
      say("mkdir %s: %s", run_dir_.c_str(), std::strerror(errno));
      return 2;
    }
    run_dir_ = base + "-" + std::to_string(k);
  }
  char real[4096];
  if (realpath(run_dir_.c_str(), real)) run_dir_ = real;
  sock_dir_ = run_dir_ + "/sock";
  if (rig::check_socket_dir(sock_dir_, opt_.dims) && mkdir(sock_dir_.c_str(), 0700) == 0) {
    sock_tmp_ = false;
  } else {
    char tmpl[] = "/tmp/toroid-mpirun.XXXXXX";
    if (!mkdtemp(tmpl)) {
      say("mkdtemp: %s", std::strerror(errno));
      return 2;
    }
    sock_dir_ = tmpl;
    sock_tmp_ = true;
  }
  rig::WiringOptions w;
  w.dims = opt_.dims;
  w.driver = opt_.driver;
  w.socket_dir = sock_dir_;
  w.job = "train";  // the application is the job
  if (opt_.driver == "memif") w.memif_bsize = 9216;  // 9000-byte frames, as the host rig
  auto wired = rig::wire_partition(w);
  if (!wired) {
    say("%s", wired.status().message().c_str());
    return 2;
  }
  for (const auto& p : wired.value()) {
    auto r = std::make_unique<Rank>();
    r->rank = rank_of(p.coord, opt_.dims);
    r->coord = p.coord;
    r->personality = run_dir_ + "/rank-" + std::to_string(r->rank) + ".personality";
    FILE* f = fopen(r->personality.c_str(), "w");
    if (!f) {
      say("cannot write %s: %s", r->personality.c_str(), std::strerror(errno));
      return 2;
    }
    const std::string text = personality_text(p, "toroid node personality (written by toroid-mpirun)");
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
    r->log = fopen((run_dir_ + "/rank-" + std::to_string(r->rank) + ".out").c_str(), "w");
    ranks_.push_back(std::move(r));
  }
  return 0;
}

int Launcher::spawn_rank(Rank& r) {
  int out[2], err[2], ctl[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0) {
    say("%s: cannot make its pipes: %s", rank_name(r).c_str(), std::strerror(errno));
    return 1;
  }
  // Everything the child needs, prepared before fork (only async-signal-safe calls after it).
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
  auto set_env = [&](const std::string& k, const std::string& v) {
    const std::string kv = k + "=" + v;
    for (auto& s : env_s)
      if (s.compare(0, k.size() + 1, k + "=") == 0) {
        s = kv;
        return;
      }
    env_s.push_back(kv);
  };
  set_env(mpi::kEnvPersonality, r.personality);
  set_env(mpi::kEnvCtlFd, "3");
  set_env(mpi::kEnvTrainTimeout, rig::ms_arg(opt_.train_timeout_ns));
  if (opt_.wait_timeout_ns) set_env(mpi::kEnvTimeout, rig::ms_arg(opt_.wait_timeout_ns));
  if (!opt_.cpus.empty()) set_env(mpi::kEnvCpus, opt_.cpus);
  // More ranks than cores: an idle rank gives its core to the one it waits for.
  if (opt_.dims.nodes() > static_cast<uint32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))) set_env(mpi::kEnvYield, "1");
  for (const auto& [k, v] : opt_.env) set_env(k, v);
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (auto& a : opt_.program) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    say("%s: fork: %s", rank_name(r).c_str(), std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    dup2(ctl[1], 3);  // dup2 clears close-on-exec on the copy
    execvpe(argv[0], argv.data(), envp.data());
    char msg[512];
    const int n = snprintf(msg, sizeof msg, "cannot run %s: %s\n", argv[0], strerror(errno));
    if (n > 0) (void)!write(2, msg, static_cast<size_t>(n));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(ctl[1]);
  r.pid = pid;
  r.out_fd = out[0];
  r.err_fd = err[0];
  r.ctl_fd = ctl[0];
  for (int fd : {r.out_fd, r.err_fd, r.ctl_fd}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return 0;
}

void Launcher::emit(Rank& r, int which, const std::string& line) {
  FILE* to = which == kOut ? stdout : stderr;
  if (opt_.tag_output) fprintf(to, "[%u] %s\n", r.rank, line.c_str());
  else fprintf(to, "%s\n", line.c_str());
  fflush(to);
  if (r.log) {
    fprintf(r.log, "%s%s\n", which == kErr ? "(stderr) " : "", line.c_str());
    fflush(r.log);
  }
}

void Launcher::read_fd(Rank& r, int which) {
  int& fd = which == kOut ? r.out_fd : which == kErr ? r.err_fd : r.ctl_fd;
  rig::LineBuffer& lb = which == kOut ? r.out : which == kErr ? r.err : r.ctl;
  char buf[8192];
  std::string line;
  auto deliver = [&](const std::string& l) {
    if (which == kCtl) on_ctl(r, l);
    else emit(r, which, l);
  };
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      lb.feed(buf, static_cast<size_t>(n));
      while (lb.next(&line)) deliver(line);
      continue;
    }
    if (n == 0) {  // closed: a last line without its newline
      std::string rest = lb.take_rest();
      if (!rest.empty()) deliver(rest);
      close(fd);
      fd = -1;
    }
    break;
  }
}

void Launcher::on_ctl(Rank& r, const std::string& line) {
  if (line == "up") r.up = true;
  else if (line == "ready") r.ready = true;
  else if (line == "finalizing") r.finalizing = true;
  else if (line == "quiesced") r.quiesced = true;
  else if (line.rfind("abort ", 0) == 0) {
    r.aborted = true;
    char* end = nullptr;
    const long code = std::strtol(line.c_str() + 6, &end, 10);
    std::string text = end && *end == ' ' ? std::string(end + 1) : std::string();
    fail(rank_name(r) + " aborted" + (text.empty() ? "" : ": " + text) + " (code " + std::to_string(code) + ")",
         code == 0 ? 1 : static_cast<int>(code & 0xff));
  }
}

void Launcher::fail(const std::string& why, int status, bool force) {
  if (failed_ && !force) return;
  if (!failed_) {
    failed_ = true;
    failure_ = why;
    fail_status_ = status;
  }
  if (opt_.no_stop && !force) {
    say("%s; the other ranks go on (--no-stop)", why.c_str());
    return;
  }
  say("%s; stopping the other ranks", why.c_str());
  stop_all(rig::mono_ns());
}

void Launcher::stop_all(uint64_t now) {
  if (stopping_) return;
  stopping_ = true;
  t_stop_ = now;
  const std::string msg = "stop " + failure_ + "\n";
  for (auto& r : ranks_)
    if (!r->exited && r->ctl_fd >= 0) (void)!send(r->ctl_fd, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Launcher::reap() {
  // Every rank that has exited, those killed by a signal first: when a rank
  // dies its neighbours see their links go down within milliseconds and exit
  // with an error of their own; the job failed of the death, not of that.
  std::vector<Rank*> gone;
  const auto collect = [&] {
    for (auto& rp : ranks_) {
      Rank& r = *rp;
      if (r.exited || r.pid <= 0) continue;
      int status = 0;
      if (waitpid(r.pid, &status, WNOHANG) != r.pid) continue;
      r.exited = true;
      r.wait_status = status;
      gone.push_back(&r);
    }
  };
  collect();
  // A rank that failed on its own (not by a signal) may be reporting a
  // neighbour that is still dying: its links saw the carrier go when the
  // neighbour's files closed, a moment before the kernel made it a zombie.
  // Give the others up to 100 ms to show a death by signal.
  const auto failed_alone = [&] {
    for (const Rank* r : gone)
      if (WIFSIGNALED(r->wait_status)) return false;
    for (const Rank* r : gone)
      if (!stopping_ && !r->aborted && r->up && !r->finalizing) return true;
    return false;
  };
  for (int tries = 0; tries < 20 && failed_alone(); ++tries) {
    const timespec pause{0, 5 * 1000 * 1000};
    nanosleep(&pause, nullptr);
    collect();
  }
  std::stable_partition(gone.begin(), gone.end(), [](const Rank* r) { return WIFSIGNALED(r->wait_status); });
  for (Rank* rp : gone) {
    Rank& r = *rp;
    const int status = r.wait_status;
    for (int which : {kOut, kErr, kCtl}) {
      int fd = which == kOut ? r.out_fd : which == kErr ? r.err_fd : r.ctl_fd;
      if (fd >= 0) read_fd(r, which);
    }
    if (stopping_ || r.aborted) continue;
    const std::string how = rig::describe_exit(status);
    if (r.up && !r.finalizing) fail(rank_name(r) + " " + how + " before MPI_Finalize", exit_code(status));
    else if (exit_code(status) != 0 && !failed_) {
      failed_ = true;  // after a clean finalize: its status is the job's, the others go on
      failure_ = rank_name(r) + " " + how;
      fail_status_ = exit_code(status);
    }
  }
}

void Launcher::step(uint64_t now) {
  // The two-phase end of MPI_Finalize: every rank that started MPI is
  // finalizing -> "quiesce"; all of those quiesced -> "release".
  if (!stopping_ && !(failed_ && opt_.no_stop)) {
    bool all_final = true, any = false, all_quiet = true;
    for (auto& r : ranks_) {
      if (!r->up && r->exited) continue;  // not an MPI process (or gone before MPI_Init)
      any = true;
      all_final &= r->finalizing || (r->exited && r->finalizing);
      all_quiet &= r->quiesced || r->exited;
    }
    if (any && all_final && !quiesce_sent_) {
      quiesce_sent_ = true;
      for (auto& r : ranks_)
        if (r->ctl_fd >= 0 && !r->exited) (void)!send(r->ctl_fd, "quiesce\n", 8, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (quiesce_sent_ && all_quiet && !release_sent_) {
      release_sent_ = true;
      for (auto& r : ranks_)
        if (r->ctl_fd >= 0 && !r->exited) (void)!send(r->ctl_fd, "release\n", 8, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (now - t_start_ > opt_.timeout_ns) {
      char t[64];
      snprintf(t, sizeof t, "the job did not finish within %.0f s (--timeout)", static_cast<double>(opt_.timeout_ns) / 1e9);
      fail(t, 1, true);
    }
  }
  if (stopping_) {
    if (!termed_ && now - t_stop_ > kStopGraceNs) {
      termed_ = true;
      for (auto& r : ranks_)
        if (!r->exited && r->pid > 0) kill(-r->pid, SIGTERM);
    }
    if (!killed_ && now - t_stop_ > kStopGraceNs + kTermGraceNs) {
      killed_ = true;
      for (auto& r : ranks_)
        if (!r->exited && r->pid > 0) {
          say("%s did not stop; SIGKILL", rank_name(*r).c_str());
          kill(-r->pid, SIGKILL);
        }
    }
  }
}

void Launcher::cleanup() {
  for (const auto& k : rig::cables(opt_.dims, sock_dir_)) unlink(k.socket.c_str());
  rmdir(sock_dir_.c_str());
}

int Launcher::run() {
  rig::install_supervisor_signals();
  if (int rc = setup()) return rc;
  if (!opt_.quiet)
    say("%u ranks on a %s torus over %s; run dir %s", opt_.dims.nodes(), opt_.dims.to_string().c_str(),
        opt_.driver.c_str(), run_dir_.c_str());
  t_start_ = rig::mono_ns();
  for (auto& r : ranks_)
    if (spawn_rank(*r)) {
      fail(rank_name(*r) + " could not be started", 1);
      break;
    }
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Rank*, int>> who;
    if (rig::signal_wake_fd() >= 0) {
      fds.push_back({rig::signal_wake_fd(), POLLIN, 0});
      who.emplace_back(nullptr, 0);
    }
    bool all_exited = true;
    for (auto& r : ranks_) {
      all_exited &= r->exited || r->pid <= 0;
      for (int which : {kOut, kErr, kCtl}) {
        const int fd = which == kOut ? r->out_fd : which == kErr ? r->err_fd : r->ctl_fd;
        if (fd < 0) continue;
        fds.push_back({fd, POLLIN, 0});
        who.emplace_back(r.get(), which);
      }
    }
    if (all_exited) break;
    const int n = poll(fds.data(), fds.size(), 50);
    if (n > 0)
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        if (!who[i].first) {
          rig::drain_signal_wake();
          continue;
        }
        read_fd(*who[i].first, who[i].second);
      }
    reap();
    const uint64_t now = rig::mono_ns();
    if (rig::interrupts_received() > 0 && !interrupted_) {
      interrupted_ = true;
      fail("interrupted", 130, true);
    }
    if (rig::interrupts_received() > 1 && !killed_) {
      killed_ = true;
      for (auto& r : ranks_)
        if (!r->exited && r->pid > 0) kill(-r->pid, SIGKILL);
    }
    step(now);
  }
  for (auto& r : ranks_) {
    for (int which : {kOut, kErr, kCtl}) {
      const int fd = which == kOut ? r->out_fd : which == kErr ? r->err_fd : r->ctl_fd;
      if (fd >= 0) read_fd(*r, which);
    }
  }
  cleanup();
  if (failed_) {
    if (stopping_) say("job failed: %s (status %d); logs in %s", failure_.c_str(), fail_status_, run_dir_.c_str());
    return fail_status_ ? fail_status_ : 1;
  }
  return 0;
}

}  // namespace toroid::mpirun
