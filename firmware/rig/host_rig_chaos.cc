// The host rig's --chaos (docs/host-rig.md, "Chaos soak"): while the soak
// job runs, one fault at a time on a node or cable picked at random, each
// followed by quiet for the partition to recover, then the next:
//   kill    SIGKILL; the node's process is started again 1-4 s later
//   reboot  SIGKILL; started again as soon as it is gone
//   stop    SIGSTOP for 1-3 s, then SIGCONT (a hung node)
//   cut     the cable pulled for 1-3 s (both ends' CutPorts follow
//           <run>/cut/<cable>.cut, toroid-node --cut-dir), then plugged back
// Faults stop well before the soak's end so that it ends in a clean
// generation. A seeded Rng (--seed) picks kinds, targets and times. The rig
// counts what it did, and from every process's output (also of the ones it
// killed) the soak's wrong results, hangs and resets.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/rng.h"
#include "firmware/rig/host_rig.h"
#include "firmware/rig/wiring.h"

namespace toroid::rig {

namespace {
uint64_t between(Rng& rng, uint64_t lo, uint64_t hi) { return lo + rng.below(hi - lo + 1); }
}  // namespace

void HostRig::chaos_setup(uint64_t until_mono) {
  chaos_.seed = opt_.seed;
  // The first fault once every node trained (chaos_step waits for that),
  // the last one a tenth of the run (at least 8 s) before the end.
  const uint64_t quiet = std::max<uint64_t>(8 * kSec, opt_.soak_ns / 10);
  chaos_.stop_at = until_mono > quiet ? until_mono - quiet : 0;
  chaos_.next_at = 0;
  bool cut = false;
  for (const auto& k : opt_.chaos) cut |= k == "cut";
  if (cut) {
    chaos_.cut_dir = run_dir_ + "/cut";
    mkdir(chaos_.cut_dir.c_str(), 0755);
  }
}

void HostRig::restart(NodeProc& n) {
  // A killed memif server leaves its socket files: the new process binds
  // them again.
  if (!sock_dir_.empty()) {
    for (const auto& k : cables(opt_.dims, sock_dir_))
      if (k.server == n.coord) unlink(k.socket.c_str());
  }
  n.exited = false;
  n.died = false;
  n.chaos_killed = false;
  n.killed_by_rig = false;
  n.have_verdict = n.pass = false;
  n.up = n.ports = n.trained = n.quiesced = false;
  n.state = "restarting";
  n.reason.clear();
  n.cases.clear();
  n.totals.clear();
  n.wait_status = 0;
  n.child = Child{};
  ++chaos_.restarts;
  say("rig: chaos: starting node %s again", n.name.c_str());
  launch(n);
}

void HostRig::chaos_end_fault(uint64_t now) {
  Rng rng = Rng::derive(chaos_.seed, now);
  NodeProc* n = chaos_.node;
  if (chaos_.kind == "kill" || chaos_.kind == "reboot") {
    if (!n->exited) return;  // not reaped yet
    restart(*n);
  } else if (chaos_.kind == "stop") {
    if (!n->exited) kill(n->child.pid, SIGCONT);
    say("rig: chaos: node %s continues (SIGCONT) after %.1f s", n->name.c_str(),
        static_cast<double>(now - chaos_.started) / 1e9);
  } else if (chaos_.kind == "cut") {
    unlink(chaos_.cut_file.c_str());
    say("rig: chaos: cable %s plugged back after %.1f s", chaos_.cut_file.c_str(),
        static_cast<double>(now - chaos_.started) / 1e9);
  }
  chaos_.active = false;
  chaos_.next_at = now + between(rng, 2 * kSec, 6 * kSec);
}

void HostRig::chaos_step(uint64_t now) {
  if (opt_.chaos.empty() || phase_ != Phase::kRun) return;
  if (chaos_.active) {
    if (now >= chaos_.ends_at) chaos_end_fault(now);
    return;
  }
  if (now < chaos_.next_at || now >= chaos_.stop_at) return;
  // Only into a partition that is whole again: every node up and trained.
  for (auto& n : nodes_)
    if (!n->trained || n->exited) return;
  Rng rng = Rng::derive(chaos_.seed, now ^ 0xc4a05);
  const std::string kind = opt_.chaos[rng.below(opt_.chaos.size())];
  NodeProc* n = nodes_[rng.below(nodes_.size())].get();
  chaos_.kind = kind;
  chaos_.node = n;
  chaos_.started = now;
  chaos_.active = true;
  if (kind == "kill" || kind == "reboot") {
    n->chaos_killed = true;
    n->rig_note = "killed by --chaos " + kind;
    kill(n->child.pid, SIGKILL);
    chaos_.ends_at = kind == "kill" ? now + between(rng, 1 * kSec, 4 * kSec) : now;
    ++(kind == "kill" ? chaos_.kills : chaos_.reboots);
    say("rig: chaos: %s node %s (pid %d, SIGKILL)%s", kind == "kill" ? "killing" : "rebooting", n->name.c_str(),
        static_cast<int>(n->child.pid),
        kind == "kill" ? ", started again later" : ", started again at once");
  } else if (kind == "stop") {
    kill(n->child.pid, SIGSTOP);
    chaos_.ends_at = now + between(rng, 1 * kSec, 3 * kSec);
    ++chaos_.stops;
    say("rig: chaos: freezing node %s (SIGSTOP) for %.1f s", n->name.c_str(),
        static_cast<double>(chaos_.ends_at - now) / 1e9);
  } else {
    const std::vector<Cable> all = cables(opt_.dims, sock_dir_);
    const Cable& k = all[rng.below(all.size())];
    std::string name = k.socket.substr(k.socket.rfind('/') + 1);
    name.resize(name.size() - 5);  // ".sock"
    chaos_.cut_file = chaos_.cut_dir + "/" + name + ".cut";
    if (FILE* f = fopen(chaos_.cut_file.c_str(), "w")) fclose(f);
    chaos_.ends_at = now + between(rng, 1 * kSec, 3 * kSec);
    ++chaos_.cuts;
    say("rig: chaos: pulling cable %s (%s %s - %s %s) for %.1f s", name.c_str(), k.server.to_string().c_str(),
        dir_name(k.server_dir), k.client.to_string().c_str(), dir_name(k.client_dir),
        static_cast<double>(chaos_.ends_at - now) / 1e9);
  }
}

void HostRig::chaos_report() {
  if (opt_.chaos.empty()) return;
  say("chaos: kills=%lu reboots=%lu stops=%lu cuts=%lu restarts=%lu; seen in the nodes' output: resets=%lu "
      "wrong results=%lu hangs=%lu",
      static_cast<unsigned long>(chaos_.kills), static_cast<unsigned long>(chaos_.reboots),
      static_cast<unsigned long>(chaos_.stops), static_cast<unsigned long>(chaos_.cuts),
      static_cast<unsigned long>(chaos_.restarts), static_cast<unsigned long>(chaos_.resets),
      static_cast<unsigned long>(chaos_.wrong_lines), static_cast<unsigned long>(chaos_.hang_lines));
}

}  // namespace toroid::rig
