// A node's packet capture (--pcap DIR on every rig): one pcap file per port,
// DIR/node-X-Y-Z-portN-DIR.pcap (e.g. node-1-0-1-port2-y+.pcap), each port
// wrapped in a CapturePort (drivers/capture/capture_port.h). The node is then
// built on ports() instead of the raw ports. Only rigs that capture create
// one; docs/capture.md describes the files.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/capture/capture_port.h"
#include "firmware/personality.h"

namespace toroid {

// "node-1-0-1-port2-y+.pcap"
std::string capture_file_name(const Coord& node, const PortSpec& port);

class NodeCapture {
 public:
  // Creates dir if needed and one file per port (ports[i] is p.ports[i]).
  // Timestamps are clock.now_ns() + offset_ns.
  static Result<std::unique_ptr<NodeCapture>> open(const std::string& dir, const Personality& p,
                                                   const std::vector<Port*>& ports, const Clock& clock,
                                                   int64_t offset_ns);
  // The capturing ports, in the order of the raw ones.
  const std::vector<Port*>& ports() const { return raw_; }
  uint64_t frames() const;
  size_t files() const { return files_.size(); }

 private:
  NodeCapture() = default;
  std::vector<std::unique_ptr<PcapFile>> files_;
  std::vector<std::unique_ptr<CapturePort>> ports_;
  std::vector<Port*> raw_;
};

}  // namespace toroid
