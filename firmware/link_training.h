// Link training: on every port the node sends a hello carrying its
// partition, coordinates, that port's direction, its boot id and its
// communication generation, and checks the hello it receives against what
// its personality says is cabled there (the neighbour one hop along the
// port's direction, on the opposite port, of the same partition). A mismatch
// names the port as miswired; silence until the boot deadline names it as a
// dead link.
//
// Handshake (per port, over a medium that may drop frames): hellos repeat
// until this side has heard the peer and seen the peer hear it (HEARD with
// our own boot id echoed, then DONE). A hello without DONE is always
// answered, also after this node finished training, so the slower side
// always completes; so is a hello on a port found miswired, so both ends of
// a wrong cable name it. A port that is done brings its link up
// (Link::bring_up) with the first sequence number of each direction from
// the two hellos.
//
// Training never stops (docs/netstack.md, "Link liveness and recovery"):
// - A link that goes down after boot (no progress, silence past the
//   keepalive deadline, carrier lost) or a neighbour whose boot id changed
//   (it rebooted) starts a new generation: the node resets its
//   communication (the reset handler: netstack, messages, collectives, tree
//   and barrier networks; operations in flight fail with the named reason)
//   and trains every link again.
// - A hello from a newer generation makes the node adopt it (the same
//   reset); a hello from an older one is answered, so the neighbour adopts
//   ours. A generation spreads over the partition within a few link round
//   trips, and links train only between nodes of the same generation, so
//   nothing sent before a node's reset is delivered after it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/log.h"
#include "base/rng.h"
#include "firmware/personality.h"
#include "netstack/netstack.h"

namespace toroid {

// Where one end of a cable is, in the words of whoever placed the nodes
// (a deployment's topology: "host n01, af_xdp ens1f0 q0, cable A1"), so a
// miswired port's message names both ends physically. Empty: coordinates
// and directions only.
using EndDescriber = std::function<std::string(const Coord&, Dir)>;

struct TrainCounters {
  uint64_t generations = 0;  // generations this node started (a link down, a neighbour rebooted)
  uint64_t adopted = 0;      // newer generations learnt from a neighbour's hello
  uint64_t reboots_seen = 0; // neighbours whose boot id changed
  uint64_t retrained = 0;    // ports brought up again after boot
  uint64_t foreign_partition_hellos = 0;  // hellos from another partition (refused)
};

class LinkTrainer final : public HelloHandler {
 public:
  // Resets everything above the links for generation `gen`, failing what is
  // in flight with `why` (the node does it; the links are reset by it too).
  using ResetFn = std::function<void(uint32_t gen, const Status& why)>;
  // A port that did not train again within the link timeout after a reset
  // (its neighbour is dead or gone): reported once per generation, named.
  using UntrainedFn = std::function<void(uint16_t port, const Status& why)>;

  LinkTrainer(NetStack& net, EventLoop& loop, const Logger& log, const Personality& p, uint64_t boot_id,
              uint64_t timeout_ns, EndDescriber describe_end = {});
  ~LinkTrainer() override;

  void set_reset_handler(ResetFn fn) { reset_ = std::move(fn); }
  void set_untrained_handler(UntrainedFn fn) { untrained_ = std::move(fn); }
  void start();
  // Boot training is over (every port done or failed).
  bool finished() const { return finished_; }
  // First failure (kMiswired / kTimeout naming node and port) or ok.
  const Status& status() const { return status_; }
  // "port0 x+ -> 1,0,0 x-, port1 x- -> ..." for the boot log.
  std::string summary() const;
  uint32_t trained_ports() const;
  // Every port trained (up) in the current generation.
  bool all_up() const { return trained_ports() == ports_.size(); }
  uint32_t generation() const { return gen_; }
  uint64_t boot_id() const { return boot_id_; }
  const TrainCounters& counters() const { return ctr_; }

  // A link went down after boot: a new generation (LinkDownListener of the node).
  void on_link_down(uint16_t port, const Status& why);
  // Start a new generation now, failing what is in flight with `why` (the
  // job asks for one after an operation failed and left state out of step).
  void new_generation(const Status& why) { start_generation(why, wire::ResetCause::kRequested, 0xff); }

  void on_hello(uint16_t port, const wire::HelloBody& hello) override;

 private:
  enum class PortState : uint8_t { kWaiting, kHeard, kDone, kFailed };
  struct PortTrain {
    PortState state = PortState::kWaiting;
    bool heard = false;
    bool miswired = false;  // failed: a hello from the wrong neighbour
    Coord peer;
    Dir peer_dir = Dir::kXp;
    uint64_t peer_boot = 0;  // the boot id heard (valid while heard)
    uint32_t peer_isn = 0;
    uint32_t isn = 0;        // our first data seq on this link in this generation
    uint64_t hellos_sent = 0;
    bool reported = false;   // named as untrained in this generation
  };
  void send(uint16_t port);
  void fail_port(uint16_t port, Status st);
  void check_finished();
  // A new generation started here (cause seen on the port along dir, 0xff: none).
  void start_generation(const Status& why, wire::ResetCause cause, uint8_t dir);
  // A new generation (adopted or started): reset what is above the links and
  // the links, then train every port again.
  void enter_generation(uint32_t gen, const Status& why);
  void restart_ports();
  void report_untrained(uint16_t port, const Status& why);
  void arm_resend();
  std::string identity_mismatch(uint16_t port, const wire::HelloBody& h, Coord* got, Dir* got_dir);
  static void on_resend(void* self);
  static void on_deadline(void* self);
  static void on_retrain_deadline(void* self);
  std::string port_label(uint16_t port) const;

  NetStack& net_;
  EventLoop& loop_;
  const Logger& log_;
  const Personality& p_;
  uint64_t boot_id_;
  uint64_t timeout_ns_;
  EndDescriber describe_end_;
  ResetFn reset_;
  UntrainedFn untrained_;
  Timer retrain_deadline_;
  uint64_t gen_started_ = 0;
  Rng rng_;  // initial sequence numbers (seeded from the boot id)
  std::vector<PortTrain> ports_;
  uint32_t gen_ = 0;
  // Where and why the current generation started (sent in every hello).
  Coord origin_;
  uint8_t origin_dir_ = 0xff;
  wire::ResetCause cause_ = wire::ResetCause::kNone;
  Timer resend_;
  // Resend interval: doubles up to a cap, so a neighbour that boots slowly
  // (a VM) does not find hundreds of stale hellos queued on its link.
  uint64_t interval_ = tuning::kHelloIntervalNs;
  Timer deadline_;
  bool started_ = false;
  bool finished_ = false;
  bool in_reset_ = false;  // a reset is running (a link-down it causes is not a new generation)
  Status status_;
  TrainCounters ctr_;
};

}  // namespace toroid
