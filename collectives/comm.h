// Communicator (seed 002): a group of nodes named by a linear rank, with its
// own context. The world communicator spans the partition. A
// sub-communicator is any ordered list of partition ranks (create()); one
// whose ranks fill a box of the torus in rank order (split_line/plane/box,
// or such a list) is box-shaped and names its ranks by coordinates in that
// box. Algorithms declare what they need through CommInfo: the torus and
// tree algorithms run on the world only (its links and trees are its own),
// the point-to-point plans on any membership.
//
// Contexts are agreed by the members (collectives/context_table.h): a
// collective agreement round (an allreduce over their masks of free ids),
// then the lowest common free id; a sub-communicator owns its id and gives
// it back when destroyed. Its operations never meet another communicator's
// messages, however many communicators are made and freed.
//
// Every collective takes the next operation sequence number of its
// communicator as the tag of all its packets and messages (no user tags; a
// node that runs ahead cannot confuse two operations). One collective runs
// at a time per communicator; collectives on different communicators run
// concurrently. Operations are non-blocking: start() returns at once, the
// node's event loop makes progress (every communicator is a Poller), test()
// reports completion; wait() and the blocking wrappers drive the loop
// themselves. Every operation has a deadline; when it passes the operation
// fails with a message that says what it still waited for. A link going down
// fails the operation in flight and every later one.
//
// Point-to-point (seed 002): send() copies the data into a pooled buffer,
// starts a non-blocking send and returns at once; every library call
// reclaims the pooled buffers of finished sends. recv() names only the
// source; messages of one pair arrive in order.
//
// Algorithms are chosen by the selector (collectives/select.h) unless the
// caller names one (argument, or TOROID_ALGO_<KIND> in the environment, e.g.
// TOROID_ALGO_ALLREDUCE=ring).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/event_loop.h"
#include "base/log.h"
#include "collectives/coll.h"
#include "collectives/context_table.h"
#include "netstack/netstack.h"
#include "netstack/p2p.h"

namespace toroid {

class BarrierNet;
class CombineEngine;

struct CollCounters {
  uint64_t rx_packets = 0;
  uint64_t rx_stale = 0;      // tagged with an operation already finished
  uint64_t rx_malformed = 0;  // short, wrong algorithm or out-of-range fields
  uint64_t tx_blocked = 0;    // a send waited for queue space
  uint64_t ops_started = 0;
  uint64_t ops_ok = 0;
  uint64_t ops_failed = 0;
  uint64_t max_incoming_per_step = 0;  // torus-tree: most packets combined for one chunk
  uint64_t p2p_pool_bytes = 0;         // pooled send buffers held (point-to-point)
};
extern const CounterField kCollCountersFields[];
extern const int kCollCountersFieldCount;

class Comm final : public PacketHandler, public LinkDownListener, public Poller {
 public:
  // The world communicator (the node registers it for kCollective packets).
  Comm(NetStack& net, Messenger& msgr, EventLoop& loop, const Logger& log, uint16_t context, uint64_t timeout_ns);
  ~Comm() override;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // The combine tree and barrier channel spanning this communicator (world only).
  void set_tree(CombineEngine* engine, uint8_t tree_class);
  void set_barrier(BarrierNet* net, uint8_t channel);

  // ---- context agreement: collective over this communicator ----
  // Starts agreeing a context id with every member (an operation like a
  // collective: drive it with test(), then call agree_step()).
  Status start_agree();
  // After test() reported an agreement round finished: ok with *context
  // agreed and reserved on this node (the caller owns it: give it to
  // create()/split_*, or release it with contexts().release()); kBusy when
  // another round has started (test() again); or the error.
  Status agree_step(uint16_t* context);
  // start_agree() and its rounds to the end (real-time rigs).
  Result<uint16_t> agree_context();
  ContextTable& contexts() { return *contexts_; }

  // ---- sub-communicators ----
  // Local, once the members agreed `context`: the new communicator owns it.
  // Rank i of the new communicator is partition rank world_ranks[i]; this
  // node must be one of them. A list that fills a box in rank order makes a
  // box-shaped communicator.
  Result<std::unique_ptr<Comm>> create(const std::vector<uint32_t>& world_ranks, uint16_t context);
  // The line through this node along dim (0..2).
  Result<std::unique_ptr<Comm>> split_line(int dim, uint16_t context);
  // The plane through this node spanned by dims a and b.
  Result<std::unique_ptr<Comm>> split_plane(int dim_a, int dim_b, uint16_t context);
  // The box [origin, origin + shape) in this communicator's coordinates;
  // nodes outside it get nullptr (and must still agree; their context is
  // released).
  Result<std::unique_ptr<Comm>> split_box(const Coord& origin, const Dims& shape, uint16_t context);
  // The same, agreeing the context first (collective; real-time rigs).
  Result<std::unique_ptr<Comm>> split_line(int dim);
  Result<std::unique_ptr<Comm>> split_plane(int dim_a, int dim_b);
  Result<std::unique_ptr<Comm>> split_box(const Coord& origin, const Dims& shape);

  // ---- naming ----
  uint32_t rank() const { return info_.rank; }
  uint32_t size() const { return info_.size; }
  const Dims& shape() const { return info_.shape; }
  const CommInfo& info() const { return info_; }
  Coord coord() const { return coord_of(info_.rank); }      // in this communicator
  Coord coord_of(uint32_t rank) const;                       // in this communicator
  Coord world_coord_of(uint32_t rank) const;                 // in the partition
  uint32_t world_rank_of(uint32_t rank) const;
  // This communicator's rank of a partition coordinate; -1 if not a member.
  int64_t rank_of_world(const Coord& world) const;

  // ---- collectives ----
  // algo: "" = the selector's choice (or TOROID_ALGO_<KIND>).
  Status start(const CollArgs& args, std::string_view algo = {});
  bool in_flight() const { return active_; }
  // True once the operation has finished; *result is its status.
  bool test(Status* result);
  // End the operation in flight now: it fails with `why` (a job that stops
  // while its partners may no longer join). False if none was in flight.
  bool cancel(const Status& why);
  // Drive the event loop until the operation finishes (bounded by its deadline).
  Status wait();
  Status run(const CollArgs& args, std::string_view algo = {});  // start + wait
  // Ends the operation in flight with st (another member reported that it
  // failed there): its algorithm drops what it holds; later operations run
  // as usual.
  void fail_op(Status st);
  // Runs the caller's algorithm object as this communicator's next operation
  // (its tag, deadline and link-down handling, as start() does): operations
  // the registry has no kind for (the MPI library's vector collectives).
  // args must be complete (esize, red); algo must outlive the operation.
  Status start_custom(const CollArgs& args, CollAlgo* algo, const char* name);
  const std::string& algo() const { return algo_name_; }            // of the current/last operation
  uint64_t timeout_ns() const { return timeout_ns_; }               // one operation's deadline
  CollAlgo* active_algo() { return cur_; }

  // Blocking wrappers (MPI-like; nullptr send = in place).
  Status allreduce(const void* send, void* recv, uint64_t count, DType t, ROp op, Repro r = Repro::kNone);
  Status bcast(void* buf, uint64_t count, DType t, uint32_t root);
  Status barrier();
  // Non-blocking shorthands kept for the bench job and older tests.
  Status start_allreduce_sum_i64(int64_t* data, uint64_t count, std::string_view algo = {});
  Status start_barrier(std::string_view algo = {});

  // ---- point-to-point ----
  // The one send path: every message of this communicator leaves here. A
  // message to `rank` (of this communicator) on its collective messages
  // (p2p false: operations tag them with tag()) or on its point-to-point
  // messages (p2p true: context() | 0x8000, any tag). Returns the
  // messenger's handle; data must stay valid until send_done(handle).
  Result<uint64_t> post_send(uint32_t rank, bool p2p, uint32_t tag, const void* data, uint64_t len,
                             const MsgSendOptions& opt = {});
  uint16_t p2p_context() const { return static_cast<uint16_t>(context_ | kP2pContextBit); }
  static constexpr uint16_t kP2pContextBit = 0x8000;
  // Copies data into a pooled buffer and sends it on the point-to-point
  // messages with tag 0 (the pool is reclaimed as sends finish).
  Status send(uint32_t dst, const void* data, size_t len);
  // The next message from src, if one is complete.
  bool try_recv(uint32_t src, std::vector<uint8_t>* out);
  Status recv(uint32_t src, std::vector<uint8_t>* out);  // blocking, bounded by the deadline
  uint32_t sends_in_flight() const { return static_cast<uint32_t>(pool_busy_.size()); }

  // ---- for algorithms ----
  NetStack& net() { return net_; }
  Messenger& msgr() { return msgr_; }
  EventLoop& loop() { return loop_; }
  const Logger& log() const { return log_; }
  uint16_t context() const { return context_; }
  uint32_t tag() const { return tag_; }
  uint32_t advance_tag() { return ++tag_; }  // a fresh sequence number inside one operation
  // Operations made of several library operations (an MPI collective in
  // rounds, or one whose rounds depend on what arrived): begin_group() moves
  // the tags to the next multiple of kTagGroup, so the group's operations
  // take base+1, base+2, ... and the next group starts at the same tag on
  // every member however many tags this one took here (one that failed
  // early takes fewer). group_of(tag) is the base a tag belongs to.
  static constexpr uint32_t kTagGroup = 1u << 16;
  void begin_group() { tag_ = (tag_ / kTagGroup + 1) * kTagGroup; }
  static constexpr uint32_t group_of(uint32_t tag) { return tag & ~(kTagGroup - 1); }
  // Test hook: the next operation takes tag `next` (wrapping tests start
  // the counter just below its wrap). Only between operations.
  void skip_tags(uint32_t next) { tag_ = next - 1; }
  CombineEngine* tree() { return tree_; }
  uint8_t tree_class() const { return tree_class_; }
  BarrierNet* barrier_net() { return barrier_; }
  uint8_t barrier_channel() const { return barrier_channel_; }
  CollCounters& counters() { return ctr_; }
  const CollCounters& counters() const { return ctr_; }
  // Messages of this communicator's collectives, tagged with tag(); align:
  // the element size (segments carry whole elements). Their receives are
  // posted with msgr() under context() and tag().
  Result<uint64_t> send_msg(uint32_t peer, const void* data, size_t len, uint32_t align = 1);
  bool send_done(uint64_t handle) const { return msgr_.send_done(handle); }
  void cancel_send(uint64_t handle) { msgr_.cancel(handle); }
  // Per-port inboxes of kCollective packets (world communicator).
  Packet* inbox_head(uint16_t port) const { return port < inbox_.size() ? inbox_[port].head : nullptr; }
  Packet* inbox_pop(uint16_t port);
  uint32_t inbox_size(uint16_t port) const { return port < inbox_.size() ? inbox_[port].count : 0; }

  bool poll() override;
  // Moves the operation in flight on (its algorithm's progress), finishing
  // it when done; true if anything moved. Not re-entered.
  bool advance();
  void on_packet(uint16_t port, Packet* p) override;
  void on_link_down(uint16_t port, const Status& why) override;
  // The partition resets its communication (firmware/link_training.h): the
  // operation in flight fails with `why`, packets waiting here are dropped,
  // and operation numbers start over as on every other node, so the next
  // operation works again. Sub-communicators made before are stale: make
  // them again.
  void reset(const Status& why);

 private:
  struct Inbox {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    uint32_t count = 0;
  };
  struct PooledSend {
    uint64_t handle;
    std::vector<uint8_t> buf;
  };
  // A point-to-point receive in progress (try_recv), one per source.
  struct P2pRecv {
    uint32_t src = 0;
    RecvReq req;
    std::vector<uint8_t> buf;
  };
  // A sub-communicator of parent over the box [origin, origin+shape) (world
  // coordinates), or over a list of partition ranks (members non-empty).
  Comm(Comm& parent, const Coord& origin, const Dims& shape, std::vector<uint32_t> members, uint16_t context);
  Result<std::unique_ptr<Comm>> make_sub(const Coord& origin, const Dims& shape, uint16_t context);
  Status start_agree_round();
  Status launch(const CollArgs& args, CollAlgo* algo);
  Status prepare(CollArgs& args, std::string_view want, const AlgoInfo** info);
  // The last algorithm chosen per collective and what it was chosen for: an
  // operation of the same shape reuses the choice (selection allocates).
  struct Choice {
    bool valid = false;
    DType dtype = DType::kInt64;
    ROp op = ROp::kSum;
    Repro repro = Repro::kNone;
    uint64_t count = 0;
    uint32_t root = 0, buffer_blocks = 0;
    bool in_place = false;
    std::string want;  // the forced name ("" for the selector's choice)
    const AlgoInfo* info = nullptr;
    bool same(const CollArgs& a, std::string_view w) const {
      return valid && a.dtype == dtype && a.op == op && a.repro == repro && a.count == count && a.root == root &&
             a.buffer_blocks == buffer_blocks && a.in_place() == in_place && w == want;
    }
  };
  void finish(Status st);
  void reclaim_sends();
  static void on_timeout(void* self);

  NetStack& net_;
  Messenger& msgr_;
  EventLoop& loop_;
  const Logger& log_;
  uint16_t context_;
  uint64_t timeout_ns_;
  Coord origin_;  // world coordinate of this communicator's rank 0 (box-shaped)
  CommInfo info_;
  // Not box-shaped: rank -> partition rank, and (partition rank, rank)
  // sorted for the reverse lookup.
  std::vector<uint32_t> members_;
  std::vector<std::pair<uint32_t, uint32_t>> member_index_;
  std::unique_ptr<ContextTable> own_contexts_;  // the world's
  ContextTable* contexts_ = nullptr;            // the node's (the world's table)
  bool sub_ = false;       // registered itself with the loop, owns its context
  // Context agreement in progress (start_agree / agree_step).
  uint64_t agree_buf_[ContextTable::kRoundWords] = {};
  ContextTable::Walk agree_walk_;
  uint32_t agree_rounds_ = 0;
  bool agreeing_ = false;
  uint32_t tag_ = 0;
  bool active_ = false;
  bool finished_ = false;
  bool advancing_ = false;  // inside advance(): a packet delivered from there only queues
  std::string algo_name_;
  std::array<std::string, kCollKinds> env_algo_;  // TOROID_ALGO_<KIND>, read when the communicator is made
  std::array<Choice, kCollKinds> choice_;
  Status result_;
  Status link_down_;
  Timer deadline_;
  uint64_t op_deadline_ = 0;  // the running operation's deadline (deadline_ may be armed earlier)
  std::vector<Inbox> inbox_;
  // Algorithm objects kept between operations, with their buffers and plans:
  // one per algorithm and mode (plain, or the exact sum around it), the
  // least recently used one replaced. A program that alternates kinds (a
  // barrier between allreduces, as benchmarks run them) makes none anew.
  struct AlgoSlot {
    const AlgoInfo* info = nullptr;  // the algorithm (an exact sum's: its inner one)
    bool exact = false;
    uint64_t used = 0;
    std::unique_ptr<CollAlgo> algo;
  };
  static constexpr size_t kAlgoSlots = 8;
  std::array<AlgoSlot, kAlgoSlots> slots_;
  uint64_t slot_clock_ = 0;
  CollAlgo* cur_ = nullptr;  // the operation's algorithm: a slot's, or a caller's (start_custom)
  CombineEngine* tree_ = nullptr;
  uint8_t tree_class_ = 0;
  BarrierNet* barrier_ = nullptr;
  uint8_t barrier_channel_ = 0;
  std::vector<PooledSend> pool_busy_;
  std::vector<std::vector<uint8_t>> pool_free_;
  std::vector<std::unique_ptr<P2pRecv>> p2p_recvs_;  // stable addresses: posted receives
  CollCounters ctr_;
};

}  // namespace toroid
