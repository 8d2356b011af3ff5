#include "mpi/runtime.h"

#include <algorithm>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "firmware/node_topology.h"
#include "firmware/personality.h"
#include "mpi/launch_protocol.h"

namespace toroid::mpi {

namespace {

constexpr uint64_t kLinkCheckNs = 20 * kMs;     // how often a running rank looks for "stop"
constexpr uint64_t kFinalizeNs = 120 * kSec;    // every rank reaches MPI_Finalize within this of the first
constexpr uint64_t kReleaseNs = 30 * kSec;      // the launcher releases quiesced ranks within this
constexpr uint64_t kLingerNs = 200 * kMs;       // without a launcher: serve the links this long after the barrier
                                                // (TOROID_MPI_LINGER)

uint64_t env_duration(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  uint64_t ns = 0;
  if (v && *v && parse_duration_ns(v, &ns) && ns > 0) return ns;
  if (v && *v) fprintf(stderr, "toroid-mpi: %s='%s' is not a duration (e.g. 300s); using the default\n", name, v);
  return dflt;
}

}  // namespace

Runtime& rt() {
  static Runtime* r = new Runtime();  // never destroyed: exit() must not tear a live node down
  return *r;
}

// ---- the control link ----

bool LaunchLink::open_from_env() {
  const char* v = std::getenv(kEnvCtlFd);
  if (!v || !*v) return false;
  char* end = nullptr;
  const long fd = std::strtol(v, &end, 10);
  if (*end || fd < 0 || fcntl(static_cast<int>(fd), F_GETFD) < 0) {
    fprintf(stderr, "toroid-mpi: %s=%s is not an open descriptor; running without the launcher's control link\n",
            kEnvCtlFd, v);
    return false;
  }
  fd_ = static_cast<int>(fd);
  fcntl(fd_, F_SETFD, FD_CLOEXEC);
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  return true;
}

void LaunchLink::send(const std::string& line) {
  if (fd_ < 0) return;
  const std::string l = line + "\n";
  size_t off = 0;
  for (int tries = 0; off < l.size() && tries < 1000; ++tries) {
    const ssize_t n = ::send(fd_, l.data() + off, l.size() - off, MSG_NOSIGNAL);
    if (n > 0) off += static_cast<size_t>(n);
    else if (n < 0 && errno != EAGAIN && errno != EINTR) return;  // the launcher is gone
    else {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, 10);
    }
  }
}

bool LaunchLink::take_line(std::string* line) {
  const size_t nl = buf_.find('\n');
  if (nl == std::string::npos) return false;
  line->assign(buf_, 0, nl);
  buf_.erase(0, nl + 1);
  return true;
}

bool LaunchLink::poll_line(std::string* line) {
  if (fd_ < 0) return false;
  if (take_line(line)) return true;
  char b[512];
  for (;;) {
    const ssize_t n = ::recv(fd_, b, sizeof b, MSG_DONTWAIT);
    if (n > 0) {
      buf_.append(b, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) {  // the launcher died: nobody will stop or release us
      buf_ += "stop the launcher (toroid-mpirun) went away\n";
      ::close(fd_);
      fd_ = -1;
    }
    break;
  }
  return take_line(line);
}

bool LaunchLink::wait_line(std::string* line, uint64_t timeout_ns) {
  const uint64_t end = rt().wtime() * 1e9 + timeout_ns;
  while (!poll_line(line)) {
    if (fd_ < 0) return take_line(line);
    const double now = rt().wtime() * 1e9;
    if (now >= end) return false;
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<double>(100, (end - now) / 1e6 + 1)));
  }
  return true;
}

void LaunchLink::close_link() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

// ---- boot ----

bool Runtime::is_main_thread() const { return pthread_self() == static_cast<pthread_t>(main_thread_); }

double Runtime::wtime() const {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Status Runtime::boot() {
  LogLevel level = LogLevel::kWarn;
  if (const char* v = std::getenv(kEnvLog); v && *v && !parse_log_level(v, &level))
    fprintf(stderr, "toroid-mpi: %s='%s' is not error, warn, info or debug\n", kEnvLog, v);
  set_log_level(level);
  timeout_ns_ = env_duration(kEnvTimeout, timeout_ns_);
  train_timeout_ns_ = env_duration(kEnvTrainTimeout, train_timeout_ns_);
  linger_ns_ = env_duration(kEnvLinger, kLingerNs);
  if (const char* v = std::getenv(kEnvRepro); v && *v) {
    auto r = parse_repro(v);
    if (!r) return error(Code::kInvalid, "%s=%s: %s", kEnvRepro, v, r.status().message().c_str());
    repro_ = *r;
  }

  // Who this process is: the launcher's personality, a deployment's
  // topology, or a partition of one node (a program started by hand).
  Personality p;
  if (const char* f = std::getenv(kEnvPersonality); f && *f) {
    auto r = parse_personality_file(f);
    if (!r) return r.status();
    p = *r;
  } else if (const char* t = std::getenv(kEnvTopology); t && *t) {
    int64_t rank = -1;
    if (const char* r = std::getenv(kEnvRank); r && *r) rank = std::strtoll(r, nullptr, 10);
    auto tl = load_topology_launch(t, rank, false, {});
    if (!tl) return tl.status();
    p = tl->personality;
  } else {
    p.dims = Dims{{1, 1, 1}};
    p.coord = Coord{{0, 0, 0}};
    p.has_dims = p.has_coord = true;
  }
  p.job = "train";  // the application is the job: the node only boots and trains
  p.job_args.clear();
  if (Status st = validate(p); !st) return st;
  if (Status st = check_host_ports(p); !st) return st;
  rank_ = rank_of(p.coord, p.dims);
  size_ = p.dims.nodes();
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  processor_name_ = std::string(host) + ":node-" + p.coord.to_string();

  HostPortOptions po;
  char tag[64];
  snprintf(tag, sizeof tag, "mpi%u-%u-%u", p.coord.c[0], p.coord.c[1], p.coord.c[2]);
  po.tag = tag;
  if (const char* c = std::getenv(kEnvCpus); c && *c) po.cpu_list = c;
  if (const char* e = std::getenv(kEnvEalLog); e && *e) po.eal_log_level = e;
  auto hp = HostPorts::open(p, po);
  if (!hp) return hp.status();
  ports_ = std::move(hp.value());
  if (Status st = ports_->start(train_timeout_ns_); !st) return st;

  NodeOptions no;
  no.train_timeout_ns = train_timeout_ns_;
  no.coll_timeout_ns = timeout_ns_;
  no.job_timeout_ns = timeout_ns_;
  no.log_boot = level >= LogLevel::kInfo;
  no.log_verdict = false;
  // An MPI rank polls its links only inside MPI calls: between them it
  // computes, for as long as the program likes, and answers nothing. Its
  // neighbours give it as long as a blocking call waits (a hung rank is
  // found by the waits; a dead one by carrier loss and the launcher),
  // unless TOROID_MPI_LINK_TIMEOUT says otherwise.
  no.net.link.down_after_ns = std::max(no.net.link.down_after_ns, timeout_ns_);
  for (uint16_t& c : no.net.link.rx_credits) c = tuning::kVcCreditsHost;  // as toroid-node's
  if (const char* v = std::getenv(kEnvLinkTimeout); v && *v) {
    no.net.link.down_after_ns = env_duration(kEnvLinkTimeout, no.net.link.down_after_ns);
    if (no.net.link.down_after_ns < 100 * kMs)
      return error(Code::kInvalid, "%s=%s: a link timeout is at least 100ms", kEnvLinkTimeout, v);
  }
  node_ = std::make_unique<Node>(p, clock_, ports_->pool(), ports_->ports(), no);
  if (const char* y = std::getenv(kEnvYield); y && std::strcmp(y, "1") == 0) node_->loop().set_yield_when_idle(true);
  // Blocking calls busy-poll (a core per rank, as MPI libraries assume)
  // unless TOROID_MPI_WAIT=idle asks for the idle policy's sleeps.
  const char* w = std::getenv(kEnvWait);
  node_->loop().set_spin_when_idle(!(w && std::strcmp(w, "idle") == 0));
  for (int fd : ports_->wait_fds()) (void)node_->loop().add_wait_fd(fd);
  node_->boot();
  Status st = node_->loop().run_until([&] { return node_->finished(); }, train_timeout_ns_ + kSec, "link training");
  if (!st) return st;
  if (node_->state() != NodeState::kPassed) return node_->status();
  return Status::ok();
}

void Runtime::init(int thread_level) {
  thread_level_ = thread_level < MPI_THREAD_FUNNELED ? thread_level : MPI_THREAD_FUNNELED;
  main_thread_ = static_cast<unsigned long>(pthread_self());
  if (link_.open_from_env()) link_.send("up");
  if (Status st = boot(); !st) abort(1, "MPI_Init: boot failed: " + st.message());
  link_timer_.set_callback(&Runtime::check_link, this);
  if (link_.active()) loop().timers().arm(link_timer_, loop().now() + kLinkCheckNs);
  // MPI_Init returns when the whole partition is up.
  if (Status st = world().barrier(); !st) abort(1, "MPI_Init: the partition did not come up: " + st.message());
  phase_ = Phase::kUp;
  link_.send("ready");
}

void Runtime::say_stop(const std::string& text) {
  fflush(stdout);
  fprintf(stderr, "toroid-mpi: rank %u: stopped: %s\n", rank_, text.c_str());
  fflush(stderr);
  _exit(1);
}

// A running rank looks for the launcher's "stop" now and then (another rank
// died or aborted): it exits at once, naming why.
void Runtime::check_link(void* self) {
  auto* r = static_cast<Runtime*>(self);
  std::string line;
  while (r->link_.poll_line(&line))
    if (line.rfind("stop", 0) == 0) r->say_stop(line.size() > 5 ? line.substr(5) : "by the launcher");
  if (r->link_.active()) r->loop().timers().arm(r->link_timer_, r->loop().now() + kLinkCheckNs);
}

void Runtime::abort(int code, const std::string& why) {
  fflush(stdout);
  if (!why.empty()) fprintf(stderr, "toroid-mpi: rank %u: %s\n", rank_, why.c_str());
  fflush(stderr);
  if (link_.active()) {
    std::string flat = why;
    for (char& c : flat)
      if (c == '\n') c = ' ';
    link_.send("abort " + std::to_string(code) + " " + flat);
  }
  _exit(code);
}

// ---- finalize ----

Status Runtime::quiesce() {
  Status st = world().barrier();
  if (!st) return st;
  loop().timers().cancel(link_timer_);
  if (!link_.active()) {
    // Serve the links a little longer: neighbours may still wait for our
    // acknowledgements of the barrier's last messages.
    (void)loop().run_until([] { return false; }, linger_ns_, "linger");
    return Status::ok();
  }
  link_.send("finalizing");
  bool quiesce = false;
  std::string line;
  st = loop().run_until(
      [&] {
        while (!quiesce && link_.poll_line(&line)) {
          if (line == "quiesce") quiesce = true;
          else if (line.rfind("stop", 0) == 0) say_stop(line.size() > 5 ? line.substr(5) : "by the launcher");
        }
        return quiesce;
      },
      kFinalizeNs, "every rank to reach MPI_Finalize");
  if (!st) return st;
  link_.send("quiesced");
  if (!link_.wait_line(&line, kReleaseNs) || line != "release")
    return error(Code::kTimeout, "MPI_Finalize: the launcher did not release the links (last word: '%s')",
                 line.c_str());
  return Status::ok();
}

void Runtime::shutdown() {
  node_.reset();
  if (ports_) ports_->close();
  ports_.reset();
  link_.close_link();
  phase_ = Phase::kDown;
}

}  // namespace toroid::mpi
