// The node's run-to-completion loop: pollers that report busy/idle, a hashed
// timer wheel, and an idle policy (spin -> pause -> sleep on wait handles) so
// that many node processes can share few cores.
//
// Two drivers use it: real rigs call run_until(), which applies the idle
// policy between rounds; the sim rig calls run_once() from its scheduler with
// a virtual clock and asks next_deadline() when to come back.
#pragma once
#include <cstdint>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/tuning.h"

namespace toroid {

class Poller {
 public:
  virtual ~Poller() = default;
  // Do a bounded amount of work; return true if anything was done.
  virtual bool poll() = 0;

 private:
  friend class EventLoop;
  // Inside its poll(): a nested round (a blocking wait called from poll(),
  // which drives the loop itself) skips it instead of re-entering it.
  bool in_poll_ = false;
};

class TimerWheel;

// An intrusive timer: owned by its user, linked into the wheel while armed.
class Timer {
 public:
  using Callback = void (*)(void* ctx);
  Timer() = default;
  Timer(Callback cb, void* ctx) : cb_(cb), ctx_(ctx) {}
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  void set_callback(Callback cb, void* ctx) { cb_ = cb; ctx_ = ctx; }
  bool armed() const { return wheel_ != nullptr; }
  uint64_t deadline() const { return deadline_; }
  // Housekeeping (a link's keepalive): its firing is not work that keeps an
  // idle loop from sleeping (TimerWheel::expire does not count it).
  void set_background(bool b) { background_ = b; }

 private:
  friend class TimerWheel;
  Callback cb_ = nullptr;
  void* ctx_ = nullptr;
  uint64_t deadline_ = kNever;
  TimerWheel* wheel_ = nullptr;
  Timer* prev_ = nullptr;
  Timer* next_ = nullptr;
  uint64_t seq_ = 0;   // arm order: the tiebreak between equal deadlines
  uint32_t slot_ = 0;  // list it is on: a wheel slot, or kFiringSlot
  bool background_ = false;
};

// Hashed timing wheel: slot = deadline / tick mod slots; a timer further out
// than one revolution waits in its slot until its round comes. arm/cancel are
// O(1); expire walks only the slots that time passed over.
class TimerWheel {
 public:
  explicit TimerWheel(uint64_t now_ns);
  ~TimerWheel();
  TimerWheel(const TimerWheel&) = delete;
  TimerWheel& operator=(const TimerWheel&) = delete;

  void arm(Timer& t, uint64_t deadline_ns);  // re-arming moves it
  void cancel(Timer& t);
  // Fire every timer with deadline <= now (in deadline order within a slot
  // walk); callbacks may arm or cancel timers. Returns how many fired,
  // background timers not counted.
  uint32_t expire(uint64_t now_ns);
  uint64_t next_deadline() const;  // kNever if empty
  uint32_t size() const { return count_; }

 private:
  static constexpr uint32_t kFiringSlot = ~uint32_t{0};
  void link(Timer& t);
  void unlink(Timer& t);
  uint64_t scan_next() const;
  std::vector<Timer*> slots_;
  // Bit per slot, set while the slot holds a timer: lets the scans skip
  // empty slots 64 at a time (a sim node's next deadline is often far out).
  uint64_t occupied_[tuning::kTimerWheelSlots / 64] = {};
  // Offset (from the cursor, in slots) of the first occupied slot at or after
  // offset `from`, or kTimerWheelSlots if none is left in one revolution.
  uint32_t next_occupied(uint32_t from) const;
  uint64_t cursor_tick_;      // every slot before this tick has been expired
  uint32_t count_ = 0;
  mutable uint64_t cached_next_ = kNever;
  mutable bool next_dirty_ = false;
  // At most the earliest deadline armed (arm lowers it; cancel leaves it):
  // expire() walks only once the clock reaches it.
  uint64_t floor_ = kNever;
  // Due timers detached by expire() and not yet fired, in fire order. They
  // still count as armed: a callback may cancel or re-arm them.
  Timer* firing_ = nullptr;
  uint64_t arm_seq_ = 0;
  bool expiring_ = false;
};

struct IdleStats {
  uint64_t busy_rounds = 0;
  uint64_t idle_rounds = 0;
  uint64_t sleeps = 0;
  uint64_t slept_ns = 0;
  uint64_t wakeups_by_fd = 0;
};

class EventLoop {
 public:
  explicit EventLoop(const Clock& clock);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  const Clock& clock() const { return clock_; }
  // Inside a round the time read when the round began (one clock read per
  // round, not one per packet); outside a round the clock itself. Code that
  // times something (a benchmark) reads clock().now_ns() instead.
  uint64_t now() const { return round_depth_ ? round_now_ : clock_.now_ns(); }
  TimerWheel& timers() { return timers_; }

  void add_poller(Poller* p);
  void remove_poller(Poller* p);
  // The idle sleep wakes when one of these fds becomes readable.
  Status add_wait_fd(int fd);

  // One round: every poller once, then due timers. True if anything happened.
  bool run_once();
  uint64_t next_deadline() const { return timers_.next_deadline(); }

  // Real-time driver: rounds until done() is true, applying the idle policy.
  // Returns kTimeout (naming `what`) if timeout_ns passes first.
  template <typename Done>
  Status run_until(Done&& done, uint64_t timeout_ns, const char* what) {
    const uint64_t start = now();
    const uint64_t deadline = start + timeout_ns;
    idle_reset();
    // The deadline is checked on the time the last round read (at most a
    // round late): the clock is read once per round, not twice.
    if (round_now_ < start) round_now_ = start;
    while (!done()) {
      if (round_now_ >= deadline) return timeout_status(what, timeout_ns);
      if (run_once()) { idle_reset(); continue; }
      idle_step(deadline);
    }
    return Status::ok();
  }

  const IdleStats& idle_stats() const { return idle_; }
  // Spin and pause rounds yield the CPU (sched_yield) instead of burning it:
  // for node processes that outnumber the cores (the idle path only; the
  // data path still makes no system call).
  void set_yield_when_idle(bool on) { yield_when_idle_ = on; }
  // Idle rounds never sleep: busy-polling, as MPI libraries wait when each
  // process has a core of its own (a sleeping waiter answers late, and
  // nothing but its timeout wakes it on a polled port). Yield mode wins.
  void set_spin_when_idle(bool on) { spin_when_idle_ = on; }

 private:
  void idle_reset();
  void idle_step(uint64_t hard_deadline);
  static Status timeout_status(const char* what, uint64_t timeout_ns);

  const Clock& clock_;
  TimerWheel timers_;
  uint64_t round_now_ = 0;   // the clock when the innermost running round began
  uint32_t round_depth_ = 0; // rounds on the stack (a blocking wait nests one)
  std::vector<Poller*> pollers_;
  int epoll_fd_ = -1;
  uint32_t idle_rounds_ = 0;
  bool yield_when_idle_ = false;
  bool spin_when_idle_ = false;
  uint64_t sleep_ns_ = 0;
  uint64_t idle_since_ = 0;  // yield mode: when this idle stretch began (0: not yet)
  IdleStats idle_;
};

}  // namespace toroid
