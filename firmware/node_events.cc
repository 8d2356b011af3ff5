// toroid-node's event lines (node_events.h).
#include "firmware/node_events.h"

#include <time.h>

#include <algorithm>
#include <cstdio>

#include "base/clock.h"
#include "firmware/job.h"
#include "netstack/link.h"

namespace toroid {

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kSec + static_cast<uint64_t>(ts.tv_nsec);
}

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (c == '\n') {
      q += "\\n";
    } else {
      q += c;
    }
  }
  return q + "\"";
}

// One machine-readable line, written at once (stdout is a pipe to the rig).
void emit(const std::string& line) {
  std::string l = line + "\n";
  fwrite(l.data(), 1, l.size(), stdout);
  fflush(stdout);
}

void LinkMonitor::on_link_down(uint16_t port, const Status& why) {
  if (port >= reported_.size()) return;
  reported_[port] = true;
  const Personality& p = node_.personality();
  std::string pname = "port" + std::to_string(port), dir = "?", peer = "?";
  if (port < p.ports.size()) {
    pname = p.ports[port].name;
    dir = dir_name(p.ports[port].dir);
    peer = neighbour(p.coord, p.ports[port].dir, p.dims).to_string();
  }
  emit("linkdown node=" + name_ + " port=" + pname + " dir=" + dir + " peer=" + peer +
       " mono=" + std::to_string(mono_ns()) + " reason=" + quote(why.message()));
}

bool StateReporter::poll() {
  if (node_.resets() != resets_) {
    resets_ = node_.resets();
    emit("reset node=" + name_ + " gen=" + std::to_string(node_.trainer().generation()) +
         " mono=" + std::to_string(mono_ns()) + " reason=" + quote(node_.last_reset().message()));
  }
  if (const Job* job = node_.job(); job && job->cases().size() != cases_) {
    const auto& cs = job->cases();
    for (; cases_ < cs.size(); ++cases_) failed_ += cs[cases_].verdict == CaseVerdict::kFail;
    // The clock is read only when a case completed: nothing per idle round.
    const uint64_t now = mono_ns();
    if (now - last_progress_ >= kProgressNs) {
      last_progress_ = now;
      emit("progress node=" + name_ + " cases=" + std::to_string(cases_) + " failed=" + std::to_string(failed_) +
           " ms=" + std::to_string((now - t0_) / 1000000));
    }
  }
  if (node_.state() == last_) return false;
  last_ = node_.state();
  char ms[32];
  snprintf(ms, sizeof ms, "%.3f", static_cast<double>(mono_ns() - t0_) / 1e6);
  emit("state node=" + name_ + " state=" + node_state_name(last_) + " ms=" + ms);
  return false;
}

void emit_link_summary(const Node& node, const std::string& name) {
  const NetStack& net = node.net();
  LinkCounters sum;
  uint64_t longest = 0;
  for (uint16_t i = 0; i < net.port_count(); ++i) {
    add_counters(&sum, &net.link(i).counters(), kLinkCountersFields, kLinkCountersFieldCount);
    longest = std::max(longest, net.link(i).longest_silence_ns());
  }
  emit("links node=" + name + " ports=" + std::to_string(net.port_count()) +
       " retransmits=" + std::to_string(sum.retransmits) + " timeouts=" + std::to_string(sum.timeouts) +
       " keepalives=" + std::to_string(sum.keepalives) + " trainings=" + std::to_string(sum.trainings) +
       " duplicates=" + std::to_string(sum.duplicates) + " self_stalls=" + std::to_string(sum.self_stalls) +
       " longest_silence_ms=" + std::to_string(longest / 1000000));
}

}  // namespace toroid
