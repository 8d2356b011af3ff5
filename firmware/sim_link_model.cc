// Link models for the sim rig.
//
// bgl: every cable carries three networks, as Blue Gene/L's nodes had three
// (the torus, the collective network and the global barrier network). Toroid
// emulates the last two over the torus cables, one hop at a time along its
// world tree, so the fabric tells the frames apart by their packet type and
// gives each network its own transmitter, bandwidth and per-hop latency:
//
//   channel 0, torus     1.4 Gb/s; hardware latency ~100 ns per hop; virtual
//                        cut-through: the next node may act once the first
//                        32-byte chunk is in; charged as BG/L packetizes it:
//                        the bytes after Toroid's emulation framing (Ethernet
//                        and link header, 46 B, which BG/L's hardware links
//                        do not carry) rounded up to 32-byte chunks
//   channel 1, tree      2.8 Gb/s; 256-byte packet payloads; per hop the
//                        published one-way latency over 65,536 nodes divided
//                        by the tree's 64 hops there (39 ns)
//   channel 2, barrier   no bytes (a signal); per hop the published global
//                        barrier latency over 65,536 nodes divided by its
//                        2 x 64 hops (12 ns)
//
// So on 64x32x32 a barrier and a one-pass tree reduction take what BG/L
// publishes by construction; the model's use is every other shape and
// operation (how they scale with the tree's depth, the two-pass float sum,
// the torus operations), all from the same few figures.
#include "firmware/sim_link_model.h"

#include <algorithm>
#include <cmath>

#include "netstack/tree/tree_wire.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"

namespace toroid {

namespace {

constexpr uint32_t kFraming = sizeof(wire::EthHeader) + sizeof(wire::LinkHeader);
constexpr uint32_t round_up(uint32_t v, uint32_t to) { return (v + to - 1) / to * to; }

}  // namespace

uint8_t bgl_classify(const uint8_t* frame, uint32_t len, uint32_t* charged) {
  const uint32_t body = len > kFraming ? len - kFraming : 0;
  const bool data = body >= sizeof(wire::TorusHeader) &&
                    frame[sizeof(wire::EthHeader) + offsetof(wire::LinkHeader, type)] ==
                        static_cast<uint8_t>(wire::FrameType::kData);
  if (data) {
    const uint8_t type = frame[kFraming + offsetof(wire::TorusHeader, type)];
    if (type == static_cast<uint8_t>(wire::PacketType::kTree)) {
      const uint32_t headers = sizeof(wire::TorusHeader) + sizeof(wire::TreeHeader);
      const uint32_t operands = body > headers ? body - headers : 0;
      *charged = round_up(std::max<uint32_t>(operands, 1), tuning::kBglTreePacketBytes);
      return 1;
    }
    if (type == static_cast<uint8_t>(wire::PacketType::kBarrier)) {
      *charged = 0;
      return 2;
    }
  }
  *charged = std::max(tuning::kBglTorusChunkBytes, round_up(body, tuning::kBglTorusChunkBytes));
  return 0;
}

Result<LinkModel> sim_link_model(const std::string& name) {
  LinkModel m;
  if (name == "default") return m;
  if (name != "bgl") return error(Code::kInvalid, "--link-model '%s': known models are %s", name.c_str(), sim_link_models());
  m.name = "bgl";
  m.latency_ns = tuning::kBglTorusHopNs;
  m.bytes_per_ns = tuning::kBglTorusBytesPerNs;
  m.head_bytes = tuning::kBglTorusChunkBytes;
  m.classify = bgl_classify;
  LinkChannel& tree = m.extra[0];
  tree.bytes_per_ns = tuning::kBglTreeBytesPerNs;
  tree.latency_ns = tuning::kBglTreeOneWayNs / tuning::kBglTreeDepth64K;
  tree.head_bytes = 0;
  LinkChannel& barrier = m.extra[1];
  barrier.bytes_per_ns = tuning::kBglTreeBytesPerNs;  // carries no bytes
  barrier.latency_ns = (tuning::kBglBarrierNs + tuning::kBglTreeDepth64K) / (2 * tuning::kBglTreeDepth64K);
  barrier.head_bytes = 0;
  return m;
}

const char* sim_link_models() { return "default, bgl"; }

uint64_t sim_link_rto_ns(const LinkModel& m, uint32_t frame_bytes, uint64_t ack_delay_ns) {
  uint64_t hop = 0;  // one frame's serialization and latency, the slowest channel in use
  for (int c = 0; c < (m.classify ? kSimChannels : 1); ++c) {
    const auto ser = static_cast<uint64_t>(std::ceil(frame_bytes / m.channel_bw(c)));
    hop = std::max(hop, ser + m.channel_latency(c));
  }
  const uint64_t rto = 2 * hop + ack_delay_ns;
  return std::clamp<uint64_t>(rto, tuning::kLinkRtoSimNs, tuning::kLinkRtoMaxSimNs);
}

}  // namespace toroid
