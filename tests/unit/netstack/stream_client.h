// A traffic client for link tests (reliable_link_test.cc, link_liveness_test.cc):
// numbered, checksummed frames sent as fast as the link takes them, and the
// peer's stream checked frame by frame as it arrives.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/rng.h"
#include "net_rig.h"

namespace toroid::nettest {

// ---- a traffic client: numbered, checksummed frames, checked on arrival ------

// Frame i of a stream: its VC and size follow from (stream seed, i); the body
// is i (4 bytes), a checksum of the rest (4 bytes), then bytes that differ by
// stream, frame and offset.
struct StreamSpec {
  uint64_t seed;
  uint32_t count;
  uint8_t vc_mask = 0xf;  // VCs the stream uses
  uint8_t vc_of(uint32_t i) const {
    uint8_t vcs[wire::kNumVcs];
    int n = 0;
    for (uint8_t v = 0; v < wire::kNumVcs; ++v)
      if (vc_mask >> v & 1) vcs[n++] = v;
    return vcs[mix64(seed ^ (uint64_t{i} << 8) ^ 0x7c) % static_cast<uint64_t>(n)];
  }
  uint32_t size_of(uint32_t i) const { return 8 + static_cast<uint32_t>(mix64(seed * 31 + i) % (kMaxBody - 7)); }
  uint8_t byte(uint32_t i, uint32_t k) const { return static_cast<uint8_t>(mix64(seed ^ (uint64_t{i} << 24) ^ k)); }
  void fill(uint32_t i, uint8_t* d) const {
    const uint32_t len = size_of(i);
    for (uint32_t k = 8; k < len; ++k) d[k] = byte(i, k);
    const uint32_t sum = ref_crc32c(d + 8, len - 8);
    std::memcpy(d, &i, 4);
    std::memcpy(d + 4, &sum, 4);
  }
};

// Sends its stream from the node's event loop as fast as the link takes it,
// and checks the peer's stream as it arrives (release()ing every buffer).
class StreamClient final : public LinkClient, public Poller {
 public:
  StreamClient(PacketPool& pool, StreamSpec out, StreamSpec in) : pool_(pool), out_(out), in_(in) {}

  bool poll() override {
    bool busy = false;
    while (link && sent < out_.count) {
      const uint8_t vc = out_.vc_of(sent);
      if (!link->can_send(vc)) break;
      Packet* p = pool_.alloc();
      if (!p) break;
      out_.fill(sent, p->append(out_.size_of(sent)));
      if (!link->send(vc, p)) {
        p->free();
        ++send_refused;
        break;
      }
      ++sent;
      busy = true;
    }
    return busy;
  }
  void on_frame(uint16_t, wire::FrameType, Packet* p) override { p->free(); }
  void on_data(uint16_t, Packet* p) override {
    const auto vc = static_cast<uint8_t>(p->vc);
    check(p);
    p->free();
    link->release(vc);
  }
  void on_link_down(uint16_t, const Status& why) override { downs.push_back(why); }

  Link* link = nullptr;
  uint32_t sent = 0;
  uint32_t received = 0;  // in order and intact
  uint32_t errors = 0;    // anything else (first one described in `error`)
  uint32_t send_refused = 0;
  std::string error;
  std::vector<Status> downs;

 private:
  void check(const Packet* p) {
    const uint32_t i = received;
    std::string what;
    uint32_t id = ~0u;
    if (p->len >= 4) std::memcpy(&id, p->data(), 4);
    if (i >= in_.count) what = "more frames than were sent";
    else if (id != i) what = "frame " + std::to_string(id) + " where " + std::to_string(i) + " was due";
    else if (p->vc != in_.vc_of(i)) what = "frame " + std::to_string(i) + " on the wrong VC";
    else if (p->len != in_.size_of(i)) what = "frame " + std::to_string(i) + " has the wrong length";
    else {
      std::vector<uint8_t> want(p->len);
      in_.fill(i, want.data());
      if (std::memcmp(want.data(), p->data(), p->len) != 0) what = "frame " + std::to_string(i) + " corrupted";
    }
    if (what.empty()) {
      ++received;
    } else {
      if (errors++ == 0) error = what;
    }
  }
  PacketPool& pool_;
  StreamSpec out_;
  StreamSpec in_;
};

}  // namespace toroid::nettest
