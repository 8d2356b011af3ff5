// toroid-wake: what the node's idle policy costs in latency. Two processes
// joined by one host-rig link (memif or uring, opened by HostPorts exactly
// as toroid-node opens them). The ponger runs an EventLoop with a node's
// idle policy (spin -> pause -> sleep; uring: sleep on the ports' wait fds)
// and answers every ping the moment its poller sees it, stamping when that
// was. The pinger busy-polls (it is the clock, not the subject).
//
// Two phases: "hot", pings back to back (the ponger is still spinning from
// the last one), and "idle", pings --gap apart (the ponger has gone through
// its spin and pause rounds and sleeps). For each: the one-way time from
// the pinger's send to the ponger's poller seeing the frame (both read
// CLOCK_MONOTONIC on one machine) and the round trip. Wake cost = idle
// one-way - hot one-way. See docs/host-rig.md.
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/event_loop.h"
#include "firmware/host_port_factory.h"
#include "firmware/rig/process.h"

using namespace toroid;

namespace {

const char kUsage[] =
    "usage: toroid-wake [--driver memif|uring] [--samples N] [--gap D]\n"
    "\n"
    "Measures the latency cost of waking an idle node: a ponger process runs\n"
    "the node's event loop and idle policy and echoes pings over one host-rig\n"
    "link; a pinger sends them back to back (hot) and --gap apart (idle).\n"
    "\n"
    "  --driver D     memif (default) | uring\n"
    "  --samples N    pings per phase (default 200)\n"
    "  --gap D        pause before each idle ping (default 20ms)\n"
    "  --cpus LIST    EAL lcore CPUs for both processes (default: all)\n";

constexpr uint64_t kMagic = 0x746f726f69647770ull;  // "toroidwp"
enum : uint64_t { kPing = 1, kStop = 2 };
constexpr uint32_t kFrame = 64;

struct Frame {
  uint64_t magic, type, seq, t_send, t_seen;
};

uint64_t now_ns() { return rig::mono_ns(); }

Frame* frame_of(Packet* p) { return reinterpret_cast<Frame*>(p->data()); }

Result<std::unique_ptr<HostPorts>> open_end(const std::string& driver, const std::string& sock, bool server,
                                            const std::string& cpus) {
  return open_raw_link_end(
      RawLinkEnd{driver, sock, server, "wake", server ? "wake-pong" : "wake-ping", 1023, /*jumbo=*/false, cpus});
}

// The ponger: the subject. Answers pings from inside its event loop.
int pong(const std::string& driver, const std::string& sock, const std::string& cpus) {
  auto hp = open_end(driver, sock, true, cpus);
  if (!hp) {
    fprintf(stderr, "toroid-wake: ponger: %s\n", hp.status().message().c_str());
    return 1;
  }
  HostPorts& ports = *hp.value();
  Port* port = ports.ports()[0];
  RealClock clock;
  EventLoop loop(clock);
  for (int fd : ports.wait_fds()) {
    if (Status st = loop.add_wait_fd(fd); !st) fprintf(stderr, "ponger: wait fd %d: %s\n", fd, st.message().c_str());
  }
  fprintf(stderr, "ponger: %zu wait fd(s)\n", ports.wait_fds().size());
  struct Pong final : Poller {
    Port* port;
    bool stop = false;
    bool poll() override {
      Packet* pkts[32];
      const uint16_t n = port->rx_burst(pkts, 32);
      if (n == 0) return false;
      const uint64_t seen = now_ns();
      for (uint16_t i = 0; i < n; ++i) {
        Packet* p = pkts[i];
        Frame* f = p->len >= sizeof(Frame) ? frame_of(p) : nullptr;
        if (!f || f->magic != kMagic || f->type != kPing) {
          if (f && f->magic == kMagic && f->type == kStop) stop = true;
          p->free();
          continue;
        }
        f->t_seen = seen;
        if (port->tx_burst(&p, 1) != 1) p->free();
      }
      return true;
    }
  } pong;
  pong.port = port;
  loop.add_poller(&pong);
  Status st = loop.run_until([&] { return pong.stop; }, 600 * kSec, "pong");
  const IdleStats& is = loop.idle_stats();
  fprintf(stderr, "ponger: %lu sleeps, %lu woken by a port, %lu busy rounds\n", static_cast<unsigned long>(is.sleeps),
          static_cast<unsigned long>(is.wakeups_by_fd), static_cast<unsigned long>(is.busy_rounds));
  // Let the pinger see the stop went through before the link closes.
  timespec ts{0, 200 * 1000 * 1000};
  nanosleep(&ts, nullptr);
  ports.close();
  return st ? 0 : 1;
}

// Pins this process to one CPU given as a number ("" or a list: no change;
// DPDK's --lcores does the same for memif).
void pin(const std::string& cpu) {
  if (cpu.empty() || cpu.find_first_not_of("0123456789") != std::string::npos) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(std::atoi(cpu.c_str()), &set);
  (void)sched_setaffinity(0, sizeof set, &set);
}

struct Sample {
  uint64_t one_way, rtt;
};

// One ping; false on a timeout.
bool ping(Port* port, uint64_t seq, Sample* out) {
  Packet* p = port->tx_pool().alloc();
  if (!p) return false;
  uint8_t* d = p->append(kFrame);
  std::memset(d, 0, kFrame);
  Frame f{};
  f.magic = kMagic;
  f.type = kPing;
  f.seq = seq;
  const uint64_t sent = now_ns();
  f.t_send = sent;
  std::memcpy(d, &f, sizeof f);
  if (port->tx_burst(&p, 1) != 1) {
    p->free();
    return false;
  }
  const uint64_t deadline = sent + kSec;
  for (;;) {
    Packet* pkts[8];
    const uint16_t n = port->rx_burst(pkts, 8);
    const uint64_t t = now_ns();
    bool got = false;
    for (uint16_t i = 0; i < n; ++i) {
      const Frame* r = pkts[i]->len >= sizeof(Frame) ? frame_of(pkts[i]) : nullptr;
      if (r && r->magic == kMagic && r->seq == seq) {
        out->one_way = r->t_seen - sent;
        out->rtt = t - sent;
        got = true;
      }
      pkts[i]->free();
    }
    if (got) return true;
    if (t > deadline) return false;
  }
}

void stop_ponger(Port* port) {
  for (int k = 0; k < 3; ++k) {
    Packet* p = port->tx_pool().alloc();
    if (!p) return;
    uint8_t* d = p->append(kFrame);
    std::memset(d, 0, kFrame);
    Frame f{};
    f.magic = kMagic;
    f.type = kStop;
    std::memcpy(d, &f, sizeof f);
    if (port->tx_burst(&p, 1) != 1) p->free();
  }
}

double pct(std::vector<uint64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return static_cast<double>(v[i]) / 1000.0;
}

void print_phase(const char* name, const std::vector<Sample>& s) {
  std::vector<uint64_t> ow, rtt;
  for (const auto& x : s) {
    ow.push_back(x.one_way);
    rtt.push_back(x.rtt);
  }
  printf("%-5s %5zu pings  one-way us: median %8.2f  p90 %8.2f  p99 %8.2f  max %8.2f   round trip us: median %8.2f  p99 %8.2f\n",
         name, s.size(), pct(ow, 0.5), pct(ow, 0.9), pct(ow, 0.99), pct(ow, 1.0), pct(rtt, 0.5), pct(rtt, 0.99));
}

}  // namespace

int main(int argc, char** argv) {
  std::string driver = "memif", cpus;
  uint64_t samples = 200, gap_ns = 20 * kMs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--help" || a == "-h") {
      fputs(kUsage, stdout);
      return 0;
    } else if (a == "--driver") {
      driver = val();
      if (driver != "memif" && driver != "uring") {
        fprintf(stderr, "toroid-wake: --driver memif|uring\n");
        return 2;
      }
    } else if (a == "--samples") {
      samples = std::strtoull(val().c_str(), nullptr, 10);
      if (samples == 0 || samples > 100000) {
        fprintf(stderr, "toroid-wake: --samples 1..100000\n");
        return 2;
      }
    } else if (a == "--gap") {
      if (!parse_duration_ns(val().c_str(), &gap_ns)) {
        fprintf(stderr, "toroid-wake: --gap needs a duration\n");
        return 2;
      }
    } else if (a == "--cpus") {
      cpus = val();
    } else {
      fprintf(stderr, "toroid-wake: unknown option '%s' (--help)\n", a.c_str());
      return 2;
    }
  }
  // Pinger and ponger on two different CPUs: a busy-polling pinger sharing
  // the ponger's CPU would measure the scheduler's time slice, not the wake.
  std::string ping_cpus = cpus, pong_cpus = cpus;
  if (cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> mine;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) mine.push_back(c);
    if (mine.size() >= 2) {
      ping_cpus = std::to_string(mine[0]);
      pong_cpus = std::to_string(mine[1]);
    }
  }
  char tmpl[] = "/tmp/toroid-wake.XXXXXX";
  if (!mkdtemp(tmpl)) {
    perror("mkdtemp");
    return 1;
  }
  const std::string dir = tmpl, sock = dir + "/wake.sock";
  const pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    pin(pong_cpus);
    _exit(pong(driver, sock, pong_cpus));
  }
  int rc = 0;
  pin(ping_cpus);
  {
    auto hp = open_end(driver, sock, false, ping_cpus);
    if (!hp) {
      fprintf(stderr, "toroid-wake: pinger: %s\n", hp.status().message().c_str());
      kill(child, SIGKILL);
      rc = 1;
    } else {
      Port* port = hp.value()->ports()[0];
      Sample s;
      bool warm = false;
      for (int k = 0; k < 500 && !warm; ++k) warm = ping(port, 1000000 + k, &s);
      if (!warm) {
        fprintf(stderr, "toroid-wake: no answer from the ponger\n");
        rc = 1;
      } else {
        std::vector<Sample> hot, idle;
        uint64_t seq = 0, lost = 0;
        for (uint64_t k = 0; k < samples; ++k) {
          if (ping(port, ++seq, &s)) hot.push_back(s);
          else ++lost;
        }
        for (uint64_t k = 0; k < samples; ++k) {
          timespec ts{static_cast<time_t>(gap_ns / kSec), static_cast<long>(gap_ns % kSec)};
          nanosleep(&ts, nullptr);
          if (ping(port, ++seq, &s)) idle.push_back(s);
          else ++lost;
        }
        char gap[32];
        printf("wake probe over %s, %lu pings per phase, idle gap %s, pinger on CPU %s, ponger on CPU %s\n",
               driver.c_str(), static_cast<unsigned long>(samples), format_duration(gap_ns, gap, sizeof gap),
               ping_cpus.empty() ? "any" : ping_cpus.c_str(), pong_cpus.empty() ? "any" : pong_cpus.c_str());
        print_phase("hot", hot);
        print_phase("idle", idle);
        std::vector<uint64_t> a, b;
        for (const auto& x : hot) a.push_back(x.one_way);
        for (const auto& x : idle) b.push_back(x.one_way);
        printf("wake cost (idle - hot one-way, medians): %.2f us\n", pct(b, 0.5) - pct(a, 0.5));
        if (lost) printf("lost: %lu pings got no answer within 1 s\n", static_cast<unsigned long>(lost));
        rc = lost ? 1 : 0;
      }
      stop_ponger(port);
      // Wait for the ponger before closing our end (a memif peer must not
      // disconnect under a process that still polls).
      int st = 0;
      for (int k = 0; k < 500; ++k) {
        if (waitpid(child, &st, WNOHANG) == child) break;
        timespec ts{0, 10 * 1000 * 1000};
        nanosleep(&ts, nullptr);
        if (k == 499) {
          kill(child, SIGKILL);
          waitpid(child, &st, 0);
        }
      }
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) rc = 1;
      hp.value()->close();
    }
  }
  unlink(sock.c_str());
  rmdir(dir.c_str());
  return rc;
}
