// The barrier / interrupt network on trained sim partitions. Each node runs a
// small application as a poller of its own event loop, so enter and
// completion times are exact virtual times: in every AND barrier no node
// leaves before the last one arrived; channels run side by side; an OR
// interrupt raised by one node fires on all; a node that never arrives makes
// everyone else time out with a message naming the channel.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/rng.h"
#include "netstack/tree/barrier.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

struct Partition {
  explicit Partition(const char* dims_s, uint64_t seed = 1, const std::string& faults = "")
      : rig(options(dims_s, "train", seed, faults)), dims(parse_dims(dims_s).value()) {
    CHECK_TRUE(rig.build().is_ok());
    const SimSummary s = rig.run();
    LONGS_EQUAL(s.nodes, s.passed);
  }
  uint32_t nodes() const { return rig.node_count(); }
  BarrierNet& bar(uint32_t r) { return rig.node(r).barrier(); }
  void wake_all() {
    for (uint32_t r = 0; r < nodes(); ++r) rig.fabric().wake(r, rig.fabric().now());
  }
  template <typename F>
  bool run_until(F done, uint64_t budget) {
    SimFabric& f = rig.fabric();
    wake_all();
    uint64_t t = f.now();
    const uint64_t end = t + budget;
    while (!done()) {
      if (f.idle() || t >= end) return false;
      t += 50 * kUs;
      f.run(t);
    }
    return true;
  }
  LogCapture log;
  SimRig rig;
  Dims dims;
};

// One node's application: `rounds` barriers on a channel, each entered after
// a seeded random delay, completion polled from the node's own loop. In a
// fraction of the barriers the node looks only after a while (busy with
// something else), so its children run an epoch ahead of it; its completion
// time is then an upper bound, the others' are exact.
class BarrierApp final : public Poller {
 public:
  BarrierApp(Node& node, int channel, uint32_t rounds, uint64_t max_delay_ns, uint64_t seed)
      : b_(node.barrier()), loop_(node.loop()), channel_(channel), rounds_(rounds), max_delay_(max_delay_ns),
        rng_(Rng::derive(seed, rank_of(node.personality().coord, node.personality().dims) * 8 + channel)) {
    timer_.set_callback(&BarrierApp::on_timer, this);
    look_timer_.set_callback([](void*) {}, nullptr);  // only wakes the loop
    enter_ns.reserve(rounds);
    complete_ns.reserve(rounds);
    loop_.add_poller(this);
  }
  ~BarrierApp() override { loop_.remove_poller(this); }
  void begin() { schedule(); }
  bool finished() const { return complete_ns.size() == rounds_ || !err.is_ok(); }

  bool poll() override {
    if (!waiting_ || loop_.now() < look_at_) return false;
    Status st;
    if (!b_.test(channel_, &st)) return false;
    waiting_ = false;
    if (!st) {
      err = st;
      return true;
    }
    complete_ns.push_back(loop_.now());
    if (complete_ns.size() < rounds_) schedule();
    return true;
  }

  std::vector<uint64_t> enter_ns, complete_ns;
  Status err;

 private:
  void schedule() {
    const uint64_t delay = max_delay_ ? rng_.below(max_delay_ + 1) : 0;
    if (delay == 0) enter();
    else loop_.timers().arm(timer_, loop_.now() + delay);
  }
  static void on_timer(void* self) { static_cast<BarrierApp*>(self)->enter(); }
  void enter() {
    enter_ns.push_back(loop_.now());
    Status st = b_.enter(channel_, BarrierMode::kAnd);
    if (!st) {
      err = st;
      return;
    }
    waiting_ = true;
    look_at_ = loop_.now();
    if (max_delay_ && rng_.chance(0.3)) {
      look_at_ += rng_.below(5 * max_delay_) + 1;  // often after the release
      loop_.timers().arm(look_timer_, look_at_);
    }
  }

  BarrierNet& b_;
  EventLoop& loop_;
  int channel_;
  uint32_t rounds_;
  uint64_t max_delay_;
  Rng rng_;
  Timer timer_;
  Timer look_timer_;
  uint64_t look_at_ = 0;
  bool waiting_ = false;
};

// Runs `rounds` barriers on each of `channels` at once on every node and
// checks that in every barrier the last arrival precedes the first departure.
void run_barriers(Partition& part, const std::vector<int>& channels, uint32_t rounds, uint64_t max_delay_ns) {
  std::vector<std::unique_ptr<BarrierApp>> apps;
  for (int ch : channels)
    for (uint32_t r = 0; r < part.nodes(); ++r)
      apps.push_back(std::make_unique<BarrierApp>(part.rig.node(r), ch, rounds, max_delay_ns, 42));
  for (auto& a : apps) a->begin();
  const bool done = part.run_until(
      [&] {
        for (auto& a : apps)
          if (!a->finished()) return false;
        return true;
      },
      10 * kSec);
  CHECK_TEXT(done, "barriers did not finish");
  for (auto& a : apps) CHECK_TEXT(a->err.is_ok(), a->err.to_string().c_str());
  uint64_t waited = 0;
  for (size_t c = 0; c < channels.size(); ++c) {
    for (uint32_t k = 0; k < rounds; ++k) {
      uint64_t last_in = 0, first_out = ~uint64_t{0};
      for (uint32_t r = 0; r < part.nodes(); ++r) {
        const BarrierApp& a = *apps[c * part.nodes() + r];
        last_in = std::max(last_in, a.enter_ns[k]);
        first_out = std::min(first_out, a.complete_ns[k]);
        CHECK(a.complete_ns[k] >= a.enter_ns[k]);
      }
      if (last_in > first_out) {
        char msg[128];
        snprintf(msg, sizeof msg, "channel %d barrier %u: last arrival %lu ns after first departure %lu ns",
                 channels[c], k, static_cast<unsigned long>(last_in), static_cast<unsigned long>(first_out));
        FAIL(msg);
      }
      waited += first_out - last_in;
    }
  }
  CHECK(part.nodes() == 1 || waited > 0);  // someone did wait for a late arrival
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    for (int ch : channels) LONGS_EQUAL(rounds, part.bar(r).epoch(ch));
    UNSIGNED_LONGLONGS_EQUAL(0, part.bar(r).counters().rx_bad);
    UNSIGNED_LONGLONGS_EQUAL(rounds * channels.size(), part.bar(r).counters().completed);
  }
}

}  // namespace

TEST_GROUP(Barrier){};

TEST(Barrier, AThousandBarriersOn8x8x8) {
  Partition part("8x8x8");
  run_barriers(part, {0}, 1000, 3 * kUs);
}

TEST(Barrier, FourChannelsConcurrently) {
  Partition part("4x4x4", 5, "drop=0.05,corrupt=0.01");
  run_barriers(part, {0, 1, 2, 3}, 100, 5 * kUs);
}

TEST(Barrier, TwoNodesAndOneNode) {
  Partition two("2x1x1");
  run_barriers(two, {0, 3}, 50, 2 * kUs);
  Partition one("1x1x1");
  run_barriers(one, {1}, 10, 0);
}

// OR mode: one node raises, every node fires, nobody else entered. Epochs
// re-arm; a node that does not test for a while still sees every epoch fire.
TEST(Barrier, OrModeInterruptFiresEverywhere) {
  Partition part("4x4x4");
  const int ch = 1;
  const uint32_t raiser = rank_of(Coord{{2, 3, 1}}, part.dims);
  const uint32_t lazy = rank_of(Coord{{3, 2, 2}}, part.dims);
  CHECK_TRUE(part.bar(raiser).enter(ch, BarrierMode::kOr).is_ok());
  CHECK(part.run_until(
      [&] {
        for (uint32_t r = 0; r < part.nodes(); ++r)
          if (r != raiser && !part.bar(r).fired(ch)) return false;
        return true;
      },
      10 * kMs));
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    CHECK(part.bar(r).fired(ch) == (r != raiser));  // the raiser did raise it
    if (r == lazy) continue;
    Status st;
    CHECK_TRUE(part.bar(r).test(ch, &st));
    CHECK_TEXT(st.is_ok(), st.to_string().c_str());
    LONGS_EQUAL(1, part.bar(r).epoch(ch));
    Status again;
    CHECK(!part.bar(r).test(ch, &again));  // re-armed: epoch 1 has not fired
  }
  // Epoch 1, raised by the root, while `lazy` is still at epoch 0.
  CHECK_TRUE(part.bar(0).enter(ch, BarrierMode::kOr).is_ok());
  CHECK(part.run_until(
      [&] {
        for (uint32_t r = 1; r < part.nodes(); ++r)
          if (r != lazy && !part.bar(r).fired(ch)) return false;
        return true;
      },
      10 * kMs));
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    Status st;
    CHECK_TRUE(part.bar(r).test(ch, &st));
    CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  }
  // `lazy` consumed epoch 0; epoch 1 fired meanwhile and is there at once.
  LONGS_EQUAL(1, part.bar(lazy).epoch(ch));
  CHECK(part.bar(lazy).fired(ch));
  Status st;
  CHECK_TRUE(part.bar(lazy).test(ch, &st));
  CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    LONGS_EQUAL(2, part.bar(r).epoch(ch));
    UNSIGNED_LONGLONGS_EQUAL(0, part.bar(r).counters().rx_bad);
  }
  // Both raises made one trip up and one trip down each: every non-root
  // node received exactly two downs, so it sent two to each child.
  CHECK(part.bar(raiser).counters().up_sent >= 1);
  // A channel used in OR mode refuses AND.
  CHECK(part.bar(5).enter(ch, BarrierMode::kAnd).code() == Code::kInvalid);
}

// A node that never arrives: everyone else's test() reports a timeout naming
// the channel, within the timeout, instead of hanging.
TEST(Barrier, MissingNodeTimesOutNamingTheChannel) {
  Partition part("4x4x4");
  const int ch = 2;
  const uint32_t absent = rank_of(Coord{{1, 2, 3}}, part.dims);
  const uint64_t t0 = part.rig.fabric().now();
  for (uint32_t r = 0; r < part.nodes(); ++r)
    if (r != absent) CHECK_TRUE(part.bar(r).enter(ch, BarrierMode::kAnd).is_ok());
  std::vector<Status> st(part.nodes());
  std::vector<uint64_t> when(part.nodes(), 0);
  CHECK(part.run_until(
      [&] {
        bool all = true;
        for (uint32_t r = 0; r < part.nodes(); ++r) {
          if (r == absent || when[r]) continue;
          if (part.bar(r).test(ch, &st[r])) when[r] = part.rig.fabric().now();
          else all = false;
        }
        return all;
      },
      tuning::kCollTimeoutSimNs + 20 * kMs));
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    if (r == absent) continue;
    CHECK_TEXT(st[r].code() == Code::kTimeout, st[r].to_string().c_str());
    CHECK_TEXT(st[r].message().find("barrier channel 2 (epoch 0) timed out after") != std::string::npos,
               st[r].message().c_str());
    CHECK(when[r] - t0 <= tuning::kCollTimeoutSimNs + 100 * kUs);
  }
  Status none;
  CHECK(!part.bar(absent).test(ch, &none));
  // Its parent (1,2,0: z expands + to 1 and 2, - to 3) names the missing
  // child's direction.
  const Status& parent = st[rank_of(Coord{{1, 2, 0}}, part.dims)];
  CHECK_TEXT(parent.message().find("waiting for children z- to arrive") != std::string::npos, parent.message().c_str());
}

// Epoch counters started just below 2^32 on every node: AND barriers and OR
// interrupts go on across the wrap (the wire carries epochs mod 2^32; each
// node keeps its own in 64 bits), with no packet taken as stale or bad.
TEST(Barrier, EpochsWrapAround2To32) {
  Partition part("4x2x2");
  const uint32_t start = 0xFFFFFFFDu;
  for (uint32_t r = 0; r < part.nodes(); ++r) part.bar(r).start_epochs_at(start);
  auto complete_everywhere = [&](int ch, std::vector<bool>& done) {
    return part.run_until(
        [&] {
          bool all = true;
          for (uint32_t r = 0; r < part.nodes(); ++r) {
            Status st;
            if (!done[r] && part.bar(r).test(ch, &st)) {
              CHECK_TEXT(st.is_ok(), st.to_string().c_str());
              done[r] = true;
            }
            all &= done[r];
          }
          return all;
        },
        10 * kMs);
  };
  for (uint32_t k = 0; k < 6; ++k) {
    // AND on channel 0: every node enters.
    std::vector<bool> done(part.nodes(), false);
    for (uint32_t r = 0; r < part.nodes(); ++r) CHECK_TRUE(part.bar(r).enter(0, BarrierMode::kAnd).is_ok());
    CHECK_TEXT(complete_everywhere(0, done), ("AND barrier " + std::to_string(k)).c_str());
    // OR on channel 1: one node (a different one each time) raises.
    std::vector<bool> fired(part.nodes(), false);
    CHECK_TRUE(part.bar((k * 5) % part.nodes()).enter(1, BarrierMode::kOr).is_ok());
    CHECK_TEXT(complete_everywhere(1, fired), ("OR interrupt " + std::to_string(k)).c_str());
    for (uint32_t r = 0; r < part.nodes(); ++r) {
      UNSIGNED_LONGS_EQUAL(start + k + 1, part.bar(r).epoch(0));
      UNSIGNED_LONGS_EQUAL(start + k + 1, part.bar(r).epoch(1));
    }
  }
  UNSIGNED_LONGS_EQUAL(3u, part.bar(0).epoch(0));  // wrapped: 2^32 - 3 + 6
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    UNSIGNED_LONGLONGS_EQUAL(0, part.bar(r).counters().rx_bad);
    UNSIGNED_LONGLONGS_EQUAL(12, part.bar(r).counters().completed);
  }
}
