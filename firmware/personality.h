// The node's identity, as on Blue Gene: partition dims, own coordinates, the
// map from its ports to torus directions (with each port's driver and
// address), the job to run and the seed. Read from command-line flags or a
// key = value file (the QEMU rig later reads it from the kernel command line)
// and validated before anything else runs: every problem is reported in one
// line that names the field.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/torus.h"

namespace toroid {

struct PortSpec {
  std::string name;     // "port0"
  Dir dir = Dir::kXp;   // the torus direction this port is cabled to
  std::string driver;   // sim, memif, af_xdp, af_packet, pci, uring
  std::string address;  // driver-specific (socket path, interface, PCI address)
  // Optional attributes (a deployment's topology names them; 0 / -1 / "":
  // not given): the link's MTU, which both ends of a cable agree on; the
  // NUMA node of the NIC; the physical cable's label, for messages and the
  // cabling plan.
  uint32_t mtu = 0;
  int numa = -1;
  std::string cable;
};

struct Personality {
  Dims dims;
  Coord coord;
  std::vector<PortSpec> ports;  // index = port index
  std::string job;
  std::map<std::string, std::string> job_args;  // "--count 10" -> {"count": "10"}
  uint64_t seed = 1;
  // The partition this node belongs to ("" when the rig does not name one):
  // a deployment's topology file names it, and it tags the node's logs.
  std::string partition;

  // Which fields were given (validate() reports the missing ones).
  bool has_dims = false;
  bool has_coord = false;

  std::string node_name() const { return coord.to_string(); }
  // One line: "[partition P ]dims 2x2x2 coord 1,0,1 job selftest seed 1 ports port0=x+ ...".
  std::string describe() const;
};

// Checks: required fields present (dims, coord, job), coordinate inside dims,
// no two ports with one name or one direction, a port only where the
// dimension has a link, a port for every direction that has one, and a
// partition id (when given) of at most 32 letters, digits, '.', '_', '-'.
Status validate(const Personality& p);
constexpr size_t kPartitionIdMax = 32;
Status check_partition_id(const std::string& id);

// "key = value" lines; '#' starts a comment. Keys: dims, coord, job, seed,
// partition, port (value "NAME DIR DRIVER [ADDRESS] [mtu=N] [numa=N]
// [cable=LABEL]", repeatable), arg (value "KEY VALUE").
// `source` names the input in messages ("personality.txt line 3: ...").
Result<Personality> parse_personality_text(const std::string& text, const std::string& source);
Result<Personality> parse_personality_file(const std::string& path);
// Command-line form of the same keys: --dims 2x2x2 --coord 1,0,1 --job selftest
// --seed 7 --partition P --port NAME:DIR:DRIVER[:ADDRESS] (repeatable) --arg KEY=VALUE, and
// --personality FILE to start from a file (dims/coord/job/seed flags override
// it; ports add to its ports).
// `base_text`, when given, is read before the flags like a --personality
// file (a topology's personality for one rank, with flags overriding it).
Result<Personality> parse_personality_args(const std::vector<std::string>& args, const std::string& base_text = "");

// The key = value text of a personality, `header` as its first comment line;
// parse_personality_text reads it back.
std::string personality_text(const Personality& p, const std::string& header);

// Rigs that cable several partitions as one torus (--partitions A,B,...,
// to test partition isolation): the x dimension of `p.dims` is split into
// equal parts named by `ids`, and p (a node of the whole cabled torus)
// becomes a node of its part: partition id, dims and coordinates within it.
// Its ports stay as cabled, so each part's x wrap cables reach the next
// part. An error when x does not split into parts of 2 or more.
Status split_partition_x(Personality* p, const std::vector<std::string>& ids);

// The ports a rig gives a node at `coord` by default: port i cabled to the
// i-th direction that has a link, in the order x+ x- y+ y- z+ z-.
std::vector<PortSpec> default_ports(const Dims& dims, const std::string& driver);
// The name default_ports gives the port along dir ("port2" for y+ on 2x2x2).
std::string default_port_name(Dir dir, const Dims& dims);
// Reads one optional port attribute word ("mtu=9000", "numa=1",
// "cable=A17") into ps. False when the word is not an attribute; a bad value
// sets *err.
bool parse_port_attr(const std::string& word, PortSpec* ps, std::string* err);
// " mtu=9000 numa=1 cable=A17" for the attributes that are set, or "".
std::string port_attrs_text(const PortSpec& ps);

}  // namespace toroid
