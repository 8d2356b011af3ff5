// The sim backend: point-to-point links with a latency + bandwidth model and
// a seeded fault plan, and a deterministic discrete-event scheduler that
// steps N nodes in virtual time, on one thread or several.
//
// Determinism: every node sees the same events in the same order whatever
// the thread count. A node's pending frames wait per receiving port in
// (arrival, transmit order); at its next instant t the node takes every frame
// that arrived by t, then steps once. Nodes touch each other only through
// frames, which arrive at least one link latency after they were sent, so
// nodes stepped at one instant cannot affect each other, and their order does
// not matter. Random draws come from per-link-direction streams, and the
// trace hash folds per-port streams in port order.
//
// Threads (regions): nodes are split into regions, each with its own clock,
// node heap, frame arena and counters, run by one thread at a time (several
// regions per thread; the threads share out each window's regions). The
// conservative scheduler advances all regions in windows of one lookahead
// (the smallest link latency): every event of a window is caused by events
// before it. Frames to another region travel through per-window mailboxes
// and are merged when that region next runs.
//
// Memory: the medium copies every frame it takes (the sender's packet is
// released at once) into its own in-flight buffer, and hands the receiver a
// packet from the receiving port's pool at arrival. So no packet is ever
// touched by two regions, and each pool is used by its own node only.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
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
  // Run until idle at virtual time `now` (its region's clock is already set).
  // Return the next time this node must run (a timer deadline) or kNever.
  virtual uint64_t sim_step(uint64_t now) = 0;
};

// Frames of up to kSimChannels networks may share a cable, each with its own
// transmitter per direction, latency and bandwidth (e.g. the torus, the
// collective network and the barrier network of Blue Gene/L).
constexpr int kSimChannels = 3;

// A frame's arrival at the next node: start + ser(min(charged, head_bytes))
// + latency, where start is when its channel's transmitter is free; the
// transmitter stays busy for ser(charged). head_bytes = kWholeFrame is
// store-and-forward (the whole frame, then the latency); a small value
// models virtual cut-through (the next router acts on the head while the
// tail still streams in); 0 makes the hop cost its latency alone.
constexpr uint32_t kWholeFrame = ~uint32_t{0};

struct LinkChannel {
  uint64_t latency_ns = tuning::kSimLinkLatencyNs;
  double bytes_per_ns = tuning::kSimLinkBytesPerNs;  // 1.0 = 1 GB/s
  uint32_t head_bytes = kWholeFrame;
};

struct LinkModel {
  // Channel 0 (every frame, unless `classify` says otherwise).
  uint64_t latency_ns = tuning::kSimLinkLatencyNs;
  double bytes_per_ns = tuning::kSimLinkBytesPerNs;
  uint32_t head_bytes = kWholeFrame;
  uint64_t tx_backlog_ns = tuning::kSimTxBacklogNs;  // tx_burst refuses beyond this
  // Optional: which channel carries a frame, and how many bytes it occupies
  // that channel's wire for (`charged`, e.g. the frame as that network would
  // packetize it). nullptr: channel 0, the frame's own length.
  using Classifier = uint8_t (*)(const uint8_t* frame, uint32_t len, uint32_t* charged);
  Classifier classify = nullptr;
  LinkChannel extra[kSimChannels - 1];  // channels 1 and 2 (used only through classify)
  const char* name = "default";

  uint64_t channel_latency(int c) const { return c == 0 ? latency_ns : extra[c - 1].latency_ns; }
  double channel_bw(int c) const { return c == 0 ? bytes_per_ns : extra[c - 1].bytes_per_ns; }
  uint32_t channel_head(int c) const { return c == 0 ? head_bytes : extra[c - 1].head_bytes; }
  // The smallest latency of a channel in use: the parallel scheduler's lookahead.
  uint64_t min_latency() const;
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
  uint64_t no_buffer = 0;       // no packet buffer at the receiver for an arriving frame
  uint64_t oversize = 0;        // frame longer than the port's max_frame (dropped)
  uint64_t events = 0;          // frames arriving (delivered or lost on arrival) + node steps
  uint64_t steps = 0;           // node steps
};
extern const CounterField kFabricStatsFields[];
extern const int kFabricStatsFieldCount;

class SimFabric;
class SimPort;
struct SimRegion;

// Told of every frame the medium corrupted when it enters the receiver's rx
// queue: the port, the frame's 1-based index among the frames that port has
// received (the order rx_burst hands them out), and the bit flipped. Packet
// captures use it to list the frames a dissector must flag. None by default;
// called on the thread running the receiving region.
class SimCorruptObserver {
 public:
  virtual ~SimCorruptObserver() = default;
  virtual void on_corrupt_delivered(const SimPort& to, uint64_t rx_index, uint32_t bit) = 0;
};
struct SimFrame;

// Frames on their way to one port, in (arrival, transmit order). Frames of
// one direction usually arrive in the order they were sent, so an insert is
// almost always an append; jitter, reorder holds and duplicates insert a
// little further up.
struct SimWire {
  uint64_t arrival;
  uint64_t order;  // per-direction transmit sequence
  SimFrame* frame;
  bool before(const SimWire& o) const { return arrival != o.arrival ? arrival < o.arrival : order < o.order; }
};

struct SimWireQueue {
  std::vector<SimWire> v;
  uint32_t head = 0;
  bool empty() const { return head == v.size(); }
  const SimWire& front() const { return v[head]; }
  void pop() {
    if (++head == v.size()) {
      v.clear();
      head = 0;
    } else if (head >= 64 && head * 2 >= v.size()) {
      v.erase(v.begin(), v.begin() + head);
      head = 0;
    }
  }
  void insert(const SimWire& w) {
    v.push_back(w);
    size_t i = v.size() - 1;
    while (i > head && w.before(v[i - 1])) {
      v[i] = v[i - 1];
      --i;
    }
    v[i] = w;
  }
};

class SimPort final : public Port {
 public:
  ~SimPort() override;
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
  void reserve_rx(uint32_t n);  // the rx ring holds n packets without growing

  SimFabric* fabric_;
  SimRegion* region_ = nullptr;  // its node's region: clock, arena, counters
  uint32_t node_;
  uint32_t id_;
  SimPort* next_on_node_ = nullptr;  // the node's next port
  uint16_t local_ = 0;
  int32_t link_ = -1;   // index into fabric links; -1 = unconnected
  int side_ = 0;        // which end of the link (0 or 1)
  PacketPool* pool_;
  PortInfo info_;
  // Growable ring of received packets (capacity doubles on demand).
  std::vector<Packet*> rx_;
  uint32_t rx_head_ = 0;
  uint32_t rx_count_ = 0;
  SimWireQueue wire_;  // frames on their way to this port
  // Trace streams: what happened to frames this port sent, and to frames
  // arriving at it (folded into trace_hash() in port order).
  uint64_t tx_trace_ = 0, rx_trace_ = 0;
  bool tx_traced_ = false, rx_traced_ = false;
};

class SimFabric {
 public:
  // `regions`: how many shares the nodes are split into; `threads`: how many
  // threads run them (1: the caller's only; 0: one per region). Several
  // regions, whatever the thread count, run in windows of one lookahead
  // with their cross-region frames sent by mail; the run is the same for
  // every split and thread count.
  SimFabric(uint64_t seed, LinkModel model, FaultPlan plan, uint32_t regions = 1, uint32_t threads = 0);
  ~SimFabric();
  SimFabric(const SimFabric&) = delete;
  SimFabric& operator=(const SimFabric&) = delete;

  // The clock the nodes of `region` read (the scheduler sets it).
  VirtualClock& clock(uint32_t region = 0);
  // The latest virtual time any region reached.
  uint64_t now() const;
  const LinkModel& model() const { return model_; }
  const FaultPlan& plan() const { return plan_; }
  uint32_t regions() const { return static_cast<uint32_t>(regions_.size()); }
  uint32_t threads() const { return threads_; }

  // Nodes and ports. Node ids are dense, in registration order; a node runs
  // on its region's thread and reads that region's clock.
  uint32_t add_node(SimEndpoint* ep, uint32_t region = 0);
  // integrity: the port declares PortInfo::medium_integrity (its links send
  // data and acks without a CRC); only where the fault plan corrupts nothing.
  SimPort* add_port(uint32_t node, std::string name, PacketPool* pool, uint32_t max_frame, bool integrity = false);
  // Cable two unconnected ports; returns the link id. Random streams derive
  // from (seed, link id, direction).
  int connect(SimPort* a, SimPort* b);
  // The link goes down at virtual time t (both directions) until `until_ns`
  // (kNever: for good); frames in flight meanwhile are lost and link_state()
  // reports kDown.
  void cut_link(int link, uint64_t at_ns, uint64_t until_ns = kNever);

  // Ask for node to be stepped at time t (e.g. its first boot step).
  void wake(uint32_t node, uint64_t at_ns);
  // Room for every node in its region's scheduler heap and for n frames in
  // flight, so neither grows during a run (the allocation test's steady
  // state). Wire queues and rx rings keep what they grew to.
  void reserve_events(size_t n);

  // Run events until none is left, virtual time passes until_ns, or stop()
  // is called. With wall_budget_s > 0 it may also return earlier, after
  // about that many wall seconds, between two instants (or windows), so a
  // caller can report progress; a later run() goes on exactly where it left
  // off. Returns the number of events processed.
  uint64_t run(uint64_t until_ns = kNever, double wall_budget_s = 0);
  void stop() { stop_.store(true, std::memory_order_relaxed); }
  // Nothing at all is scheduled (with keepalives on, never while a node runs).
  bool idle() const;
  // No frame on any wire and none waiting in an rx ring (between run()
  // calls): what a test waits for before it counts buffers (idle nodes still
  // wake for their timers).
  bool quiet() const;
  // The earliest instant a node has work (kNever when idle).
  uint64_t next_event() const;
  // Windows the parallel scheduler has run (0 on one region).
  uint64_t windows() const { return windows_; }

  // Not owned; must outlive the fabric's run() calls. nullptr: none. Only
  // with one region (its calls would otherwise come from several threads).
  void set_corrupt_observer(SimCorruptObserver* o) { corrupt_observer_ = o; }

  uint64_t trace_hash() const;
  const FabricStats& stats() const;

 private:
  friend class SimPort;
  struct Link;
  struct NodeRec;
  struct Workers;
  uint16_t transmit(SimPort* from, Packet** pkts, uint16_t n);
  void post(SimRegion& from, SimPort* to, uint64_t arrival, uint64_t order, void* frame);
  void arrive(SimRegion& r, uint64_t now, SimPort* to, void* frame);
  // Scheduler (sim_sched.cc).
  void touch(SimRegion& r, uint32_t node, uint64_t t);
  void settle(SimRegion& r, uint32_t node);
  uint64_t node_key(const NodeRec& n) const;
  void process_node(SimRegion& r, uint32_t node);
  uint64_t process(SimRegion& r, uint64_t end_excl, double wall_budget_s, bool* out_of_time);
  void drain_mail(SimRegion& r, uint32_t parity);
  uint64_t thread_loop(uint32_t thread);
  void run_region(SimRegion& r, uint64_t window, uint64_t end_excl);
  uint64_t run_parallel(uint64_t until_ns, double wall_budget_s);

  uint64_t seed_;
  LinkModel model_;
  FaultPlan plan_;
  std::vector<std::unique_ptr<SimRegion>> regions_;
  uint32_t threads_ = 1;
  std::vector<NodeRec> nodes_;
  std::vector<std::unique_ptr<SimPort>> ports_;
  std::vector<Link> links_;
  std::atomic<bool> stop_{false};
  bool parallel_ = false;  // inside run_parallel: cross-region frames go by mail
  uint64_t windows_ = 0;
  // run_parallel's shared state.
  std::unique_ptr<Workers> workers_;
  uint64_t until_ = 0;
  double budget_ = 0;
  mutable FabricStats stats_;
  SimCorruptObserver* corrupt_observer_ = nullptr;
};

}  // namespace toroid
