// The machine-readable event lines of toroid-node (the list of kinds and
// keys is at the top of node_main.cc; the host rig and the QEMU launcher
// parse them): one line per event, written and flushed at once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "firmware/node.h"
#include "netstack/netstack.h"

namespace toroid {

// CLOCK_MONOTONIC in ns: the time base the rig compares event times in.
uint64_t mono_ns();
// s in double quotes, with '"', '\\' and newlines escaped.
std::string quote(const std::string& s);
// One line on stdout, flushed (stdout is a pipe to the rig).
void emit(const std::string& line);

// Reports every link that goes down, once, by port ("linkdown" lines).
// The link layer itself notices a dead neighbour: by missing acks when it
// waits on its peer, and by the port's carrier, which it reads every
// tuning::kCarrierCheckNs even when idle.
class LinkMonitor final : public LinkDownListener {
 public:
  LinkMonitor(Node& node, size_t ports, std::string node_name)
      : node_(node), name_(std::move(node_name)), reported_(ports, false) {}
  void on_link_down(uint16_t port, const Status& why) override;

 private:
  Node& node_;
  std::string name_;
  std::vector<bool> reported_;
};

// Prints a "state" line whenever the node's state changes, a "reset" line
// for every communication reset, and a "progress" line with the cases done
// so far at most every kProgressNs while a job runs (a full self-test under
// TCG runs for many minutes and reports its cases only at the end).
class StateReporter final : public Poller {
 public:
  StateReporter(const Node& node, std::string name, uint64_t t0) : node_(node), name_(std::move(name)), t0_(t0) {}
  bool poll() override;

 private:
  const Node& node_;
  std::string name_;
  uint64_t t0_;
  NodeState last_ = NodeState::kCreated;
  uint32_t resets_ = 0;
  size_t cases_ = 0;
  size_t failed_ = 0;
  uint64_t last_progress_ = mono_ns();
  static constexpr uint64_t kProgressNs = 10 * kSec;
};

// One "links" line at the verdict: what the link layer did to keep the
// links up (retransmissions, timer expiries, keepalive probes, trainings,
// stalls of this node's own loop) summed over the node's ports, and the
// longest silence a neighbour broke before the down deadline: how close a
// stalled peer came to being declared dead.
void emit_link_summary(const Node& node, const std::string& name);

}  // namespace toroid
