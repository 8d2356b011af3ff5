#include <dirent.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/tuning.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

struct CountingPoller : Poller {
  int calls = 0;
  bool busy = false;
  bool poll() override { ++calls; return busy; }
};

// Moves a virtual clock forward on every poll (the sim scheduler's job).
struct TimeMachine : Poller {
  VirtualClock* clock;
  uint64_t step;
  explicit TimeMachine(VirtualClock* c, uint64_t s) : clock(c), step(s) {}
  bool poll() override { clock->set(clock->now_ns() + step); return false; }
};

struct Flag {
  bool set = false;
  static void fire(void* ctx) { static_cast<Flag*>(ctx)->set = true; }
};

int open_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (readdir(d)) ++n;
  closedir(d);
  return n;
}

uint64_t cpu_ns() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  auto ns = [](const timeval& tv) { return static_cast<uint64_t>(tv.tv_sec) * kSec + static_cast<uint64_t>(tv.tv_usec) * kUs; };
  return ns(ru.ru_utime) + ns(ru.ru_stime);
}

bool contains(const std::string& hay, const char* needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST_GROUP(EventLoop) {
  VirtualClock vclock;
  RealClock rclock;
};

TEST(EventLoop, RunOnceCallsEveryPollerAndReportsBusy) {
  EventLoop loop(vclock);
  CountingPoller a, b;
  loop.add_poller(&a);
  loop.add_poller(&b);
  CHECK_FALSE(loop.run_once());
  LONGS_EQUAL(1, a.calls);
  LONGS_EQUAL(1, b.calls);
  b.busy = true;
  CHECK_TRUE(loop.run_once());
  LONGS_EQUAL(2, a.calls);  // a busy poller does not end the round early
  a.busy = true;
  b.busy = false;
  CHECK_TRUE(loop.run_once());
  LONGS_EQUAL(3, b.calls);  // nor does a busy first poller skip the rest
  UNSIGNED_LONGLONGS_EQUAL(2, loop.idle_stats().busy_rounds);
  UNSIGNED_LONGLONGS_EQUAL(1, loop.idle_stats().idle_rounds);
}

TEST(EventLoop, RemovedPollerIsNotCalled) {
  EventLoop loop(vclock);
  CountingPoller a, b;
  loop.add_poller(&a);
  loop.add_poller(&b);
  loop.remove_poller(&a);
  (void)loop.run_once();
  LONGS_EQUAL(0, a.calls);
  LONGS_EQUAL(1, b.calls);
}

// A blocking wait called from inside a poller drives the loop itself: the
// nested rounds run every other poller, skip the one on the stack (no
// re-entry), and once it returns that poller is polled again as usual.
namespace {
struct Blocker : Poller {
  EventLoop* loop;
  CountingPoller* other;
  int calls = 0, depth = 0, max_depth = 0;
  bool poll() override {
    ++calls;
    max_depth = std::max(max_depth, ++depth);
    if (calls == 1) {
      Status st = loop->run_until([this] { return other->calls >= 5; }, kSec, "nested");
      CHECK_TRUE(st.is_ok());
    }
    --depth;
    return false;
  }
};
}  // namespace

TEST(EventLoop, NestedRoundsSkipThePollerOnTheStack) {
  EventLoop loop(rclock);
  CountingPoller other;
  Blocker b;
  b.loop = &loop;
  b.other = &other;
  loop.add_poller(&b);
  loop.add_poller(&other);
  (void)loop.run_once();
  LONGS_EQUAL(1, b.calls);  // not re-entered by the nested rounds
  LONGS_EQUAL(1, b.max_depth);
  CHECK(other.calls >= 5);
  (void)loop.run_once();
  LONGS_EQUAL(2, b.calls);  // and polled again afterwards
}

TEST(EventLoop, RunOnceFiresDueTimers) {
  vclock.set(1 * kMs);
  EventLoop loop(vclock);
  CountingPoller idle;
  loop.add_poller(&idle);
  Flag f;
  Timer t(&Flag::fire, &f);
  loop.timers().arm(t, loop.now() + 5 * kUs);
  UNSIGNED_LONGLONGS_EQUAL(1 * kMs + 5 * kUs, loop.next_deadline());
  vclock.set(1 * kMs + 4 * kUs);
  CHECK_FALSE(loop.run_once());
  CHECK_FALSE(f.set);
  vclock.set(1 * kMs + 5 * kUs);
  CHECK_TRUE(loop.run_once());  // idle poller, but a timer fired
  CHECK_TRUE(f.set);
  UNSIGNED_LONGLONGS_EQUAL(kNever, loop.next_deadline());
  CHECK_FALSE(loop.run_once());
}

TEST(EventLoop, ConstructorOpensNoFdsAndEpollIsClosed) {
  const int before = open_fds();
  CHECK_TRUE(before > 0);
  {
    std::vector<std::unique_ptr<EventLoop>> loops;
    for (int i = 0; i < 200; ++i) loops.push_back(std::make_unique<EventLoop>(vclock));
    LONGS_EQUAL(before, open_fds());
  }
  const int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  CHECK_TRUE(efd >= 0);
  const int efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  {
    EventLoop loop(rclock);
    CHECK_TRUE(loop.add_wait_fd(efd).is_ok());
    LONGS_EQUAL(before + 3, open_fds());  // two eventfds + one epoll
    CHECK_TRUE(loop.add_wait_fd(efd2).is_ok());
    LONGS_EQUAL(before + 3, open_fds());  // epoll made once
  }
  LONGS_EQUAL(before + 2, open_fds());
  close(efd);
  close(efd2);
}

TEST(EventLoop, AddWaitFdRejectsBadFd) {
  EventLoop loop(rclock);
  Status s = loop.add_wait_fd(-1);
  CHECK(s.code() == Code::kIo);
  CHECK_TEXT(contains(s.message(), "-1"), s.message().c_str());
}

TEST(EventLoop, RunUntilDoneAtOnceRunsNoRound) {
  EventLoop loop(vclock);
  CountingPoller p;
  loop.add_poller(&p);
  CHECK_TRUE(loop.run_until([] { return true; }, kMs, "nothing").is_ok());
  LONGS_EQUAL(0, p.calls);
}

TEST(EventLoop, RunUntilVirtualTimeoutNamesWhat) {
  EventLoop loop(vclock);
  TimeMachine tm(&vclock, 1 * kUs);
  loop.add_poller(&tm);
  RealClock wall;
  const uint64_t t0 = wall.now_ns();
  // 20k idle rounds: far past the spin and pause budgets, where a real
  // clock would start sleeping.
  Status s = loop.run_until([] { return false; }, 20 * kMs, "barrier channel 2");
  CHECK(s.code() == Code::kTimeout);
  STRCMP_EQUAL("barrier channel 2 did not finish within 20.00 ms", s.message().c_str());
  CHECK_TRUE(vclock.now_ns() >= 20 * kMs);
  CHECK_TRUE(vclock.now_ns() < 20 * kMs + 10 * kUs);
  UNSIGNED_LONGLONGS_EQUAL(0, loop.idle_stats().sleeps);  // never sleeps on virtual time
  CHECK_TRUE(loop.idle_stats().idle_rounds >= 19999);
  CHECK_TRUE(wall.now_ns() - t0 < 2 * kSec);
}

TEST(EventLoop, RunUntilVirtualDoneByTimer) {
  EventLoop loop(vclock);
  TimeMachine tm(&vclock, 1 * kUs);
  loop.add_poller(&tm);
  Flag f;
  Timer t(&Flag::fire, &f);
  loop.timers().arm(t, 50 * kUs);
  CHECK_TRUE(loop.run_until([&] { return f.set; }, 1 * kMs, "timer").is_ok());
  CHECK_TRUE(vclock.now_ns() >= 50 * kUs);
  CHECK_TRUE(vclock.now_ns() < 60 * kUs);
}

TEST(EventLoop, RealIdleTimeoutSleepsCheaply) {
  EventLoop loop(rclock);
  CountingPoller idle;
  loop.add_poller(&idle);
  const uint64_t cpu0 = cpu_ns();
  const uint64_t t0 = rclock.now_ns();
  Status s = loop.run_until([] { return false; }, 30 * kMs, "idle wait");
  const uint64_t wall = rclock.now_ns() - t0;
  const uint64_t cpu = cpu_ns() - cpu0;
  CHECK(s.code() == Code::kTimeout);
  STRCMP_EQUAL("idle wait did not finish within 30.00 ms", s.message().c_str());
  CHECK_TRUE(wall >= 30 * kMs);
  CHECK_TRUE(loop.idle_stats().sleeps > 0);
  CHECK_TRUE(loop.idle_stats().slept_ns > 0);
  CHECK_TRUE(loop.idle_stats().slept_ns <= wall);
  UNSIGNED_LONGLONGS_EQUAL(0, loop.idle_stats().busy_rounds);
  // Spinning the whole time would cost ~100% of the wall time.
  CHECK_TEXT(cpu * 2 < wall, ("cpu " + std::to_string(cpu) + " ns of wall " + std::to_string(wall)).c_str());
}

TEST(EventLoop, SpinWhenIdleNeverSleeps) {
  EventLoop loop(rclock);
  CountingPoller idle;
  loop.add_poller(&idle);
  loop.set_spin_when_idle(true);
  Status s = loop.run_until([] { return false; }, 20 * kMs, "spin wait");
  CHECK(s.code() == Code::kTimeout);
  UNSIGNED_LONGLONGS_EQUAL(0, loop.idle_stats().sleeps);
  // Far more rounds than the spin and pause budget before the idle policy sleeps.
  CHECK_TRUE(loop.idle_stats().idle_rounds > 2 * (tuning::kIdleSpinRounds + tuning::kIdlePauseRounds));
  // Yield mode wins over spinning (more processes than cores).
  loop.set_yield_when_idle(true);
  CHECK(loop.run_until([] { return false; }, 1 * kMs, "yield wait").code() == Code::kTimeout);
}

namespace {
// Busy once every `every` rounds: more often than the spin budget, so the
// loop must never get as far as sleeping.
struct SometimesBusy : Poller {
  uint32_t every;
  uint32_t n = 0;
  explicit SometimesBusy(uint32_t e) : every(e) {}
  bool poll() override { return ++n % every == 0; }
};
}  // namespace

TEST(EventLoop, BusyRoundsResetTheIdlePolicy) {
  EventLoop loop(rclock);
  SometimesBusy p(tuning::kIdleSpinRounds / 2);
  loop.add_poller(&p);
  const uint64_t need = 20ull * tuning::kIdleSpinRounds;
  CHECK_TRUE(loop.run_until([&] { return p.n >= need; }, 10 * kSec, "rounds").is_ok());
  UNSIGNED_LONGLONGS_EQUAL(0, loop.idle_stats().sleeps);
  CHECK_TRUE(loop.idle_stats().busy_rounds >= 39);
}

namespace {
struct TimerFdReader : Poller {
  int fd;
  bool got = false;
  uint64_t got_at = 0;
  const Clock* clock;
  TimerFdReader(int f, const Clock* c) : fd(f), clock(c) {}
  bool poll() override {
    uint64_t n;
    if (read(fd, &n, sizeof n) != sizeof n) return false;
    got = true;
    got_at = clock->now_ns();
    return true;
  }
};
}  // namespace

TEST(EventLoop, WaitFdWakesTheSleepingLoop) {
  // The fd can become readable while the loop is not asleep (still in its
  // spin phase when preempted on a loaded machine, or between two sleeps);
  // the poller then reads it without an fd wakeup. A few attempts make that
  // noise vanish while a loop that never sleeps on the fd still fails.
  uint64_t fd_wakeups = 0;
  for (int attempt = 0; attempt < 5 && fd_wakeups == 0; ++attempt) {
    const int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    CHECK_TRUE(tfd >= 0);
    EventLoop loop(rclock);
    TimerFdReader reader(tfd, &rclock);
    loop.add_poller(&reader);
    CHECK_TRUE(loop.add_wait_fd(tfd).is_ok());
    itimerspec its{};
    its.it_value.tv_nsec = 5 * 1000 * 1000;  // 5 ms from now
    const uint64_t t0 = rclock.now_ns();
    CHECK_TRUE(timerfd_settime(tfd, 0, &its, nullptr) == 0);
    Status s = loop.run_until([&] { return reader.got; }, 2 * kSec, "timerfd");
    const uint64_t elapsed = rclock.now_ns() - t0;
    close(tfd);
    CHECK_TEXT(s.is_ok(), s.to_string().c_str());
    CHECK_TRUE(elapsed >= 5 * kMs - 100 * kUs);
    CHECK_TRUE(elapsed < 500 * kMs);  // well before the timeout
    fd_wakeups = loop.idle_stats().wakeups_by_fd;
  }
  CHECK_TRUE(fd_wakeups > 0);
}

TEST(EventLoop, PendingTimerBoundsTheSleep) {
  EventLoop loop(rclock);
  CountingPoller idle;
  loop.add_poller(&idle);
  Flag f;
  Timer t(&Flag::fire, &f);
  const uint64_t t0 = rclock.now_ns();
  loop.timers().arm(t, t0 + 3 * kMs);
  Status s = loop.run_until([&] { return f.set; }, 1 * kSec, "timer wait");
  const uint64_t elapsed = rclock.now_ns() - t0;
  CHECK_TEXT(s.is_ok(), s.to_string().c_str());
  CHECK_TRUE(elapsed >= 3 * kMs);
  CHECK_TRUE(elapsed < 300 * kMs);  // well under the 1 s timeout
  CHECK_FALSE(t.armed());
}
