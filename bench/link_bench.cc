// Link layer tx + rx cost per data frame: two Links cabled through a
// SimFabric with no faults, the sender streaming one frame per iteration on
// VC 0 and the receiving client freeing each frame and releasing its credit
// at once. One iteration = alloc + body write + Link::send + the sender's
// poll (framing, CRC, tx_burst) + the medium (a delivery event, a step of
// the receiver, the trace digest) + the receiver's poll (CRC check, reorder
// window, on_data) + free + release; acks and credits come back coalesced,
// as the ack timer (virtual time) decides. The figure therefore includes
// the sim medium's event cost: a real port's tx_burst/rx_burst replace that.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "base/event_loop.h"
#include "bench/bench_util.h"
#include "drivers/sim/sim_fabric.h"
#include "netstack/link.h"
#include "netstack/wire/eth.h"

namespace toroid::bench {
namespace {

constexpr uint32_t kBufSize = 2048;   // headroom + Ethernet + link header + 1024 B body fit
constexpr uint32_t kMaxFrame = 2048;  // the sim port takes frames this long
constexpr uint32_t kPoolPackets = 4096;

// The sender and receiver ends report link-down; data only arrives at the receiver.
class SinkClient final : public LinkClient {
 public:
  void on_frame(uint16_t, wire::FrameType, Packet* p) override { p->free(); }
  void on_data(uint16_t, Packet* p) override {
    const auto vc = static_cast<uint8_t>(p->vc);
    ++received;
    p->free();
    link->release(vc);
  }
  void on_link_down(uint16_t, const Status&) override { down = true; }

  Link* link = nullptr;
  uint64_t received = 0;
  bool down = false;
};

// A sim node: a pool, an event loop on the fabric's clock, one Link polled
// (and its timers run) whenever the fabric steps the node.
struct BenchNode final : SimEndpoint {
  explicit BenchNode(const Clock& clock) : pool(kBufSize, kPoolPackets), loop(clock) {}
  uint64_t sim_step(uint64_t) override {
    for (uint32_t round = 0; round < tuning::kSimMaxStepRounds; ++round) {
      bool busy = link->poll();
      busy |= loop.run_once();
      if (!busy) break;
    }
    return loop.next_deadline();
  }
  HeapPacketPool pool;
  EventLoop loop;
  Link* link = nullptr;
  uint32_t id = 0;
};

LinkConfig sim_link_config() {
  LinkConfig c;
  c.rto_ns = tuning::kLinkRtoSimNs;
  c.rto_max_ns = tuning::kLinkRtoMaxSimNs;
  c.ack_delay_ns = tuning::kLinkAckDelaySimNs;
  c.down_after_ns = tuning::kLinkDownSimNs;
  return c;
}

// Node a (sender) and node b (receiver), one cable. Teardown order: links
// (free their windows and queues), fabric (frees frames in flight), then
// the nodes with their pools and loops.
class LinkPair {
 public:
  LinkPair() : fabric_(std::make_unique<SimFabric>(1, LinkModel{}, FaultPlan{})) {
    a_ = std::make_unique<BenchNode>(fabric_->clock());
    b_ = std::make_unique<BenchNode>(fabric_->clock());
    a_->id = fabric_->add_node(a_.get());
    b_->id = fabric_->add_node(b_.get());
    SimPort* pa = fabric_->add_port(a_->id, "port0", &a_->pool, kMaxFrame);
    SimPort* pb = fabric_->add_port(b_->id, "port0", &b_->pool, kMaxFrame);
    fabric_->connect(pa, pb);
    uint8_t mac[6];
    wire::node_mac(mac, 0, 0, 0, 0);
    la_ = std::make_unique<Link>(0, pa, mac, &ca_, a_->loop, sim_link_config(), "bench node a port0");
    wire::node_mac(mac, 1, 0, 0, 1);
    lb_ = std::make_unique<Link>(0, pb, mac, &cb_, b_->loop, sim_link_config(), "bench node b port0");
    a_->link = ca_.link = la_.get();
    b_->link = cb_.link = lb_.get();
  }
  ~LinkPair() {
    la_.reset();
    lb_.reset();
    fabric_.reset();
  }
  LinkPair(const LinkPair&) = delete;
  LinkPair& operator=(const LinkPair&) = delete;

  SimFabric& fabric() { return *fabric_; }
  BenchNode& a() { return *a_; }
  Link& la() { return *la_; }
  Link& lb() { return *lb_; }
  SinkClient& sink() { return cb_; }
  bool down() const { return ca_.down || cb_.down; }

 private:
  std::unique_ptr<SimFabric> fabric_;
  std::unique_ptr<BenchNode> a_, b_;
  SinkClient ca_, cb_;
  std::unique_ptr<Link> la_, lb_;
};

void BM_LinkTxRx(benchmark::State& state) {
  const auto body_len = static_cast<uint32_t>(state.range(0));
  const std::vector<uint8_t> body = random_bytes(body_len, 3);
  LinkPair rig;
  SimFabric& fab = rig.fabric();
  Link& la = rig.la();
  const uint32_t frame_len =
      std::max<uint32_t>(kMinEthFrame, sizeof(wire::EthHeader) + sizeof(wire::LinkHeader) + body_len);
  // Virtual time from a send to its arrival: serialisation + latency. The
  // sender offers one frame per slot, i.e. streams at the medium's line rate.
  const uint64_t slot =
      static_cast<uint64_t>(std::ceil(frame_len / fab.model().bytes_per_ns)) + fab.model().latency_ns;
  uint64_t t = fab.now();
  uint64_t waits = 0;

  for (auto _ : state) {
    Packet* p = rig.a().pool.alloc();
    std::memcpy(p->append(body_len), body.data(), body_len);
    while (!la.can_send(0)) {  // out of credits or window: let acks come back
      ++waits;
      t += slot;
      fab.run(t);
      if (rig.down()) break;
    }
    if (!la.send(0, p)) {
      p->free();
      state.SkipWithError("Link::send refused with can_send() true, or the link went down");
      break;
    }
    fab.wake(rig.a().id, fab.now());
    t = std::max(t, fab.now()) + slot;
    fab.run(t);  // sender's step (frame out), delivery, receiver's step (on_data, release)
  }

  const auto packets = static_cast<uint64_t>(state.iterations());
  fab.run(t + 10 * kMs);  // let the last acks land (outside the timed loop)
  if (rig.sink().received != packets && !rig.down())
    state.SkipWithError("receiver did not get every frame");
  state.SetItemsProcessed(static_cast<int64_t>(packets));
  state.SetBytesProcessed(static_cast<int64_t>(packets * body_len));
  const double n = packets ? static_cast<double>(packets) : 1.0;
  state.counters["bare_acks/pkt"] = static_cast<double>(rig.lb().counters().acks_sent) / n;
  state.counters["events/pkt"] = static_cast<double>(fab.stats().events) / n;
  state.counters["credit_waits/pkt"] = static_cast<double>(waits) / n;
  state.counters["retransmits"] = static_cast<double>(la.counters().retransmits);
  state.SetLabel("one core; includes the sim medium's event cost");
}
BENCHMARK(BM_LinkTxRx)->ArgName("body")->Arg(64)->Arg(1024);

}  // namespace
}  // namespace toroid::bench
