// The sim rig's link models, by name (--link-model): "default" (one channel:
// 100 ns per hop, 2 GB/s per direction, store-and-forward; docs/sim.md) and
// "bgl" (Blue Gene/L: the torus, the collective network and the global
// barrier network as three channels of each cable, with BG/L's published
// bandwidths, latencies and packet sizes; docs/sim.md has the sources).
#pragma once
#include <string>

#include "base/status.h"
#include "drivers/sim/sim_fabric.h"

namespace toroid {

Result<LinkModel> sim_link_model(const std::string& name);
const char* sim_link_models();  // "default, bgl"

// The bgl model's channel of a frame and the bytes it occupies that wire for
// (exposed for tests): tree packets -> 1, barrier messages -> 2, the rest
// (torus data, acks, hellos) -> 0.
uint8_t bgl_classify(const uint8_t* frame, uint32_t len, uint32_t* charged);

// The sim links' first retransmission timeout: a frame of up to frame_bytes
// and an ack of that size (it may ride the peer's next frame) each way over
// the slowest channel in use, plus the ack delay; at least kLinkRtoSimNs,
// at most kLinkRtoMaxSimNs. With jumbo frames a fixed 5 us is shorter than
// two frames' serialization and fires on loss-free links.
uint64_t sim_link_rto_ns(const LinkModel& m, uint32_t frame_bytes, uint64_t ack_delay_ns);

}  // namespace toroid
