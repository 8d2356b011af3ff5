#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "base/event_loop.h"
#include "base/rng.h"
#include "base/tuning.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {
constexpr uint64_t kRev = tuning::kTimerTickNs * tuning::kTimerWheelSlots;  // one revolution

// Manual time for the wheel (TimerWheel takes now values directly).
struct Harness {
  uint64_t now = 0;
  std::vector<int> fired;
};

struct TestTimer {
  Timer timer;
  int id = 0;
  Harness* h = nullptr;
  int count = 0;
  uint64_t fired_at = kNever;
  // Optional actions performed from the callback.
  TimerWheel* wheel = nullptr;
  uint64_t period = 0;           // re-arm itself at deadline + period
  TestTimer* cancel_other = nullptr;

  TestTimer(Harness* harness, int ident) : timer(&TestTimer::fire, this), id(ident), h(harness) {}
  static void fire(void* ctx) {
    auto* t = static_cast<TestTimer*>(ctx);
    t->count++;
    t->fired_at = t->h->now;
    t->h->fired.push_back(t->id);
    if (t->period) t->wheel->arm(t->timer, t->timer.deadline() + t->period);
    if (t->cancel_other) t->wheel->cancel(t->cancel_other->timer);
  }
};

uint32_t expire_at(TimerWheel& w, Harness& h, uint64_t now) {
  h.now = now;
  return w.expire(now);
}
}  // namespace

TEST_GROUP(TimerWheel) {
  Harness h;
};

TEST(TimerWheel, FiresInDeadlineOrder) {
  TimerWheel w(0);
  TestTimer a(&h, 5), b(&h, 1), c(&h, 3), d(&h, 4);
  w.arm(a.timer, 5 * kUs);
  w.arm(b.timer, 1 * kUs);
  w.arm(c.timer, 3 * kUs + 700);
  w.arm(d.timer, 3 * kUs + 200);  // same slot as c, earlier deadline
  LONGS_EQUAL(4, w.size());
  LONGS_EQUAL(4, expire_at(w, h, 10 * kUs));
  LONGS_EQUAL(4, h.fired.size());
  LONGS_EQUAL(1, h.fired[0]);
  LONGS_EQUAL(4, h.fired[1]);
  LONGS_EQUAL(3, h.fired[2]);
  LONGS_EQUAL(5, h.fired[3]);
  LONGS_EQUAL(0, w.size());
  CHECK_FALSE(a.timer.armed());
}

TEST(TimerWheel, EqualDeadlinesFireInArmOrder) {
  TimerWheel w(0);
  TestTimer t1(&h, 1), t2(&h, 2), t3(&h, 3);
  w.arm(t2.timer, 7 * kUs);
  w.arm(t3.timer, 7 * kUs);
  w.arm(t1.timer, 7 * kUs);
  LONGS_EQUAL(3, expire_at(w, h, 7 * kUs));
  LONGS_EQUAL(2, h.fired[0]);
  LONGS_EQUAL(3, h.fired[1]);
  LONGS_EQUAL(1, h.fired[2]);
}

TEST(TimerWheel, NotBeforeItsDeadline) {
  TimerWheel w(0);
  TestTimer t(&h, 1);
  w.arm(t.timer, 5 * kUs + 300);  // mid-tick deadline
  LONGS_EQUAL(0, expire_at(w, h, 4 * kUs));
  LONGS_EQUAL(0, expire_at(w, h, 5 * kUs));
  LONGS_EQUAL(0, expire_at(w, h, 5 * kUs + 299));
  CHECK_TRUE(t.timer.armed());
  LONGS_EQUAL(1, expire_at(w, h, 5 * kUs + 300));
  LONGS_EQUAL(1, t.count);
  LONGS_EQUAL(0, expire_at(w, h, 50 * kUs));
  LONGS_EQUAL(1, t.count);
}

TEST(TimerWheel, CancelPreventsFiring) {
  TimerWheel w(0);
  TestTimer a(&h, 1), b(&h, 2);
  w.arm(a.timer, 10 * kUs);
  w.arm(b.timer, 10 * kUs);
  w.cancel(a.timer);
  CHECK_FALSE(a.timer.armed());
  LONGS_EQUAL(1, w.size());
  w.cancel(a.timer);  // unarmed: no-op
  LONGS_EQUAL(1, w.size());
  LONGS_EQUAL(1, expire_at(w, h, 20 * kUs));
  LONGS_EQUAL(0, a.count);
  LONGS_EQUAL(1, b.count);
  TestTimer never(&h, 3);
  w.cancel(never.timer);  // never armed: no-op
  LONGS_EQUAL(0, w.size());
}

TEST(TimerWheel, RearmMoves) {
  TimerWheel w(0);
  TestTimer a(&h, 1), b(&h, 2);
  w.arm(a.timer, 10 * kUs);
  w.arm(a.timer, 3 * kUs);  // earlier
  w.arm(b.timer, 3 * kUs);
  w.arm(b.timer, 12 * kUs);  // later
  LONGS_EQUAL(2, w.size());
  UNSIGNED_LONGLONGS_EQUAL(3 * kUs, a.timer.deadline());
  LONGS_EQUAL(1, expire_at(w, h, 5 * kUs));
  LONGS_EQUAL(1, a.count);
  LONGS_EQUAL(0, b.count);
  LONGS_EQUAL(0, expire_at(w, h, 11 * kUs));
  LONGS_EQUAL(1, expire_at(w, h, 12 * kUs));
  LONGS_EQUAL(1, a.count);
  LONGS_EQUAL(1, b.count);
  UNSIGNED_LONGLONGS_EQUAL(12 * kUs, b.fired_at);
}

TEST(TimerWheel, RearmOntoAnotherWheelMovesIt) {
  TimerWheel w1(0), w2(0);
  TestTimer a(&h, 1);
  w1.arm(a.timer, 5 * kUs);
  w2.arm(a.timer, 6 * kUs);
  LONGS_EQUAL(0, w1.size());
  LONGS_EQUAL(1, w2.size());
  LONGS_EQUAL(0, expire_at(w1, h, 10 * kUs));
  LONGS_EQUAL(1, expire_at(w2, h, 10 * kUs));
}

TEST(TimerWheel, FarDeadlinesWaitTheirRevolution) {
  TimerWheel w(0);
  TestTimer near(&h, 1), one_rev(&h, 2), three_rev(&h, 3);
  w.arm(near.timer, 5 * kUs);
  w.arm(one_rev.timer, kRev + 5 * kUs);         // same slot as `near`
  w.arm(three_rev.timer, 3 * kRev + 5 * kUs + 1);  // same slot again
  // Step a tick at a time: each must fire exactly at its deadline's tick.
  for (uint64_t t = 0; t <= 4 * kRev; t += tuning::kTimerTickNs) expire_at(w, h, t);
  LONGS_EQUAL(1, near.count);
  LONGS_EQUAL(1, one_rev.count);
  LONGS_EQUAL(1, three_rev.count);
  UNSIGNED_LONGLONGS_EQUAL(5 * kUs, near.fired_at);
  UNSIGNED_LONGLONGS_EQUAL(kRev + 5 * kUs, one_rev.fired_at);
  UNSIGNED_LONGLONGS_EQUAL(3 * kRev + 6 * kUs, three_rev.fired_at);  // first tick >= deadline
}

TEST(TimerWheel, FarDeadlineAcrossBigJumps) {
  TimerWheel w(0);
  TestTimer far(&h, 1);
  const uint64_t deadline = 2 * kRev + kRev / 2;
  w.arm(far.timer, deadline);
  // Land on the timer's slot one and two revolutions early.
  LONGS_EQUAL(0, expire_at(w, h, deadline - 2 * kRev));
  LONGS_EQUAL(0, expire_at(w, h, deadline - kRev));
  // A jump of more than a revolution that stops short of the deadline.
  LONGS_EQUAL(0, expire_at(w, h, deadline - 1));
  CHECK_TRUE(far.timer.armed());
  // A jump of many revolutions past it.
  LONGS_EQUAL(1, expire_at(w, h, deadline + 10 * kRev + 17));
  LONGS_EQUAL(1, far.count);
}

TEST(TimerWheel, BigJumpFiresEverythingDueInOrder) {
  TimerWheel w(0);
  std::vector<std::unique_ptr<TestTimer>> ts;
  // Deadlines spread over 5 revolutions, armed in scrambled order.
  for (int i = 0; i < 50; ++i) {
    ts.push_back(std::make_unique<TestTimer>(&h, i));
    const uint64_t d = static_cast<uint64_t>((i * 37) % 50) * (kRev / 10) + 123;
    w.arm(ts.back()->timer, d);
  }
  LONGS_EQUAL(50, expire_at(w, h, 100 * kRev));
  for (size_t i = 1; i < h.fired.size(); ++i) {
    CHECK_TRUE(ts[h.fired[i - 1]]->timer.deadline() <= ts[h.fired[i]]->timer.deadline());
  }
}

TEST(TimerWheel, PeriodicCallbackRearmsItself) {
  TimerWheel w(0);
  TestTimer p(&h, 1);
  p.wheel = &w;
  p.period = 100 * kUs;
  w.arm(p.timer, 100 * kUs);
  for (uint64_t t = 0; t <= 1000 * kUs; t += kUs) expire_at(w, h, t);
  LONGS_EQUAL(10, p.count);
  UNSIGNED_LONGLONGS_EQUAL(1000 * kUs, p.fired_at);
  CHECK_TRUE(p.timer.armed());
  UNSIGNED_LONGLONGS_EQUAL(1100 * kUs, p.timer.deadline());
  UNSIGNED_LONGLONGS_EQUAL(1100 * kUs, w.next_deadline());
  // After a long stall a periodic timer catches up one period per expire
  // (re-arming into the past from a callback never loops inside expire).
  LONGS_EQUAL(1, expire_at(w, h, 5000 * kUs));
  LONGS_EQUAL(1, expire_at(w, h, 5000 * kUs));
  LONGS_EQUAL(12, p.count);
  UNSIGNED_LONGLONGS_EQUAL(1300 * kUs, p.timer.deadline());
}

TEST(TimerWheel, CallbackCancelsAnotherPendingTimer) {
  TimerWheel w(0);
  TestTimer a(&h, 1), b_same_round(&h, 2), c(&h, 3), d_later(&h, 4);
  a.wheel = &w;
  a.cancel_other = &b_same_round;  // due in the same expire, not yet fired
  c.wheel = &w;
  c.cancel_other = &d_later;  // due much later
  w.arm(a.timer, 5 * kUs);
  w.arm(b_same_round.timer, 6 * kUs);
  w.arm(c.timer, 7 * kUs);
  w.arm(d_later.timer, 500 * kUs);
  LONGS_EQUAL(2, expire_at(w, h, 10 * kUs));
  LONGS_EQUAL(1, a.count);
  LONGS_EQUAL(0, b_same_round.count);
  LONGS_EQUAL(1, c.count);
  CHECK_FALSE(b_same_round.timer.armed());
  CHECK_FALSE(d_later.timer.armed());
  LONGS_EQUAL(0, w.size());
  UNSIGNED_LONGLONGS_EQUAL(kNever, w.next_deadline());
  LONGS_EQUAL(0, expire_at(w, h, 1000 * kUs));
  LONGS_EQUAL(0, d_later.count);
}

namespace {
struct Rearmer {
  TimerWheel* w;
  Timer* target;
  uint64_t when;
  int count = 0;
  static void fire(void* ctx) {
    auto* r = static_cast<Rearmer*>(ctx);
    r->count++;
    r->w->arm(*r->target, r->when);
  }
};
}  // namespace

TEST(TimerWheel, CallbackRearmsAPendingTimerLater) {
  TimerWheel w(0);
  TestTimer b(&h, 2);
  Rearmer r{&w, &b.timer, 50 * kUs};
  Timer a(&Rearmer::fire, &r);
  w.arm(a, 5 * kUs);
  w.arm(b.timer, 6 * kUs);  // due in the same expire, moved away by a
  LONGS_EQUAL(1, w.expire(10 * kUs));
  LONGS_EQUAL(0, b.count);
  CHECK_TRUE(b.timer.armed());
  UNSIGNED_LONGLONGS_EQUAL(50 * kUs, w.next_deadline());
  LONGS_EQUAL(1, expire_at(w, h, 50 * kUs));
  LONGS_EQUAL(1, b.count);
}

TEST(TimerWheel, PastDeadlineFiresAtNextExpire) {
  TimerWheel w(0);
  TestTimer a(&h, 1), b(&h, 2), c(&h, 3);
  expire_at(w, h, 2000 * kUs);  // cursor well past a revolution
  w.arm(a.timer, 10 * kUs);     // slot 10, not the cursor's slot
  w.arm(b.timer, 1999 * kUs);
  w.arm(c.timer, 0);
  UNSIGNED_LONGLONGS_EQUAL(0, w.next_deadline());
  LONGS_EQUAL(3, expire_at(w, h, 2000 * kUs));  // same now as before
  LONGS_EQUAL(3, h.fired[0]);
  LONGS_EQUAL(1, h.fired[1]);
  LONGS_EQUAL(2, h.fired[2]);

  TimerWheel late(kSec);  // created "now" = 1 s
  TestTimer d(&h, 4);
  late.arm(d.timer, 3);
  LONGS_EQUAL(1, expire_at(late, h, kSec));
  LONGS_EQUAL(1, d.count);
}

TEST(TimerWheel, NextDeadlineExact) {
  TimerWheel w(0);
  TestTimer a(&h, 1), b(&h, 2), c(&h, 3), far(&h, 4);
  UNSIGNED_LONGLONGS_EQUAL(kNever, w.next_deadline());
  w.arm(far.timer, 3 * kRev + 5);
  UNSIGNED_LONGLONGS_EQUAL(3 * kRev + 5, w.next_deadline());
  w.arm(a.timer, 50 * kUs);
  w.arm(b.timer, 20 * kUs + 7);
  w.arm(c.timer, 80 * kUs + 1);
  UNSIGNED_LONGLONGS_EQUAL(20 * kUs + 7, w.next_deadline());
  w.cancel(b.timer);
  UNSIGNED_LONGLONGS_EQUAL(50 * kUs, w.next_deadline());
  w.arm(a.timer, 90 * kUs);
  UNSIGNED_LONGLONGS_EQUAL(80 * kUs + 1, w.next_deadline());
  w.arm(b.timer, 85 * kUs);
  UNSIGNED_LONGLONGS_EQUAL(80 * kUs + 1, w.next_deadline());
  expire_at(w, h, 80 * kUs + 1);
  LONGS_EQUAL(1, c.count);
  UNSIGNED_LONGLONGS_EQUAL(85 * kUs, w.next_deadline());
  expire_at(w, h, 2 * kRev);
  UNSIGNED_LONGLONGS_EQUAL(3 * kRev + 5, w.next_deadline());
  w.cancel(far.timer);
  UNSIGNED_LONGLONGS_EQUAL(kNever, w.next_deadline());
}

TEST(TimerWheel, NextDeadlineMatchesModelUnderRandomOps) {
  TimerWheel w(0);
  Rng rng(77);
  constexpr int kN = 40;
  std::vector<std::unique_ptr<TestTimer>> ts;
  for (int i = 0; i < kN; ++i) ts.push_back(std::make_unique<TestTimer>(&h, i));
  uint64_t now = 0;
  for (int step = 0; step < 20000; ++step) {
    TestTimer& t = *ts[rng.below(kN)];
    switch (rng.below(4)) {
      case 0:
      case 1: {
        // Mostly near, sometimes revolutions away, sometimes in the past.
        uint64_t d = now + rng.below(300 * kUs);
        if (rng.chance(0.1)) d = now + rng.below(5 * kRev);
        if (rng.chance(0.05)) d = now > 0 ? rng.below(now) : 0;
        w.arm(t.timer, d);
        break;
      }
      case 2: w.cancel(t.timer); break;
      case 3: now += rng.below(100 * kUs); expire_at(w, h, now); break;
    }
    uint64_t want = kNever;
    uint32_t armed = 0;
    for (auto& x : ts) {
      if (x->timer.armed()) { want = std::min(want, x->timer.deadline()); ++armed; }
    }
    UNSIGNED_LONGS_EQUAL(armed, w.size());
    UNSIGNED_LONGLONGS_EQUAL(want, w.next_deadline());
  }
}

TEST(TimerWheel, DestroyingAnArmedTimerUnlinksIt) {
  TimerWheel w(0);
  TestTimer first(&h, 1), last(&h, 3);
  w.arm(first.timer, 5 * kUs + 1);
  {
    TestTimer middle(&h, 2);
    w.arm(middle.timer, 5 * kUs + 2);  // same slot, linked between the others
    w.arm(last.timer, 5 * kUs + 3);
    LONGS_EQUAL(3, w.size());
    UNSIGNED_LONGLONGS_EQUAL(5 * kUs + 1, w.next_deadline());
  }
  LONGS_EQUAL(2, w.size());
  LONGS_EQUAL(2, expire_at(w, h, 10 * kUs));
  LONGS_EQUAL(2, h.fired.size());
  LONGS_EQUAL(1, h.fired[0]);
  LONGS_EQUAL(3, h.fired[1]);
  {
    Timer lonely;
    w.arm(lonely, 20 * kUs);
    UNSIGNED_LONGLONGS_EQUAL(20 * kUs, w.next_deadline());
  }
  LONGS_EQUAL(0, w.size());
  UNSIGNED_LONGLONGS_EQUAL(kNever, w.next_deadline());
  LONGS_EQUAL(0, expire_at(w, h, 30 * kUs));
}

TEST(TimerWheel, WheelDestroyedFirstDisarmsTimers) {
  TestTimer t(&h, 1);
  {
    TimerWheel w(0);
    w.arm(t.timer, 10 * kUs);
    CHECK_TRUE(t.timer.armed());
  }
  CHECK_FALSE(t.timer.armed());  // and its destructor must not touch the dead wheel
}

namespace {
// Arms 10k timers with random deadlines over ~20 revolutions and advances
// time in random steps; returns the (deadline, arm index) fire sequence.
std::vector<std::pair<uint64_t, int>> run_many(uint64_t seed, Harness& h) {
  constexpr int kN = 10000;
  TimerWheel w(0);
  Rng rng(seed);
  std::vector<std::unique_ptr<TestTimer>> ts;
  ts.reserve(kN);
  for (int i = 0; i < kN; ++i) {
    ts.push_back(std::make_unique<TestTimer>(&h, i));
    w.arm(ts.back()->timer, rng.below(20 * kRev));
  }
  UNSIGNED_LONGS_EQUAL(kN, w.size());
  uint64_t prev = 0, now = 0;
  size_t seen = 0;
  while (w.size() > 0) {
    prev = now;
    now += rng.chance(0.02) ? rng.below(3 * kRev) : 1 + rng.below(50 * kUs);
    expire_at(w, h, now);
    // Everything fired in this call was due, and was not due at the previous call.
    for (; seen < h.fired.size(); ++seen) {
      const TestTimer& t = *ts[h.fired[seen]];
      CHECK_TRUE(t.timer.deadline() <= now);
      CHECK_TRUE(t.timer.deadline() > prev || (prev == 0 && t.timer.deadline() == 0));
      UNSIGNED_LONGLONGS_EQUAL(now, t.fired_at);
    }
    CHECK_TRUE(w.next_deadline() > now);
  }
  std::vector<std::pair<uint64_t, int>> order;
  for (int id : h.fired) order.emplace_back(ts[id]->timer.deadline(), id);
  for (auto& t : ts) LONGS_EQUAL(1, t->count);
  return order;
}
}  // namespace

TEST(TimerWheel, ManyRandomTimersFireOnceInOrder) {
  const auto order = run_many(12345, h);
  LONGS_EQUAL(10000, order.size());
  // Nondecreasing deadline; equal deadlines in arm order.
  for (size_t i = 1; i < order.size(); ++i) CHECK_TRUE(order[i - 1] < order[i]);
  // Deterministic: the same seed gives the same fire sequence.
  Harness h2;
  const auto again = run_many(12345, h2);
  CHECK_TRUE(order == again);
}
