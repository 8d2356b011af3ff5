// What the reliable-link tests share: a Port wrapper that logs the frames
// crossing it, the frame types as bytes, and a counter summed over a link's
// two ends.
#pragma once
#include <cstdint>
#include <vector>

#include "net_rig.h"

namespace toroid::nettest {

using wire::FrameType;

// Forwards to a SimPort and logs every frame the port took and every frame
// the link received, with the time. `carrier_up` hides a cut cable from the
// link (a medium that loses everything but reports no carrier loss), so the
// link must find out by itself, through its timer.
class TapPort final : public Port {
 public:
  struct Rec {
    uint64_t time;
    uint8_t type;
    uint8_t flags;
    uint32_t seq;
    uint32_t ack;
  };
  TapPort(SimPort* inner, const Clock& clock) : inner_(inner), clock_(clock) {}

  uint16_t rx_burst(Packet** pkts, uint16_t n) override {
    const uint16_t k = inner_->rx_burst(pkts, n);
    for (uint16_t i = 0; i < k; ++i) rx.push_back(rec(pkts[i]));
    return k;
  }
  uint16_t tx_burst(Packet** pkts, uint16_t n) override {
    std::vector<Rec> offered;
    for (uint16_t i = 0; i < n; ++i) offered.push_back(rec(pkts[i]));
    const uint16_t took = inner_->tx_burst(pkts, n);  // may free them
    tx.insert(tx.end(), offered.begin(), offered.begin() + took);
    return took;
  }
  const PortInfo& info() const override { return inner_->info(); }
  LinkState link_state() const override { return carrier_up ? LinkState::kUp : inner_->link_state(); }
  PacketPool& tx_pool() override { return inner_->tx_pool(); }

  bool carrier_up = false;
  std::vector<Rec> tx;
  std::vector<Rec> rx;

 private:
  Rec rec(const Packet* p) const {
    Rec r{clock_.now_ns(), 0, 0, 0, 0};
    if (p->len >= kOverhead) {
      const WireFrame w = parse_frame(p);
      r.type = w.type;
      r.flags = w.f.flags;
      r.seq = w.f.seq;
      r.ack = w.f.ack;
    }
    return r;
  }
  SimPort* inner_;
  const Clock& clock_;
};

constexpr uint8_t kData = static_cast<uint8_t>(FrameType::kData);
constexpr uint8_t kAck = static_cast<uint8_t>(FrameType::kAck);

inline uint64_t sum_counter(const Link& a, const Link& b, uint64_t LinkCounters::*f) {
  return a.counters().*f + b.counters().*f;
}

}  // namespace toroid::nettest
