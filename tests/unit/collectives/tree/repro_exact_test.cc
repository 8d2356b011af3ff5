// Exact mode (collectives/repro_exact.h) over a fake inner allreduce, without
// a network: eight nodes, each with its own communicator, run ExactSum over
// an inner "algorithm" that folds every node's operands with the Reducer it
// was given, each node in a different order (as different algorithms and
// shapes would). Checked: the result equals MPFR's correctly rounded sum bit
// for bit on adversarial inputs (cancellation, subnormals, the whole
// exponent range, specials), on every node, for double and float; the inner
// runs exactly twice, pass 1 an ALU MAX over 4-byte words (3 per block of 64
// values) and pass 2 an ALU ADD of the plan's width, with the communicator's
// tag advanced once in between; pass 2 is skipped when pass 1 settles every
// value (+0 inputs only); an inner failure comes back naming the pass.
#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/event_loop.h"
#include "base/log.h"
#include "base/rng.h"
#include "collectives/comm.h"
#include "collectives/repro_exact.h"
#include "drivers/packet.h"
#include "netstack/netstack.h"
#include "netstack/p2p.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;

namespace {

constexpr uint32_t kNodes = 8;

// ---- the fake inner allreduce: a shared "network" of kNodes members ----
// ExactSum makes one inner object per pass when it starts: member 2k is node
// k's pass-1 object, 2k + 1 its pass-2 object (the nodes start in order).
class FakeInner;
struct FakeNet {
  std::vector<FakeInner*> members;
  int fail_pass = 0;  // 1 or 2: that pass fails on every node
};
FakeNet* g_net = nullptr;

class FakeInner final : public CollAlgo {
 public:
  struct Call {
    CollArgs args;
    uint32_t tag;
    std::vector<uint8_t> input;  // taken at start: exact mode sums in place
  };
  FakeInner() : rank_(static_cast<uint32_t>(g_net->members.size()) / 2), pass_(g_net->members.size() % 2) {
    g_net->members.push_back(this);
  }
  Status start(Comm& comm, const CollArgs& args) override {
    reset();
    const auto* in = static_cast<const uint8_t*>(args.input());
    calls.push_back(Call{args, comm.tag(), std::vector<uint8_t>(in, in + args.count * args.esize)});
    return Status::ok();
  }
  bool progress() override {
    if (done_) return false;
    const size_t gen = calls.size() - 1;
    if (g_net->members.size() < 2 * kNodes) return false;
    for (uint32_t k = 0; k < kNodes; ++k)
      if (peer(k)->calls.size() <= gen) return false;  // someone has not started this pass yet
    if (g_net->fail_pass == static_cast<int>(pass_) + 1) {
      finish(error(Code::kTimeout, "fake inner gave up"));
      return true;
    }
    const CollArgs& a = calls[gen].args;
    const size_t bytes = a.count * a.esize;
    // This node's order: start at its own rank, then the others upwards.
    std::vector<uint8_t> acc(bytes);
    const uint8_t* first = calls[gen].input.data();
    if (bytes) std::memcpy(acc.data(), first, bytes);
    for (uint32_t k = 1; k < kNodes; ++k) {
      const FakeInner* m = peer((rank_ + k) % kNodes);
      a.red.apply(acc.data(), m->calls[gen].input.data(), a.count);
    }
    if (bytes) std::memcpy(a.recv, acc.data(), bytes);
    finish(Status::ok());
    return true;
  }
  std::string waiting_for() const override { return "the fake network"; }
  std::vector<Call> calls;

 private:
  FakeInner* peer(uint32_t node) const { return g_net->members[2 * node + pass_]; }
  uint32_t rank_;
  uint32_t pass_;
};

// Every inner call of node k, pass 1's then pass 2's.
std::vector<FakeInner::Call> calls_of(const FakeNet& net, uint32_t k) {
  std::vector<FakeInner::Call> c = net.members[2 * k]->calls;
  c.insert(c.end(), net.members[2 * k + 1]->calls.begin(), net.members[2 * k + 1]->calls.end());
  return c;
}

// One node: a communicator without ports (the fake never sends).
struct Node {
  explicit Node(uint32_t r)
      : pool(2048, 16),
        loop(clock),
        net(parse_dims("2x2x2").value(), coord_of(r, parse_dims("2x2x2").value()), pool, loop, NetConfig{}),
        msgr(net),
        comm(net, msgr, loop, log, 1, tuning::kCollTimeoutSimNs) {}
  VirtualClock clock;
  HeapPacketPool pool;
  EventLoop loop;
  NetStack net;
  Messenger msgr;
  Logger log;
  Comm comm;
};

const AlgoInfo kFakeInfo{CollKind::kAllreduce, "fake", "test", true, nullptr,
                         []() -> std::unique_ptr<CollAlgo> { return std::make_unique<FakeInner>(); }};

// Contribution of rank r, element i (adversarial first, then random over the whole range).
template <typename F>
F value(uint32_t r, uint32_t i) {
  constexpr bool dbl = sizeof(F) == 8;
  const F big = dbl ? F(1e308) : F(3e38f);
  const F tiny = dbl ? F(0x1p-1074) : F(0x1p-149f);
  switch (i) {
    case 0: return r == 0 ? big : r == 1 ? -big : r == 2 ? F(1) : F(0);  // massive cancellation
    case 1: return F(2 * r + 1) * tiny;                                   // subnormals only
    case 2: return F(-0.0);                                               // all -0 => -0
    case 3: return r % 2 ? F(-0.0) : F(0.0);                              // mixed => +0
    case 4: return r == 3 ? F(INFINITY) : F(1);
    case 5: return r == 3 ? F(INFINITY) : r == 6 ? F(-INFINITY) : F(2);  // => NaN
    case 6: return r == 5 ? F(NAN) : F(1);
    case 7: return r < 2 ? std::numeric_limits<F>::max() : F(0);         // overflow => +Inf
    case 8: return (r % 2 ? F(-1) : F(1)) * std::ldexp(F(1), (dbl ? 1000 : 120) - (dbl ? 290 : 35) * int(r));
    case 9: return r == 0 ? F(1) : std::ldexp(F(1), dbl ? -53 : -24);    // ties to even, by halves
    default: {
      Rng rng(mix64(i * 131 + r));
      const F m = F(1) + F(rng.uniform());
      const int span = dbl ? 2098 : 277;
      const int e = static_cast<int>(rng.below(span)) - (dbl ? 1074 : 149);
      return (rng.next() & 1 ? F(-1) : F(1)) * std::ldexp(m, e);
    }
  }
}

template <typename F>
F reference(const std::vector<std::vector<F>>& in, uint32_t i) {
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  for (const auto& row : in) {
    const F v = row[i];
    nan |= std::isnan(v);
    pinf |= v == F(INFINITY);
    ninf |= v == F(-INFINITY);
    all_neg_zero &= v == F(0) && std::signbit(v);
  }
  if (nan || (pinf && ninf)) return F(NAN);
  if (pinf) return F(INFINITY);
  if (ninf) return F(-INFINITY);
  mpfr_t acc, x;
  mpfr_init2(acc, 2400);
  mpfr_init2(x, 64);
  mpfr_set_zero(acc, 1);
  for (const auto& row : in) {
    mpfr_set_d(x, static_cast<double>(row[i]), MPFR_RNDN);
    mpfr_add(acc, acc, x, MPFR_RNDN);
  }
  F d = sizeof(F) == 8 ? F(mpfr_get_d(acc, MPFR_RNDN)) : F(mpfr_get_flt(acc, MPFR_RNDN));
  if (mpfr_zero_p(acc)) d = all_neg_zero ? F(-0.0) : F(0.0);
  mpfr_clear(acc);
  mpfr_clear(x);
  return d;
}

template <typename F>
bool same(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct Run {
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<ExactSum>> sums;
  std::vector<uint32_t> tag0;
};

// Starts ExactSum on every node over `in` (rows = ranks) and drives them.
template <typename F>
void run_exact(FakeNet& fnet, Run& r, const std::vector<std::vector<F>>& in, std::vector<std::vector<F>>& out,
         bool in_place, uint32_t slice_values = 0) {
  g_net = &fnet;
  const uint32_t n = static_cast<uint32_t>(in[0].size());
  out.assign(kNodes, std::vector<F>(n, F(7)));
  for (uint32_t k = 0; k < kNodes; ++k) {
    r.nodes.push_back(std::make_unique<Node>(k));
    r.sums.push_back(std::make_unique<ExactSum>(kFakeInfo));
    if (slice_values) r.sums.back()->set_slice_values(slice_values);
    r.tag0.push_back(r.nodes[k]->comm.tag());
  }
  for (uint32_t k = 0; k < kNodes; ++k) {
    CollArgs a;
    a.kind = CollKind::kAllreduce;
    a.dtype = sizeof(F) == 8 ? DType::kDouble : DType::kFloat;
    a.op = ROp::kSum;
    a.repro = Repro::kExact;
    a.count = n;
    a.red = make_reducer(a.dtype, a.op);
    a.esize = sizeof(F);
    if (in_place) {
      out[k] = in[k];
      a.send = nullptr;
    } else {
      a.send = in[k].data();
    }
    a.recv = out[k].data();
    Status st = r.sums[k]->start(r.nodes[k]->comm, a);
    CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  }
  for (int round = 0; round < 100; ++round) {
    bool all = true;
    for (auto& s : r.sums) {
      s->progress();
      all &= s->done();
    }
    if (all) break;
  }
  for (auto& s : r.sums) CHECK_TEXT(s->done(), "every node finished");
}

template <typename F>
void check_exact(uint32_t values, bool in_place) {
  std::vector<std::vector<F>> in(kNodes, std::vector<F>(values)), out;
  for (uint32_t k = 0; k < kNodes; ++k)
    for (uint32_t i = 0; i < values; ++i) in[k][i] = value<F>(k, i);
  FakeNet fnet;
  Run r;
  run_exact<F>(fnet, r, in, out, in_place);
  for (uint32_t k = 0; k < kNodes; ++k) {
    const ExactSum& s = *r.sums[k];
    CHECK_TEXT(s.status().is_ok(), s.status().to_string().c_str());
    // Two inner operations: MAX over 3 words per block, then ADD.
    const auto calls = calls_of(fnet, k);
    LONGS_EQUAL(2, calls.size());
    const CollArgs& p1 = calls[0].args;
    CHECK_TRUE(p1.dtype == DType::kAluWord && p1.red.fn == nullptr);
    CHECK_TRUE(p1.red.alu_op == AluOp::kMax && p1.red.alu_type == AluType::kUnsigned);
    LONGS_EQUAL(4, p1.esize);
    LONGS_EQUAL(3ull * ((values + 63) / 64), p1.count);
    const CollArgs& p2 = calls[1].args;
    CHECK_TRUE(p2.red.alu_op == AluOp::kAdd && p2.red.alu_type == AluType::kUnsigned);
    LONGS_EQUAL(s.plan().width, p2.esize);
    LONGS_EQUAL(s.plan().operands, p2.count);
    // The tag: the operation's own for pass 1, advanced once for pass 2.
    LONGS_EQUAL(r.tag0[k], calls[0].tag);
    LONGS_EQUAL(r.tag0[k] + 1, calls[1].tag);
    LONGS_EQUAL(r.tag0[k] + 1, r.nodes[k]->comm.tag());
    for (uint32_t i = 0; i < values; ++i) {
      const F want = reference(in, i);
      char msg[160];
      snprintf(msg, sizeof msg, "node %u element %u: got %a want %a", k, i, static_cast<double>(out[k][i]),
               static_cast<double>(want));
      CHECK_TEXT(same(out[k][i], want), msg);
    }
  }
}

}  // namespace

TEST_GROUP(ReproExact){};

TEST(ReproExact, DoubleSumIsCorrectlyRoundedOnEveryNodeWhateverTheOrder) {
  check_exact<double>(96, false);
}

TEST(ReproExact, FloatSumIsCorrectlyRoundedInPlace) { check_exact<float>(96, true); }

// Slices of 64 values (a large operation's are tuning::kExactSliceValues):
// 200 values run as 64 + 64 + 64 + 8, each through both passes, with the
// communicator's tag advanced before every inner operation after the first;
// the result is the whole operation's bit for bit, in place too.
template <typename F>
void check_slices(bool in_place) {
  constexpr uint32_t kValues = 200;
  std::vector<std::vector<F>> in(kNodes, std::vector<F>(kValues)), whole, sliced;
  for (uint32_t k = 0; k < kNodes; ++k)
    for (uint32_t i = 0; i < kValues; ++i) in[k][i] = value<F>(k, i);
  FakeNet one;
  Run r1;
  run_exact<F>(one, r1, in, whole, in_place);
  LONGS_EQUAL(1, r1.sums[0]->slices());
  LONGS_EQUAL(2, calls_of(one, 0).size());
  FakeNet four;
  Run r4;
  run_exact<F>(four, r4, in, sliced, in_place, 64);
  for (uint32_t k = 0; k < kNodes; ++k) {
    const ExactSum& s = *r4.sums[k];
    CHECK_TEXT(s.status().is_ok(), s.status().to_string().c_str());
    LONGS_EQUAL(4, s.slices());
    const auto calls = calls_of(four, k);  // pass 1 of slices 0..3, then their pass 2
    LONGS_EQUAL(8, calls.size());
    for (uint32_t j = 0; j < 4; ++j) {
      LONGS_EQUAL(3, calls[j].args.count);  // one block per slice
      CHECK_TRUE(calls[j].args.red.alu_op == AluOp::kMax);
      CHECK_TRUE(calls[4 + j].args.red.alu_op == AluOp::kAdd);
      LONGS_EQUAL(r4.tag0[k] + 2 * j, calls[j].tag);
      LONGS_EQUAL(r4.tag0[k] + 2 * j + 1, calls[4 + j].tag);
    }
    LONGS_EQUAL(r4.tag0[k] + 7, r4.nodes[k]->comm.tag());
    for (uint32_t i = 0; i < kValues; ++i) {
      char msg[160];
      snprintf(msg, sizeof msg, "node %u element %u: sliced %a, whole %a", k, i, static_cast<double>(sliced[k][i]),
               static_cast<double>(whole[k][i]));
      CHECK_TEXT(same(sliced[k][i], whole[k][i]), msg);
      CHECK_TEXT(same(sliced[k][i], reference(in, i)), msg);
    }
  }
}

TEST(ReproExact, SlicesGiveTheWholeOperationsBitsWithATagPerInnerOperation) {
  check_slices<double>(false);
  check_slices<float>(true);
}

TEST(ReproExact, WholeExponentRangeNeedsSeventeenChunksPerValue) {
  // Doubles from 2^-1074 to 2^1023 in one element on 8 nodes: 2098 window
  // bits in chunks of 124 (16-byte fields) and one of 114 (15 bytes): 16
  // sub-blocks of 128 bytes in 8 operands of 256, the last one in a ninth.
  std::vector<std::vector<double>> in(kNodes, std::vector<double>(1)), out;
  for (uint32_t k = 0; k < kNodes; ++k) in[k][0] = k == 0 ? 0x1p1023 : k == 1 ? 0x1p-1074 : 1.0;
  FakeNet fnet;
  Run r;
  run_exact<double>(fnet, r, in, out, false);
  CHECK_TRUE(r.sums[0]->status().is_ok());
  LONGS_EQUAL(256, r.sums[0]->plan().width);
  LONGS_EQUAL(9, r.sums[0]->plan().operands);
  CHECK_TRUE(same(out[3][0], reference(in, 0)));
}

TEST(ReproExact, PassTwoIsSkippedWhenPassOneSettlesEveryValue) {
  // +0 inputs only: nothing left for pass 2.
  std::vector<std::vector<double>> in(kNodes, std::vector<double>(100, 0.0)), out;
  FakeNet fnet;
  Run r;
  run_exact<double>(fnet, r, in, out, false);
  for (uint32_t k = 0; k < kNodes; ++k) {
    CHECK_TRUE(r.sums[k]->status().is_ok());
    LONGS_EQUAL(1, calls_of(fnet, k).size());
    LONGS_EQUAL(r.tag0[k], r.nodes[k]->comm.tag());  // no second tag
    for (double v : out[k]) CHECK_TRUE(same(v, 0.0));
  }
}

TEST(ReproExact, SpecialsAndZerosTakeOnlyCountersInPassTwo) {
  // NaN, -Inf and -0 and no finite value: pass 2 carries one counter field
  // per value (4 counters of 4 bits on 8 nodes: 2 bytes), no window.
  std::vector<std::vector<double>> in(kNodes, std::vector<double>(3)), out;
  for (uint32_t k = 0; k < kNodes; ++k) {
    in[k][0] = k == 2 ? NAN : 0.0;        // NaN
    in[k][1] = k == 4 ? -INFINITY : 0.0;  // -Inf
    in[k][2] = -0.0;                      // -0
  }
  FakeNet fnet;
  Run r;
  run_exact<double>(fnet, r, in, out, false);
  for (uint32_t k = 0; k < kNodes; ++k) {
    CHECK_TRUE(r.sums[k]->status().is_ok());
    LONGS_EQUAL(2, calls_of(fnet, k).size());
    LONGS_EQUAL(1, r.sums[k]->plan().operands);
    LONGS_EQUAL(256, r.sums[k]->plan().width);  // 16-byte sub-blocks
    CHECK_TRUE(std::isnan(out[k][0]));
    CHECK_TRUE(out[k][1] == -INFINITY);
    CHECK_TRUE(same(out[k][2], -0.0));
  }
}

TEST(ReproExact, AnInnerFailureNamesThePass) {
  for (int pass : {1, 2}) {
    std::vector<std::vector<double>> in(kNodes, std::vector<double>(4, 1.5)), out;
    FakeNet fnet;
    fnet.fail_pass = pass;
    Run r;
    run_exact<double>(fnet, r, in, out, false);
    const Status& st = r.sums[0]->status();
    CHECK_FALSE(st.is_ok());
    CHECK_TRUE(st.code() == Code::kTimeout);
    const std::string want = "allreduce fake (exact) pass " + std::to_string(pass) + ": fake inner gave up";
    STRCMP_EQUAL(want.c_str(), st.message().c_str());
  }
}

TEST(ReproExact, ZeroValuesFinishAtOnceAndOtherOpsAreRefused) {
  FakeNet fnet;
  g_net = &fnet;
  Node node(0);
  ExactSum s(kFakeInfo);
  CollArgs a;
  a.dtype = DType::kDouble;
  a.op = ROp::kSum;
  a.count = 0;
  CHECK_TRUE(s.start(node.comm, a).is_ok());
  CHECK_TRUE(s.done() && s.status().is_ok());
  CHECK_TRUE(fnet.members.empty());  // no inner operation at all
  a.op = ROp::kMax;
  a.count = 1;
  CHECK_FALSE(s.start(node.comm, a).is_ok());
  a.op = ROp::kSum;
  a.dtype = DType::kInt64;
  CHECK_FALSE(s.start(node.comm, a).is_ok());
  CHECK_TRUE(make_exact_sum(kFakeInfo) != nullptr);
}
