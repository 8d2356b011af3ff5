// CutPort: a port whose cable can be pulled and plugged back while the node
// runs: the host rig's --chaos cut (docs/host-rig.md). It wraps the node's
// real port; while cut, every frame either way is lost (received frames are
// taken off the real port and freed, frames to send are taken and freed)
// and the carrier reads down, as a pulled cable would. A rig inserts it only
// when it may cut cables, so other nodes talk to their ports directly.
#pragma once
#include <cstdint>

#include "drivers/port.h"

namespace toroid {

class CutPort final : public Port {
 public:
  explicit CutPort(Port& inner) : inner_(inner) {}

  void set_cut(bool cut) { cut_ = cut; }
  bool cut() const { return cut_; }
  uint64_t frames_lost() const { return lost_; }

  uint16_t rx_burst(Packet** pkts, uint16_t n) override {
    const uint16_t got = inner_.rx_burst(pkts, n);
    if (!cut_) return got;
    for (uint16_t i = 0; i < got; ++i) pkts[i]->free();
    lost_ += got;
    return 0;
  }
  uint16_t tx_burst(Packet** pkts, uint16_t n) override {
    if (!cut_) return inner_.tx_burst(pkts, n);
    for (uint16_t i = 0; i < n; ++i) pkts[i]->free();
    lost_ += n;
    return n;
  }
  const PortInfo& info() const override { return inner_.info(); }
  LinkState link_state() const override { return cut_ ? LinkState::kDown : inner_.link_state(); }
  PacketPool& tx_pool() override { return inner_.tx_pool(); }
  int wait_fd() const override { return inner_.wait_fd(); }
  bool reconnect() override { return cut_ ? false : inner_.reconnect(); }

 private:
  Port& inner_;
  bool cut_ = false;
  uint64_t lost_ = 0;
};

}  // namespace toroid
