// toroid-rig: run a partition as one toroid-node process per node on this
// machine (the host rig). `./toroid rig` and `./toroid selftest` call it.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/args.h"
#include "base/clock.h"
#include "base/files.h"
#include "base/log.h"
#include "base/text.h"
#include "firmware/job.h"
#include "firmware/jobs/bench_job.h"
#include "firmware/jobs/coll_job.h"
#include "firmware/jobs/selftest_job.h"
#include "firmware/jobs/soak_job.h"
#include "firmware/rig/host_rig.h"
#include "firmware/rig/wiring.h"

using namespace toroid;
using namespace toroid::rig;

namespace {

const char kUsage[] =
    "usage: toroid-rig --dims XxYxZ --job JOB [options]\n"
    "\n"
    "Runs every node of an XxYxZ torus partition as its own toroid-node\n"
    "process on this machine, cabled by DPDK memif pairs (--no-huge, one EAL\n"
    "per process) or io_uring unix sockets, or, like a deployment, by kernel\n"
    "NICs: every node in its own network namespace, every cable a veth pair\n"
    "named after it, reached through DPDK's AF_XDP PMD (or af_packet), every\n"
    "node booting from the partition's topology file. Writes each node's personality,\n"
    "streams the nodes' logs with node prefixes, prints one case table and a\n"
    "verdict line, stops every node (two phases: quiesce, then close) and\n"
    "removes the sockets. Logs and personalities stay in the run directory.\n"
    "\n"
    "options:\n"
    "  --dims XxYxZ          partition shape (required)\n"
    "  --job JOB             selftest | coll | traffic | train | bench (required)\n"
    "  --driver D            memif (default) | uring | af_xdp | af_packet (kernel\n"
    "                        NICs: needs root; docs/deploy.md)\n"
    "  --seed N              seed for the job's data (default 1)\n"
    "  --arg KEY=VALUE       a job argument (repeatable); self-test shorthands:\n"
    "  --level full|quick    quick: no datatype x op sweep, no 1 MiB cases\n"
    "  --only LIST           only these collectives or algorithms (KIND or KIND:ALGO)\n"
    "                        traffic shorthands:\n"
    "  --pattern P --messages N --size BYTES --routing R\n"
    "                        bench shorthands (docs/bench.md):\n"
    "  --colls LIST          allreduce,bcast,reduce,allgather,alltoall,reduce_scatter,\n"
    "                        barrier (default all)\n"
    "  --algos KIND=A,B      algorithms of a collective (repeatable; or KIND=A;KIND=B):\n"
    "                        names of the library, auto (the selector's choice) or\n"
    "                        all; no KIND= means allreduce (default: allreduce\n"
    "                        torus-ring,torus-tree,auto; the others auto)\n"
    "  --dtype LIST          datatypes (default int64; int8..uint64, float, double)\n"
    "  --op LIST             reduction ops (default sum)\n"
    "  --repro LIST          none,fixed-order,exact (float reductions; default none)\n"
    "  --sizes LIST          bytes, e.g. 8,4096,64k,4M (default 8 B .. 4 MiB, x4)\n"
    "  --reps N              timed repetitions per size (default by size: 1000 up to\n"
    "                        1 KiB .. 20 above 1 MiB)\n"
    "  --wait spin|idle      how a node waits for its operation (default spin; idle\n"
    "                        when there are more nodes than CPUs)\n"
    "  --json FILE           bench: also write the sweep as a JSON array to FILE\n"
    "  --frame N             memif frame size: 9000 (the default: bsize=9216\n"
    "                        on every port, 9216-byte buffers, --pool 4095) or 1518\n"
    "  --run-dir DIR         where rig-YYYYmmdd-HHMMSS/ goes (default ./run)\n"
    "  --timeout D           every node's verdict within D of the launch, else\n"
    "                        it is stopped and reported (default 60s)\n"
    "  --train-timeout D     per node: connect + train its links (default 5s)\n"
    "  --hold D              keep the nodes idle D after the verdicts and report\n"
    "                        their CPU use (default 0)\n"
    "  --fail-grace D        after a failure, wait D for the other nodes' reports\n"
    "                        before stopping them (default 2s)\n"
    "  --cpus LIST           CPUs the nodes' EAL lcores may use (default: all of\n"
    "                        the rig's)\n"
    "  --log-level L         the nodes' log level (error|warn|info|debug)\n"
    "  --pcap DIR            every node captures its ports' frames, both directions,\n"
    "                        to DIR/node-X-Y-Z-portN-DIR.pcap (docs/capture.md)\n"
    "  --node-arg ARG        pass ARG to every toroid-node (repeatable)\n"
    "  --node-bin PATH       the node program (default: toroid-node beside this one)\n"
    "  --quiet               do not stream node log lines (errors still show)\n"
    "  --help                this text\n"
    "\n"
    "fault tests:\n"
    "  --kill X,Y,Z[@D]      SIGKILL that node D after every node trained\n"
    "                        (default 0); its neighbours must report the links\n"
    "  --freeze X,Y,Z[@D]    SIGSTOP it instead (a hung node: no carrier loss; a\n"
    "                        neighbour with data in flight reports no progress)\n"
    "  --partitions A,B,...  split x into equal partitions with these ids, cabled\n"
    "                        as one torus: their wrap cables cross; link training\n"
    "                        must refuse them, naming the other partition\n"
    "  --remove-socket X,Y,Z:DIR  remove that link's socket before its client\n"
    "                        connects; both ends must report the port\n"
    "  --swap-veths X,Y,Z:D1,D2   af_xdp/af_packet: plug that node's D1 and D2\n"
    "                        cables into each other's ports (repeatable); link\n"
    "                        training must refuse them, naming both ends\n"
    "\n"
    "chaos soak (--job soak; docs/host-rig.md):\n"
    "  --minutes N | --seconds N  how long the soak runs verified collectives\n"
    "  --chaos LIST          kill,stop,cut,reboot: one fault at a time at random\n"
    "                        (SIGKILL and start again later / at once, SIGSTOP for\n"
    "                        1-3 s, a cable pulled for 1-3 s); memif only\n"
    "\n"
    "Ctrl-C stops the rig cleanly (a second Ctrl-C kills the nodes at once).\n"
    "exit status: 0 every node passed, 1 a node failed, died or timed out,\n"
    "2 usage or setup error, 130 interrupted\n";

int usage_error(const std::string& msg) {
  fprintf(stderr, "toroid-rig: %s\n(toroid-rig --help for usage)\n", msg.c_str());
  return 2;
}

std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string s(buf);
  const size_t slash = s.rfind('/');
  return slash == std::string::npos ? "." : s.substr(0, slash);
}

}  // namespace

int main(int argc, char** argv) {
  RigOptions opt;
  bool have_dims = false, have_job = false, have_timeout = false, frame_given = false;
  std::string kill_spec, remove_spec;
  std::vector<std::string> swap_specs;
  for (ArgWalker w(argc, argv); w.next();) {
    const std::string arg = w.arg();
    const bool inline_val = w.has_inline();
    auto need = [&](std::string* out) { return w.value(out); };
    std::string v;
    auto duration = [&](uint64_t* out, bool allow_zero) -> bool {
      return parse_duration_ns(v.c_str(), out) && (allow_zero || *out > 0);
    };
    if (arg == "--help" || arg == "-h") {
      fputs(kUsage, stdout);
      fputs("\n", stdout);
      fputs(coll_job_usage(), stdout);
      return 0;
    }
    if (arg == "--quiet") {
      if (inline_val) return usage_error("option --quiet takes no value");
      opt.stream = false;
      continue;
    }
    if (arg == "--in-place" && !inline_val) {
      // Bare, or followed by yes / no (the form --help gives).
      static const char* const kYesNo[] = {"yes", "no"};
      std::string yn = "yes";
      w.optional_value(&yn, kYesNo);
      opt.job_args["in-place"] = yn;
      continue;
    }
    if (is_coll_option(arg) || arg == "--level" || arg == "--only") {
      if (!need(&v)) return usage_error("option " + arg + " needs a value");
      if (v.empty() || v.find_first_of(" \t#") != std::string::npos) return usage_error(arg + " '" + v + "': no spaces");
      opt.job_args[arg.substr(2)] = v;
      continue;
    }
    static const char* const kValued[] = {"--dims", "--job", "--driver", "--seed", "--arg", "--pattern",
                                          "--messages", "--size", "--routing", "--run-dir", "--timeout",
                                          "--train-timeout", "--hold", "--fail-grace", "--cpus", "--log-level",
                                          "--node-arg", "--node-bin", "--kill", "--freeze", "--remove-socket",
                                          "--colls", "--algos", "--sizes", "--reps", "--json", "--frame",
                                          "--wait", "--pcap", "--swap-veths", "--chaos", "--minutes",
                                          "--seconds", "--partitions"};
    bool known = false;
    for (const char* k : kValued) known |= arg == k;
    if (!known) return usage_error("unknown option '" + arg + "'");
    if (!need(&v)) return usage_error("option " + arg + " needs a value");
    if (arg == "--dims") {
      auto d = parse_dims(v);
      if (!d) return usage_error(d.status().message());
      opt.dims = *d;
      have_dims = true;
    } else if (arg == "--job") {
      opt.job = v;
      have_job = true;
    } else if (arg == "--driver") {
      if (!is_rig_driver(v)) return usage_error("--driver '" + v + "': use memif, uring, af_xdp or af_packet");
      opt.driver = v;
    } else if (arg == "--seed") {
      char* end = nullptr;
      opt.seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end || v.find_first_not_of("0123456789") != std::string::npos)
        return usage_error("--seed '" + v + "' is not a non-negative integer");
    } else if (arg == "--arg") {
      const auto e = v.find('=');
      if (e == std::string::npos || e == 0 || v.find_first_of(" \t#") != std::string::npos)
        return usage_error("--arg '" + v + "': expected KEY=VALUE without spaces");
      opt.job_args[v.substr(0, e)] = v.substr(e + 1);
    } else if (arg == "--pattern" || arg == "--messages" || arg == "--size" || arg == "--routing") {
      if (v.empty() || v.find_first_of(" \t#") != std::string::npos)
        return usage_error(arg + " '" + v + "': no spaces");
      opt.job_args[arg.substr(2)] = v;
    } else if (arg == "--colls" || arg == "--algos" || arg == "--sizes" || arg == "--reps" || arg == "--wait") {
      if (v.empty() || v.find_first_of(" \t#") != std::string::npos)
        return usage_error(arg + " '" + v + "': no spaces");
      // --algos repeats, one collective each: the job reads KIND=A,B;KIND=C.
      std::string& slot = opt.job_args[arg.substr(2)];
      slot = arg == "--algos" && !slot.empty() ? slot + ";" + v : v;
    } else if (arg == "--json") {
      if (v.empty()) return usage_error("--json needs a file name");
      opt.json_path = v;
    } else if (arg == "--frame") {
      frame_given = true;
      if (v == "1518") opt.frame = 0;
      else if (v == "9000") opt.frame = 9000;
      else return usage_error("--frame '" + v + "': use 1518 or 9000");
    } else if (arg == "--run-dir") {
      if (v.empty()) return usage_error("--run-dir needs a directory");
      opt.run_root = v;
    } else if (arg == "--timeout") {
      if (!duration(&opt.timeout_ns, false)) return usage_error("--timeout '" + v + "' is not a positive duration");
      have_timeout = true;
    } else if (arg == "--train-timeout") {
      if (!duration(&opt.train_timeout_ns, false))
        return usage_error("--train-timeout '" + v + "' is not a positive duration");
    } else if (arg == "--hold") {
      if (!duration(&opt.hold_ns, true)) return usage_error("--hold '" + v + "' is not a duration");
    } else if (arg == "--fail-grace") {
      if (!duration(&opt.fail_grace_ns, true)) return usage_error("--fail-grace '" + v + "' is not a duration");
    } else if (arg == "--cpus") {
      if (v.empty() || v.find_first_not_of("0123456789,-") != std::string::npos)
        return usage_error("--cpus '" + v + "' is not a CPU list (e.g. 0-1)");
      opt.cpus = v;
    } else if (arg == "--log-level") {
      LogLevel lvl;
      if (!parse_log_level(v, &lvl)) return usage_error("--log-level '" + v + "': use error, warn, info or debug");
      opt.log_level = v;
    } else if (arg == "--pcap") {
      // Every node writes its own ports' files there: one absolute path for all.
      if (v.empty()) return usage_error("--pcap needs a directory");
      if (Status st = mkdir_p(v); !st) return usage_error("--pcap: " + st.message());
      char real[PATH_MAX];
      if (!realpath(v.c_str(), real)) return usage_error("--pcap " + v + ": " + std::strerror(errno));
      opt.node_args.insert(opt.node_args.end(), {"--pcap", real});
      printf("rig: capturing every port to %s/node-X-Y-Z-portN-DIR.pcap\n", real);
    } else if (arg == "--node-arg") {
      opt.node_args.push_back(v);
    } else if (arg == "--node-bin") {
      opt.node_bin = v;
    } else if (arg == "--kill" || arg == "--freeze") {
      if (!kill_spec.empty()) return usage_error("give one of --kill and --freeze, once");
      kill_spec = v;
      opt.kill_signal = arg == "--kill" ? SIGKILL : SIGSTOP;
    } else if (arg == "--remove-socket") {
      remove_spec = v;
    } else if (arg == "--chaos") {
      opt.chaos = split_list(v, ',');
      for (const auto& k : opt.chaos)
        if (k != "kill" && k != "stop" && k != "cut" && k != "reboot")
          return usage_error("--chaos '" + v + "': faults are kill, stop, cut, reboot");
      if (opt.chaos.empty()) return usage_error("--chaos needs a list (kill,stop,cut,reboot)");
    } else if (arg == "--minutes" || arg == "--seconds") {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(x > 0) || x > 7 * 24 * 60) return usage_error(arg + " '" + v + "' is not a positive number");
      opt.soak_ns = static_cast<uint64_t>(x * (arg == "--minutes" ? 60e9 : 1e9));
    } else if (arg == "--partitions") {
      opt.partitions = split_list(v, ',');
      if (opt.partitions.size() < 2) return usage_error("--partitions '" + v + "': name two or more");
      for (const auto& id : opt.partitions)
        if (Status st = check_partition_id(id); !st || id.empty())
          return usage_error("--partitions: " + (st ? std::string("an empty id") : st.message()));
    } else if (arg == "--swap-veths") {
      swap_specs.push_back(v);
    }
  }
  if (!have_dims) return usage_error("missing --dims XxYxZ");
  if (!have_job) return usage_error(std::string("missing --job (known: ") + known_jobs() + ")");
  if (!is_known_job(opt.job)) return usage_error("unknown job '" + opt.job + "' (known: " + known_jobs() + ")");
  if (opt.dims.nodes() > 64)
    return usage_error("--dims " + opt.dims.to_string() + ": the host rig runs at most 64 node processes");
  if (!kill_spec.empty()) {
    const auto at = kill_spec.find('@');
    auto c = parse_rig_coord(kill_spec.substr(0, at), opt.dims);
    if (!c) return usage_error("--kill/--freeze '" + kill_spec + "': " + c.status().message());
    opt.kill = true;
    opt.kill_node = *c;
    if (at != std::string::npos && !parse_duration_ns(kill_spec.c_str() + at + 1, &opt.kill_at_ns))
      return usage_error("--kill/--freeze '" + kill_spec + "': bad time after '@'");
  }
  if (!remove_spec.empty()) {
    const auto colon = remove_spec.find(':');
    if (colon == std::string::npos) return usage_error("--remove-socket '" + remove_spec + "': expected X,Y,Z:DIR");
    auto c = parse_rig_coord(remove_spec.substr(0, colon), opt.dims);
    if (!c) return usage_error("--remove-socket '" + remove_spec + "': " + c.status().message());
    Dir d;
    if (!parse_dir(remove_spec.substr(colon + 1), &d))
      return usage_error("--remove-socket '" + remove_spec + "': unknown direction (x+ x- y+ y- z+ z-)");
    if (!has_link(d, opt.dims)) return usage_error("--remove-socket '" + remove_spec + "': no link in that direction");
    opt.remove_socket = true;
    opt.remove_node = *c;
    opt.remove_dir = d;
  }
  for (const auto& sw : swap_specs) {
    const auto colon = sw.find(':');
    const auto comma = sw.find(',', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || comma == std::string::npos)
      return usage_error("--swap-veths '" + sw + "': expected X,Y,Z:D1,D2");
    auto c = parse_rig_coord(sw.substr(0, colon), opt.dims);
    if (!c) return usage_error("--swap-veths '" + sw + "': " + c.status().message());
    VethSwap s;
    s.node = *c;
    if (!parse_dir(sw.substr(colon + 1, comma - colon - 1), &s.a) || !parse_dir(sw.substr(comma + 1), &s.b) ||
        s.a == s.b || !has_link(s.a, opt.dims) || !has_link(s.b, opt.dims))
      return usage_error("--swap-veths '" + sw + "': two different directions that have links (x+ x- y+ y- z+ z-)");
    opt.swaps.push_back(s);
  }
  if (!opt.swaps.empty() && !is_kernel_driver(opt.driver))
    return usage_error("--swap-veths is an option of --driver af_xdp or af_packet");
  if (opt.remove_socket && is_kernel_driver(opt.driver))
    return usage_error("--remove-socket is an option of --driver memif or uring (kernel links have no sockets)");
  // memif carries 9000-byte frames when both ends say so: the default there.
  if (!frame_given && opt.driver == "memif") opt.frame = 9000;
  if (opt.frame == 9000) {
    if (opt.driver != "memif")
      return usage_error("--frame 9000 needs --driver memif (a uring node's buffers hold 2048-byte frames)");
    // 9216-byte buffers: half the default pool keeps a node near 40 MiB.
    bool pool = false;
    for (const auto& a : opt.node_args) pool |= a == "--pool" || a.rfind("--pool=", 0) == 0;
    if (!pool) opt.node_args.insert(opt.node_args.end(), {"--pool", "4095"});
  }
  if (opt.job == "bench") {
    // Busy-polling nodes that outnumber the cores would hold the core their
    // peer needs to answer: then the loop's idle policy.
    if (!opt.job_args.count("wait")) {
      cpu_set_t set;
      CPU_ZERO(&set);
      const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
      opt.job_args["wait"] = opt.dims.nodes() <= static_cast<uint32_t>(cpus) ? "spin" : "idle";
    }
    auto spec = parse_bench_args(opt.job_args);
    if (!spec) return usage_error(spec.status().message());
  } else if (!opt.json_path.empty()) {
    return usage_error("--json is an option of --job bench");
  }
  if (opt.job == "coll") {
    auto spec = parse_coll_args(opt.job_args);
    if (!spec) return usage_error(spec.status().message());
  } else if (opt.job == "selftest") {
    auto spec = parse_selftest_args(opt.job_args);
    if (!spec) return usage_error(spec.status().message());
  }
  if (opt.soak_ns && opt.job != "soak") return usage_error("--minutes/--seconds are options of --job soak");
  if (opt.job == "soak") {
    if (!opt.soak_ns) return usage_error("--job soak needs --minutes N or --seconds N");
    if (!have_timeout) opt.timeout_ns = opt.train_timeout_ns + opt.soak_ns + 90 * kSec;
    auto spec = parse_soak_args(opt.job_args);
    if (!spec) return usage_error(spec.status().message());
  }
  if (!opt.chaos.empty() && opt.job != "soak") return usage_error("--chaos runs with --job soak");
  if (!opt.chaos.empty() && opt.driver != "memif")
    return usage_error("--chaos needs --driver memif (its clients dial a restarted server again)");
  if (!opt.partitions.empty() && is_kernel_driver(opt.driver))
    return usage_error("--partitions is an option of --driver memif or uring");
  if (opt.node_bin.empty()) opt.node_bin = self_dir() + "/toroid-node";
  HostRig rig(opt);
  return rig.run();
}
