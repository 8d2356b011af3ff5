// Fuzz target: the link layer's receive path (Link::validate and the reliable
// protocol behind it: ack, sack, credits, reorder, duplicates) over a port
// whose frames are the fuzzer's. The input is a sequence of operations:
//   raw frame      any bytes as a frame; with the seal bit the CRC over the
//                  link header and the body its length field names is made
//                  right, so the fuzzer gets past the CRC check
//   peer frame     a link header from fields (type, flags, vc, seq relative
//                  to the peer's, ack, sack, credits) and a body, sealed
//   send           the node sends a data frame (fills the window, so that
//                  acks and sacks from the fuzzer have something to act on)
//   release / time the client frees held buffers; virtual time passes
// Checked: only hellos come up unsequenced, data only on VCs that exist, no
// more data delivered than valid frames received, never more buffers held
// per VC than its credits, link-down reported once with an error, and no
// packet leaks.
#include <cstdint>
#include <vector>

#include "fuzz_node.h"

using namespace toroid;
using namespace toroid::fuzz;

namespace {

class Client final : public LinkClient {
 public:
  void on_frame(uint16_t, wire::FrameType type, Packet* p) override {
    if (type != wire::FrameType::kHello) violated("an unsequenced frame that is not a hello reached the client");
    p->free();
  }
  void on_data(uint16_t, Packet* p) override {
    if (p->vc >= wire::kNumVcs) violated("data delivered on a VC that does not exist");
    ++delivered;
    if (hold) {
      held.push_back(p);
      if (++held_per_vc[p->vc] > tuning::kVcCredits) violated("more buffers held on a VC than it has credits");
      return;
    }
    const auto vc = static_cast<uint8_t>(p->vc);
    p->free();
    link->release(vc);
  }
  void on_link_down(uint16_t, const Status& why) override {
    if (down) violated("link-down reported twice");
    if (why.is_ok()) violated("link-down with an ok status");
    down = true;
  }
  void release_all() {
    for (Packet* p : held) {
      const auto vc = static_cast<uint8_t>(p->vc);
      --held_per_vc[vc];
      p->free();
      link->release(vc);
    }
    held.clear();
  }
  ~Client() override {
    for (Packet* p : held) p->free();
  }

  Link* link = nullptr;
  bool hold = false;
  bool down = false;
  uint64_t delivered = 0;
  std::vector<Packet*> held;
  uint32_t held_per_vc[wire::kNumVcs] = {};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  VirtualClock clock;
  clock.set(1000);
  HeapPacketPool& pool = shared_pool();
  {
    EventLoop loop(clock);
    FuzzPort port(pool, "port0", in.ConsumeBool());
    Client client;
    uint8_t mac[6];
    wire::node_mac(mac, 1, 2, 3, 0);
    Link link(0, &port, mac, &client, loop, fuzz_link_config(), "node 1,2,3 port port0 (x+)");
    client.link = &link;
    uint32_t peer_seq = 0;
    uint32_t frames_in = 0;
    std::vector<uint8_t> body;
    while (in.remaining_bytes() > 0 && frames_in < 256) {
      const uint8_t op = in.ConsumeIntegral<uint8_t>();
      switch (op % 6) {
        case 0: {  // raw frame
          body = in.ConsumeBytes<uint8_t>(in.ConsumeIntegralInRange<uint16_t>(0, kMaxFrame));
          Packet* p = pool.alloc();
          if (!p) break;
          uint8_t* d = p->append(static_cast<uint32_t>(body.size()));
          if (!d) { p->free(); break; }
          if (!body.empty()) std::memcpy(d, body.data(), body.size());
          if ((op & 0x40) && p->len >= kFrameOverhead) {
            auto* lh = reinterpret_cast<wire::LinkHeader*>(d + sizeof(wire::EthHeader));
            const uint32_t avail = p->len - kFrameOverhead;
            const uint32_t n = lh->length.get() < avail ? lh->length.get() : avail;
            lh->crc.set(0);
            lh->crc.set(crc32c(lh, sizeof(wire::LinkHeader) + n));
          }
          port.push_rx(p);
          ++frames_in;
          break;
        }
        case 1:
        case 2: {  // a peer frame from fields, sealed
          wire::LinkHeader lh;
          std::memset(&lh, 0, sizeof lh);
          lh.version = (op & 0x80) ? in.ConsumeIntegral<uint8_t>() : wire::kWireVersion;
          lh.type = static_cast<uint8_t>(in.ConsumeIntegralInRange<uint8_t>(0, 4));
          lh.flags = in.ConsumeIntegral<uint8_t>();
          lh.vc = in.ConsumeIntegralInRange<uint8_t>(0, 5);
          // Mostly near the peer's sequence, sometimes anywhere.
          const auto rel = in.ConsumeIntegralInRange<int8_t>(-40, 40);
          const uint32_t seq = (op & 0x40) ? in.ConsumeIntegral<uint32_t>() : peer_seq + static_cast<uint32_t>(rel);
          if (rel == 0) ++peer_seq;
          lh.seq.set(seq);
          // Acks mostly within what the node sent (seqs start at 0), sometimes anything.
          const auto sent = static_cast<uint32_t>(link.counters().data_sent);
          lh.ack.set((op & 0x20) ? in.ConsumeIntegral<uint32_t>() : in.ConsumeIntegralInRange<uint32_t>(0, sent + 2));
          lh.sack.set(in.ConsumeIntegral<uint32_t>());
          for (int v = 0; v < wire::kNumVcs; ++v) lh.credits[v].set(in.ConsumeIntegral<uint16_t>());
          body = in.ConsumeBytes<uint8_t>(in.ConsumeIntegralInRange<uint16_t>(0, kMaxFrame - kFrameOverhead));
          lh.length.set(static_cast<uint16_t>(body.size()));
          if (Packet* p = make_frame(pool, lh, body.data(), static_cast<uint32_t>(body.size()), true)) port.push_rx(p);
          ++frames_in;
          break;
        }
        case 3: {  // the node sends
          const uint8_t vc = in.ConsumeIntegralInRange<uint8_t>(0, wire::kNumVcs - 1);
          Packet* p = pool.alloc();
          if (!p) break;
          const uint32_t n = in.ConsumeIntegralInRange<uint32_t>(0, 200);
          if (!p->append(n)) { p->free(); break; }
          if (!link.send(vc, p)) p->free();
          break;
        }
        case 4:
          client.hold = in.ConsumeBool();
          if (!client.hold) client.release_all();
          break;
        case 5:
          clock.set(clock.now_ns() + in.ConsumeIntegralInRange<uint64_t>(0, 3 * tuning::kLinkDownSimNs));
          break;
      }
      for (int r = 0; r < 4; ++r) {
        link.poll();
        loop.run_once();
      }
    }
    client.release_all();
    if (client.delivered > link.counters().rx_frames) violated("more data delivered than frames received");
  }
  if (pool.stats().in_use != 0) violated("packets leaked: pool in_use != 0 after teardown");
  return 0;
}
