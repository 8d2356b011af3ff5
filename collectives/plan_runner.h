// The plan runner: one non-blocking state machine that executes any
// point-to-point plan (collectives/schedule/plan.h) over the communicator's
// messages. An algorithm that fits the plan form derives from PlanAlgo and
// only builds its plan (pure, in collectives/schedule/); the runner owns the
// scratch buffer, moves the messages and checks every message's size (a
// mismatch fails the operation with both sizes named).
//
// One copy each way: a step's receives are posted with the messenger before
// its sends go out, so each incoming segment is copied, or reduced, from the
// received frame straight into its place in the caller's buffer (or the
// scratch); sends read the caller's buffer directly. A receive that would
// overwrite what a send of its step still reads is gated by that send (its
// segments land once the send has read past them: an in-place exchange
// streams both ways without a copy); it waits only where two unsent sends
// overlap it, or where it reduces into elements an earlier receive of the
// step reduces into (so float results keep the plan's order). Messages that
// arrive before their receive is posted wait in the messenger as frames.
//
// Steady state allocates nothing: the plan is rebuilt only when the
// operation's shape changes, and the scratch and receive records grow to the
// largest shape seen.
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
  // What the plan depends on: the same key, the same plan.
  struct Shape {
    CollKind kind = CollKind::kBarrier;
    uint64_t count = 0;
    size_t esize = 0;
    uint32_t root = 0, buffer_blocks = 0, size = 0, rank = 0;
    uint64_t seed = 0;
    bool in_place = false;
    bool valid = false;
    bool operator==(const Shape&) const = default;
  };
  enum class RecvState : uint8_t { kWaiting, kPosted, kDone };
  uint8_t* base(schedule::Buf b);
  void copy(const schedule::Copy& c);
  bool begin_step();
  bool post_ready();
  bool ready(uint32_t i, uint64_t* gate);
  void index_overlaps(const schedule::Step& st);
  static constexpr uint64_t kNotSent = ~uint64_t{0};  // a send of the step not issued yet
  bool check_done();
  bool next_step();
  bool sends_left();  // every send of the step has left (clears their handles)
  static void reduce_into(const void* ctx, uint8_t* dst, const uint8_t* src, uint64_t bytes);

  Comm* comm_ = nullptr;
  CollArgs args_;
  Shape shape_;
  schedule::Plan plan_;
  std::vector<uint8_t> tmp_;
  std::vector<uint64_t> handles_;   // sends of the current step (0: known to have left)
  std::vector<RecvReq> reqs_;       // receives of the current step
  std::vector<RecvState> state_;
  std::vector<int32_t> prev_same_peer_;  // per receive of the step: the previous one from its peer (-1: none)
  std::vector<uint64_t> by_peer_;         // scratch: (peer, index) sorted
  // Per receive of the step, the sends whose bytes it overlaps:
  // ov_idx_[ov_at_[i] .. ov_at_[i+1]) (index_overlaps()).
  std::vector<uint32_t> ov_at_, ov_idx_, by_start_;
  std::vector<uintptr_t> max_end_;
  std::vector<uint32_t> arrivals_;
  uint32_t step_ = 0;
  uint32_t recvs_done_ = 0;
  uint32_t waiting_ = 0;              // receives of the step not posted yet
  std::vector<uint32_t> log_slots_;  // the step's receives that completed, by index (log_)
  CompletionLog log_;
  bool in_step_ = false;
};

}  // namespace toroid
