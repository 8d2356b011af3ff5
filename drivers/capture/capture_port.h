// Packet capture at the Port boundary: CapturePort wraps a node's port and
// writes every frame it sends or receives to a pcap file through libpcap's
// writer (Ethernet link type, nanosecond timestamps from the node's Clock:
// virtual time in the sim). A rig inserts it only when given --pcap DIR, so
// a node that is not capturing talks to its port directly and pays nothing.
//
// Classic pcap has no direction field: a port's file holds both directions
// and the source MAC tells them apart (wire::node_mac: the sender's own
// coordinates and port index). docs/capture.md describes the files.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "drivers/port.h"

struct pcap;
struct pcap_dumper;

namespace toroid {

// One pcap file, written frame by frame (stdio-buffered; closed, and so
// complete, when destroyed).
class PcapFile {
 public:
  // Creates (truncates) path; the error names the file and libpcap's reason.
  static Result<std::unique_ptr<PcapFile>> create(const std::string& path);
  ~PcapFile();
  PcapFile(const PcapFile&) = delete;
  PcapFile& operator=(const PcapFile&) = delete;

  void write(uint64_t ts_ns, const uint8_t* data, uint32_t len);
  void flush();
  uint64_t frames() const { return frames_; }
  const std::string& path() const { return path_; }

 private:
  PcapFile() = default;
  std::string path_;
  pcap* dead_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  uint64_t frames_ = 0;
};

class CapturePort final : public Port {
 public:
  // Timestamps are clock.now_ns() + offset_ns (a real clock is monotonic:
  // the offset makes them wall-clock times). `inner` and `file` must
  // outlive this port.
  CapturePort(Port& inner, PcapFile& file, const Clock& clock, int64_t offset_ns);

  uint16_t rx_burst(Packet** pkts, uint16_t n) override;
  uint16_t tx_burst(Packet** pkts, uint16_t n) override;
  const PortInfo& info() const override { return inner_.info(); }
  LinkState link_state() const override { return inner_.link_state(); }
  PacketPool& tx_pool() override { return inner_.tx_pool(); }
  int wait_fd() const override { return inner_.wait_fd(); }
  bool reconnect() override { return inner_.reconnect(); }

 private:
  uint64_t stamp() const;
  Port& inner_;
  PcapFile& file_;
  const Clock& clock_;
  int64_t offset_ns_;
  // tx frames are copied before the inner port takes them: a driver may
  // free a frame, or the sim's medium flip a bit in it, inside tx_burst.
  std::vector<uint8_t> tx_copy_;
  std::vector<uint32_t> tx_len_;
};

// Offset from CLOCK_MONOTONIC to CLOCK_REALTIME now, for CapturePort on a
// RealClock.
int64_t monotonic_to_realtime_ns();

}  // namespace toroid
