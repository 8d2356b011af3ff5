// The combine (tree) network (seed 004 B) on trained sim partitions: every
// ALU op x type x width gives, on every node, exactly the value a reference
// fold of all nodes' seeded inputs gives (computed here byte by byte, not with
// the ALU under test), with and without link faults; packets stream through a
// bounded window; two tree classes run at once; a node that starts a
// different operation makes the operation fail with a message naming it.
#include <cstring>
#include <string>
#include <vector>

#include "base/rng.h"
#include "netstack/classroute.h"
#include "netstack/tree/combine.h"
#include "tests/sim/sim_helpers.h"

#include <CppUTest/TestHarness.h>

using namespace toroid;
using namespace toroid::test;

namespace {

constexpr AluOp kOps[] = {AluOp::kAdd, AluOp::kMax, AluOp::kMin, AluOp::kAnd, AluOp::kOr, AluOp::kXor};
constexpr AluType kTypes[] = {AluType::kUnsigned, AluType::kSigned};
const char* const kFaults = "drop=0.05,corrupt=0.01";

// Reference ALU, one byte at a time: little-endian operands, ADD with carry
// wrapping modulo 2^(8 width), MAX/MIN comparing from the top byte (its sign
// bit flipped for signed operands).
int ref_compare(const uint8_t* a, const uint8_t* b, uint32_t w, AluType type) {
  for (uint32_t j = w; j-- > 0;) {
    uint8_t x = a[j], y = b[j];
    if (j == w - 1 && type == AluType::kSigned) {
      x ^= 0x80;
      y ^= 0x80;
    }
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

void ref_combine(AluOp op, AluType type, uint32_t w, uint8_t* acc, const uint8_t* in, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* a = acc + static_cast<size_t>(i) * w;
    const uint8_t* b = in + static_cast<size_t>(i) * w;
    unsigned carry = 0;
    const int c = ref_compare(a, b, w, type);
    for (uint32_t j = 0; j < w; ++j) {
      switch (op) {
        case AluOp::kAdd: {
          const unsigned s = a[j] + b[j] + carry;
          a[j] = static_cast<uint8_t>(s);
          carry = s >> 8;
          break;
        }
        case AluOp::kMax: if (c < 0) a[j] = b[j]; break;
        case AluOp::kMin: if (c > 0) a[j] = b[j]; break;
        case AluOp::kAnd: a[j] &= b[j]; break;
        case AluOp::kOr: a[j] |= b[j]; break;
        case AluOp::kXor: a[j] ^= b[j]; break;
      }
    }
  }
}

// A trained partition whose nodes' combine engines the test drives.
struct Partition {
  explicit Partition(const char* dims_s, const std::string& faults = "", uint64_t seed = 1, uint16_t vc_credits = 0)
      : rig(with_credits(options(dims_s, "train", seed, faults), vc_credits)), dims(parse_dims(dims_s).value()) {
    CHECK_TRUE(rig.build().is_ok());
    const SimSummary s = rig.run();
    LONGS_EQUAL(s.nodes, s.passed);
    settle();
    baseline = in_use();
  }
  static SimOptions with_credits(SimOptions o, uint16_t vc_credits) {
    o.vc_credits = vc_credits;
    // The operand counts below are sized for 1024-byte frames (several
    // packets per operation, more than the window for the narrow widths).
    o.frame_bytes = 1024;
    return o;
  }
  uint32_t nodes() const { return rig.node_count(); }
  CombineEngine& eng(uint32_t r) { return rig.node(r).combine(); }
  // Run the fabric until done() or `budget` of virtual time passed.
  template <typename F>
  bool run_until(F done, uint64_t budget) {
    SimFabric& f = rig.fabric();
    for (uint32_t r = 0; r < nodes(); ++r) f.wake(r, f.now());
    uint64_t t = f.now();
    const uint64_t end = t + budget;
    while (!done()) {
      if (f.idle() || t >= end) return false;
      t += 20 * kUs;
      f.run(t);
    }
    return true;
  }
  void settle() { settle_quiet(rig); }
  uint64_t in_use() {
    uint64_t n = 0;
    for (uint32_t r = 0; r < nodes(); ++r) n += rig.node(r).net().pool().stats().in_use;
    return n;
  }
  // Every node reports done for cls; false if someone is still busy.
  bool all_done(uint8_t cls, std::vector<Status>* st) {
    for (uint32_t r = 0; r < nodes(); ++r)
      if (!eng(r).test(cls, &(*st)[r])) return false;
    return true;
  }
  LogCapture log;
  SimRig rig;
  Dims dims;
  uint64_t baseline = 0;
};

struct Op {
  AluOp op;
  AluType type;
  uint32_t width;
  uint32_t count;
  bool in_place = false;
};

std::string describe(const Op& o) {
  char b[96];
  snprintf(b, sizeof b, "%s %s width %u count %u%s", alu_op_name(o.op),
           o.type == AluType::kSigned ? "signed" : "unsigned", o.width, o.count, o.in_place ? " in place" : "");
  return b;
}

// Seeded inputs of every node, the reference result, and the output buffers.
struct OpData {
  OpData(const Op& o, uint32_t nodes, uint64_t salt) : bytes(static_cast<size_t>(o.width) * o.count) {
    in.resize(nodes);
    out.resize(nodes);
    expect.assign(bytes, 0);
    for (uint32_t r = 0; r < nodes; ++r) {
      Rng rng = Rng::derive(salt, r);
      in[r].resize(bytes);
      for (auto& b : in[r]) b = static_cast<uint8_t>(rng.next());
      if (r == 0) expect = in[0];
      else ref_combine(o.op, o.type, o.width, expect.data(), in[r].data(), o.count);
      out[r].assign(bytes, 0xee);
    }
  }
  uint8_t* dst(const Op& o, uint32_t r) { return o.in_place ? in[r].data() : out[r].data(); }
  size_t bytes;
  std::vector<std::vector<uint8_t>> in, out;
  std::vector<uint8_t> expect;
};

void start_all(Partition& part, uint8_t cls, const Op& o, OpData& d) {
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    Status st = part.eng(r).start(cls, o.op, o.type, o.width, d.in[r].data(), d.dst(o, r), o.count);
    CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  }
}

void check_results(Partition& part, const Op& o, OpData& d, const std::vector<Status>& st) {
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    const std::string what = describe(o) + " on node " + coord_of(r, part.dims).to_string();
    CHECK_TEXT(st[r].is_ok(), (what + ": " + st[r].to_string()).c_str());
    CHECK_TEXT(std::memcmp(d.dst(o, r), d.expect.data(), d.bytes) == 0, what.c_str());
    // Identical on every node, bit for bit.
    CHECK_TEXT(std::memcmp(d.dst(o, r), d.dst(o, 0), d.bytes) == 0, what.c_str());
  }
}

// One operation on every node of cls, checked against the reference.
void run_op(Partition& part, uint8_t cls, const Op& o, uint64_t salt) {
  OpData d(o, part.nodes(), salt);
  start_all(part, cls, o, d);
  std::vector<Status> st(part.nodes());
  CHECK_TEXT(part.run_until([&] { return part.all_done(cls, &st); }, 200 * kMs), describe(o).c_str());
  check_results(part, o, d, st);
}

// Buffers stay bounded: no node folds more packets per sequence than it has
// children, nor holds more than kTreeWindow per child plus its own window.
void check_bounds(Partition& part, const std::vector<ClassRoute>& trees) {
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    const Coord c = coord_of(r, part.dims);
    uint64_t max_children = 0, held_bound = 0;
    for (const ClassRoute& t : trees) {
      const uint64_t children = tree_down(t, c).size();
      max_children = std::max(max_children, children);
      held_bound += tuning::kTreeWindow * (children + 1);
    }
    const CombineCounters& k = part.eng(r).counters();
    CHECK_TEXT(k.max_children_per_step <= max_children, c.to_string().c_str());
    CHECK_TEXT(k.held_high_water <= held_bound, c.to_string().c_str());
    UNSIGNED_LONGLONGS_EQUAL_TEXT(0, k.rx_bad, c.to_string().c_str());
  }
}

// No packet buffer is left behind once the partition is quiet.
void check_no_leaks(Partition& part) {
  part.settle();
  UNSIGNED_LONGLONGS_EQUAL(part.baseline, part.in_use());
}

// Every op x type x width, on the world tree, one after the other (the
// class's sequence numbers continue across operations).
void every_op(const char* dims, const std::string& faults) {
  Partition part(dims, faults, 7);
  uint64_t salt = 100;
  for (uint32_t width : {4u, 8u, 16u, 256u}) {
    // Several packets each (236 / 118 / 59 / 3 operands fit one), and for the
    // narrow widths more packets than the window.
    const uint32_t count = width == 256 ? 11 : width == 16 ? 600 : 1200;
    for (AluOp op : kOps) {
      for (AluType type : kTypes) {
        ++salt;
        run_op(part, tuning::kTreeClassWorld, Op{op, type, width, count, (salt & 1) != 0}, salt);
      }
    }
  }
  const ClassRoute world = make_tree_route(part.dims, coord_of(0, part.dims));
  check_bounds(part, {world});
  uint64_t folded = 0;
  for (uint32_t r = 0; r < part.nodes(); ++r) folded += part.eng(r).counters().combined;
  CHECK(part.nodes() == 1 || folded > 0);
  check_no_leaks(part);
}

}  // namespace

TEST_GROUP(Combine){};

TEST(Combine, EveryOpTypeWidthOn2x2x2) { every_op("2x2x2", ""); }
TEST(Combine, EveryOpTypeWidthOn4x4x4) { every_op("4x4x4", ""); }
TEST(Combine, EveryOpTypeWidthOn8x4x2) { every_op("8x4x2", ""); }
TEST(Combine, EveryOpTypeWidthOn1x1x16) { every_op("1x1x16", ""); }
TEST(Combine, EveryOpTypeWidthOn3x5x7) { every_op("3x5x7", ""); }
TEST(Combine, EveryOpTypeWidthOn2x2x2WithFaults) { every_op("2x2x2", kFaults); }
TEST(Combine, EveryOpTypeWidthOn4x4x4WithFaults) { every_op("4x4x4", kFaults); }
TEST(Combine, EveryOpTypeWidthOn8x4x2WithFaults) { every_op("8x4x2", kFaults); }
TEST(Combine, EveryOpTypeWidthOn1x1x16WithFaults) { every_op("1x1x16", kFaults); }
TEST(Combine, EveryOpTypeWidthOn3x5x7WithFaults) { every_op("3x5x7", kFaults); }

// Many packets (far more than the window), a single operand, and a single
// node, where the root is also the only leaf.
TEST(Combine, ManyPacketsAndOneOperand) {
  Partition part("4x4x4", kFaults, 3);
  run_op(part, tuning::kTreeClassWorld, Op{AluOp::kAdd, AluType::kSigned, 8, 1000}, 1);
  run_op(part, tuning::kTreeClassWorld, Op{AluOp::kAdd, AluType::kUnsigned, 8, 8000, true}, 2);
  run_op(part, tuning::kTreeClassWorld, Op{AluOp::kMax, AluType::kSigned, 8, 1}, 3);
  run_op(part, tuning::kTreeClassWorld, Op{AluOp::kXor, AluType::kUnsigned, 256, 1}, 4);
  check_bounds(part, {make_tree_route(part.dims, coord_of(0, part.dims))});
  // The window was actually used: some node held packets.
  uint64_t held = 0;
  for (uint32_t r = 0; r < part.nodes(); ++r) held = std::max(held, part.eng(r).counters().held_high_water);
  CHECK(held > 0);
  check_no_leaks(part);

  Partition one("1x1x1");
  CHECK(one.eng(0).is_root(tuning::kTreeClassWorld));
  run_op(one, tuning::kTreeClassWorld, Op{AluOp::kMin, AluType::kSigned, 16, 100}, 5);
}

// Two tree classes with different roots and ops, running at the same time.
TEST(Combine, TwoClassesAtOnce) {
  for (const char* faults : {"", kFaults}) {
    Partition part("3x5x7", faults, 11);
    const Coord root2{{2, 3, 5}};
    const ClassRoute t2 = make_tree_route(part.dims, root2, {2, 1, 0});
    for (uint32_t r = 0; r < part.nodes(); ++r) CHECK_TRUE(part.eng(r).add_tree(2, t2).is_ok());
    CHECK(part.eng(rank_of(root2, part.dims)).is_root(2));
    CHECK(!part.eng(rank_of(root2, part.dims)).is_root(tuning::kTreeClassWorld));
    const Op a{AluOp::kAdd, AluType::kUnsigned, 8, 3000};
    const Op b{AluOp::kMin, AluType::kSigned, 16, 1000};
    OpData da(a, part.nodes(), 21), db(b, part.nodes(), 22);
    start_all(part, tuning::kTreeClassWorld, a, da);
    start_all(part, 2, b, db);
    for (uint32_t r = 0; r < part.nodes(); ++r) CHECK(part.eng(r).busy(2));
    std::vector<Status> sa(part.nodes()), sb(part.nodes());
    CHECK(part.run_until(
        [&] { return part.all_done(tuning::kTreeClassWorld, &sa) && part.all_done(2, &sb); }, 200 * kMs));
    check_results(part, a, da, sa);
    check_results(part, b, db, sb);
    // And again with the roles swapped, on the same streams.
    run_op(part, 2, Op{AluOp::kOr, AluType::kUnsigned, 4, 500}, 23);
    check_bounds(part, {make_tree_route(part.dims, coord_of(0, part.dims)), t2});
    check_no_leaks(part);
  }
}

// One node starts width 8 where the others start width 4: its parent fails
// naming the mismatch and the child's direction; nobody reports success and
// nobody hangs past the timeout.
TEST(Combine, MismatchedWidthFailsWithAMessage) {
  Partition part("4x4x4");
  // A leaf: z expands from 1,1,0 by + to z 1 and 2, by - to z 3.
  const Coord odd{{1, 1, 3}};
  const uint32_t odd_r = rank_of(odd, part.dims);
  const Coord parent{{1, 1, 0}};
  std::vector<std::vector<uint8_t>> buf(part.nodes(), std::vector<uint8_t>(80));
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    const uint32_t width = r == odd_r ? 8 : 4;
    Status st = part.eng(r).start(tuning::kTreeClassWorld, AluOp::kAdd, AluType::kUnsigned, width, buf[r].data(),
                                  buf[r].data(), 10);
    CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  }
  std::vector<Status> st(part.nodes());
  CHECK(part.run_until([&] { return part.all_done(tuning::kTreeClassWorld, &st); },
                       tuning::kCollTimeoutSimNs + 10 * kMs));
  for (uint32_t r = 0; r < part.nodes(); ++r) CHECK_TEXT(!st[r].is_ok(), coord_of(r, part.dims).to_string().c_str());
  const Status& p = st[rank_of(parent, part.dims)];
  CHECK_TEXT(p.code() == Code::kInvalid, p.to_string().c_str());
  CHECK_TEXT(p.message().find("width mismatch") != std::string::npos, p.message().c_str());
  CHECK_TEXT(p.message().find("child z- sent width 8, this node started width 4") != std::string::npos,
             p.message().c_str());
  // The root waited for that subtree and timed out, naming class, seq and child.
  const Status& root = st[0];
  CHECK_TEXT(root.code() == Code::kTimeout, root.to_string().c_str());
  CHECK_TEXT(root.message().find("combine class 1") != std::string::npos, root.message().c_str());
  CHECK_TEXT(root.message().find("waiting for children x+") != std::string::npos, root.message().c_str());
  // The next operation runs everywhere: the failed one left nothing behind.
  run_op(part, tuning::kTreeClassWorld, Op{AluOp::kAdd, AluType::kUnsigned, 4, 300}, 5);
  check_no_leaks(part);
}

// A leaf starts 1200 operands (6 packets) where every other node starts 300
// (2): its parent fails at the leaf's first packet, and the leaf's later
// packets arrive after the failure. The other nodes give the operation up
// the way a communicator does when a failure report comes (cancel), at
// different times; the leaves start the next operation before the other
// nodes have given up the first. That operation gives every node the
// reference result: the late packets of the first were dropped as stale, and
// the early ones of the second waited for their operation.
TEST(Combine, AFailedOperationLeavesNothingForTheNext) {
  Partition part("4x2x2");
  const uint8_t cls = tuning::kTreeClassWorld;
  const ClassRoute world = make_tree_route(part.dims, coord_of(0, part.dims));
  // A leaf (no children) and its parent.
  uint32_t leaf = 0;
  for (uint32_t r = 1; r < part.nodes() && leaf == 0; ++r)
    if (tree_down(world, coord_of(r, part.dims)).empty()) leaf = r;
  CHECK(leaf != 0);
  const Coord lc = coord_of(leaf, part.dims);
  const uint32_t parent = rank_of(neighbour(lc, *tree_up(world, lc), part.dims), part.dims);
  std::vector<std::vector<uint8_t>> buf(part.nodes(), std::vector<uint8_t>(1200 * 4));
  for (uint32_t r = 0; r < part.nodes(); ++r) {
    Status st = part.eng(r).start(cls, AluOp::kAdd, AluType::kUnsigned, 4, buf[r].data(), buf[r].data(),
                                  r == leaf ? 1200 : 300, 7);
    CHECK_TEXT(st.is_ok(), st.to_string().c_str());
  }
  std::vector<Status> st(part.nodes());
  CHECK(part.run_until([&] { return part.eng(parent).test(cls, &st[parent]); }, 50 * kMs));
  CHECK_TEXT(st[parent].message().find("count mismatch in operation 7") != std::string::npos,
             st[parent].message().c_str());
  // Everyone else gives up now, the leaves first; they start the next
  // operation while their parents still run the first.
  const Op o{AluOp::kXor, AluType::kSigned, 8, 700};
  OpData d(o, part.nodes(), 77);
  for (bool leaves : {true, false}) {
    for (uint32_t r = 0; r < part.nodes(); ++r) {
      if (tree_down(world, coord_of(r, part.dims)).empty() != leaves) continue;
      part.eng(r).cancel(cls, error(Code::kAborted, "a failure report"));
      CHECK_TRUE(part.eng(r).test(cls, &st[r]));
      CHECK_FALSE(st[r].is_ok());
      Status s2 = part.eng(r).start(cls, o.op, o.type, o.width, d.in[r].data(), d.dst(o, r), o.count, 9);
      CHECK_TEXT(s2.is_ok(), s2.to_string().c_str());
    }
    if (leaves) part.run_until([] { return false; }, 2 * kMs);
  }
  CHECK(part.run_until([&] { return part.all_done(cls, &st); }, 200 * kMs));
  check_results(part, o, d, st);
  // The leaf's packets after its first were stale at the parent: 5 of them, and
  // any its siblings sent after the failure.
  CHECK(part.eng(parent).counters().rx_stale >= 5);
  UNSIGNED_LONGLONGS_EQUAL(1, part.eng(parent).counters().rx_bad);
  // An operation id must move on.
  Status again = part.eng(0).start(cls, AluOp::kAdd, AluType::kUnsigned, 4, buf[0].data(), buf[0].data(), 4, 9);
  CHECK(again.code() == Code::kInvalid);
  CHECK_TEXT(again.message().find("operation 9 does not follow operation 9") != std::string::npos,
             again.message().c_str());
  check_no_leaks(part);
}

TEST(Combine, BadArgumentsAreRefused) {
  Partition part("2x2x1");
  uint8_t b[64] = {};
  CombineEngine& e = part.eng(0);
  Status st = e.start(tuning::kTreeClassWorld, AluOp::kAdd, AluType::kUnsigned, 12, b, b, 1);
  CHECK(st.code() == Code::kInvalid);
  st = e.start(9, AluOp::kAdd, AluType::kUnsigned, 4, b, b, 1);
  CHECK(st.code() == Code::kNotFound);
  CHECK(e.add_tree(3, make_box_route(part.dims, Coord{})).code() == Code::kInvalid);
  CHECK(e.add_tree(tuning::kTreeClassWorld, make_tree_route(part.dims, Coord{})).code() == Code::kInvalid);
  CHECK_TRUE(e.start(tuning::kTreeClassWorld, AluOp::kAnd, AluType::kUnsigned, 4, b, b, 4).is_ok());
  CHECK(e.start(tuning::kTreeClassWorld, AluOp::kAnd, AluType::kUnsigned, 4, b, b, 4).code() == Code::kBusy);
}

// Links with two receive buffers per VC: tree packets wait for credits in the
// engine's per-direction queues and leave in order when credits return.
TEST(Combine, FewLinkCreditsQueueAndRetry) {
  Partition part("4x4x2", kFaults, 13, /*vc_credits=*/2);
  run_op(part, tuning::kTreeClassWorld, Op{AluOp::kAdd, AluType::kUnsigned, 16, 3000}, 1);
  run_op(part, tuning::kTreeClassWorld, Op{AluOp::kMax, AluType::kSigned, 256, 40, true}, 2);
  uint64_t blocked = 0;
  for (uint32_t r = 0; r < part.nodes(); ++r) blocked += part.eng(r).counters().tx_blocked;
  CHECK(blocked > 0);
  check_bounds(part, {make_tree_route(part.dims, coord_of(0, part.dims))});
  check_no_leaks(part);
}

// A tree link cut while an operation streams: its ends fail the operation
// (long before the timeout), with the link's status where the cut was seen
// and with the partition's reset naming it elsewhere; once the cable is
// mended the links train again and the next operation works.
TEST(Combine, LinkDownFailsTheRunningOperation) {
  Partition part("4x4x4", "linkdown=1.0.0:x+@1000us+2ms");
  CHECK(part.rig.fabric().now() < 1000 * kUs);  // trained before the cut
  const Op o{AluOp::kAdd, AluType::kUnsigned, 8, 200000};  // about 4 ms of streaming
  OpData d(o, part.nodes(), 3);
  start_all(part, tuning::kTreeClassWorld, o, d);
  const uint32_t a = rank_of(Coord{{1, 0, 0}}, part.dims), b = rank_of(Coord{{2, 0, 0}}, part.dims);
  Status sa, sb;
  CHECK(part.run_until([&] { return part.eng(a).test(tuning::kTreeClassWorld, &sa) &&
                                    part.eng(b).test(tuning::kTreeClassWorld, &sb); },
                       20 * kMs));
  for (const Status* st : {&sa, &sb}) {
    const std::string& m = st->message();
    CHECK_TEXT(m.find("combine class 1") != std::string::npos, m.c_str());
    if (st->code() == Code::kLinkDown) {
      CHECK_TEXT(m.find("node 1,0,0 port port0 (x+): link down") != std::string::npos ||
                     m.find("node 2,0,0 port port1 (x-): link down") != std::string::npos,
                 m.c_str());
    } else {
      CHECK_TEXT(st->code() == Code::kReset, st->to_string().c_str());
      CHECK_TEXT(m.find("link down at node 1,0,0 port x+") != std::string::npos ||
                     m.find("link down at node 2,0,0 port x-") != std::string::npos,
                 m.c_str());
    }
  }
  // Every node failed it (nobody waits for the timeout) ...
  std::vector<Status> st(part.nodes());
  CHECK(part.run_until([&] { return part.all_done(tuning::kTreeClassWorld, &st); }, 20 * kMs));
  for (uint32_t r = 0; r < part.nodes(); ++r) CHECK(!st[r].is_ok());
  // ... and after the cable is mended and every link trained again, the
  // next operation is right on every node.
  CHECK(part.run_until([&] {
    for (uint32_t r = 0; r < part.nodes(); ++r)
      if (!part.rig.node(r).trainer().all_up()) return false;
    return true;
  }, 50 * kMs));
  run_op(part, tuning::kTreeClassWorld, Op{AluOp::kAdd, AluType::kUnsigned, 8, 3000}, 4);
}
