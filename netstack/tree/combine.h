// CombineEngine: the emulated combine (tree) network of seed 004 B. For a
// tree class (a ClassRoute of kind kTree: one up link, some down links per
// node), an operation streams `count` operands as packets numbered by a
// per-class sequence. A node combines, for each sequence number, its own
// contribution with exactly one packet from each child (ALU op in netstack/
// tree/alu.h) and sends the result up; the root turns it around and it is
// broadcast down, every node depositing its copy into `out`.
//
// Pipelined and bounded: a node sends sequence s up only while s is less
// than (last sequence received from above) + kTreeWindow, so a parent holds
// at most kTreeWindow packets per child and class; packets travel one hop at
// a time over the reliable links (exactly once, in order per link), which is
// what makes the result correct under drops, corruption and reordering below.
// Several classes may run operations at the same time (one per class).
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
  // message naming the mismatch.
  Status start(uint8_t cls, AluOp op, AluType type, uint32_t width, const void* in, void* out, uint32_t count);
  // True once the class's operation finished; *st is its status.
  bool test(uint8_t cls, Status* st);
  // Stop the class's operation now: it fails with `why`, its buffers are no
  // longer touched, and the class is out of step for good, as after any failure.
  void cancel(uint8_t cls, Status why);
  bool busy(uint8_t cls) const;

  bool poll() override;
  void on_packet(uint16_t port, Packet* p) override;
  void on_link_down(uint16_t port, const Status& why) override;
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
  void drop_queued(ClassState& cs);
  static void on_timeout(void* ctx);
  std::string waiting_for(const ClassState& cs) const;
  // combine_datapath.cc
  // child: index of the sender, or -1 for the parent.
  Status check_packet(const ClassState& cs, const wire::TreeHeader& h, uint32_t len, int child) const;
  Status check_held(ClassState& cs);
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
