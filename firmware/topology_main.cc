// toroid-topo: write, check and read a partition's topology file
// (docs/deploy.md). `check` is what a site runs before it submits a job:
// every problem is listed, and a good topology prints its cabling plan.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "base/args.h"
#include "base/text.h"
#include "firmware/node_topology.h"
#include "firmware/topology.h"
#include "firmware/topology_check.h"
#include "firmware/topology_gen.h"

using namespace toroid;

namespace {

const char kUsage[] =
    "usage: toroid-topo check FILE\n"
    "       toroid-topo gen --dims XxYxZ --driver D [options] [-o FILE]\n"
    "       toroid-topo personality FILE --rank R\n"
    "\n"
    "check        checks a topology (ranks and coordinates each once, every\n"
    "             node's ports, both ends of every cable agree, no NIC queue,\n"
    "             PCI device or socket used twice on one host) and prints the\n"
    "             cabling plan; every problem is listed, one line each\n"
    "gen          writes a topology for a regular placement:\n"
    "  --dims XxYxZ          partition shape (required)\n"
    "  --driver D            af_xdp | af_packet | pci | memif | uring (required)\n"
    "  --partition ID        partition id (default p0)\n"
    "  --hosts LIST          comma-separated hosts, one per rank (rank order, x\n"
    "                        fastest), or one for all (default: this host)\n"
    "  --nic DIR=NAME        the interface (af_xdp, af_packet) or PCI address (pci)\n"
    "                        cabled along DIR on every host (repeatable; without\n"
    "                        it af_xdp/af_packet use the veth rig's cable names)\n"
    "  --queue N             af_xdp: the NIC queue (default 0)\n"
    "  --mtu N               every link's MTU (default: the NICs')\n"
    "  --socket-dir DIR      memif / uring: where the cable sockets go\n"
    "  --job JOB  --seed N  --arg KEY=VALUE   what the nodes run\n"
    "  -o FILE               write to FILE instead of stdout\n"
    "personality  prints the personality a rank boots from\n"
    "\n"
    "exit status: 0 good, 1 the topology has problems, 2 usage error or an\n"
    "unreadable file\n";

int usage_error(const std::string& msg) {
  fprintf(stderr, "toroid-topo: %s\n(toroid-topo --help for usage)\n", msg.c_str());
  return 2;
}

int cmd_check(const std::string& file) {
  auto t = parse_topology_file(file);
  if (!t) {
    fprintf(stderr, "toroid-topo: %s\n", t.status().message().c_str());
    return t.status().code() == Code::kNotFound ? 2 : 1;
  }
  const auto problems = check_topology(t.value());
  if (!problems.empty()) {
    printf("topology %s: %zu problem%s\n", file.c_str(), problems.size(), problems.size() == 1 ? "" : "s");
    for (const auto& p : problems) printf("  %s\n", p.c_str());
    return 1;
  }
  fputs(cabling_plan(t.value()).c_str(), stdout);
  printf("\ntopology %s: OK\n", file.c_str());
  return 0;
}

int cmd_gen(int argc, char** argv) {
  TopoGenOptions o;
  bool have_dims = false, have_driver = false;
  std::string out_file;
  for (ArgWalker w(argc, argv); w.next();) {
    const std::string arg = w.arg();
    if (arg == "--help" || arg == "-h") {
      fputs(kUsage, stdout);
      return 0;
    }
    std::string v;
    if (!w.value(&v)) return usage_error("option " + arg + " needs a value");
    uint64_t n = 0;
    if (arg == "--dims") {
      auto d = parse_dims(v);
      if (!d) return usage_error(d.status().message());
      o.dims = *d;
      have_dims = true;
    } else if (arg == "--driver") {
      o.driver = v;
      have_driver = true;
    } else if (arg == "--partition") {
      if (Status st = check_partition_id(v); !st || v.empty()) return usage_error("--partition '" + v + "': bad id");
      o.partition = v;
    } else if (arg == "--hosts") {
      o.hosts = split_list(v, ',');
    } else if (arg == "--nic") {
      const auto eq = v.find('=');
      Dir d;
      if (eq == std::string::npos || !parse_dir(v.substr(0, eq), &d) || eq + 1 == v.size())
        return usage_error("--nic '" + v + "': expected DIR=NAME, e.g. x+=ens1f0");
      o.nics[d] = v.substr(eq + 1);
    } else if (arg == "--queue") {
      if (!parse_u64(v, &n) || n > 1023) return usage_error("--queue '" + v + "' is not a queue number");
      o.queue = static_cast<uint32_t>(n);
    } else if (arg == "--mtu") {
      if (!parse_u64(v, &n) || n < 68 || n > 9000) return usage_error("--mtu '" + v + "' must be 68..9000");
      o.mtu = static_cast<uint32_t>(n);
    } else if (arg == "--socket-dir") {
      o.socket_dir = v;
    } else if (arg == "--job") {
      o.job = v;
    } else if (arg == "--seed") {
      if (!parse_u64(v, &o.seed)) return usage_error("--seed '" + v + "' is not a non-negative integer");
    } else if (arg == "--arg") {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0) return usage_error("--arg '" + v + "': expected KEY=VALUE");
      o.job_args[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (arg == "-o") {
      out_file = v;
    } else {
      return usage_error("gen: unknown option '" + arg + "'");
    }
  }
  if (!have_dims || !have_driver) return usage_error("gen needs --dims and --driver");
  if (o.hosts.empty()) o.hosts.push_back(this_host());
  auto t = generate_topology(o);
  if (!t) return usage_error(t.status().message());
  const auto problems = check_topology(t.value());
  if (!problems.empty()) {
    for (const auto& p : problems) fprintf(stderr, "toroid-topo: %s\n", p.c_str());
    return 1;
  }
  const std::string text = topology_text(t.value(), "toroid topology (toroid-topo gen; docs/deploy.md)");
  if (out_file.empty()) {
    fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream f(out_file);
  if (!(f << text)) {
    fprintf(stderr, "toroid-topo: cannot write %s\n", out_file.c_str());
    return 2;
  }
  return 0;
}

int cmd_personality(int argc, char** argv) {
  std::string file;
  int64_t rank = -1;
  for (ArgWalker w(argc, argv); w.next();) {
    const std::string arg = w.arg();
    std::string v;
    if (arg == "--rank") {
      uint64_t n = 0;
      if (!w.value(&v) || !parse_u64(v, &n)) return usage_error("--rank needs a rank");
      rank = static_cast<int64_t>(n);
    } else if (arg.rfind("-", 0) != 0 && file.empty()) {
      file = arg;
    } else {
      return usage_error("personality: unexpected '" + arg + "'");
    }
  }
  if (file.empty() || rank < 0) return usage_error("personality needs FILE and --rank R");
  auto t = parse_topology_file(file);
  if (!t) {
    fprintf(stderr, "toroid-topo: %s\n", t.status().message().c_str());
    return 2;
  }
  if (const auto problems = check_topology(t.value()); !problems.empty()) {
    for (const auto& p : problems) fprintf(stderr, "toroid-topo: %s\n", p.c_str());
    return 1;
  }
  auto p = personality_for_rank(t.value(), static_cast<uint32_t>(rank));
  if (!p) {
    fprintf(stderr, "toroid-topo: %s\n", p.status().message().c_str());
    return 1;
  }
  const TopoNode* n = t->by_rank(static_cast<uint32_t>(rank));
  fputs(personality_text(p.value(), "rank " + std::to_string(rank) + " of " + file + ", on host " + n->host).c_str(),
        stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error("give a command: check, gen or personality");
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "check") {
    if (argc == 3 && (std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h")) {
      fputs(kUsage, stdout);
      return 0;
    }
    if (argc != 3) return usage_error("check needs one FILE");
    return cmd_check(argv[2]);
  }
  if (cmd == "gen") return cmd_gen(argc - 1, argv + 1);
  if (cmd == "personality") return cmd_personality(argc - 1, argv + 1);
  return usage_error("unknown command '" + cmd + "' (check, gen, personality)");
}
