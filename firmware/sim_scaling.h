// `toroid-sim --job scaling --dims LIST`: for each shape, one sim run per
// operation (every node starts it at the same virtual instant): a barrier on
// the barrier network, an 8-byte int64 tree allreduce, an exact double SUM
// allreduce (seed 004's two passes), a 1 MiB torus-tree allreduce and an
// 8-byte alltoall; prints the virtual time of each (the slowest node's) and
// the wall time of its run, with Blue Gene/L's published figure beside it
// where one exists (the 65,536-node barrier and double sum), and writes the
// rows as JSON on request. Operations too big for this machine at a shape
// are reported as skipped, with the reason.
#pragma once
#include <string>
#include <vector>

#include "firmware/sim_rig.h"

namespace toroid {

struct ScalingOptions {
  std::vector<Dims> shapes;
  SimOptions base;        // seed, faults, link model, threads, limits (dims and job are set per run)
  std::string json_path;  // "" = no JSON
};

// "8x8x8,16x16x16": every shape parsed, in order; errors name the item.
Result<std::vector<Dims>> parse_dims_list(const std::string& list);

// Runs every row; returns the exit status (0: every run passed).
int run_scaling(const ScalingOptions& opt);

}  // namespace toroid
