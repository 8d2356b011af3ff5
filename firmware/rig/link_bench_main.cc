// toroid-linkbench: the raw limit of one host-rig link, no netstack. Two
// processes joined by one link (memif by default, or uring), opened by
// HostPorts exactly as toroid-node opens them, both busy-polling the Port
// burst interface on CPUs of their own. The parent is the client; the child
// echoes pings and counts streams.
//
//   link-pingpong  one frame of S bytes there and back, N times after a
//                  warm-up; one-way latency = round trip / 2 (min, median,
//                  max over the N round trips)
//   link-stream    the client sends S-byte frames as fast as the port takes
//                  them for --stream-time; the server counts them from the
//                  first to the last one it received; --stream-runs runs per
//                  size; min/median/max of the time per frame, frames/s and
//                  GB/s from the median run
//
// Frames are S bytes on the wire (the Ethernet header included, as PortInfo's
// max_frame counts them). A memif link uses bsize=9216 (9000-byte frames,
// docs/drivers.md) and a pool of 9216-byte buffers; a uring link a heap pool
// of 9216-byte buffers. Only the first 32 bytes of a frame are written (as
// dpdk-testpmd's txonly); the ports still copy every byte (memif: into the
// shared ring and out again; uring: through the kernel).
//
// Output: a table, and with --json FILE the same JSON records as the
// collective sweep (firmware/rig/bench_report.h): "coll": "link-pingpong" /
// "link-stream", "algo": the driver, "nodes": 2.
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

#include "base/args.h"
#include "base/clock.h"
#include "firmware/host_port_factory.h"
#include "firmware/rig/bench_report.h"
#include "firmware/rig/process.h"

using namespace toroid;
using namespace toroid::rig;

namespace {

const char kUsage[] =
    "usage: toroid-linkbench [--driver memif|uring] [options]\n"
    "\n"
    "The raw Port latency and streaming rate of one host-rig link between two\n"
    "processes, no netstack (docs/bench.md).\n"
    "\n"
    "  --driver D          memif (default, bsize=9216) | uring\n"
    "  --sizes LIST        ping-pong frame sizes (default 64,256,1500,4096,9000)\n"
    "  --pingpongs N       round trips per size (default 10000; 1000 warm-up first)\n"
    "  --stream-sizes LIST streaming frame sizes (default 64,1500,9000)\n"
    "  --stream-time D     length of one streaming run (default 200ms)\n"
    "  --stream-runs N     runs per streaming size (default 5)\n"
    "  --cpus A,B          client on CPU A, server on CPU B (default: the first two\n"
    "                      CPUs this process may use)\n"
    "  --json FILE         also write the records as a JSON array\n"
    "  --verbose           print every streaming run\n"
    "  --help              this text\n"
    "\n"
    "exit status: 0 measured, 1 a link or measurement failed, 2 usage error\n";

constexpr uint64_t kMagic = 0x746f726f69646c62ull;  // "toroidlb"
enum : uint32_t { kPing = 1, kData = 2, kEnd = 3, kResult = 4, kStop = 5 };
constexpr uint32_t kMinFrame = 64;
constexpr uint32_t kMaxFrame = 9000;

struct Hdr {
  uint64_t magic;
  uint32_t type, run;
  uint64_t seq;
  uint64_t pad;
};
struct StreamResult {  // kResult body, after the Hdr
  uint64_t frames, bytes, t_first, t_last;
};
static_assert(sizeof(Hdr) + sizeof(StreamResult) <= kMinFrame);

uint64_t now_ns() { return mono_ns(); }

Hdr* hdr(Packet* p) { return reinterpret_cast<Hdr*>(p->data()); }

bool mine(Packet* p, uint32_t type) {
  if (p->len < sizeof(Hdr)) return false;
  const Hdr* h = hdr(p);
  return h->magic == kMagic && h->type == type;
}

// A frame of len bytes with only its header written.
Packet* make(Port* port, uint32_t len, uint32_t type, uint32_t run, uint64_t seq) {
  Packet* p = port->tx_pool().alloc();
  if (!p) return nullptr;
  if (!p->append(len)) {
    p->free();
    return nullptr;
  }
  Hdr* h = hdr(p);
  h->magic = kMagic;
  h->type = type;
  h->run = run;
  h->seq = seq;
  h->pad = 0;
  return p;
}

// Sends one packet, retrying while the ring is full, until deadline.
bool send_one(Port* port, Packet* p, uint64_t deadline) {
  while (port->tx_burst(&p, 1) != 1) {
    Packet* rx[8];
    // Keep our receive side drained (a memif peer posts free slots as it polls).
    const uint16_t n = port->rx_burst(rx, 8);
    for (uint16_t i = 0; i < n; ++i) rx[i]->free();
    if (now_ns() > deadline) {
      p->free();
      return false;
    }
  }
  return true;
}

void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)sched_setaffinity(0, sizeof set, &set);
}

Result<std::unique_ptr<HostPorts>> open_end(const std::string& driver, const std::string& sock, bool server, int cpu) {
  RawLinkEnd e{driver, sock, server, "linkbench", server ? "lb-server" : "lb-client", 4095, /*jumbo=*/true, ""};
  if (cpu >= 0) e.cpu_list = std::to_string(cpu);
  return open_raw_link_end(e);
}

// The server: echoes pings, counts streams, answers kEnd with a kResult.
int serve(const std::string& driver, const std::string& sock, int cpu) {
  pin(cpu);
  auto hp = open_end(driver, sock, true, cpu);
  if (!hp) {
    fprintf(stderr, "toroid-linkbench: server: %s\n", hp.status().message().c_str());
    return 1;
  }
  Port* port = hp.value()->ports()[0];
  uint64_t frames = 0, bytes = 0, t_first = 0, t_last = 0;
  const uint64_t give_up = now_ns() + 600 * kSec;
  bool stop = false;
  while (!stop && now_ns() < give_up) {
    Packet* rx[32];
    const uint16_t n = port->rx_burst(rx, 32);
    if (n == 0) continue;
    const uint64_t t = now_ns();
    for (uint16_t i = 0; i < n; ++i) {
      Packet* p = rx[i];
      if (p->len < sizeof(Hdr) || hdr(p)->magic != kMagic) {
        p->free();
        continue;
      }
      switch (hdr(p)->type) {
        case kPing:
          if (port->tx_burst(&p, 1) != 1) (void)send_one(port, p, t + kSec);
          break;
        case kData:
          if (frames == 0) t_first = t;
          t_last = t;
          ++frames;
          bytes += p->len;
          p->free();
          break;
        case kEnd: {
          const uint32_t run = hdr(p)->run;
          p->free();
          Packet* r = make(port, kMinFrame, kResult, run, 0);
          if (r) {
            StreamResult res{frames, bytes, t_first, t_last};
            std::memcpy(r->data() + sizeof(Hdr), &res, sizeof res);
            (void)send_one(port, r, t + kSec);
          }
          frames = bytes = t_first = t_last = 0;
          break;
        }
        case kStop:
          stop = true;
          p->free();
          break;
        default:
          p->free();
      }
    }
  }
  // Let the client see the last frames before our end closes.
  timespec ts{0, 200 * 1000 * 1000};
  nanosleep(&ts, nullptr);
  hp.value()->close();
  return stop ? 0 : 1;
}

// One round trip; 0 on a timeout.
uint64_t ping(Port* port, uint32_t len, uint64_t seq) {
  Packet* p = make(port, len, kPing, 0, seq);
  if (!p) return 0;
  const uint64_t sent = now_ns();
  if (port->tx_burst(&p, 1) != 1 && !send_one(port, p, sent + kSec)) return 0;
  for (;;) {
    Packet* rx[8];
    const uint16_t n = port->rx_burst(rx, 8);
    const uint64_t t = now_ns();
    bool got = false;
    for (uint16_t i = 0; i < n; ++i) {
      if (mine(rx[i], kPing) && hdr(rx[i])->seq == seq) got = true;
      rx[i]->free();
    }
    if (got) return t - sent;
    if (t > sent + kSec) return 0;
  }
}

struct StreamRun {
  uint64_t frames = 0, bytes = 0, ns = 0;
};

// One streaming run of len-byte frames for run_ns; false on a failure.
bool stream(Port* port, uint32_t len, uint32_t run, uint64_t run_ns, StreamRun* out) {
  Packet* burst[32];
  uint16_t have = 0;
  uint64_t seq = 0;
  const uint64_t t0 = now_ns();
  uint64_t t = t0;
  uint32_t k = 0;
  while (t - t0 < run_ns) {
    while (have < 32) {
      Packet* p = make(port, len, kData, run, seq++);
      if (!p) break;
      burst[have++] = p;
    }
    const uint16_t sent = port->tx_burst(burst, have);
    if (sent < have) std::memmove(burst, burst + sent, (have - sent) * sizeof(Packet*));
    have = static_cast<uint16_t>(have - sent);
    if ((++k & 15) == 0) {  // a memif peer posts free slots only as we poll our rx too
      Packet* rx[8];
      const uint16_t n = port->rx_burst(rx, 8);
      for (uint16_t i = 0; i < n; ++i) rx[i]->free();
    }
    t = now_ns();
  }
  for (uint16_t i = 0; i < have; ++i) burst[i]->free();
  Packet* e = make(port, kMinFrame, kEnd, run, 0);
  if (!e || !send_one(port, e, now_ns() + kSec)) return false;
  const uint64_t deadline = now_ns() + 5 * kSec;
  while (now_ns() < deadline) {
    Packet* rx[8];
    const uint16_t n = port->rx_burst(rx, 8);
    bool got = false;
    for (uint16_t i = 0; i < n; ++i) {
      if (mine(rx[i], kResult) && hdr(rx[i])->run == run) {
        StreamResult r;
        std::memcpy(&r, rx[i]->data() + sizeof(Hdr), sizeof r);
        out->frames = r.frames;
        out->bytes = r.bytes;
        out->ns = r.t_last > r.t_first ? r.t_last - r.t_first : 0;
        got = true;
      }
      rx[i]->free();
    }
    if (got) return out->frames > 1 && out->ns > 0;
  }
  return false;
}

bool parse_list(const std::string& s, std::vector<uint32_t>* out) {
  out->clear();
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string x = s.substr(pos, end - pos);
    char* e = nullptr;
    const unsigned long v = std::strtoul(x.c_str(), &e, 10);
    if (x.empty() || *e || v < kMinFrame || v > kMaxFrame) return false;
    out->push_back(static_cast<uint32_t>(v));
    pos = end + 1;
  }
  return !out->empty();
}

std::string num(double v, int prec) {
  char b[64];
  snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string driver = "memif", json, cpus;
  std::vector<uint32_t> sizes = {64, 256, 1500, 4096, 9000}, stream_sizes = {64, 1500, 9000};
  uint64_t pingpongs = 10000, stream_ns = 200 * kMs, runs = 5;
  bool verbose = false;
  auto usage = [](const std::string& m) {
    fprintf(stderr, "toroid-linkbench: %s\n(toroid-linkbench --help for usage)\n", m.c_str());
    return 2;
  };
  for (ArgWalker w(argc, argv); w.next();) {
    const std::string a = w.arg();
    std::string v;
    if (a == "--help" || a == "-h") {
      fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--verbose") {
      verbose = true;
      continue;
    }
    if (!w.value(&v)) return usage("option " + a + " needs a value");
    if (a == "--driver") {
      if (v != "memif" && v != "uring") return usage("--driver '" + v + "': use memif or uring");
      driver = v;
    } else if (a == "--sizes" || a == "--stream-sizes") {
      if (!parse_list(v, a == "--sizes" ? &sizes : &stream_sizes))
        return usage(a + " '" + v + "': a list of frame sizes of 64..9000 bytes");
    } else if (a == "--pingpongs") {
      pingpongs = std::strtoull(v.c_str(), nullptr, 10);
      if (pingpongs == 0 || pingpongs > 10000000) return usage("--pingpongs must be 1..10000000");
    } else if (a == "--stream-time") {
      if (!parse_duration_ns(v.c_str(), &stream_ns) || stream_ns < kMs || stream_ns > 60 * kSec)
        return usage("--stream-time '" + v + "': a duration of 1ms..60s");
    } else if (a == "--stream-runs") {
      runs = std::strtoull(v.c_str(), nullptr, 10);
      if (runs == 0 || runs > 1000) return usage("--stream-runs must be 1..1000");
    } else if (a == "--cpus") {
      cpus = v;
    } else if (a == "--json") {
      json = v;
    } else {
      return usage("unknown option '" + a + "'");
    }
  }
  // Client and server on CPUs of their own: a busy poller sharing the
  // other's CPU would measure the scheduler's time slice.
  int client_cpu = -1, server_cpu = -1;
  if (!cpus.empty()) {
    if (sscanf(cpus.c_str(), "%d,%d", &client_cpu, &server_cpu) != 2 || client_cpu < 0 || server_cpu < 0)
      return usage("--cpus '" + cpus + "': two CPU numbers, e.g. 0,1");
  } else {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> mine_cpus;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) mine_cpus.push_back(c);
    if (mine_cpus.size() >= 2) {
      client_cpu = mine_cpus[0];
      server_cpu = mine_cpus[1];
    }
  }

  char tmpl[] = "/tmp/toroid-linkbench.XXXXXX";
  if (!mkdtemp(tmpl)) {
    perror("mkdtemp");
    return 1;
  }
  const std::string dir = tmpl, sock = dir + "/link.sock";
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    _exit(serve(driver, sock, server_cpu));
  }
  pin(client_cpu);
  int rc = 0;
  std::vector<BenchRow> rows;
  auto hp = open_end(driver, sock, false, client_cpu);
  if (!hp) {
    fprintf(stderr, "toroid-linkbench: client: %s\n", hp.status().message().c_str());
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    unlink(sock.c_str());
    rmdir(dir.c_str());
    return 1;
  }
  Port* port = hp.value()->ports()[0];
  const uint32_t max_frame = port->info().max_frame;
  printf("link bench over %s (max frame %u B), client on CPU %d, server on CPU %d\n", driver.c_str(), max_frame,
         client_cpu, server_cpu);
  // The server answers once it polls; until then a ping may go unanswered.
  // Bounded: about 10 s in all, and at once if the server has exited.
  bool up = false, server_gone = false;
  int server_st = 0;
  const uint64_t give_up = now_ns() + 10 * kSec;
  for (int k = 0; k < 500 && !up && !server_gone && now_ns() < give_up; ++k) {
    up = ping(port, kMinFrame, 1000000000ull + k) != 0;
    server_gone = !up && waitpid(child, &server_st, WNOHANG) == child;
  }
  if (!up) {
    if (server_gone)
      fprintf(stderr, "toroid-linkbench: no answer from the server: it exited (%s)\n",
              describe_exit(server_st).c_str());
    else
      fprintf(stderr, "toroid-linkbench: no answer from the server\n");
    rc = 1;
  }
  uint64_t seq = 0;
  for (uint32_t s : up ? sizes : std::vector<uint32_t>{}) {
    BenchRow row;
    row.coll = "link-pingpong";
    row.algo = driver;
    row.nodes = 2;
    row.bytes = s;
    if (s > max_frame) {
      row.note = "not available: the port carries frames up to " + std::to_string(max_frame) + " B";
      rows.push_back(row);
      continue;
    }
    for (int k = 0; k < 1000; ++k) (void)ping(port, s, ++seq);
    std::vector<double> ow;
    ow.reserve(pingpongs);
    uint64_t lost = 0;
    for (uint64_t k = 0; k < pingpongs; ++k) {
      const uint64_t rtt = ping(port, s, ++seq);
      if (rtt) ow.push_back(static_cast<double>(rtt) / 2e3);
      else ++lost;
    }
    if (lost || ow.empty()) {
      row.note = "no figure: " + std::to_string(lost) + " pings got no answer within 1 s";
      rc = 1;
    } else {
      row.timed = true;
      row.reps = static_cast<uint32_t>(ow.size());
      row.min_us = *std::min_element(ow.begin(), ow.end());
      row.max_us = *std::max_element(ow.begin(), ow.end());
      row.median_us = median_of(ow);
      std::sort(ow.begin(), ow.end());
      const double p99 = ow[std::min(ow.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(ow.size())))];
      row.extra.emplace_back("p99_us", num(p99, 3));
      row.extra.emplace_back("rtt_median_us", num(2 * row.median_us, 3));
    }
    rows.push_back(row);
  }
  for (uint32_t s : up ? stream_sizes : std::vector<uint32_t>{}) {
    BenchRow row;
    row.coll = "link-stream";
    row.algo = driver;
    row.nodes = 2;
    row.bytes = s;
    if (s > max_frame) {
      row.note = "not available: the port carries frames up to " + std::to_string(max_frame) + " B";
      rows.push_back(row);
      continue;
    }
    std::vector<double> per_frame_us, gbps, mpps;
    uint32_t failed = 0;
    for (uint32_t r = 0; r < runs; ++r) {
      StreamRun sr;
      if (!stream(port, s, static_cast<uint32_t>(seq++), stream_ns, &sr)) {
        ++failed;
        continue;
      }
      const double ns = static_cast<double>(sr.ns);
      if (verbose)
        printf("  stream %u B run %u: %lu frames received in %.3f ms (first to last)\n", s, r,
               static_cast<unsigned long>(sr.frames), ns / 1e6);
      const double frames = static_cast<double>(sr.frames - 1);  // intervals between first and last
      per_frame_us.push_back(ns / frames / 1e3);
      mpps.push_back(frames / ns * 1e3);
      gbps.push_back(static_cast<double>(sr.bytes) * frames / static_cast<double>(sr.frames) / ns);
    }
    if (failed || per_frame_us.empty()) {
      row.note = "no figure: " + std::to_string(failed) + " of " + std::to_string(runs) + " runs failed";
      rc = 1;
    } else {
      row.timed = true;
      row.reps = static_cast<uint32_t>(per_frame_us.size());
      row.min_us = *std::min_element(per_frame_us.begin(), per_frame_us.end());
      row.max_us = *std::max_element(per_frame_us.begin(), per_frame_us.end());
      row.median_us = median_of(per_frame_us);
      row.has_bw = true;
      row.algbw_gbps = row.busbw_gbps = median_of(gbps);
      row.extra.emplace_back("mpps", num(median_of(mpps), 3));
      row.extra.emplace_back("gbps_min", num(*std::min_element(gbps.begin(), gbps.end()), 4));
      row.extra.emplace_back("gbps_max", num(*std::max_element(gbps.begin(), gbps.end()), 4));
    }
    rows.push_back(row);
  }
  // Stop the server, wait for it, then close our end (a memif peer must not
  // disconnect under a process that still polls).
  for (int k = 0; k < 3; ++k) {
    Packet* p = make(port, kMinFrame, kStop, 0, 0);
    if (p && !send_one(port, p, now_ns() + 100 * kMs)) break;
  }
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
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "toroid-linkbench: the server did not stop cleanly (%s)\n", describe_exit(st).c_str());
    rc = 1;
  }
  hp.value()->close();
  unlink(sock.c_str());
  rmdir(dir.c_str());

  printf("%-14s %-6s %6s %7s %10s %10s %10s %8s %8s\n", "test", "driver", "bytes", "n", "min us", "median us",
         "max us", "Mpps", "GB/s");
  for (const auto& r : rows) {
    if (!r.timed) {
      printf("%-14s %-6s %6lu %7s %s\n", r.coll.c_str(), r.algo.c_str(), static_cast<unsigned long>(r.bytes), "-",
             r.note.c_str());
      continue;
    }
    std::string mpps = "-", gb = "-";
    for (const auto& [k, v] : r.extra)
      if (k == "mpps") mpps = v;
    if (r.has_bw) gb = num(r.busbw_gbps, 3);
    printf("%-14s %-6s %6lu %7u %10.3f %10.3f %10.2f %8s %8s\n", r.coll.c_str(), r.algo.c_str(),
           static_cast<unsigned long>(r.bytes), r.reps, r.min_us, r.median_us, r.max_us, mpps.c_str(), gb.c_str());
  }
  printf("link-pingpong: one-way = round trip / 2; link-stream: time per frame over each run, Mpps and GB/s\n"
         "(1e9 B/s, whole frames) of the median run\n");
  if (!json.empty()) {
    const std::string text = bench_json(rows, {{"rig", json_str("host-link")}, {"driver", json_str(driver)},
                                               {"max_frame", std::to_string(max_frame)}});
    FILE* f = fopen(json.c_str(), "w");
    bool ok = f && fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f) ok = fclose(f) == 0 && ok;
    if (!ok) {
      fprintf(stderr, "toroid-linkbench: cannot write %s\n", json.c_str());
      rc = 1;
    } else {
      printf("link bench: %zu records written to %s\n", rows.size(), json.c_str());
    }
  }
  return rc;
}
