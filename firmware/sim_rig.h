// The sim rig: every node of the partition as an object in one process,
// cabled by a SimFabric and stepped in virtual time by its deterministic
// scheduler. It plays the control system's part too: it writes each node's
// personality, cuts the links the fault plan names, stops the partition when
// a node fails to boot, enforces a virtual-time limit, and aggregates the
// nodes' verdicts into one table.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "drivers/sim/sim_fabric.h"
#include "firmware/node.h"

namespace toroid {

class SimCapture;

// Swap which directions two ports of one node claim in its personality: a
// crossed cable, as link training must catch it.
struct PortSwap {
  Coord node;
  Dir a = Dir::kXp;
  Dir b = Dir::kXm;
};
// "X.Y.Z:DIR1,DIR2"
Result<PortSwap> parse_port_swap(const std::string& s, const Dims& dims);

struct SimOptions {
  Dims dims;
  std::string job = "selftest";
  uint64_t seed = 1;
  FaultPlan faults;
  LinkModel link;
  // Largest frame a sim port carries, Ethernet header included (each node's
  // packet buffers are this plus headroom); the link layer fills frames up
  // to it, so bulk data takes fewer frames, hence fewer events.
  uint32_t frame_bytes = tuning::kSimFrameBytes;
  std::vector<PortSwap> swaps;
  uint64_t time_limit_ns = 10 * kSec;   // virtual
  uint64_t job_timeout_ns = tuning::kJobTimeoutSimNs;
  std::map<std::string, std::string> job_args;  // --pattern uniform -> {"pattern": "uniform"}
  Dateline dateline = Dateline::kOn;    // kOff: test flag showing the deadlock it prevents
  uint16_t vc_credits = 0;              // receive buffers per VC (0: tuning default)
  bool log_boot = true;                 // every node's boot lines
  bool progress = true;                 // a progress line at most once a wall second
  uint32_t threads = 1;                 // scheduler threads
  std::string pcap_dir;                 // non-empty: capture every port there (firmware/sim_capture.h); one thread
  // Two or more: the x dimension is split into that many equal partitions,
  // named so, each node's personality its own partition's (dims and
  // coordinates within it); the fabric stays one torus, so every
  // partition's x wrap cables cross into the next one.
  std::vector<std::string> partitions;
  // Create every node's packets and the fabric's scheduler room at build
  // time instead of on demand (the allocation test's steady state; costs
  // memory at scale, so off by default).
  bool preallocate = false;
};

struct SimSummary {
  uint32_t nodes = 0;
  uint32_t passed = 0;
  uint32_t failed = 0;
  uint32_t unfinished = 0;
  uint32_t boot_failures = 0;
  uint64_t virtual_ns = 0;
  double wall_s = 0;
  uint64_t trace_hash = 0;
  std::string first_error;  // "[node 1,0,1] ..." of the first failure
};

class SimRig {
 public:
  explicit SimRig(SimOptions opt);
  ~SimRig();

  Status build();
  // Run to completion (every node finished, a boot failed, or the time limit).
  SimSummary run();
  // Print the results table and the verdict line; returns the exit status.
  int report(const SimSummary& s) const;

  SimFabric& fabric() { return *fabric_; }
  uint32_t node_count() const { return static_cast<uint32_t>(nodes_.size()); }
  const Node& node(uint32_t rank) const;
  Node& node(uint32_t rank);

 private:
  struct SimNode;
  SimOptions opt_;
  std::unique_ptr<SimFabric> fabric_;
  std::unique_ptr<SimCapture> capture_;
  std::vector<std::unique_ptr<SimNode>> nodes_;
  std::vector<uint32_t> region_of_;  // rank -> scheduler region
};

}  // namespace toroid
