// Link training at boot: on every port the node sends a hello carrying its
// coordinates and that port's direction, and checks the hello it receives
// against what its personality says is cabled there (the neighbour one hop
// along the port's direction, on the opposite port). A mismatch names the
// port as miswired; silence until the deadline names it as a dead link.
//
// Handshake (per port, over a medium that may drop frames): hellos repeat
// every interval until this side has heard the peer and seen the peer hear
// it (flags HEARD, DONE). A hello without DONE is always answered, also after
// this node finished training, so the slower side always completes; so is a
// hello on a port found miswired, so both ends of a wrong cable name it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/log.h"
#include "firmware/personality.h"
#include "netstack/netstack.h"

namespace toroid {

// Where one end of a cable is, in the words of whoever placed the nodes
// (a deployment's topology: "host n01, af_xdp ens1f0 q0, cable A1"), so a
// miswired port's message names both ends physically. Empty: coordinates
// and directions only.
using EndDescriber = std::function<std::string(const Coord&, Dir)>;

class LinkTrainer final : public HelloHandler {
 public:
  LinkTrainer(NetStack& net, EventLoop& loop, const Logger& log, const Personality& p, uint64_t boot_id,
              uint64_t timeout_ns, EndDescriber describe_end = {});
  ~LinkTrainer() override = default;

  void start();
  bool finished() const { return finished_; }
  // First failure (kMiswired / kTimeout naming node and port) or ok.
  const Status& status() const { return status_; }
  // "port0 x+ -> 1,0,0 x-, port1 x- -> ..." for the boot log.
  std::string summary() const;
  uint32_t trained_ports() const;

  void on_hello(uint16_t port, const wire::HelloBody& hello) override;

 private:
  enum class PortState : uint8_t { kWaiting, kHeard, kDone, kFailed };
  struct PortTrain {
    PortState state = PortState::kWaiting;
    bool heard = false;
    bool miswired = false;  // failed: a hello from the wrong neighbour
    Coord peer;
    Dir peer_dir = Dir::kXp;
    uint64_t hellos_sent = 0;
  };
  void send(uint16_t port);
  void fail_port(uint16_t port, Status st);
  void check_finished();
  static void on_resend(void* self);
  static void on_deadline(void* self);
  std::string port_label(uint16_t port) const;

  NetStack& net_;
  EventLoop& loop_;
  const Logger& log_;
  const Personality& p_;
  uint64_t boot_id_;
  uint64_t timeout_ns_;
  EndDescriber describe_end_;
  std::vector<PortTrain> ports_;
  Timer resend_;
  // Resend interval: doubles up to a cap, so a neighbour that boots slowly
  // (a VM) does not find hundreds of stale hellos queued on its link.
  uint64_t interval_ = tuning::kHelloIntervalNs;
  Timer deadline_;
  bool started_ = false;
  bool finished_ = false;
  Status status_;
};

}  // namespace toroid
