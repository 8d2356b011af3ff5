// toroid-node: one compute node as a process. The host rig (toroid-rig)
// starts one per node; a qemu guest or a deployed machine would run it too.
//
// Sequence: personality (flags or file; errors are one line naming the
// field, exit 2) -> EAL if a DPDK port is named -> open and connect the
// ports in personality order -> Node (firmware/node.h) with a RealClock ->
// boot -> run the event loop until the job is done -> report -> keep
// serving the links (neighbours may still need our acks and forwarding)
// until told to stop -> quiesce -> close the ports -> exit.
//
// Stopping (see docs/host-rig.md): SIGTERM or SIGINT makes the node stop
// polling and print "quiesced"; it then waits up to --stop-grace for SIGUSR1
// (the rig's "every node has quiesced") or a second SIGTERM/SIGINT before it
// closes its ports. Closing a memif port under a peer that still polls can
// crash the peer inside the PMD, so the rig stops all nodes in two phases.
//
// Machine-readable lines on stdout (the rig parses them; everything else is
// log): one event per line, "KIND node=X,Y,Z key=value ..." with values
// quoted ("...") when they hold spaces:
//   up        node= pid=                          the process started
//   ports     node= n= ms= drivers=               every port connected, links up
//   state     node= state= ms=                    node state changes (training, running, ...)
//   case      node= coll= algo= name= result= ns= detail=
//   verdict   node= PASS|FAIL reason= cases= ms=
//   linkdown  node= port= dir= peer= mono= reason=    a link went down (each time)
//   reset     node= gen= mono= reason=            the node reset its communication
//                                                 (a new generation; links train again)
//   quiesced  node=                               stopped polling, links still open
//   progress  node= cases= failed= ms=            cases done so far (at most every 10 s)
//   links     node= ports= retransmits= timeouts= keepalives= trainings= duplicates= self_stalls= longest_silence_ms=
#include <signal.h>
#include <sys/random.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/args.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/rng.h"
#include "base/stats.h"
#include "base/tuning.h"
#include "drivers/dpdk/eal.h"
#include "firmware/capture.h"
#include "firmware/host_port_factory.h"
#include "firmware/job.h"
#include "firmware/node.h"
#include "firmware/node_events.h"
#include "firmware/node_topology.h"
#include "firmware/pid1.h"
#include "firmware/port_keeper.h"
#include "firmware/personality.h"

using namespace toroid;

namespace {

const char kUsage[] =
    "usage: toroid-node --personality FILE [options]\n"
    "       toroid-node --dims XxYxZ --coord X,Y,Z --job JOB --port NAME:DIR:DRIVER:ADDRESS ... [options]\n"
    "       toroid-node --topology FILE [--rank R] [options]      (docs/deploy.md)\n"
    "\n"
    "Runs one compute node as a process: opens the ports its personality\n"
    "names (DPDK memif/af_packet/pci, or io_uring sockets), trains its links,\n"
    "runs the job, prints the results, then keeps serving its links until it\n"
    "is told to stop (SIGTERM/SIGINT) or --linger runs out.\n"
    "\n"
    "personality (firmware/personality.h; flags override the file):\n"
    "  --personality FILE    key = value file: dims, coord, job, seed, partition,\n"
    "                        port, arg\n"
    "  --dims XxYxZ  --coord X,Y,Z  --job JOB  --seed N  --partition ID\n"
    "  --port NAME:DIR:DRIVER:ADDRESS   e.g. port0:x+:memif:role=server,socket=/tmp/a.sock,id=0\n"
    "                        or port0:x+:uring:path=/tmp/a.sock,role=client (repeatable)\n"
    "  --arg KEY=VALUE       a job argument (repeatable)\n"
    "\n"
    "deployment (docs/deploy.md):\n"
    "  --topology FILE       the partition's topology: this node's personality is\n"
    "                        its rank's entry (--job, --seed, --arg override it)\n"
    "  --rank R              the rank; default: PMIx (srun --mpi=pmix) or Slurm's\n"
    "                        SLURM_PROCID\n"
    "  --any-host            do not check that this machine is the rank's host\n"
    "\n"
    "node options:\n"
    "  --cpu N               run the EAL lcore on CPU N\n"
    "  --yield-when-idle     give the CPU up (sched_yield) while idle instead of\n"
    "                        spinning: for more node processes than cores (with\n"
    "                        --topology: the default when the topology places\n"
    "                        more nodes on this host than it has CPUs)\n"
    "  --cpus LIST           let it float over LIST (e.g. 0-1); default: this\n"
    "                        process's affinity (many nodes share few cores)\n"
    "  --train-timeout D     link connect + training deadline (default 5s)\n"
    "  --coll-timeout D      one collective operation's deadline (default 30s)\n"
    "  --link-timeout D      a link that makes no progress, or hears nothing from\n"
    "                        its neighbour, this long goes down (default 500ms)\n"
    "  --keepalive D         an idle link probes its neighbour after this much\n"
    "                        silence (default 100ms; at most a quarter of\n"
    "                        --link-timeout is used)\n"
    "  --job-timeout D       the job's deadline (default 2min)\n"
    "  --linger D            after the verdict, keep serving links this long at\n"
    "                        most while waiting to be stopped (default 2s)\n"
    "  --stop-grace D        after SIGTERM: wait up to D for SIGUSR1 before\n"
    "                        closing the ports (default 0; the rig uses it)\n"
    "  --pool N              packet buffers (DPDK mbufs; default 8191)\n"
    "  --log-level L         error | warn | info | debug (default info)\n"
    "  --eal-log-level L     DPDK's log level (default error)\n"
    "  --eal-arg ARG         extra EAL argument (repeatable)\n"
    "  --cut-dir DIR         while DIR/CABLE.cut exists, that port's cable is pulled\n"
    "                        (frames lost, carrier down): the host rig's --chaos cut;\n"
    "                        CABLE is the port's socket name without .sock\n"
    "  --pcap DIR            capture every port's frames, both directions, to\n"
    "                        DIR/node-X-Y-Z-portN-DIR.pcap (docs/capture.md)\n"
    "  --check-eal           only bring EAL up with no ports and exit\n"
    "                        (0 it works here, 77 it does not)\n"
    "  --help                this text\n"
    "\n"
    "exit status: 0 the job passed, 1 it failed (ports, boot or job), 2 usage\n"
    "or personality error, 128+N stopped by signal N before its verdict\n";

// Signals: flags only; the loop's done() predicate and the waits read them.
volatile sig_atomic_t g_stop_sig = 0;    // first SIGTERM/SIGINT
volatile sig_atomic_t g_stop_count = 0;  // how many arrived
volatile sig_atomic_t g_go = 0;          // SIGUSR1: the rig released the links

void on_stop(int sig) {
  if (!g_stop_sig) g_stop_sig = sig;
  g_stop_count = g_stop_count + 1;
}
void on_go(int) { g_go = 1; }

void install_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sa.sa_handler = on_go;
  sigaction(SIGUSR1, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed log pipe must not kill a node mid-teardown
}

void sleep_ms(uint64_t ms) {
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * kMs)};
  nanosleep(&ts, nullptr);
}

// A boot id nobody else draws: from the kernel's random pool, so a node
// started again on the same machine (same seed, same rank) is told apart.
uint64_t random_boot_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, 0) != static_cast<ssize_t>(sizeof id)) id = 0;
  id ^= mix64(mono_ns() ^ (static_cast<uint64_t>(getpid()) << 32));
  return id ? id : 1;
}

struct NodeArgs {
  std::vector<std::string> personality;  // for parse_personality_args
  std::string topology;                  // --topology FILE
  int64_t rank = -1;                     // --rank R
  bool any_host = false;
  HostPortOptions ports;
  NodeOptions node;
  uint64_t linger_ns = 2 * kSec;
  uint64_t stop_grace_ns = 0;
  bool check_eal = false;
  bool yield_when_idle = false;
  std::string pcap_dir;  // --pcap: capture every port (firmware/capture.h)
  std::string cut_dir;   // --cut-dir: cables the rig pulls (firmware/port_keeper.h)
};

int usage_error(const std::string& msg) {
  fprintf(stderr, "toroid-node: %s\n(toroid-node --help for usage)\n", msg.c_str());
  return 2;
}

// Returns -1 to go on, else an exit status.
int parse_args(int argc, char** argv, NodeArgs* a) {
  for (ArgWalker w(argc, argv); w.next();) {
    const std::string arg = w.arg();
    auto need = [&](std::string* out) { return w.value(out); };
    auto duration = [&](uint64_t* out) -> int {
      std::string v;
      if (!need(&v)) return usage_error("option " + arg + " needs a value");
      if (!parse_duration_ns(v.c_str(), out)) return usage_error(arg + " '" + v + "' is not a duration (e.g. 500ms, 2s)");
      return -1;
    };
    if (arg == "--help" || arg == "-h") {
      fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--yield-when-idle") {
      a->yield_when_idle = true;
    } else if (arg == "--check-eal") {
      a->check_eal = true;
    } else if (arg == "--any-host") {
      a->any_host = true;
    } else if (arg == "--topology") {
      if (!need(&a->topology) || a->topology.empty()) return usage_error("option --topology needs a file");
    } else if (arg == "--rank") {
      std::string v;
      if (!need(&v)) return usage_error("option --rank needs a value");
      char* end = nullptr;
      const long long r = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || r < 0 || r > 0xffffff) return usage_error("--rank '" + v + "' is not a rank");
      a->rank = r;
    } else if (arg == "--personality" || arg == "--dims" || arg == "--coord" || arg == "--job" || arg == "--seed" ||
               arg == "--partition" || arg == "--port" || arg == "--arg") {
      std::string v;
      if (!need(&v)) return usage_error("option " + arg + " needs a value");
      a->personality.push_back(arg);
      a->personality.push_back(v);
    } else if (arg == "--cpu") {
      std::string v;
      if (!need(&v)) return usage_error("option --cpu needs a value");
      char* end = nullptr;
      const long c = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || c < 0 || c >= CPU_SETSIZE) return usage_error("--cpu '" + v + "' is not a CPU number");
      a->ports.cpu = static_cast<int>(c);
    } else if (arg == "--cpus") {
      std::string v;
      if (!need(&v)) return usage_error("option --cpus needs a value");
      if (v.empty() || v.find_first_not_of("0123456789,-") != std::string::npos)
        return usage_error("--cpus '" + v + "' is not a CPU list (e.g. 0-1 or 0,2)");
      a->ports.cpu_list = v;
    } else if (arg == "--train-timeout") {
      if (int r = duration(&a->node.train_timeout_ns); r >= 0) return r;
    } else if (arg == "--coll-timeout") {
      if (int r = duration(&a->node.coll_timeout_ns); r >= 0) return r;
    } else if (arg == "--cut-dir") {
      if (!need(&a->cut_dir) || a->cut_dir.empty()) return usage_error("option --cut-dir needs a directory");
    } else if (arg == "--link-timeout") {
      if (int r = duration(&a->node.net.link.down_after_ns); r >= 0) return r;
      if (a->node.net.link.down_after_ns < 100 * kMs) return usage_error("--link-timeout must be at least 100ms");
    } else if (arg == "--keepalive") {
      if (int r = duration(&a->node.net.link.keepalive_ns); r >= 0) return r;
    } else if (arg == "--job-timeout") {
      if (int r = duration(&a->node.job_timeout_ns); r >= 0) return r;
    } else if (arg == "--linger") {
      if (int r = duration(&a->linger_ns); r >= 0) return r;
    } else if (arg == "--stop-grace") {
      if (int r = duration(&a->stop_grace_ns); r >= 0) return r;
    } else if (arg == "--pool") {
      std::string v;
      if (!need(&v)) return usage_error("option --pool needs a value");
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 255 || n > (1u << 20)) return usage_error("--pool '" + v + "' must be 255..1048576");
      a->ports.pool_packets = static_cast<uint32_t>(n);
    } else if (arg == "--log-level") {
      std::string v;
      LogLevel lvl;
      if (!need(&v) || !parse_log_level(v, &lvl))
        return usage_error("--log-level needs error, warn, info or debug");
      set_log_level(lvl);
    } else if (arg == "--eal-log-level") {
      std::string v;
      if (!need(&v)) return usage_error("option --eal-log-level needs a value");
      a->ports.eal_log_level = v;
    } else if (arg == "--pcap") {
      if (!need(&a->pcap_dir) || a->pcap_dir.empty()) return usage_error("option --pcap needs a directory");
    } else if (arg == "--eal-arg") {
      std::string v;
      if (!need(&v)) return usage_error("option --eal-arg needs a value");
      a->ports.eal_args.push_back(v);
    } else {
      return usage_error("unknown option '" + arg + "'");
    }
  }
  if (!a->topology.empty()) {
    for (size_t i = 0; i < a->personality.size(); i += 2) {
      const std::string& f = a->personality[i];
      if (f == "--personality" || f == "--dims" || f == "--coord" || f == "--port")
        return usage_error(f + " and --topology both say who this node is: give one of them");
    }
  } else if (a->rank >= 0 || a->any_host) {
    return usage_error("--rank and --any-host are options of --topology");
  }
  return -1;
}

// After SIGTERM: the node has stopped polling. Wait for the rig's release
// (SIGUSR1) or a second stop signal, at most grace_ns.
void wait_release(uint64_t grace_ns) {
  const uint64_t deadline = mono_ns() + grace_ns;
  while (!g_go && g_stop_count < 2 && mono_ns() < deadline) sleep_ms(1);
}

// Nothing to poll (the ports failed): wait to be stopped, at most linger_ns.
void wait_stop(uint64_t linger_ns) {
  const uint64_t deadline = mono_ns() + linger_ns;
  while (!g_stop_sig && mono_ns() < deadline) sleep_ms(1);
}

}  // namespace

static int run_node(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  install_signals();
  NodeArgs a;
  if (int r = parse_args(argc, argv, &a); r >= 0) return r;

  if (a.check_eal) {
    EalOptions eo;
    eo.tag = "check";
    eo.pool_mbufs = 255;
    eo.cpu_list = affinity_cpu_list();
    eo.log_level = a.ports.eal_log_level;
    Status st = eal_init(eo);
    if (!st) {
      printf("EAL cannot come up here: %s\n", st.message().c_str());
      return 77;
    }
    std::string args;
    for (const auto& s : eal_args()) args += " " + s;
    printf("EAL up:%s\n", args.c_str());
    eal_cleanup();
    return 0;
  }

  if (a.personality.empty() && a.topology.empty())
    return usage_error("no personality: give --personality FILE, --topology FILE or --dims/--coord/--job/--port");
  TopologyLaunch tl;
  if (!a.topology.empty()) {
    auto r = load_topology_launch(a.topology, a.rank, a.any_host, a.personality);
    if (!r) {
      fprintf(stderr, "toroid-node: %s\n", r.status().message().c_str());
      return 2;
    }
    tl = std::move(r.value());
    // More nodes here than CPUs: an idle node gives its CPU to a busy one.
    if (tl.ranks_on_host > static_cast<uint32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))))
      a.yield_when_idle = true;
    auto topo = tl.topo;
    a.node.describe_end = [topo](const Coord& c, Dir d) { return describe_end(*topo, c, d); };
  }
  auto pr = a.topology.empty() ? parse_personality_args(a.personality) : Result<Personality>(tl.personality);
  if (!pr) {
    fprintf(stderr, "toroid-node: %s\n", pr.status().message().c_str());
    return 2;
  }
  const Personality p = pr.value();
  if (Status st = check_host_ports(p); !st) {
    fprintf(stderr, "toroid-node: %s\n", st.message().c_str());
    return 2;
  }
  if (!is_known_job(p.job)) {
    fprintf(stderr, "toroid-node: personality: unknown job '%s' (known: %s)\n", p.job.c_str(), known_jobs());
    return 2;
  }

  const std::string name = p.coord.to_string();
  const Logger log("[node " + name + "]");
  const uint64_t t0 = mono_ns();
  auto ms_since = [&](uint64_t t) {
    char b[32];
    snprintf(b, sizeof b, "%.3f", static_cast<double>(mono_ns() - t) / 1e6);
    return std::string(b);
  };
  emit("up node=" + name + " pid=" + std::to_string(getpid()) +
       (a.topology.empty() ? "" : " rank=" + std::to_string(tl.rank.rank) + " host=" + tl.host));
  if (!a.topology.empty())
    log.info("topology %s: partition %s, rank %u (from %s) on host %s%s", a.topology.c_str(), p.partition.c_str(),
             tl.rank.rank, tl.rank.source.c_str(), tl.host.c_str(),
             a.yield_when_idle ? "; more nodes than CPUs here: yielding when idle" : "");

  // Ports: a failure here is this node's verdict; it still waits to be
  // stopped with the others (its open links must not vanish under a
  // neighbour that polls them).
  auto fail_early = [&](const Status& st) {
    log.error("%s", st.message().c_str());
    emit("verdict node=" + name + " FAIL reason=" + quote(st.message()) + " cases=0 ms=" + ms_since(t0));
    wait_stop(a.linger_ns);
    if (g_stop_sig) {
      emit("quiesced node=" + name);
      wait_release(a.stop_grace_ns);
    }
    return 1;
  };
  char tag[64];
  snprintf(tag, sizeof tag, "n%u-%u-%u", p.coord.c[0], p.coord.c[1], p.coord.c[2]);
  a.ports.tag = tag;
  auto hp = HostPorts::open(p, a.ports);
  if (!hp) return fail_early(hp.status());
  std::unique_ptr<HostPorts> ports = std::move(hp.value());
  for (const auto& note : ports->notes()) log.info("%s", note.c_str());
  const std::string open_ms = ms_since(t0);
  const uint64_t t_start = mono_ns();
  if (Status st = ports->start(a.node.train_timeout_ns); !st) {
    const int rc = fail_early(st);
    ports->close();
    return rc;
  }
  if (g_stop_sig) {  // stopped while connecting
    ports->close();
    return 128 + g_stop_sig;
  }
  std::string drivers;  // what each port really runs on (an af_xdp port may have fallen back)
  for (const Port* port : ports->ports()) drivers += (drivers.empty() ? "" : ",") + port->info().driver;
  emit("ports node=" + name + " n=" + std::to_string(ports->ports().size()) + " ms=" + ms_since(t0) +
       " open_ms=" + open_ms + " connect_ms=" + ms_since(t_start) + " drivers=" + (drivers.empty() ? "-" : drivers));

  RealClock clock;
  // --cut-dir: every port behind a CutPort the keeper switches by file.
  std::vector<std::unique_ptr<CutPort>> cut_ports;
  std::vector<Port*> node_ports = ports->ports();
  std::vector<std::string> cut_files;
  if (!a.cut_dir.empty()) {
    for (size_t i = 0; i < node_ports.size(); ++i) {
      cut_ports.push_back(std::make_unique<CutPort>(*node_ports[i]));
      node_ports[i] = cut_ports.back().get();
      const std::string cable = i < p.ports.size() ? cable_of_address(p.ports[i].address) : "";
      cut_files.push_back(cable.empty() ? "" : a.cut_dir + "/" + cable + ".cut");
    }
  }
  std::unique_ptr<NodeCapture> capture;
  if (!a.pcap_dir.empty()) {
    auto nc = NodeCapture::open(a.pcap_dir, p, node_ports, clock, monotonic_to_realtime_ns());
    if (!nc) {
      const int rc = fail_early(nc.status());
      ports->close();
      return rc;
    }
    capture = std::move(nc.value());
  }
  a.node.boot_id = random_boot_id();
  // Real links carry more than the sim's model: more receive buffers per VC,
  // advertised in the hellos, so a peer sends no more than this end holds.
  for (uint16_t& c : a.node.net.link.rx_credits) c = tuning::kVcCreditsHost;
  auto node = std::make_unique<Node>(p, clock, ports->pool(), capture ? capture->ports() : node_ports, a.node);
  node->loop().set_yield_when_idle(a.yield_when_idle);
  for (int fd : ports->wait_fds()) {
    if (Status st = node->loop().add_wait_fd(fd); !st) log.warn("idle wait on fd %d: %s", fd, st.message().c_str());
  }
  std::vector<CutPort*> cuts;
  for (auto& c : cut_ports) cuts.push_back(c.get());
  auto keeper = std::make_unique<PortKeeper>(node->loop(), node_ports, cuts, cut_files);
  LinkMonitor monitor(*node, ports->ports().size(), name);
  StateReporter reporter(*node, name, t0);
  node->net().add_link_down_listener(&monitor);
  node->add_untrained_listener(&monitor);
  node->loop().add_poller(&reporter);

  node->boot();
  const uint64_t limit = a.node.train_timeout_ns + a.node.job_timeout_ns + kSec;
  Status run = node->loop().run_until([&] { return node->finished() || g_stop_sig != 0; }, limit, "job");
  reporter.poll();

  int rc;
  if (node->finished()) {
    if (const Job* job = node->job()) {
      for (const auto& c : job->cases()) {
        emit("case node=" + name + " coll=" + quote(c.coll) + " algo=" + quote(c.algo) + " name=" + quote(c.name) +
             " result=" + verdict_name(c.verdict) + " ns=" + std::to_string(c.elapsed_ns) +
             " detail=" + quote(c.detail));
      }
      for (const auto& [k, v] : job->totals())
        emit("total node=" + name + " group=" + quote(job->totals_name()) + " key=" + quote(k) +
             " value=" + std::to_string(v));
    }
    emit_link_summary(*node, name);
    const bool pass = node->state() == NodeState::kPassed;
    const size_t ncases = node->job() ? node->job()->cases().size() : 0;
    emit("verdict node=" + name + (pass ? " PASS" : " FAIL") + " reason=" +
         quote(pass ? "" : node->status().message()) + " cases=" + std::to_string(ncases) + " ms=" + ms_since(t0));
    rc = pass ? 0 : 1;
    const IdleStats& is = node->loop().idle_stats();
    char dur[32];
    log.debug("event loop: %lu busy rounds, %lu idle rounds, %lu sleeps (%s), %lu woken by a port",
              static_cast<unsigned long>(is.busy_rounds), static_cast<unsigned long>(is.idle_rounds),
              static_cast<unsigned long>(is.sleeps), format_duration(is.slept_ns, dur, sizeof dur),
              static_cast<unsigned long>(is.wakeups_by_fd));
    // Neighbours may still need this node (acks, forwarding, their own
    // last packets): serve the links until told to stop.
    (void)node->loop().run_until([&] { return g_stop_sig != 0; }, a.linger_ns, "linger");
  } else if (g_stop_sig) {
    emit(std::string("verdict node=") + name + " FAIL reason=" +
         quote(std::string("stopped by SIG") + sigabbrev_np(g_stop_sig) + " while " + node_state_name(node->state())) +
         " cases=0 ms=" + ms_since(t0));
    rc = 128 + g_stop_sig;
  } else {
    log.error("%s", run.message().c_str());
    emit("verdict node=" + name + " FAIL reason=" + quote(run.message()) + " cases=0 ms=" + ms_since(t0));
    rc = 1;
    wait_stop(a.linger_ns);
  }
  if (g_stop_sig) {
    emit("quiesced node=" + name);
    wait_release(a.stop_grace_ns);
  }
  // Everything holding packets goes before the pool; the ports close last.
  keeper.reset();  // its timer is on the node's loop
  node.reset();
  if (capture) log.info("pcap: %lu frames in %zu files under %s", static_cast<unsigned long>(capture->frames()),
                        capture->files(), a.pcap_dir.c_str());
  capture.reset();  // closes the files
  ports->close();
  return rc;
}

int main(int argc, char** argv) {
  // As a VM's /init the node first does what a bare-metal boot does (mounts,
  // modules, NIC binding, personality from the kernel command line), then
  // runs, then powers the machine off (firmware/pid1.h).
  if (toroid::is_pid1()) toroid::pid1_main(argc, argv, run_node);  // never returns
  return run_node(argc, argv);
}
