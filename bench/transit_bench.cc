// Transit forwarding on the sim port: a trained 3x1x1 partition in the sim
// rig; node A (0,0,0) sends to C (2,0,0) with the x+ hint, so every packet
// crosses B (1,0,0), where the router moves the received buffer onto the
// next link without copying it. Each iteration injects a batch at A and runs
// the simulation until C has counted it.
//
// The figure is a whole-simulation cost on one core: A's injection, B's
// forwarding, C's delivery, the three nodes' Links (CRC, acks, credits) and
// the medium's events all run on this one thread. B alone therefore
// forwards at least this fast; the counters show that every packet was
// forwarded once by B (B_fwd/pkt = 1) and that the router made no copy
// (B_copies/pkt = 0). B_allocs/pkt is about 1 because the sim port hands
// the receiver the sender's own buffer, which Link::rx_one copies; a real
// port delivers a private buffer.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "firmware/sim_rig.h"
#include "netstack/netstack.h"

namespace toroid::bench {
namespace {

constexpr uint32_t kBatch = 64;          // packets injected per iteration (inject queue holds 256)
constexpr uint64_t kSliceNs = 10 * kUs;  // virtual time per fabric.run() call
constexpr uint32_t kA = 0, kB = 1, kC = 2;

struct CountingSink final : PacketHandler {
  void on_packet(uint16_t, Packet* p) override {
    ++count;
    p->free();
  }
  uint64_t count = 0;
};

void BM_TransitForward(benchmark::State& state) {
  SimOptions opt;
  opt.dims.n = {3, 1, 1};
  opt.job = "train";
  opt.log_boot = false;
  opt.progress = false;
  opt.frame_bytes = 1024;  // the frames the recorded figures (docs/bench.md) were taken with
  SimRig rig(opt);
  if (Status st = rig.build(); !st) {
    state.SkipWithError(("sim rig build: " + st.to_string()).c_str());
    return;
  }
  const SimSummary s = rig.run();
  if (s.passed != s.nodes) {
    state.SkipWithError(("partition did not train: " + s.first_error).c_str());
    return;
  }
  NetStack& a = rig.node(kA).net();
  NetStack& b = rig.node(kB).net();
  CountingSink sink;
  rig.node(kC).net().set_handler(wire::PacketType::kControl, &sink);
  SimFabric& fab = rig.fabric();

  // The port's 1024 B frame limit (set above) caps the body (header + payload).
  const uint32_t body_len = std::clamp<uint32_t>(static_cast<uint32_t>(state.range(0)),
                                                 sizeof(wire::TorusHeader), a.max_body());
  std::vector<uint8_t> body = random_bytes(body_len, 4);
  wire::TorusHeader th{};
  th.dst[0] = 2;
  th.type = static_cast<uint8_t>(wire::PacketType::kControl);
  std::memcpy(body.data(), &th, sizeof th);
  SendOptions so;
  so.hints = 1u << static_cast<int>(Dir::kXp);  // the long way round a 3-ring: through B

  const NetCounters b0 = b.counters();
  const uint64_t b_allocs0 = b.pool().stats().allocs;
  uint64_t t = fab.now();
  uint32_t tag = 0;
  for (auto _ : state) {
    const uint64_t target = sink.count + kBatch;
    uint32_t sent = 0;
    uint32_t idle_rounds = 0;
    while (sink.count < target) {
      for (; sent < kBatch; ++sent) {
        Packet* p = a.alloc();
        if (!p) break;
        uint8_t* d = p->append(body_len);
        std::memcpy(d, body.data(), body_len);
        reinterpret_cast<wire::TorusHeader*>(d)->tag.set(tag++);
        if (!a.send(p, so)) {
          p->free();
          break;
        }
      }
      fab.wake(kA, fab.now());
      t = std::max(t, fab.now()) + kSliceNs;
      idle_rounds = fab.run(t) == 0 ? idle_rounds + 1 : 0;
      if (idle_rounds > 1000) break;
    }
    if (sink.count < target) {
      state.SkipWithError("packets did not reach C (stuck simulation)");
      break;
    }
  }

  const auto packets = static_cast<uint64_t>(state.iterations()) * kBatch;
  const double n = packets ? static_cast<double>(packets) : 1.0;
  const NetCounters& b1 = b.counters();
  state.SetItemsProcessed(static_cast<int64_t>(packets));
  state.SetBytesProcessed(static_cast<int64_t>(packets * body_len));
  state.counters["body_B"] = body_len;
  state.counters["B_fwd/pkt"] = static_cast<double>(b1.forwarded - b0.forwarded) / n;
  state.counters["B_copies/pkt"] = static_cast<double>(b1.multicast_copies - b0.multicast_copies) / n;
  state.counters["B_delivered"] = static_cast<double>(b1.delivered - b0.delivered);
  // Buffers B allocated: on the sim port the receiving Link copies each data
  // frame once (the medium hands over the sender's still-referenced buffer),
  // plus bare acks. The router itself allocates nothing for a transit packet.
  state.counters["B_allocs/pkt"] = static_cast<double>(b.pool().stats().allocs - b_allocs0) / n;
  state.SetLabel("whole sim (A+B+C+medium) on one core; B alone is at least this fast");
}
BENCHMARK(BM_TransitForward)->ArgName("body")->Arg(64)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace toroid::bench
