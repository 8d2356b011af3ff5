// toroid-mpirun: the launcher behind ./toroid mpirun (mpi/launcher/mpirun.h).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/clock.h"
#include "mpi/launcher/mpirun.h"

using namespace toroid;

namespace {

const char kUsage[] =
    "usage: toroid-mpirun (-n N | --dims XxYxZ) [options] PROGRAM [ARGS...]\n"
    "\n"
    "Runs an MPI program built with toroid-mpicc on the host rig: one process\n"
    "per torus node, rank = the node's linear rank (x fastest), each booting\n"
    "its node and training its links in MPI_Init. Every line a rank prints is\n"
    "forwarded with its rank in front (\"[3] ...\"); when one rank aborts, dies\n"
    "or the job runs out of time, every rank is stopped and the reason named.\n"
    "\n"
    "options:\n"
    "  -n, -np N             N ranks on the most balanced torus (8: 2x2x2)\n"
    "  --dims XxYxZ          the torus (its node count is the rank count)\n"
    "  --driver memif|uring  link driver (default memif, 9000-byte frames)\n"
    "  --timeout D           the whole job (default 600s)\n"
    "  --wait-timeout D      each blocking MPI call (TOROID_MPI_TIMEOUT; default 300s)\n"
    "  --train-timeout D     link training in MPI_Init (default 20s)\n"
    "  --cpus LIST           CPUs the ranks' EAL threads may use\n"
    "  --env KEY=VALUE       set a variable for every rank (repeatable)\n"
    "  --run-dir DIR         where run directories go (default ./run)\n"
    "  --no-tag-output       forward lines without the rank prefix\n"
    "  -q, --quiet           no launcher line unless something fails\n"
    "  --no-stop             when a rank dies or aborts, leave the others to find\n"
    "                        out through their links and waits (the job timeout\n"
    "                        still stops everything)\n"
    "  --help                this text\n"
    "\n"
    "Each run writes RUN_DIR/mpirun-<time>/rank-R.out (the rank's output) and\n"
    "rank-R.personality. Environment the ranks read: TOROID_REPRO=exact|\n"
    "fixed-order (reproducible float sums), TOROID_MPI_LOG=info|debug (node\n"
    "logs), TOROID_ALGO_<KIND> (force a collective algorithm).\n"
    "\n"
    "exit status: MPI_Abort's code; else the first failing rank's status\n"
    "(128+N: killed by signal N); 0 when every rank exited 0; 2 usage error\n";

int usage(const std::string& msg) {
  fprintf(stderr, "toroid-mpirun: %s\n(toroid-mpirun --help for usage)\n", msg.c_str());
  return 2;
}

bool duration(const std::string& v, uint64_t* out) { return parse_duration_ns(v.c_str(), out) && *out > 0; }

}  // namespace

int main(int argc, char** argv) {
  mpirun::Options o;
  bool have_dims = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i], v;
    const size_t eq = a.find('=');
    bool inline_v = false;
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      v = a.substr(eq + 1);
      a.resize(eq);
      inline_v = true;
    }
    auto value = [&](const char* what) -> bool {
      if (inline_v) return true;
      if (i + 1 >= argc) return false;
      v = argv[++i];
      (void)what;
      return true;
    };
    if (a == "--help" || a == "-h") {
      fputs(kUsage, stdout);
      return 0;
    } else if (a == "--") {
      ++i;
      break;
    } else if (a == "-n" || a == "-np" || a == "--np") {
      if (!value("-n")) return usage("-n needs a rank count");
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 4096) return usage("-n '" + v + "' is not a rank count (1..4096)");
      o.dims = mpirun::dims_for(static_cast<uint32_t>(n));
      have_dims = true;
    } else if (a == "--dims") {
      if (!value("--dims")) return usage("--dims needs XxYxZ");
      auto d = parse_dims(v);
      if (!d) return usage("--dims: " + d.status().message());
      o.dims = *d;
      have_dims = true;
    } else if (a == "--driver") {
      if (!value("--driver") || (v != "memif" && v != "uring")) return usage("--driver is memif or uring");
      o.driver = v;
    } else if (a == "--rig") {
      if (!value("--rig") || v != "host") return usage("toroid-mpirun runs the host rig (./toroid mpirun --rig qemu starts VMs)");
    } else if (a == "--timeout") {
      if (!value("--timeout") || !duration(v, &o.timeout_ns)) return usage("--timeout needs a duration (e.g. 120s)");
    } else if (a == "--wait-timeout") {
      if (!value("--wait-timeout") || !duration(v, &o.wait_timeout_ns)) return usage("--wait-timeout needs a duration");
    } else if (a == "--train-timeout") {
      if (!value("--train-timeout") || !duration(v, &o.train_timeout_ns)) return usage("--train-timeout needs a duration");
    } else if (a == "--cpus") {
      if (!value("--cpus") || v.empty() || v.find_first_not_of("0123456789,-") != std::string::npos)
        return usage("--cpus needs a CPU list (e.g. 0-1)");
      o.cpus = v;
    } else if (a == "--env") {
      if (!value("--env") || v.find('=') == std::string::npos || v[0] == '=') return usage("--env needs KEY=VALUE");
      o.env.emplace_back(v.substr(0, v.find('=')), v.substr(v.find('=') + 1));
    } else if (a == "--run-dir") {
      if (!value("--run-dir") || v.empty()) return usage("--run-dir needs a directory");
      o.run_root = v;
    } else if (a == "--no-tag-output") {
      o.tag_output = false;
    } else if (a == "--tag-output") {
      o.tag_output = true;
    } else if (a == "-q" || a == "--quiet") {
      o.quiet = true;
    } else if (a == "--no-stop") {
      o.no_stop = true;
    } else if (a[0] == '-') {
      return usage("unknown option '" + a + "'");
    } else {
      break;
    }
  }
  if (!have_dims) return usage("give -n N or --dims XxYxZ");
  if (i >= argc) return usage("no program to run");
  for (; i < argc; ++i) o.program.emplace_back(argv[i]);
  return mpirun::Launcher(std::move(o)).run();
}
