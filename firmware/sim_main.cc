// toroid-sim: run a partition in the sim rig (all nodes in this process,
// virtual time, seeded faults). `./toroid sim` and `./toroid selftest` call it.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/args.h"
#include "base/log.h"
#include "base/text.h"
#include "firmware/job.h"
#include "firmware/jobs/bench_job.h"
#include "firmware/jobs/coll_job.h"
#include "firmware/jobs/selftest_job.h"
#include "firmware/jobs/soak_job.h"
#include "firmware/jobs/traffic_job.h"
#include "firmware/sim_link_model.h"
#include "firmware/sim_rig.h"
#include "firmware/sim_scaling.h"

using namespace toroid;

namespace {

const char kUsage[] =
    "usage: toroid-sim --dims XxYxZ --job JOB [options]\n"
    "\n"
    "Runs every node of an XxYxZ torus partition in this process, stepped in\n"
    "virtual time by a deterministic scheduler: the same seed gives the same\n"
    "packet trace. Each node boots from its personality, trains its links,\n"
    "then runs JOB; the rig prints one results table and a verdict line.\n"
    "\n"
    "options:\n"
    "  --dims XxYxZ          partition shape, each size 1..256 (required)\n"
    "  --job JOB             selftest | coll | traffic | train | bench | scaling | soak (required)\n"
    "  --seed N              seed for faults and test data (default 1)\n"
    "  --arg KEY=VALUE       a job argument (repeatable; e.g. level=quick, the same\n"
    "                        as --level quick)\n"
    "  --faults SPEC         comma list of faults (default none):\n"
    "                          drop=P corrupt=P dup=P reorder=P  probabilities 0..1\n"
    "                          delay=D    extra latency on every frame (e.g. 2us)\n"
    "                          jitter=D   extra random latency, uniform in [0, D]\n"
    "                          linkdown=X.Y.Z:DIR@T[+D]  cut that node's DIR link at\n"
    "                          virtual time T (no @T: dead from boot) for D (default:\n"
    "                          for good); repeatable\n"
    "                          reboot=X.Y.Z@T   the node restarts at T (new boot id,\n"
    "                          state gone, job run again); repeatable\n"
    "                          stop=X.Y.Z@T[+D] the node freezes at T for D (default:\n"
    "                          for good), as a hung process; repeatable\n"
    "                        e.g. drop=0.05,corrupt=0.01,linkdown=1.0.1:x+@300us\n"
    "  --partitions A,B,...  split the x dimension into equal partitions with these\n"
    "                        ids, cabled as one torus: their wrap cables cross into\n"
    "                        the next partition (link training must refuse them)\n"
    "  --link-model M        default | bgl: Blue Gene/L's torus, collective and barrier\n"
    "                        networks, each with its published bandwidth, per-hop latency\n"
    "                        and packet sizes (docs/sim.md)\n"
    "  --link-latency D      per-hop latency of the torus links (default 100ns)\n"
    "  --link-bw GBPS        per-direction torus link bandwidth in GB/s (default 2)\n"
    "  --frame-bytes N       largest frame a port carries, Ethernet header included,\n"
    "                        256..9216 (default 9000: jumbo frames)\n"
    "  --swap-ports X.Y.Z:D1,D2  cross two ports in that node's personality (a\n"
    "                        miswired cable; link training must catch it); repeatable\n"
    "  --time-limit D        virtual time limit (default 10s)\n"
    "  --job-timeout D       a job's own deadline (default 1s virtual)\n"
    "  --threads N           scheduler threads, 1..64 (default 1); the run, its trace\n"
    "                        hash and counters are the same for every N\n"
    "\n"
    "scaling (--job scaling --dims LIST, e.g. 8x8x8,16x16x16,64x32x32):\n"
    "  one run per shape and operation (barrier, 8-byte int64 and exact double tree\n"
    "  allreduces, 1 MiB torus-tree allreduce, 8-byte alltoall), each started on every\n"
    "  node at one virtual instant; prints its virtual and wall time, and BG/L's\n"
    "  published figure beside it where there is one (use --link-model bgl)\n"
    "  --json FILE           the rows as JSON as well\n"
    "\n"
    "self-test job (--job selftest):\n"
    "  --level full|quick    quick: no datatype x op sweep, no 1 MiB cases (default full)\n"
    "  --only LIST           only these collectives or algorithms: KIND or KIND:ALGO,\n"
    "                        comma separated (e.g. alltoall,allreduce:ring)\n"
    "\n"
    "traffic job (--job traffic):\n"
    "  --pattern P           uniform | transpose | bitcomp | neighbor | alltoall | ring\n"
    "  --messages N          messages per node (alltoall: per destination; default 16)\n"
    "  --size BYTES          bytes per message (default 1024)\n"
    "  --routing R           det (dimension order, default) | adaptive\n"
    "  prints: traffic: expected=E delivered=D duplicates=U corrupt=C lost=L\n"
    "\n"
    "soak job (--job soak; verified collectives while faults hit; docs/sim.md):\n"
    "  --duration D          stop starting operations at virtual time D (e.g. 30ms)\n"
    "  --max-count N         largest element count of an operation (default 4096)\n"
    "  prints: soak: ops=... ok=... failed=... wrong=... hangs=...\n"
    "\n"
    "bench job (--job bench; docs/bench.md; times are virtual):\n"
    "  --colls LIST --algos LIST --sizes LIST --reps N\n"
    "  prints one \"bench node=... rep_ns=...\" line per node and size\n"
    "\n"
    "test flags:\n"
    "  --no-dateline         route without dateline VCs (shows the deadlock they prevent)\n"
    "  --vc-credits N        receive buffers per virtual channel per link (default 8)\n"
    "\n"
    "output:\n"
    "  --pcap DIR            capture every port's frames, both directions, to\n"
    "                        DIR/node-X-Y-Z-portN-DIR.pcap (virtual-time stamps;\n"
    "                        DIR/corrupted.txt lists the frames the medium corrupted;\n"
    "                        docs/capture.md); tools/wireshark/toroid.lua decodes them\n"
    "  --quiet               no per-node boot lines, no progress lines\n"
    "  --log-level L         error | warn | info | debug (default info)\n"
    "  --help                this text\n"
    "\n"
    "environment:\n"
    "  TOROID_SIM_SMALL_PAGES=1  with --job selftest, do not ask for transparent huge\n"
    "                        pages (by default, where the kernel gives them on request,\n"
    "                        the program sets glibc.malloc.hugetlb=1 in GLIBC_TUNABLES\n"
    "                        and executes itself once; docs/sim.md)\n"
    "\n"
    "exit status: 0 every node passed, 1 a node failed, 2 usage error\n";

constexpr unsigned long kMinFrameBytes = 256, kMaxFrameBytes = 9216;  // tuning.h's bounds on kSimFrameBytes

int usage_error(const char* fmt, const std::string& arg) {
  fprintf(stderr, "toroid-sim: ");
  fprintf(stderr, fmt, arg.c_str());
  fprintf(stderr, "\n(toroid-sim --help for usage)\n");
  return 2;
}

// The self-test first-touches gigabytes of heap on a large partition (every
// node's case buffers and packet slabs), one 4 KiB fault at a time: a sixth
// of the 8x8x8 self-test's CPU time was the kernel's. Where the kernel gives
// transparent huge pages on request only ("[madvise]"), ask glibc's malloc
// to request them (its glibc.malloc.hugetlb tunable, read at process start):
// set it and execute this program again, once. Nothing else changes (same
// trace, same results). Only for the self-test: a job that runs one
// operation on 65,536 nodes touches a little of many small heaps, which huge
// pages inflate (5.2 to 7.4 GiB peak RSS, measured). TOROID_SIM_SMALL_PAGES=1
// keeps 4 KiB pages. Called once the arguments are parsed and checked, before
// the partition is built (little is allocated by then).
void want_huge_pages(char** argv) {
  if (getenv("TOROID_SIM_SMALL_PAGES")) return;
  const char* tunables = getenv("GLIBC_TUNABLES");
  if (tunables && strstr(tunables, "glibc.malloc.hugetlb")) return;  // set (by us, or by the user)
  FILE* f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return;
  char mode[128] = {};
  const bool read = fgets(mode, sizeof mode, f) != nullptr;
  fclose(f);
  if (!read || !strstr(mode, "[madvise]")) return;  // always: nothing to ask; never: nothing to get
  std::string v = tunables && *tunables ? std::string(tunables) + ":glibc.malloc.hugetlb=1" : "glibc.malloc.hugetlb=1";
  // The program's own path, not /proc/self/exe: the new image keeps its name
  // (ps, pgrep and killall see toroid-sim, not "exe").
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return;
  self[len] = '\0';
  if (setenv("GLIBC_TUNABLES", v.c_str(), 1) != 0) return;
  execv(self, argv);  // returns only on failure: go on with small pages
}

}  // namespace

int main(int argc, char** argv) {
  // Every node of a case allocates its buffers (up to a few MiB) and frees
  // them at the next: with glibc's defaults the heap's top is given back to
  // the kernel after each case and faulted in, zeroed, again at the next (a
  // tenth of the 8x8x8 self-test's time in clear_page). Keep what was used.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, -1);
  SimOptions opt;
  bool have_dims = false, have_job = false, have_latency = false;
  std::string faults_spec, model_name = "default", json_path;
  std::vector<Dims> shapes;
  uint64_t latency = 0;
  double bw = 0;
  for (ArgWalker w(argc, argv); w.next();) {
    const std::string arg = w.arg();
    const bool inline_val = w.has_inline();
    auto need = [&](std::string* out) { return w.value(out); };
    if (arg == "--help" || arg == "-h") {
      fputs(kUsage, stdout);
      fputs("\n", stdout);
      fputs(coll_job_usage(), stdout);
      return 0;
    } else if ((arg == "--quiet" || arg == "--no-dateline") && inline_val) {
      return usage_error("option %s takes no value", arg);
    } else if (arg == "--quiet") {
      opt.log_boot = false;
      opt.progress = false;
    } else if (arg == "--no-dateline") {
      opt.dateline = Dateline::kOff;
    } else if (arg == "--in-place" && !inline_val) {
      // Bare, or followed by yes / no (the form --help gives).
      static const char* const kYesNo[] = {"yes", "no"};
      std::string yn = "yes";
      w.optional_value(&yn, kYesNo);
      opt.job_args["in-place"] = yn;
    } else if (is_coll_option(arg)) {
      std::string v;
      if (!need(&v)) return usage_error("option %s needs a value", arg);
      opt.job_args[arg.substr(2)] = v;
    } else if (arg == "--duration") {
      std::string v;
      uint64_t ns = 0;
      if (!need(&v)) return usage_error("option %s needs a value", arg);
      if (!parse_duration_ns(v.c_str(), &ns) || ns == 0) return usage_error("--duration '%s' is not a duration", v.c_str());
      opt.job_args["until"] = std::to_string(ns);
    } else if (arg == "--max-count") {
      std::string v;
      if (!need(&v)) return usage_error("option %s needs a value", arg);
      opt.job_args["max_count"] = v;
    } else if (arg == "--partitions") {
      std::string v;
      if (!need(&v)) return usage_error("option %s needs a value", arg);
      opt.partitions = split_list(v, ',');
      if (opt.partitions.size() < 2) return usage_error("--partitions '%s': name two or more", v.c_str());
      for (const auto& id : opt.partitions)
        if (Status st = check_partition_id(id); !st || id.empty())
          return usage_error("--partitions: %s", st ? "an empty id" : st.message().c_str());
    } else if (arg == "--arg") {
      // KEY=VALUE for the job, as toroid-rig and the QEMU launcher take it.
      std::string v;
      if (!need(&v)) return usage_error("option %s needs a value", arg);
      const auto e = v.find('=');
      if (e == std::string::npos || e == 0 || v.find_first_of(" \t#") != std::string::npos)
        return usage_error("--arg '%s': expected KEY=VALUE without spaces", v.c_str());
      opt.job_args[v.substr(0, e)] = v.substr(e + 1);
    } else if (arg == "--level" || arg == "--only" || arg == "--pattern" || arg == "--messages" || arg == "--size" || arg == "--routing" ||
               arg == "--colls" || arg == "--algos" || arg == "--sizes" || arg == "--reps") {
      std::string v;
      if (!need(&v)) return usage_error("option %s needs a value", arg);
      opt.job_args[arg.substr(2)] = v;
    } else if (arg == "--dims" || arg == "--job" || arg == "--seed" || arg == "--faults" ||
               arg == "--link-latency" || arg == "--link-bw" || arg == "--swap-ports" || arg == "--time-limit" ||
               arg == "--log-level" || arg == "--job-timeout" || arg == "--vc-credits" || arg == "--threads" ||
               arg == "--link-model" || arg == "--json" || arg == "--pcap" || arg == "--frame-bytes") {
      std::string v;
      if (!need(&v)) return usage_error("option %s needs a value", arg);
      if (arg == "--dims") {
        if (v.find(',') != std::string::npos) {  // a list: --job scaling
          auto list = parse_dims_list(v);
          if (!list) return usage_error("%s", list.status().message());
          shapes = *list;
        } else {
          auto d = parse_dims(v);
          if (!d) return usage_error("%s", d.status().message());
          shapes = {*d};
        }
        opt.dims = shapes.front();
        have_dims = true;
      } else if (arg == "--job") {
        opt.job = v;
        have_job = true;
      } else if (arg == "--seed") {
        char* end = nullptr;
        opt.seed = std::strtoull(v.c_str(), &end, 10);
        if (v.empty() || *end || v.find_first_not_of("0123456789") != std::string::npos)
          return usage_error("--seed '%s' is not a non-negative integer", v);
      } else if (arg == "--faults") {
        faults_spec = v;
      } else if (arg == "--link-model") {
        model_name = v;
      } else if (arg == "--json") {
        json_path = v;
      } else if (arg == "--pcap") {
        if (v.empty()) return usage_error("%s", "--pcap needs a directory");
        opt.pcap_dir = v;
      } else if (arg == "--link-latency") {
        if (!parse_duration_ns(v.c_str(), &latency))
          return usage_error("--link-latency '%s' is not a duration (e.g. 100ns, 1us)", v);
        have_latency = true;
      } else if (arg == "--link-bw") {
        char* end = nullptr;
        const double gbps = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !(gbps > 0) || gbps > 1000)
          return usage_error("--link-bw '%s' is not a bandwidth in GB/s (0 < bw <= 1000)", v);
        bw = gbps;
      } else if (arg == "--frame-bytes") {
        char* end = nullptr;
        const unsigned long b = std::strtoul(v.c_str(), &end, 10);
        if (v.empty() || *end || v.find_first_not_of("0123456789") != std::string::npos || b < kMinFrameBytes ||
            b > kMaxFrameBytes)
          return usage_error("--frame-bytes '%s' must be 256..9216", v);
        opt.frame_bytes = static_cast<uint32_t>(b);
      } else if (arg == "--swap-ports") {
        if (!have_dims) return usage_error("%s", "--swap-ports must come after --dims");
        auto sw = parse_port_swap(v, opt.dims);
        if (!sw) return usage_error("%s", sw.status().message());
        opt.swaps.push_back(*sw);
      } else if (arg == "--time-limit") {
        if (!parse_duration_ns(v.c_str(), &opt.time_limit_ns) || opt.time_limit_ns == 0)
          return usage_error("--time-limit '%s' is not a positive duration", v);
      } else if (arg == "--job-timeout") {
        if (!parse_duration_ns(v.c_str(), &opt.job_timeout_ns) || opt.job_timeout_ns == 0)
          return usage_error("--job-timeout '%s' is not a positive duration", v);
      } else if (arg == "--vc-credits") {
        char* end = nullptr;
        const unsigned long c = std::strtoul(v.c_str(), &end, 10);
        if (v.empty() || *end || c < 1 || c > 1024) return usage_error("--vc-credits '%s' must be 1..1024", v);
        opt.vc_credits = static_cast<uint16_t>(c);
      } else if (arg == "--threads") {
        char* end = nullptr;
        const unsigned long t = std::strtoul(v.c_str(), &end, 10);
        if (v.empty() || *end || t < 1 || t > 64) return usage_error("--threads '%s' must be 1..64", v);
        opt.threads = static_cast<uint32_t>(t);
      } else if (arg == "--log-level") {
        LogLevel lvl;
        if (!parse_log_level(v, &lvl)) return usage_error("--log-level '%s': use error, warn, info or debug", v);
        set_log_level(lvl);
      }
    } else {
      return usage_error("unknown option '%s'", arg);
    }
  }
  if (!have_dims) return usage_error("%s", "missing --dims XxYxZ");
  if (!have_job) return usage_error("%s", std::string("missing --job (known: ") + known_jobs() + ", scaling)");
  if (opt.job != "scaling" && shapes.size() > 1) return usage_error("%s", "a list of --dims is for --job scaling");
  if (opt.job != "scaling" && !json_path.empty()) return usage_error("%s", "--json is an option of --job scaling");
  if (opt.job == "scaling") {
    if (!opt.job_args.empty())
      return usage_error("%s", "--" + opt.job_args.begin()->first + " is not an option of --job scaling");
    if (!opt.swaps.empty()) return usage_error("%s", "--swap-ports is not an option of --job scaling");
    auto model = sim_link_model(model_name);
    if (!model) return usage_error("%s", model.status().message());
    opt.link = *model;
    if (have_latency) opt.link.latency_ns = latency;
    if (bw > 0) opt.link.bytes_per_ns = bw;
    ScalingOptions so;
    so.shapes = shapes;
    so.json_path = json_path;
    so.base = opt;
    for (const Dims& d : shapes) {  // one plan for every shape: it must make sense on each
      auto plan = parse_fault_plan(faults_spec, d);
      if (!plan) return usage_error("%s", plan.status().message());
      so.base.faults = *plan;
    }
    return run_scaling(so);
  }
  if (!is_known_job(opt.job))
    return usage_error("%s", "unknown job '" + opt.job + "' (known: " + known_jobs() + ")");
  if (opt.job == "traffic") {
    auto spec = parse_traffic_args(opt.job_args);
    if (!spec) return usage_error("%s", spec.status().message());
    if (!opt.job_args.count("pattern")) return usage_error("%s", "--job traffic needs --pattern");
  } else if (opt.job == "bench") {
    auto spec = parse_bench_args(opt.job_args);
    if (!spec) return usage_error("%s", spec.status().message());
  } else if (opt.job == "selftest") {
    auto spec = parse_selftest_args(opt.job_args);
    if (!spec) return usage_error("%s", spec.status().message());
  } else if (opt.job == "coll") {
    auto spec = parse_coll_args(opt.job_args);
    if (!spec) return usage_error("%s", spec.status().message());
  } else if (opt.job == "soak") {
    auto spec = parse_soak_args(opt.job_args);
    if (!spec) return usage_error("%s", spec.status().message());
    if (!opt.job_args.count("until")) return usage_error("%s", "--job soak needs --duration");
  } else if (!opt.job_args.empty()) {
    return usage_error("%s", "--" + opt.job_args.begin()->first + " is an option of --job coll, traffic, bench or soak");
  }
  auto model = sim_link_model(model_name);
  if (!model) return usage_error("%s", model.status().message());
  opt.link = *model;
  if (have_latency) opt.link.latency_ns = latency;  // the torus links (channel 0)
  if (bw > 0) opt.link.bytes_per_ns = bw;
  auto plan = parse_fault_plan(faults_spec, opt.dims);
  if (!plan) return usage_error("%s", plan.status().message());
  opt.faults = *plan;
  if (opt.job == "selftest") want_huge_pages(argv);

  SimRig rig(opt);
  Status st = rig.build();
  if (!st) {
    fprintf(stderr, "toroid-sim: %s\n", st.message().c_str());
    return 2;
  }
  if (opt.log_boot)
    printf("sim: %s partition, %u nodes, job %s, seed %lu, faults %s\n", opt.dims.to_string().c_str(),
           opt.dims.nodes(), opt.job.c_str(), static_cast<unsigned long>(opt.seed), opt.faults.to_string().c_str());
  const SimSummary s = rig.run();
  return rig.report(s);
}
