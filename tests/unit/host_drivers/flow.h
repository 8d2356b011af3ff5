// A one-way stream of numbered frames from one Port to another, pumped by
// hand: each step allocates up to a burst, offers it to tx_burst (keeping
// what was not taken, in order), and checks whatever rx_burst delivers
// against the expected sequence, byte for byte.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "drivers/port.h"
#include "host_test_util.h"

namespace host_test {

// Frames that a kernel AF_PACKET socket filtered on EtherType 0x88B5 will
// take: broadcast destination, a local source, 0x88B5, then the pattern.
inline void fill_eth_frame(toroid::Packet* p, uint32_t seq, uint32_t len) {
  uint8_t* d = p->append(len);
  static const uint8_t hdr[14] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5};
  std::memcpy(d, hdr, 14);
  std::memcpy(d + 14, &seq, 4);
  for (uint32_t i = 18; i < len; ++i) d[i] = pattern_byte(seq, i);
}
inline bool eth_frame_ok(const toroid::Packet* p, uint32_t seq, uint32_t len) {
  if (p->len != len) return false;
  const uint8_t* d = p->data();
  uint32_t s;
  std::memcpy(&s, d + 14, 4);
  if (s != seq || d[12] != 0x88 || d[13] != 0xb5) return false;
  for (uint32_t i = 18; i < len; ++i)
    if (d[i] != pattern_byte(seq, i)) return false;
  return true;
}

struct Flow {
  toroid::Port* tx = nullptr;
  toroid::Port* rx = nullptr;
  toroid::PacketPool* pool = nullptr;
  std::vector<uint32_t> sizes;  // frame i is sizes[i] bytes long
  bool eth = false;             // frames carry an Ethernet header (AF_PACKET)
  uint16_t burst = 32;
  uint16_t rx_index = 0;                 // the Packet::port the receiver must set
  size_t next = 0;                       // next frame to allocate
  std::vector<toroid::Packet*> pending;  // allocated, not yet taken, in order
  size_t received = 0;
  size_t foreign = 0;  // eth: frames that were not 0x88B5 (skipped)
  std::string error;   // first mismatch

  bool done() const { return received == sizes.size(); }

  void step() {
    while (pending.size() < burst && next < sizes.size()) {
      toroid::Packet* p = pool->alloc();
      if (!p) break;
      if (eth)
        fill_eth_frame(p, static_cast<uint32_t>(next), sizes[next]);
      else
        fill_frame(p, static_cast<uint32_t>(next), sizes[next]);
      pending.push_back(p);
      ++next;
    }
    // Called with nothing to send too: like a node, which polls every port
    // each round, this lets a port reap completions and start queued sends.
    const uint16_t k = tx->tx_burst(pending.data(), static_cast<uint16_t>(pending.size()));
    pending.erase(pending.begin(), pending.begin() + k);
    toroid::Packet* got[64];
    const uint16_t n = rx->rx_burst(got, burst);
    for (uint16_t i = 0; i < n; ++i) {
      if (eth && (got[i]->len < 14 || got[i]->data()[12] != 0x88 || got[i]->data()[13] != 0xb5)) {
        ++foreign;  // the kernel's own traffic on a real link
        got[i]->free();
        continue;
      }
      const uint32_t seq = static_cast<uint32_t>(received);
      if (error.empty()) {
        if (received >= sizes.size()) {
          error = "more frames than sent";
        } else {
          const bool ok = eth ? eth_frame_ok(got[i], seq, sizes[seq]) : frame_ok(got[i], seq, sizes[seq]);
          if (!ok)
            error = "frame " + std::to_string(seq) + " (" + std::to_string(sizes[seq]) + " bytes) arrived as " +
                    std::to_string(got[i]->len) + " bytes, or damaged or out of order";
          else if (got[i]->port != rx_index)
            error = "frame " + std::to_string(seq) + ": Packet::port " + std::to_string(got[i]->port);
        }
      }
      ++received;
      got[i]->free();
    }
  }

  // Frees what was never taken (a test that stops early).
  void drop_pending() {
    for (auto* p : pending) p->free();
    pending.clear();
  }
};

// Steps the flows round-robin until all are done or `seconds` pass.
// Returns false on timeout.
template <typename... F>
bool pump(double seconds, F&... flows) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!(flows.done() && ...)) {
    (flows.step(), ...);
    if (std::chrono::steady_clock::now() > deadline) return false;
  }
  return true;
}

}  // namespace host_test
