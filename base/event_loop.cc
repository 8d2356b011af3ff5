#include "base/event_loop.h"

#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "base/tuning.h"

namespace toroid {

namespace {

constexpr uint64_t kTick = tuning::kTimerTickNs;
constexpr uint32_t kSlots = tuning::kTimerWheelSlots;
constexpr uint32_t kSlotMask = kSlots - 1;

// Fire order: deadline, then arm order. Total, so fire order is a function of
// the arm sequence alone.
bool fires_before(const Timer* a, uint64_t a_seq, const Timer* b, uint64_t b_seq) {
  if (a->deadline() != b->deadline()) return a->deadline() < b->deadline();
  return a_seq < b_seq;
}

// Set once if the kernel lacks epoll_pwait2 (before 5.11): sleep in ms then.
std::atomic<bool> g_no_pwait2{false};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

}  // namespace

// ---- Timer -----------------------------------------------------------------

Timer::~Timer() {
  if (wheel_) wheel_->cancel(*this);
}

// ---- TimerWheel ------------------------------------------------------------
//
// Invariant: an armed timer on a slot list sits at "tick position" L, where
// L = max(deadline tick, cursor_tick_ when it was linked), L >= cursor_tick_,
// and its slot is L mod kSlots. A timer at L = cursor tick with an earlier
// deadline is one armed in the past: it lives in the cursor's slot, which the
// next expire() walks first.

TimerWheel::TimerWheel(uint64_t now_ns) : slots_(kSlots, nullptr), cursor_tick_(now_ns / kTick) {}

TimerWheel::~TimerWheel() {
  // Timers outlive the wheel in some teardown orders: leave them unarmed so
  // their destructors do not reach back into freed memory.
  auto drop = [](Timer* t) {
    while (t) {
      Timer* next = t->next_;
      t->wheel_ = nullptr;
      t->prev_ = t->next_ = nullptr;
      t = next;
    }
  };
  for (Timer*& head : slots_) { drop(head); head = nullptr; }
  for (uint64_t& w : occupied_) w = 0;
  drop(firing_);
  firing_ = nullptr;
  count_ = 0;
}

void TimerWheel::link(Timer& t) {
  const uint64_t tick = std::max(t.deadline_ / kTick, cursor_tick_);
  const uint32_t slot = static_cast<uint32_t>(tick & kSlotMask);
  t.slot_ = slot;
  t.prev_ = nullptr;
  t.next_ = slots_[slot];
  if (t.next_) t.next_->prev_ = &t;
  slots_[slot] = &t;
  occupied_[slot >> 6] |= uint64_t{1} << (slot & 63);
}

uint32_t TimerWheel::next_occupied(uint32_t from) const {
  uint32_t i = from;
  while (i < kSlots) {
    const uint32_t slot = static_cast<uint32_t>((cursor_tick_ + i) & kSlotMask);
    const uint64_t bits = occupied_[slot >> 6] >> (slot & 63);
    if (bits) return std::min<uint32_t>(kSlots, i + static_cast<uint32_t>(__builtin_ctzll(bits)));
    i += 64 - (slot & 63);  // the rest of this word is empty
  }
  return kSlots;
}

void TimerWheel::unlink(Timer& t) {
  Timer*& head = t.slot_ == kFiringSlot ? firing_ : slots_[t.slot_];
  if (t.prev_) t.prev_->next_ = t.next_;
  else head = t.next_;
  if (t.next_) t.next_->prev_ = t.prev_;
  if (!head && t.slot_ != kFiringSlot) occupied_[t.slot_ >> 6] &= ~(uint64_t{1} << (t.slot_ & 63));
  t.prev_ = t.next_ = nullptr;
}

void TimerWheel::arm(Timer& t, uint64_t deadline_ns) {
  if (t.wheel_ && t.wheel_ != this) t.wheel_->cancel(t);
  if (t.wheel_ == this) {
    unlink(t);
    if (t.deadline_ <= cached_next_) next_dirty_ = true;  // may have been the minimum
  } else {
    ++count_;
  }
  t.wheel_ = this;
  t.deadline_ = deadline_ns;
  t.seq_ = arm_seq_++;
  link(t);
  if (!next_dirty_ && deadline_ns < cached_next_) cached_next_ = deadline_ns;
  if (deadline_ns < floor_) floor_ = deadline_ns;
}

void TimerWheel::cancel(Timer& t) {
  if (t.wheel_ != this) return;
  unlink(t);
  t.wheel_ = nullptr;
  --count_;
  if (t.deadline_ <= cached_next_) next_dirty_ = true;
}

uint32_t TimerWheel::expire(uint64_t now_ns) {
  // Nothing to walk when no timer is armed, or when no deadline can be
  // below now: floor_ is at most the earliest one (a cancel leaves it as it
  // was, so a timer armed and cancelled in every operation costs no walk and
  // no scan). Keep the cursor moving even so, so a later arm in the past
  // lands in the slot the next walk starts from.
  if (expiring_ || count_ == 0 || now_ns < floor_) {
    if (!expiring_) cursor_tick_ = std::max(cursor_tick_, now_ns / kTick);
    return 0;
  }
  const uint64_t end_tick = std::max(now_ns / kTick, cursor_tick_);
  const uint64_t walk = std::min<uint64_t>(end_tick - cursor_tick_ + 1, kSlots);

  // Detach every due timer onto a singly linked list (next_ only).
  Timer* due = nullptr;
  uint32_t ndue = 0;
  for (uint64_t i = next_occupied(0); i < walk; i = next_occupied(static_cast<uint32_t>(i) + 1)) {
    const uint32_t slot = static_cast<uint32_t>((cursor_tick_ + i) & kSlotMask);
    for (Timer* t = slots_[slot]; t;) {
      Timer* next = t->next_;
      if (t->deadline_ <= now_ns) {
        unlink(*t);
        t->slot_ = kFiringSlot;
        t->next_ = due;
        due = t;
        ++ndue;
      }
      t = next;
    }
  }
  cursor_tick_ = end_tick;
  if (ndue == 0) {
    floor_ = cached_next_ = scan_next();  // the earliest deadline: walks resume there
    next_dirty_ = false;
    return 0;
  }

  // Bottom-up merge sort by (deadline, arm order): no allocation, and the
  // list is short (the due timers of one walk).
  for (uint32_t width = 1; width < ndue; width *= 2) {
    Timer* out = nullptr;
    Timer** tail = &out;
    Timer* rest = due;
    while (rest) {
      Timer* a = rest;
      Timer* p = a;
      for (uint32_t k = 1; k < width && p->next_; ++k) p = p->next_;
      Timer* b = p->next_;
      p->next_ = nullptr;
      Timer* q = b;
      for (uint32_t k = 1; k < width && q && q->next_; ++k) q = q->next_;
      if (q) { rest = q->next_; q->next_ = nullptr; }
      else rest = nullptr;
      while (a && b) {
        if (fires_before(b, b->seq_, a, a->seq_)) { *tail = b; b = b->next_; }
        else { *tail = a; a = a->next_; }
        tail = &(*tail)->next_;
      }
      *tail = a ? a : b;
      while (*tail) tail = &(*tail)->next_;
    }
    due = out;
  }
  // Make it the doubly linked firing list so callbacks can cancel or re-arm
  // timers that are due but not yet fired.
  Timer* prev = nullptr;
  for (Timer* t = due; t; t = t->next_) { t->prev_ = prev; prev = t; }
  firing_ = due;
  next_dirty_ = true;

  expiring_ = true;
  uint32_t fired = 0;
  while (Timer* t = firing_) {
    unlink(*t);
    t->wheel_ = nullptr;
    --count_;
    fired += !t->background_;
    if (t->cb_) t->cb_(t->ctx_);  // may destroy, re-arm or cancel anything
  }
  expiring_ = false;
  floor_ = cached_next_ = scan_next();
  next_dirty_ = false;
  return fired;
}

uint64_t TimerWheel::scan_next() const {
  uint64_t best = kNever;
  for (const Timer* t = firing_; t; t = t->next_) best = std::min(best, t->deadline_);
  // Walk slots in tick order from the cursor. After the slot of tick W, every
  // timer not yet seen has a deadline >= (W + 1) * tick (see the invariant
  // above), so a minimum below that is final.
  for (uint32_t i = next_occupied(0); i < kSlots; i = next_occupied(i + 1)) {
    const uint64_t tick = cursor_tick_ + i;
    for (const Timer* t = slots_[tick & kSlotMask]; t; t = t->next_) best = std::min(best, t->deadline_);
    if (best < (tick + 1) * kTick) break;
  }
  return best;
}

uint64_t TimerWheel::next_deadline() const {
  if (count_ == 0) return kNever;
  if (next_dirty_) {
    cached_next_ = scan_next();
    next_dirty_ = false;
  }
  return cached_next_;
}

// ---- EventLoop -------------------------------------------------------------

EventLoop::EventLoop(const Clock& clock) : clock_(clock), timers_(clock.now_ns()) {}

EventLoop::~EventLoop() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void EventLoop::add_poller(Poller* p) { pollers_.push_back(p); }

void EventLoop::remove_poller(Poller* p) { std::erase(pollers_, p); }

Status EventLoop::add_wait_fd(int fd) {
  if (epoll_fd_ < 0) {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) return error(Code::kIo, "epoll_create1: %s", std::strerror(errno));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
    return error(Code::kIo, "epoll_ctl add fd %d: %s", fd, std::strerror(errno));
  return Status::ok();
}

bool EventLoop::run_once() {
  bool busy = false;
  const uint64_t outer_now = round_now_;
  ++round_depth_;
  round_now_ = clock_.now_ns();
  // By index: a poller may add or remove pollers from inside poll().
  for (size_t i = 0; i < pollers_.size(); ++i) {
    Poller* p = pollers_[i];
    if (p->in_poll_) continue;  // on the stack below a blocking wait
    p->in_poll_ = true;
    busy |= p->poll();
    p->in_poll_ = false;
  }
  // Timers fire on the round's time too: at most one round late, and one
  // clock read per round however many packets moved.
  if (timers_.expire(round_now_) > 0) busy = true;
  --round_depth_;
  // A nested round (a blocking wait inside a poller) leaves the outer round
  // with the later time.
  if (round_depth_) round_now_ = std::max(outer_now, clock_.now_ns());
  if (busy) ++idle_.busy_rounds;
  else ++idle_.idle_rounds;
  return busy;
}

void EventLoop::idle_reset() {
  idle_rounds_ = 0;
  sleep_ns_ = 0;
  idle_since_ = 0;
}

void EventLoop::idle_step(uint64_t hard_deadline) {
  // The sim scheduler owns virtual time: sleeping would only stall it.
  if (clock_.is_virtual()) return;
  if (yield_when_idle_) {
    // More nodes than cores: a spinning node holds the core its peer needs
    // to answer. Hand the core over at once, every idle round (sched_yield
    // returns at once when nobody else waits); sleep only after a while
    // with nothing at all to do (a sleeping node is woken by nothing but
    // its timeout, and a collective waiting on it would wait that long).
    const uint64_t t = now();
    if (idle_since_ == 0) idle_since_ = t;
    if (t - idle_since_ < tuning::kIdleYieldNs) {
      sched_yield();
      ++idle_rounds_;
      return;
    }
  } else if (spin_when_idle_ || idle_rounds_ < tuning::kIdleSpinRounds + tuning::kIdlePauseRounds) {
    if (idle_rounds_ >= tuning::kIdleSpinRounds) cpu_relax();
    ++idle_rounds_;
    return;
  }

  const uint64_t start = now();
  const uint64_t limit = std::min(timers_.next_deadline(), hard_deadline);
  if (limit <= start) return;  // a timer is due (or the wait is over): no sleep
  sleep_ns_ = sleep_ns_ == 0 ? tuning::kIdleSleepMinNs : std::min(sleep_ns_ * 2, tuning::kIdleSleepMaxNs);
  const uint64_t dur = std::min(sleep_ns_, limit - start);

  timespec ts;
  ts.tv_sec = static_cast<time_t>(dur / kSec);
  ts.tv_nsec = static_cast<long>(dur % kSec);
  if (epoll_fd_ >= 0) {
    epoll_event ev[8];
    int n = -1;
    if (!g_no_pwait2.load(std::memory_order_relaxed)) {
      n = epoll_pwait2(epoll_fd_, ev, 8, &ts, nullptr);
      if (n < 0 && errno == ENOSYS) g_no_pwait2.store(true, std::memory_order_relaxed);
    }
    if (g_no_pwait2.load(std::memory_order_relaxed)) {
      const int ms = static_cast<int>(std::min<uint64_t>((dur + kMs - 1) / kMs, 1u << 30));
      n = epoll_wait(epoll_fd_, ev, 8, ms);
    }
    if (n > 0) ++idle_.wakeups_by_fd;
  } else {
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);  // EINTR: just wake early
  }
  ++idle_.sleeps;
  idle_.slept_ns += now() - start;
}

Status EventLoop::timeout_status(const char* what, uint64_t timeout_ns) {
  char buf[32];
  format_duration(timeout_ns, buf, sizeof buf);
  return error(Code::kTimeout, "%s did not finish within %s", what ? what : "wait", buf);
}

}  // namespace toroid
