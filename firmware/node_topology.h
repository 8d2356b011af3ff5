// toroid-node --topology FILE [--rank R]: how a deployed node finds out who
// it is. It reads the partition's topology, refuses it with every problem
// listed (check_topology), takes its rank from --rank, PMIx or Slurm
// (launch_rank.h), checks that the job has as many tasks as the topology
// has nodes and that it runs on the host the topology places that rank on,
// and builds its personality for that rank (flags such as --job or --arg
// override the topology's).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "firmware/launch_rank.h"
#include "firmware/personality.h"
#include "firmware/topology.h"

namespace toroid {

struct TopologyLaunch {
  std::shared_ptr<const Topology> topo;
  Personality personality;
  LaunchRank rank;
  std::string host;             // this machine's name
  uint32_t ranks_on_host = 1;   // how many nodes the topology places here
};

// `overrides` are personality flags (--job, --seed, --arg, --partition).
// Errors are one or more lines, each naming the problem.
Result<TopologyLaunch> load_topology_launch(const std::string& file, int64_t rank, bool any_host,
                                            const std::vector<std::string>& overrides);

// This machine's host name and its short form (up to the first '.').
std::string this_host();
// Whether the topology's host name names this machine (full or short).
bool is_this_host(const std::string& topo_host, const std::string& me);

}  // namespace toroid
