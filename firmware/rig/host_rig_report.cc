// HostRig's report: the case table, the nodes that did not pass, the links
// reported down, idle CPU, resources and the verdict line.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "firmware/rig/host_rig.h"

namespace toroid::rig {

int HostRig::report() {
  const uint32_t total = static_cast<uint32_t>(nodes_.size());
  // Cases over all nodes, in the order the first reporting node ran them.
  struct Row {
    std::string coll, algo, name;
    uint32_t pass = 0, fail = 0, skip = 0;
    uint64_t max_ns = 0;
    std::string detail;
  };
  std::vector<Row> rows;
  std::map<std::string, size_t> index;
  for (auto& n : nodes_) {
    for (const auto& c : n->cases) {
      const std::string key = c.coll + "\t" + c.algo + "\t" + c.name;
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, rows.size()).first;
        rows.push_back(Row{c.coll, c.algo, c.name});
      }
      Row& r = rows[it->second];
      if (c.result == "PASS") ++r.pass;
      else if (c.result == "FAIL") ++r.fail;
      else ++r.skip;
      if (r.detail.empty() && !c.detail.empty()) r.detail = c.detail;
      r.max_ns = std::max(r.max_ns, c.ns);
    }
  }
  say("%s", "");
  say("%s on host %s (%u nodes, %s), seed %lu", opt_.job.c_str(), opt_.dims.to_string().c_str(), total,
      opt_.driver.c_str(), static_cast<unsigned long>(opt_.seed));
  if (!rows.empty()) {
    say("%-14s %-18s %-34s %-6s %-11s %s", "collective", "algorithm", "case", "result", "nodes", "time (max)");
    uint32_t ok_rows = 0, skip_rows = 0;
    for (const auto& r : rows) {
      const bool ok = r.fail == 0 && r.pass + r.skip == total;
      ok_rows += ok;
      skip_rows += ok && r.pass == 0;
      char nodes[32], dur[32];
      snprintf(nodes, sizeof nodes, "%u/%u", r.pass, total);
      say("%-14s %-18s %-34s %-6s %-11s %s%s%s", r.coll.c_str(), r.algo.c_str(), r.name.c_str(),
          ok ? (r.pass ? "PASS" : "SKIP") : "FAIL", nodes, format_duration(r.max_ns, dur, sizeof dur),
          r.detail.empty() ? "" : "  ", r.detail.c_str());
    }
    if (skip_rows)
      say("cases: %u/%zu passed on every node (%u of them skipped as not applicable here)", ok_rows, rows.size(),
          skip_rows);
    else
      say("cases: %u/%zu passed on every node", ok_rows, rows.size());
  } else {
    say("no node reported a case");
  }
  const bool bench_ok = report_bench();
  // Job totals (e.g. traffic), summed over the nodes.
  std::vector<std::pair<std::string, uint64_t>> totals;
  std::string group;
  for (auto& n : nodes_) {
    if (n->totals.empty()) continue;
    group = n->totals_group;
    if (totals.empty()) totals = n->totals;
    else
      for (size_t i = 0; i < totals.size() && i < n->totals.size(); ++i) totals[i].second += n->totals[i].second;
  }
  if (!totals.empty()) {
    std::string s = group + ":";
    for (const auto& [k, v] : totals) s += " " + k + "=" + std::to_string(v);
    say("%s", s.c_str());
  }
  chaos_report();

  // Per node: anything other than a clean PASS.
  uint32_t passed = 0, failed = 0, died = 0, no_verdict = 0;
  std::vector<std::string> problems;
  for (auto& n : nodes_) {
    const bool clean_exit = n->exited && WIFEXITED(n->wait_status) && WEXITSTATUS(n->wait_status) == 0;
    const std::string how = n->rig_note.empty() ? describe_exit(n->wait_status) : n->rig_note;
    if (n->died) {
      ++died;
      problems.push_back("node " + n->name + ": DIED: " + how +
                         (n->have_verdict ? std::string(" (after its verdict: ") + (n->pass ? "PASS" : "FAIL") + ")"
                                          : ""));
    } else if (n->have_verdict && n->pass && clean_exit) {
      ++passed;
    } else if (n->have_verdict && n->pass) {
      ++failed;
      problems.push_back("node " + n->name + ": passed, then " + how);
    } else if (n->have_verdict) {
      ++failed;
      problems.push_back("node " + n->name + ": FAIL: " + n->reason + (n->rig_note.empty() ? "" : " [" + n->rig_note + "]"));
    } else {
      ++no_verdict;
      problems.push_back("node " + n->name + ": NO VERDICT: " +
                         (n->rig_note.empty() ? (n->exited ? describe_exit(n->wait_status) : "never started")
                                              : n->rig_note));
    }
  }
  for (const auto& p : problems) say("%s", p.c_str());

  // Links reported down, and how long after the rig's kill.
  std::vector<std::string> downs;
  for (auto& n : nodes_) {
    for (const auto& d : n->linkdowns) {
      char b[256];
      if (kill_done_ && d.mono >= t_kill_)
        snprintf(b, sizeof b, "%s %s (%s) -> %s after %.1f ms", n->name.c_str(), d.port.c_str(), d.dir.c_str(),
                 d.peer.c_str(), static_cast<double>(d.mono - t_kill_) / 1e6);
      else
        snprintf(b, sizeof b, "%s %s (%s) -> %s", n->name.c_str(), d.port.c_str(), d.dir.c_str(), d.peer.c_str());
      downs.push_back(b);
    }
  }
  if (!downs.empty()) {
    std::string s;
    for (const auto& d : downs) s += (s.empty() ? "" : "; ") + d;
    say("links down: %s", s.c_str());
  }

  // Idle CPU (--hold) and resources.
  if (hold_done_) {
    const double secs = static_cast<double>(t_hold_end_ - t_hold_sample_) / 1e9;
    const double tck = static_cast<double>(clock_ticks_per_second());
    double sum = 0, mx = 0;
    uint32_t k = 0;
    for (auto& n : nodes_) {
      if (n->hold_ticks0 < 0 || n->hold_ticks1 < 0) continue;
      const double pct = 100.0 * static_cast<double>(n->hold_ticks1 - n->hold_ticks0) / tck / secs;
      sum += pct;
      mx = std::max(mx, pct);
      ++k;
    }
    if (k)
      say("idle: %u nodes over %.2f s: %.2f%% of one CPU in total, %.2f%% per node on average, %.2f%% at most",
          k, secs, sum, sum / k, mx);
  }
  double cpu_sum = 0, cpu_max = 0;
  uint64_t hwm_max = 0;
  std::string hwm_node;
  for (auto& n : nodes_) {
    cpu_sum += n->cpu_s;
    cpu_max = std::max(cpu_max, n->cpu_s);
    if (n->hwm_kb > hwm_max) {
      hwm_max = n->hwm_kb;
      hwm_node = n->name;
    }
  }
  double open_max = 0, connect_max = 0;
  for (auto& n : nodes_) {
    open_max = std::max(open_max, n->open_ms);
    connect_max = std::max(connect_max, n->connect_ms);
  }
  if (milestones_ & 4u)
    say("boot: every node trained at +%.2f s (slowest node: %.0f ms to open its ports%s, %.0f ms to connect)",
        since_launch(t_all_trained_), open_max, opt_.driver != "uring" ? " with EAL" : "", connect_max);
  // What the ports really ran on: an af_xdp port falls back to af_packet
  // where AF_XDP cannot be set up, and the rig says so.
  std::map<std::string, uint32_t> by_driver;
  for (auto& n : nodes_) {
    size_t pos = 0;
    while (!n->drivers.empty() && pos <= n->drivers.size()) {
      const size_t e = std::min(n->drivers.find(',', pos), n->drivers.size());
      ++by_driver[n->drivers.substr(pos, e - pos)];
      pos = e + 1;
    }
  }
  if (!by_driver.empty()) {
    std::string s;
    for (const auto& [d, k] : by_driver) s += (s.empty() ? "" : ", ") + std::to_string(k) + " on " + d;
    say("ports: %s", s.c_str());
  }
  say("resources: node CPU %.2f s in total (%.2f s at most); peak RSS %.1f MiB at most (node %s)", cpu_sum, cpu_max,
      static_cast<double>(hwm_max) / 1024.0, hwm_node.empty() ? "-" : hwm_node.c_str());
  say("run dir: %s", run_dir_.c_str());

  const double wall = since_launch(mono_ns());
  const bool pass = passed == total && !interrupted_;
  std::string v = std::string("verdict: ") + (interrupted_ ? "INTERRUPTED" : pass ? "PASS" : "FAIL") + " (" +
                  std::to_string(passed) + "/" + std::to_string(total) + " nodes passed";
  if (failed) v += ", " + std::to_string(failed) + " failed";
  if (died) v += ", " + std::to_string(died) + " died";
  if (no_verdict) v += ", " + std::to_string(no_verdict) + " without a verdict";
  char tail[64];
  snprintf(tail, sizeof tail, ") in %.2f s wall", wall);
  v += tail;
  say("%s", v.c_str());
  // A dead node is the cause of what its neighbours report: name it first.
  const std::string& cause = first_death_.empty() ? first_failure_ : first_death_;
  if (!pass && !cause.empty()) say("first failure: %s", cause.c_str());
  if (interrupted_) return 130;
  return pass && bench_ok ? 0 : 1;
}

}  // namespace toroid::rig
