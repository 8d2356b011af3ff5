// CombineEngine: the emulated combine (tree) network of seed 004 B. For a
// tree class (a ClassRoute of kind kTree: one up link, some down links per
// node), an operation streams `count` operands as packets numbered 0, 1, ...
// and tagged with the operation's id. A node combines, for each index, its own
// contribution with exactly one packet from each child (ALU op in netstack/
// tree/alu.h) and sends the result up; the root turns it around and it is
// broadcast down, every node depositing its copy into `out`.
//
// Pipelined and bounded: a node sends index s up only while s is less
// than (last index received from above) + kTreeWindow, so a parent holds
// at most kTreeWindow packets per child and class of one operation; packets
// travel one hop at a time over the reliable links (exactly once, in order
// per link), which is what makes the result correct under drops, corruption
// and reordering below. Several classes may run operations at the same time
// (one per class).
//
// A failed operation (a mismatch, a timeout, a cancel) ends on this node
// only; its packets still on their way are dropped as stale wherever they
// arrive, because every node gives the same operation the same id (the
// caller's, e.g. the communicator's operation number). The next operation
// runs whatever the last one left behind.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "netstack/classroute.h"
#include "netstack/netstack.h"
#include "netstack/tree/alu.h"
#include "netstack/tree/tree_wire.h"

namespace toroid {

struct CombineCounters {
  uint64_t up_packets = 0;        // sent towards the root
  uint64_t down_packets = 0;      // sent towards the leaves
  uint64_t combined = 0;          // child packets folded into a partial result
  uint64_t max_children_per_step = 0;  // most child packets combined for one sequence
  uint64_t held_high_water = 0;   // most packets held at once, all classes
  uint64_t rx_bad = 0;            // inconsistent tree packet (dropped and counted)
  uint64_t rx_stale = 0;          // packet of an operation over here (after a failure; dropped)
  uint64_t tx_blocked = 0;        // a send waited for link credit
};
extern const CounterField kCombineCountersFields[];
extern const int kCombineCountersFieldCount;

class CombineEngine final : public PacketHandler, public LinkDownListener, public Poller {
 public:
  CombineEngine(NetStack& net, EventLoop& loop, uint64_t timeout_ns);
  ~CombineEngine() override;

  // Install a tree class (also into the node's class table). The route must
  // be of kind kTree and pass verify_route.
  Status add_tree(uint8_t cls, const ClassRoute& tree);
  // The same from this node's own entry alone (class_entry / tree_entry):
  // O(1), for a booting node; the partition's tree is verified once,
  // elsewhere (the rig, or a tool). The entry must accept exactly one
  // direction (its up link) or, at the root, only local injection.
  Status add_tree(uint8_t cls, const ClassEntry& mine);
  bool has_tree(uint8_t cls) const;
  // My place in a tree: up direction (none at the root) and down directions.
  bool is_root(uint8_t cls) const;

  // Non-blocking: combine count operands of width bytes from `in` over the
  // whole partition; the result lands in `out` (may equal `in`) on every
  // node. One operation per class at a time; every node must start the same
  // (op, type, width, count) on the class, or the operation fails with a
  // message naming the mismatch. op_id names the operation, the same on
  // every node, and must follow the class's last one (by signed 32-bit
  // difference; gaps are fine); kNextOp takes the last one plus one, for
  // callers that start every operation on every node whatever happened.
  static constexpr uint32_t kNextOp = 0;
  // The ids of the passes (at most kOpPasses) of an operation numbered `tag`
  // by its caller (a communicator's operation number): increasing with the
  // tag and the pass.
  static constexpr uint32_t kOpPasses = 2;
  static constexpr uint32_t op_id(uint32_t tag, uint32_t pass) { return tag * kOpPasses + pass + 1; }
  Status start(uint8_t cls, AluOp op, AluType type, uint32_t width, const void* in, void* out, uint32_t count,
               uint32_t op_id = kNextOp);
  // True once the class's operation finished; *st is its status.
  bool test(uint8_t cls, Status* st);
  // Stop the class's operation now: it fails with `why` and its buffers are
  // no longer touched. The class goes on with the next operation.
  void cancel(uint8_t cls, Status why);
  bool busy(uint8_t cls) const;

  bool poll() override;
  void on_packet(uint16_t port, Packet* p) override;
  void on_link_down(uint16_t port, const Status& why) override;
  // The partition resets (firmware/link_training.h): an operation in flight
  // fails with `why`, queued packets are dropped, and every class starts
  // its operation ids over, in step with every other node again.
  void reset(const Status& why);
  const CombineCounters& counters() const { return ctr_; }

  // Implementation detail shared with the .cc files (per-class state:
  // netstack/tree/combine_internal.h).
  struct ClassState;

 private:
  // One-hop packets waiting for a link credit, per direction, FIFO through
  // Packet::next (so every class's packets leave in sequence order).
  struct TxQueue {
    Packet* head = nullptr;
    Packet* tail = nullptr;
  };
  // combine.cc
  void finish(ClassState& cs, Status st);
  void fail(ClassState& cs, Status st);
  // Drop the class's packets: kStale its held child packets of operations
  // over; kOp those and everything it queued to send or fan out (all of the
  // operation that ended); kAll every packet it holds.
  enum class Drop { kStale, kOp, kAll };
  void drop_queued(ClassState& cs, Drop what);
  static void on_timeout(void* ctx);
  std::string waiting_for(const ClassState& cs) const;
  // combine_datapath.cc
  // child: index of the sender, or -1 for the parent.
  Status check_packet(const ClassState& cs, const wire::TreeHeader& h, uint32_t len, int child) const;
  Status check_held(ClassState& cs);
  // Child c's next held packet is of the current operation.
  static bool child_ready(const ClassState& cs, int c);
  void on_up(ClassState& cs, int child, Packet* p);
  void on_down(ClassState& cs, Packet* p);
  bool fold(ClassState& cs);
  bool fan_out(ClassState& cs);
  bool progress(ClassState& cs);
  void transmit(Dir dir, Packet* p);
  bool flush();
  void held_add(uint32_t n);

  NetStack& net_;
  EventLoop& loop_;
  uint64_t timeout_ns_;
  std::vector<ClassState*> classes_;  // indexed by class id
  std::array<TxQueue, kNumDirs> txq_;
  Status link_down_;                  // first link-down seen: fails every later start
  uint32_t active_mask_ = 0;          // bit c: class c has an operation running
  uint64_t held_ = 0;                 // packets held now (child packets, fan-out, tx queues)
  CombineCounters ctr_;
};

}  // namespace toroid
