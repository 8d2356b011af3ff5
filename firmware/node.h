// Node: one compute node's runtime, the same in every rig. Wires its ports
// into the netstack, the collectives and the job, and runs the boot
// sequence: print the personality, train every link, then run the job.
// Single-threaded and run-to-completion: everything happens in pollers and
// timers of its EventLoop; the rig decides who drives that loop (the sim
// scheduler, or run_until() in a node process).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/log.h"
#include "collectives/comm.h"
#include "drivers/port.h"
#include "firmware/job.h"
#include "firmware/link_training.h"
#include "firmware/personality.h"
#include "netstack/netstack.h"
#include "netstack/p2p.h"
#include "netstack/tree/barrier.h"
#include "netstack/tree/combine.h"

namespace toroid {

struct NodeOptions {
  NodeOptions() { net.link.keepalive_ns = tuning::kLinkKeepaliveRealNs; }
  // This boot's id, sent in every hello so that neighbours recognise a
  // reboot: toroid-node draws a random one per process; 0 derives one from
  // the seed and rank (the sim rig, whose runs replay; it passes a new one
  // per reboot).
  uint64_t boot_id = 0;
  uint64_t train_timeout_ns = tuning::kTrainTimeoutRealNs;
  uint64_t coll_timeout_ns = tuning::kCollTimeoutRealNs;
  NetConfig net;             // links and routing (sim rigs use virtual-time values)
  uint64_t job_timeout_ns = tuning::kJobTimeoutRealNs;
  bool log_boot = true;      // personality and trained-links lines
  bool log_verdict = true;   // the node's own verdict line
  // Names a cable end physically in link training's messages (a
  // deployment's topology); empty: coordinates only.
  EndDescriber describe_end;
};

enum class NodeState : uint8_t { kCreated, kTraining, kRunning, kPassed, kFailed };
const char* node_state_name(NodeState s);

class Node {
 public:
  // ports[i] is the port the personality calls ports[i]; the node does not own them.
  Node(const Personality& p, const Clock& clock, PacketPool& pool, const std::vector<Port*>& ports,
       const NodeOptions& opt);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Start the boot sequence (logs the personality, starts link training).
  void boot();
  EventLoop& loop() { return loop_; }
  NodeState state() const { return state_; }
  bool finished() const { return state_ == NodeState::kPassed || state_ == NodeState::kFailed; }
  // ok, or the first failure (boot or job).
  const Status& status() const { return status_; }
  bool boot_failed() const { return boot_failed_; }
  const Personality& personality() const { return p_; }
  const Logger& log() const { return log_; }
  const Job* job() const { return job_.get(); }
  const NetStack& net() const { return *net_; }
  NetStack& net() { return *net_; }
  const LinkTrainer& trainer() const { return *trainer_; }
  const Comm& comm() const { return *comm_; }
  Comm& comm() { return *comm_; }
  const Messenger& messenger() const { return *msgr_; }
  // The emulated combine and barrier networks; the world tree (rooted at
  // rank 0) is class tuning::kTreeClassWorld of both.
  CombineEngine& combine() { return *combine_; }
  const CombineEngine& combine() const { return *combine_; }
  BarrierNet& barrier() { return *barrier_; }
  const BarrierNet& barrier() const { return *barrier_; }
  uint64_t boot_ns() const { return boot_ns_; }
  // Communication resets (generations) this node went through, and the last reason.
  uint32_t resets() const { return resets_; }
  const Status& last_reset() const { return last_reset_; }
  uint64_t first_reset_ns() const { return first_reset_ns_; }  // 0: none yet
  Recovery& recovery() { return recovery_; }
  // Told of ports that did not train again after a reset (the neighbour is
  // gone); unlike the netstack's link-down listeners they start no
  // generation. Register before boot().
  void add_untrained_listener(LinkDownListener* l) { untrained_.push_back(l); }
  uint64_t trained_ns() const { return trained_ns_; }
  uint64_t done_ns() const { return done_ns_; }

 private:
  // Logs every link that goes down, by node and port.
  class LinkWatch final : public LinkDownListener {
   public:
    explicit LinkWatch(const Logger& log) : log_(log) {}
    void on_link_down(uint16_t, const Status& why) override { log_.error("%s", why.message().c_str()); }

   private:
    const Logger& log_;
  };
  // After every other listener failed what it had in flight: a new
  // generation (the trainer resets everything and trains again).
  class Supervisor final : public LinkDownListener, public Recovery {
   public:
    explicit Supervisor(Node* n) : n_(n) {}
    void on_link_down(uint16_t port, const Status& why) override { n_->trainer_->on_link_down(port, why); }
    uint32_t generation() const override { return n_->trainer_->generation(); }
    bool links_up() const override { return n_->trainer_->all_up(); }
    void request_reset(const Status& why) override { n_->trainer_->new_generation(why); }

   private:
    Node* n_;
  };
  void reset_comm(uint32_t gen, const Status& why);
  // Drives the boot sequence and the job from inside the event loop.
  class Sequencer final : public Poller {
   public:
    explicit Sequencer(Node* n) : n_(n) {}
    bool poll() override { return n_->advance(); }

   private:
    Node* n_;
  };
  bool advance();
  void fail(Status st, bool during_boot);

  Personality p_;
  NodeOptions opt_;
  Logger log_;
  EventLoop loop_;
  std::unique_ptr<NetStack> net_;
  std::unique_ptr<LinkTrainer> trainer_;
  std::unique_ptr<Comm> comm_;
  std::unique_ptr<Messenger> msgr_;
  std::unique_ptr<CombineEngine> combine_;
  std::unique_ptr<BarrierNet> barrier_;
  Status setup_status_;  // a constructor step that failed; boot() reports it
  std::unique_ptr<Job> job_;
  Sequencer seq_{this};
  LinkWatch watch_{log_};
  Supervisor recovery_{this};
  uint32_t resets_ = 0;
  Status last_reset_;
  uint64_t first_reset_ns_ = 0;
  std::vector<LinkDownListener*> untrained_;
  NodeState state_ = NodeState::kCreated;
  Status status_;
  bool boot_failed_ = false;
  uint64_t boot_ns_ = 0;
  uint64_t trained_ns_ = 0;
  uint64_t done_ns_ = 0;
};

}  // namespace toroid
