// The plan runner: one non-blocking state machine that executes any
// point-to-point plan (collectives/schedule/plan.h) over the communicator's
// messages. An algorithm that fits the plan form derives from PlanAlgo and
// only builds its plan (pure, in collectives/schedule/); the runner owns the
// scratch buffer (allocated in start(), never in progress()), moves the
// messages, applies copies and reductions, and checks every message's size
// (a mismatch fails the operation with both sizes named).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/coll.h"
#include "collectives/schedule/plan.h"
#include "netstack/p2p.h"

namespace toroid {

class PlanAlgo : public CollAlgo {
 public:
  Status start(Comm& comm, const CollArgs& args) final;
  bool progress() final;
  void abort() final;
  std::string waiting_for() const final;

  const schedule::Plan& plan() const { return plan_; }
  uint32_t steps_run() const { return step_; }
  // Peers of the receives of `first_come` steps, in the order they completed
  // (the last operation's); empty for plans without such steps.
  const std::vector<uint32_t>& arrivals() const { return arrivals_; }

 protected:
  virtual Result<schedule::Plan> build(const CommInfo& comm, const CollArgs& args) = 0;

 private:
  enum class Phase : uint8_t { kSend, kRecv };
  uint8_t* base(schedule::Buf b);
  void copy(const schedule::Copy& c);
  bool begin_step();
  bool take(const schedule::Recv& r);
  bool next_step();
  bool overlaps_pending_send(const schedule::Recv& r);
  bool sends_left();  // every send of the step has left (clears their handles)

  Comm* comm_ = nullptr;
  CollArgs args_;
  schedule::Plan plan_;
  std::vector<uint8_t> tmp_;
  std::vector<uint32_t> handles_;   // sends of the current step (0: known to have left)
  std::vector<uint8_t> got_;        // receives of the current step completed
  // First-come steps (receives from every peer at once): per receive, known
  // clear of the step's pending sends (that only ever becomes true), and the
  // previous receive from the same peer (-1: none), so a poll costs O(receives),
  // not O(receives x sends).
  std::vector<uint8_t> clear_;
  std::vector<int32_t> prev_same_peer_;
  std::vector<uint64_t> by_peer_;   // scratch: (peer, index) sorted
  std::vector<uint32_t> arrivals_;
  Messenger::Message msg_;
  uint32_t step_ = 0;
  uint32_t next_recv_ = 0;          // in-order steps: the next receive to take
  uint32_t recvs_done_ = 0;
  Phase phase_ = Phase::kSend;
};

}  // namespace toroid
