// The sim rig's --pcap DIR: a NodeCapture per node (one pcap file per port,
// virtual-time timestamps) and DIR/corrupted.txt, the medium's list of the
// frames it corrupted that reached a receiver, one line each:
//
//   node-1-0-1-port2-y+.pcap rx=17 bit=389 t_ns=412345
//
// rx: the frame's 1-based index among the frames that port received, in
// the order the node read them (the capture's frames whose source MAC is
// not the port's own). A frame still queued when the run ended is listed
// but was never read, so it is not in the capture. bit: the flipped bit,
// counted from the first bit of the Ethernet header (bit 0 = LSB of byte 0).
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "drivers/sim/sim_fabric.h"
#include "firmware/capture.h"

namespace toroid {

class SimCapture final : public SimCorruptObserver {
 public:
  // Creates dir and dir/corrupted.txt and registers with the fabric.
  static Result<std::unique_ptr<SimCapture>> create(const std::string& dir, SimFabric& fabric);
  ~SimCapture() override;
  SimCapture(const SimCapture&) = delete;
  SimCapture& operator=(const SimCapture&) = delete;

  // Opens node p.coord's files; returns the ports to build the node on.
  Result<std::vector<Port*>> add_node(const Personality& p, const std::vector<SimPort*>& ports);
  void on_corrupt_delivered(const SimPort& to, uint64_t rx_index, uint32_t bit) override;

  // "pcap: 48 files, 91234 frames in DIR; 123 corrupted frames delivered (DIR/corrupted.txt)"
  std::string summary() const;

 private:
  SimCapture() = default;
  std::string dir_;
  SimFabric* fabric_ = nullptr;
  FILE* corrupted_ = nullptr;
  uint64_t corrupted_count_ = 0;
  std::vector<std::unique_ptr<NodeCapture>> nodes_;
  std::vector<std::string> file_of_port_;  // by fabric port id
};

}  // namespace toroid
