// The host rig's reading side: node output arrives on pipes, is split into
// lines, streamed (with node prefixes) and, for event lines, acted on
// (firmware/rig/events.h): milestones, verdicts, links reported down, bench
// records. Split from host_rig.cc, which starts, watches and stops the nodes.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "firmware/rig/host_rig.h"
#include "firmware/rig/wiring.h"

namespace toroid::rig {

void HostRig::note_failure(uint64_t now, const std::string& what) {
  if (t_failure_ == 0) {
    t_failure_ = now;
    first_failure_ = what;
  }
}

void HostRig::read_output(NodeProc& n, bool eof) {
  if (n.child.out_fd < 0) return;
  char buf[8192];
  for (;;) {
    const ssize_t r = read(n.child.out_fd, buf, sizeof buf);
    if (r > 0) {
      n.lines.feed(buf, static_cast<size_t>(r));
      std::string line;
      while (n.lines.next(&line)) handle_line(n, line);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN && !eof) return;
    // EOF (or an error): the child closed its output.
    const std::string rest = n.lines.take_rest();
    if (!rest.empty()) handle_line(n, rest);
    close(n.child.out_fd);
    n.child.out_fd = -1;
    return;
  }
}

void HostRig::handle_line(NodeProc& n, const std::string& line) {
  if (n.log) {
    fprintf(n.log, "%s\n", line.c_str());
    fflush(n.log);
  }
  NodeEvent ev;
  // The soak job's worst news, counted from every process (also the ones
  // --chaos kills before they could report their totals).
  if (line.find("WRONG RESULT") != std::string::npos) ++chaos_.wrong_lines;
  if (line.find("soak: ") != std::string::npos && line.find(" hung ") != std::string::npos) ++chaos_.hang_lines;
  if (!parse_node_event(line, &ev)) {
    const bool is_error = line.find("error") != std::string::npos || line.find("FAIL") != std::string::npos;
    if (opt_.stream || is_error) {
      if (line.rfind("[node ", 0) == 0)
        say("%s", line.c_str());
      else
        say("[node %s] %s", n.name.c_str(), line.c_str());
    }
    return;
  }
  const uint64_t now = mono_ns();
  if (ev.kind == "up") {
    n.up = true;
  } else if (ev.kind == "ports") {
    n.ports = true;
    n.open_ms = std::atof(ev.get("open_ms").c_str());
    n.connect_ms = std::atof(ev.get("connect_ms").c_str());
    n.drivers = ev.get("drivers");
  } else if (ev.kind == "state") {
    n.state = ev.get("state");
    if (n.state == "running" || n.state == "passed") n.trained = true;
  } else if (ev.kind == "case") {
    Case c;
    c.coll = ev.get("coll");
    c.algo = ev.get("algo");
    c.name = ev.get("name");
    c.result = ev.get("result");
    c.detail = ev.get("detail");
    c.ns = std::strtoull(ev.get("ns").c_str(), nullptr, 10);
    n.cases.push_back(c);
  } else if (ev.kind == "total") {
    n.totals_group = ev.get("group");
    n.totals.emplace_back(ev.get("key"), std::strtoull(ev.get("value").c_str(), nullptr, 10));
  } else if (ev.kind == "verdict") {
    n.have_verdict = true;
    n.pass = std::find(ev.words.begin(), ev.words.end(), "PASS") != ev.words.end();
    n.reason = ev.get("reason");
    if (!n.pass) {
      say("rig: node %s FAIL: %s", n.name.c_str(), n.reason.c_str());
      note_failure(now, "node " + n.name + ": " + n.reason);
    }
  } else if (ev.kind == "linkdown") {
    LinkDown d;
    d.port = ev.get("port");
    d.dir = ev.get("dir");
    d.peer = ev.get("peer");
    d.reason = ev.get("reason");
    d.mono = std::strtoull(ev.get("mono").c_str(), nullptr, 10);
    n.linkdowns.push_back(d);
    if (kill_done_ && d.mono >= t_kill_)
      say("rig: node %s reports link down on %s (%s) to %s, %.1f ms after the %s", n.name.c_str(), d.port.c_str(),
          d.dir.c_str(), d.peer.c_str(), static_cast<double>(d.mono - t_kill_) / 1e6,
          opt_.kill_signal == SIGSTOP ? "freeze" : "kill");
    else
      say("rig: node %s reports link down on %s (%s) to %s: %s", n.name.c_str(), d.port.c_str(), d.dir.c_str(),
          d.peer.c_str(), d.reason.c_str());
    // Under --chaos links go down on purpose; the soak's counts judge the run.
    if ((phase_ == Phase::kRun || phase_ == Phase::kHold) && opt_.chaos.empty())
      note_failure(now, "node " + n.name + " port " + d.port + " (" + d.dir + "): link down to " + d.peer);
  } else if (ev.kind == "reset") {
    ++chaos_.resets;
  } else if (ev.kind == "bench") {
    BenchRecord rec;
    BenchInfo info;
    bool is_info = false;
    std::string err;
    if (!parse_bench_event(ev, &rec, &info, &is_info, &err)) {
      say("rig: node %s: %s: %s", n.name.c_str(), err.c_str(), line.c_str());
    } else if (is_info) {
      n.bench_info = std::move(info);
      n.has_bench_info = true;
    } else {
      n.bench.push_back(std::move(rec));
    }
  } else if (ev.kind == "quiesced") {
    n.quiesced = true;
  }
}

}  // namespace toroid::rig
