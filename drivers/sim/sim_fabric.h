// The sim backend: point-to-point links with a latency + bandwidth model and
// a seeded fault plan, and a deterministic discrete-event scheduler that
// steps N nodes in virtual time.
//
// Determinism: events are ordered by (time, insertion sequence) and every
// random draw comes from a per-link-direction Rng derived from (seed, link
// id), so the same seed, wiring and node code give the same packet trace bit
// for bit; trace_hash() digests it.
//
// Scale: per node only its ports and a wake time; rx queues grow on demand;
// each event is one heap operation (O(log events)); only nodes that have a
// delivery or a due timer are stepped.
#pragma once
#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/rng.h"
#include "drivers/port.h"
#include "drivers/sim/fault_plan.h"

namespace toroid {

// A node as the scheduler sees it.
class SimEndpoint {
 public:
  virtual ~SimEndpoint() = default;
  // Run until idle at virtual time `now` (the fabric's clock is already set).
  // Return the next time this node must run (a timer deadline) or kNever.
  virtual uint64_t sim_step(uint64_t now) = 0;
};

struct LinkModel {
  uint64_t latency_ns = tuning::kSimLinkLatencyNs;
  double bytes_per_ns = tuning::kSimLinkBytesPerNs;  // 1.0 = 1 GB/s
  uint64_t tx_backlog_ns = tuning::kSimTxBacklogNs;  // tx_burst refuses beyond this
};

// What the medium did, summed over all links.
struct FabricStats {
  uint64_t frames_offered = 0;  // frames taken by tx_burst
  uint64_t frames_delivered = 0;
  uint64_t bytes_delivered = 0;
  uint64_t dropped = 0;         // fault: drop
  uint64_t corrupted = 0;       // fault: one bit flipped
  uint64_t duplicated = 0;      // fault: a second copy delivered
  uint64_t reordered = 0;       // fault: held back so later frames overtake
  uint64_t cut_dropped = 0;     // lost on a cut link
  uint64_t rx_overflow = 0;     // rx queue full at the receiver
  uint64_t no_buffer = 0;       // no packet buffer for a duplicate
  uint64_t oversize = 0;        // frame longer than the port's max_frame (dropped)
  uint64_t events = 0;          // scheduler events processed
  uint64_t steps = 0;           // node steps
};
extern const CounterField kFabricStatsFields[];
extern const int kFabricStatsFieldCount;

class SimFabric;
class SimPort;

// Told of every frame the medium corrupted when it enters the receiver's rx
// queue: the port, the frame's 1-based index among the frames that port has
// received (the order rx_burst hands them out), and the bit flipped. Packet
// captures use it to list the frames a dissector must flag. None by default.
class SimCorruptObserver {
 public:
  virtual ~SimCorruptObserver() = default;
  virtual void on_corrupt_delivered(const SimPort& to, uint64_t rx_index, uint32_t bit) = 0;
};

class SimPort final : public Port {
 public:
  uint16_t rx_burst(Packet** pkts, uint16_t n) override;
  uint16_t tx_burst(Packet** pkts, uint16_t n) override;
  const PortInfo& info() const override { return info_; }
  LinkState link_state() const override;
  PacketPool& tx_pool() override { return *pool_; }
  uint32_t node() const { return node_; }
  uint32_t id() const { return id_; }        // fabric-wide port id
  uint16_t local_index() const { return local_; }  // n-th port of its node; set in Packet::port on rx
  bool connected() const { return link_ >= 0; }
  uint32_t rx_queued() const { return rx_count_; }

 private:
  friend class SimFabric;
  SimPort(SimFabric* fabric, uint32_t node, uint32_t id, std::string name, PacketPool* pool);
  bool rx_push(Packet* p);  // false when the queue is at kSimRxQueueMax

  SimFabric* fabric_;
  uint32_t node_;
  uint32_t id_;
  uint16_t local_ = 0;
  int32_t link_ = -1;   // index into fabric links; -1 = unconnected
  int side_ = 0;        // which end of the link (0 or 1)
  PacketPool* pool_;
  PortInfo info_;
  // Growable ring of received packets (capacity doubles on demand).
  std::vector<Packet*> rx_;
  uint32_t rx_head_ = 0;
  uint32_t rx_count_ = 0;
};

class SimFabric {
 public:
  SimFabric(uint64_t seed, LinkModel model, FaultPlan plan);
  ~SimFabric();
  SimFabric(const SimFabric&) = delete;
  SimFabric& operator=(const SimFabric&) = delete;

  VirtualClock& clock() { return clock_; }
  uint64_t now() const { return clock_.now_ns(); }
  const LinkModel& model() const { return model_; }
  const FaultPlan& plan() const { return plan_; }

  // Nodes and ports. Node ids are dense, in registration order.
  uint32_t add_node(SimEndpoint* ep);
  SimPort* add_port(uint32_t node, std::string name, PacketPool* pool, uint32_t max_frame);
  // Cable two unconnected ports; returns the link id. Random streams derive
  // from (seed, link id, direction).
  int connect(SimPort* a, SimPort* b);
  // The link goes down at virtual time t (both directions) until `until_ns`
  // (kNever: for good); frames in flight meanwhile are lost and link_state()
  // reports kDown.
  void cut_link(int link, uint64_t at_ns, uint64_t until_ns = kNever);

  // Ask for node to be stepped at time t (e.g. its first boot step).
  void wake(uint32_t node, uint64_t at_ns);
  // Room for n pending events now, so the event queue does not grow later.
  void reserve_events(size_t n);

  // Run events until none is left, virtual time passes until_ns, or stop()
  // is called. Returns the number of events processed.
  uint64_t run(uint64_t until_ns = kNever);
  void stop() { stop_ = true; }
  // Nothing at all is scheduled (with keepalives on, never while a node runs).
  bool idle() const { return events_.empty(); }
  // No frame on any wire and none waiting in an rx ring: what a test waits
  // for before it counts buffers (idle nodes still wake for their timers).
  bool quiet() const;

  // Not owned; must outlive the fabric's run() calls. nullptr: none.
  void set_corrupt_observer(SimCorruptObserver* o) { corrupt_observer_ = o; }

  uint64_t trace_hash() const { return trace_hash_; }
  const FabricStats& stats() const { return stats_; }

 private:
  friend class SimPort;
  struct Link;
  // kDeliverCorrupt: a frame the medium flipped a bit in (the bit's index
  // rides in Packet::user while the fabric owns the frame alone).
  enum class EvKind : uint8_t { kDeliver, kDeliverCorrupt, kStep };
  struct Event {
    uint64_t time;
    uint64_t seq;
    Packet* pkt;       // kDeliver
    uint32_t target;   // kDeliver: port id; kStep: node id
    EvKind kind;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  uint16_t transmit(SimPort* from, Packet** pkts, uint16_t n);
  void deliver(uint64_t now, SimPort* to, Packet* p, bool corrupt);
  void step(uint64_t now, uint32_t node, uint64_t seq);
  void push(uint64_t t, EvKind kind, uint32_t target, Packet* p);
  void trace(uint64_t a, uint64_t b, uint64_t c);

  VirtualClock clock_;
  uint64_t seed_;
  LinkModel model_;
  FaultPlan plan_;
  std::vector<SimEndpoint*> nodes_;
  std::vector<uint64_t> wake_at_;  // per node: earliest pending kStep, kNever if none
  std::vector<uint64_t> wake_seq_;  // per node: seq of that kStep (older ones are stale)
  std::vector<uint16_t> port_count_;  // per node: ports added so far (next local index)
  std::vector<std::unique_ptr<SimPort>> ports_;
  std::vector<Link> links_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  uint64_t in_flight_ = 0;  // deliveries scheduled
  uint64_t trace_hash_ = 0xcbf29ce484222325ull;
  FabricStats stats_;
  SimCorruptObserver* corrupt_observer_ = nullptr;
  bool stop_ = false;
};

}  // namespace toroid
