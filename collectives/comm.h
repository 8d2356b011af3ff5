// Communicator (first slice): the world communicator over the torus, with a
// context id and an operation sequence number per operation that becomes the
// tag of every packet of that operation (seed 002: no user tags; a node that
// runs ahead cannot confuse two operations). Packets arrive in per-port
// inboxes and wait there until the operation they belong to consumes them.
//
// Operations are non-blocking: start_*() returns at once, poll() (the node's
// event loop) makes progress, test() reports completion. Every operation has
// a deadline; when it passes the operation fails with a message that says
// what it was still waiting for.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/log.h"
#include "collectives/allreduce_torus_ring.h"
#include "collectives/allreduce_torus_tree.h"
#include "netstack/netstack.h"

namespace toroid {

// Allreduce algorithms of this communicator.
enum class AllreduceAlgo : uint8_t {
  kTorusRing,  // dimension-ordered ring shift-and-add (allreduce_torus_ring.h)
  kTorusTree,  // seed 004 C: torus reduce to the middle, tree broadcast
};
const char* allreduce_algo_name(AllreduceAlgo a);

struct CollCounters {
  uint64_t rx_packets = 0;
  uint64_t rx_stale = 0;      // tagged with an operation already finished
  uint64_t rx_malformed = 0;  // short, wrong algorithm or out-of-range fields
  uint64_t tx_blocked = 0;    // a send waited for queue space
  uint64_t ops_started = 0;
  uint64_t ops_ok = 0;
  uint64_t ops_failed = 0;
  uint64_t max_incoming_per_step = 0;  // torus-tree: most packets combined for one chunk
};
extern const CounterField kCollCountersFields[];
extern const int kCollCountersFieldCount;

class Comm final : public PacketHandler, public LinkDownListener, public Poller {
 public:
  Comm(NetStack& net, EventLoop& loop, const Logger& log, uint16_t context, uint64_t timeout_ns);
  ~Comm() override;

  // The combine tree that tree-based algorithms use (may be left unset).
  void set_tree(CombineEngine* engine, uint8_t tree_class) {
    tree_ = engine;
    tree_class_ = tree_class;
  }
  // In-place SUM allreduce of count int64 values (count may be 0).
  Status start_allreduce_sum_i64(int64_t* data, uint32_t count, AllreduceAlgo algo = AllreduceAlgo::kTorusRing);
  // Nobody leaves before everyone has arrived: an allreduce of nothing.
  Status start_barrier();
  bool in_flight() const { return active_; }
  // True once the operation has finished; *result is its status.
  bool test(Status* result);

  bool poll() override;
  void on_packet(uint16_t port, Packet* p) override;
  // A collective needs every link of the partition: any link down fails the
  // operation in flight (and every later one) with that status.
  void on_link_down(uint16_t port, const Status& why) override;

  // For algorithms: the oldest packet waiting on a port, and taking it.
  Packet* inbox_head(uint16_t port) const { return port < inbox_.size() ? inbox_[port].head : nullptr; }
  Packet* inbox_pop(uint16_t port);
  uint32_t inbox_size(uint16_t port) const { return port < inbox_.size() ? inbox_[port].count : 0; }

  NetStack& net() { return net_; }
  uint16_t context() const { return context_; }
  uint32_t tag() const { return tag_; }
  CollCounters& counters() { return ctr_; }
  const CollCounters& counters() const { return ctr_; }

 private:
  struct Inbox {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    uint32_t count = 0;
  };
  Status begin(const char* what);
  void finish(Status st);
  static void on_timeout(void* self);

  NetStack& net_;
  EventLoop& loop_;
  const Logger& log_;
  uint16_t context_;
  uint64_t timeout_ns_;
  uint32_t tag_ = 0;        // sequence number of the current/last operation
  bool active_ = false;
  bool finished_ = false;
  const char* what_ = "";
  Status result_;
  Status link_down_;
  Timer deadline_;
  std::vector<Inbox> inbox_;
  TorusRingAllreduce ring_;
  TorusTreeAllreduce ttree_;
  AllreduceAlgo algo_ = AllreduceAlgo::kTorusRing;
  CombineEngine* tree_ = nullptr;
  uint8_t tree_class_ = 0;
  CollCounters ctr_;
};

}  // namespace toroid
