// The host rig's wiring: which socket each torus cable uses, which end is
// the server, and the personality every node process boots from. Pure (no
// files, no processes), so tests check it without starting a rig.
//
// One cable per (node, plus direction) that has a link: node c's d+ port
// meets neighbour(c, d+)'s d- port over one socket, SOCKDIR/X-Y-Zd.sock
// (e.g. 1-0-1x.sock), whose server is the d+ side. Both memif and uring
// name it the same way; on a 2-node ring the x+ and x- cables between the
// same two nodes are two sockets.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/torus.h"
#include "firmware/personality.h"

namespace toroid::rig {

struct Cable {
  Coord server;  // the plus side
  Dir server_dir = Dir::kXp;
  Coord client;  // neighbour(server, server_dir)
  Dir client_dir = Dir::kXm;
  std::string socket;
};

// log2 of the slots of every memif ring the rig cables (128: four windows).
constexpr uint32_t kMemifRingLog2 = 7;

struct WiringOptions {
  Dims dims;
  std::string driver = "memif";  // memif | uring
  std::string socket_dir;        // absolute, no spaces/commas/'#'
  std::string job = "selftest";
  uint64_t seed = 1;
  std::map<std::string, std::string> job_args;
  uint32_t memif_bsize = 0;      // memif slot size on every port (9216: 9000-byte frames); 0 the PMD's
  std::vector<std::string> partitions;  // two or more: split_partition_x (personality.h)
};

// Host rig drivers: "memif", "uring", and the kernel NIC drivers "af_xdp",
// "af_packet" (one network namespace per node, veth cables).
bool is_rig_driver(const std::string& driver);
bool is_kernel_driver(const std::string& driver);
// Every socket path must fit sockaddr_un and survive the personality and
// the driver's spec syntax: absolute, at most 107 bytes with the longest
// file name of these dims, and no whitespace, ',', '#' or '='.
Status check_socket_dir(const std::string& dir, const Dims& dims);
// The socket file of the cable at node c along the plus direction d.
std::string cable_socket(const std::string& socket_dir, const Coord& c, Dir plus);
// Every cable of the partition, in rank order then x, y, z.
std::vector<Cable> cables(const Dims& dims, const std::string& socket_dir);
// The cable on node c's port along dir (either sign).
Cable cable_at(const Dims& dims, const std::string& socket_dir, const Coord& c, Dir dir);
// One personality per node, by rank: default_ports() naming, each port's
// driver address from its cable's socket and role.
Result<std::vector<Personality>> wire_partition(const WiringOptions& opt);
// The key = value text of a personality (parse_personality_text reads it back).
std::string personality_text(const Personality& p);
// "X,Y,Z" or "X.Y.Z" inside dims.
Result<Coord> parse_rig_coord(const std::string& s, const Dims& dims);

}  // namespace toroid::rig
