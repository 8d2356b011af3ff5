// The collective hot path allocates nothing in steady state: after the first
// call of each shape, 1000 more allreduces, bcasts, alltoalls and barriers
// (every node of a 2x2x2 sim partition, the fabric stepping them) make no
// heap allocation at all. This executable interposes malloc, calloc,
// realloc and the aligned allocators (operator new ends in malloc) and counts
// calls while the measured window is open; anything in the process counts,
// the sim fabric and this test's own loop included. TOROID_ALLOC_TRACE=N
// prints the call stacks of the first N counted allocations and
// TOROID_ALLOC_SHAPE=TEXT runs only the shapes whose name contains TEXT.
#include <execinfo.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/select.h"
#include "tests/sim/coll_helpers.h"

#include <CppUTest/TestHarness.h>

// Under AddressSanitizer the allocator is ASan's own: these hooks would
// bypass it, so the tests are ignored there (and say why).
#if defined(__SANITIZE_ADDRESS__)
#define TOROID_COUNT_ALLOCS 0
#else
#define TOROID_COUNT_ALLOCS 1
#endif

#if TOROID_COUNT_ALLOCS
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocs{0};
int g_trace = -1;  // TOROID_ALLOC_TRACE=N: print the call stacks of the first N counted allocations
inline void note() {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  const uint64_t k = g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (static_cast<int64_t>(k) < g_trace) {
    g_counting = false;  // backtrace() may allocate
    void* frames[24];
    const int depth = backtrace(frames, 24);
    (void)!write(2, "--- counted allocation:\n", 25);
    backtrace_symbols_fd(frames, depth, 2);
    g_counting = true;
  }
}
}  // namespace

#if TOROID_COUNT_ALLOCS
extern "C" {
void* malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  note();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
void* memalign(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
void* aligned_alloc(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  note();
  void* p = __libc_memalign(align, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}
#endif

using namespace toroid;
using namespace toroid::test;

namespace {

struct Shape {
  const char* what;
  CollKind kind;
  uint64_t count;  // elements of int64 (alltoall: per peer)
};

// Starts one operation on every node and steps the fabric until all are
// done, without allocating itself (no std::function, no vectors).
bool run_once(SimRig& rig, const std::vector<Comm*>& comms, std::vector<CollArgs>& args, const char* algo = "") {
  for (size_t i = 0; i < comms.size(); ++i)
    if (!comms[i]->start(args[i], algo).is_ok()) return false;
  const uint64_t end = rig.fabric().now() + 100 * kMs;
  for (;;) {
    bool all = true;
    for (Comm* c : comms) {
      Status st;
      if (!c->test(&st)) {
        all = false;
        break;
      }
      if (!st.is_ok()) return false;
    }
    if (all) return true;
    if (rig.fabric().now() >= end) return false;
    const uint64_t slice = rig.fabric().now() + 20 * kUs;
    for (uint32_t r = 0; r < rig.node_count(); ++r) rig.fabric().wake(r, rig.fabric().now());
    rig.fabric().run(slice);
    rig.fabric().clock().set(slice);
  }
}

// A trained 2x2x2 sim partition that made its buffers up front
// (SimOptions::preallocate), so only the node's code allocates from here.
std::unique_ptr<SimRig> trained_cube() {
  SimOptions o = options("2x2x2", "train", 1);
  o.preallocate = true;
  auto rig = std::make_unique<SimRig>(o);
  CHECK_TRUE(rig->build().is_ok());
  CHECK_EQUAL(rig->node_count(), rig->run().passed);
  return rig;
}

}  // namespace

TEST_GROUP(SteadyState) {
  void setup() override {
    if (const char* t = std::getenv("TOROID_ALLOC_TRACE")) g_trace = std::atoi(t);
  }
};

#if TOROID_COUNT_ALLOCS
#define ALLOC_TEST TEST
#else
#define ALLOC_TEST IGNORE_TEST
namespace {
[[maybe_unused]] const bool kSkipNote = [] {
  std::printf("SKIP SteadyState: allocation counting needs the process's own malloc (not under AddressSanitizer)\n");
  return true;
}();
}  // namespace
#endif

ALLOC_TEST(SteadyState, CollectivesAllocateNothingAfterTheFirstCall) {
  LogCapture log;
  // The sim's own packet pools and event queue grow on demand (for
  // partitions of 65,536 nodes); here they are made up front, as a real
  // node's DPDK pool is, so only the node's code is measured.
  auto rig = trained_cube();
  auto comms = world_comms(*rig);
  const uint32_t n = rig->node_count();
  const Shape shapes[] = {
      {"allreduce 8 B", CollKind::kAllreduce, 1},      {"allreduce 64 KiB", CollKind::kAllreduce, 8192},
      {"allreduce 1 MiB", CollKind::kAllreduce, 131072}, {"bcast 8 B", CollKind::kBcast, 1},
      {"bcast 64 KiB", CollKind::kBcast, 8192},        {"alltoall 8 B", CollKind::kAlltoall, 1},
      {"alltoall 4 KiB", CollKind::kAlltoall, 512},    {"barrier", CollKind::kBarrier, 0},
  };
  std::string report;  // every shape that allocated (the first call of each is not counted)
  const char* only = std::getenv("TOROID_ALLOC_SHAPE");  // run only the shapes whose name contains it
  for (const Shape& s : shapes) {
    if (only && !std::strstr(s.what, only)) continue;
    const uint64_t reps = s.count >= 131072 ? 100 : 1000;
    std::vector<std::vector<int64_t>> send(n), recv(n);
    std::vector<CollArgs> args(n);
    for (uint32_t r = 0; r < n; ++r) {
      const uint64_t elems = s.kind == CollKind::kAlltoall ? s.count * n : s.count;
      send[r].assign(elems, r + 1);
      recv[r].assign(elems, 0);
      CollArgs& a = args[r];
      a.kind = s.kind;
      a.dtype = DType::kInt64;
      a.op = ROp::kSum;
      a.count = s.count;
      a.send = s.kind == CollKind::kBcast ? nullptr : send[r].data();
      a.recv = s.kind == CollKind::kBarrier ? nullptr : recv[r].data();
    }
    CHECK_TEXT(run_once(*rig, comms, args), s.what);  // the first call of the shape may allocate
    g_allocs = 0;
    g_counting = true;
    bool ok = true;
    for (uint64_t k = 0; k < reps && ok; ++k) ok = run_once(*rig, comms, args);
    g_counting = false;
    const uint64_t allocs = g_allocs;
    CHECK_TEXT(ok, s.what);
    if (allocs) {
      report += std::string(report.empty() ? "" : "; ") + s.what + " (" + comms[0]->algo() +
                "): " + std::to_string(allocs) + " heap allocations in " + std::to_string(reps) + " operations";
    }
    // The operations did run: the last one's result is right.
    if (s.kind == CollKind::kAllreduce) LONGS_EQUAL(n * (n + 1) / 2, recv[3][s.count - 1]);
    if (s.kind == CollKind::kAlltoall) LONGS_EQUAL(2 + 1, recv[5][s.count * 2]);  // block j comes from rank j
  }
  CHECK_TEXT(report.empty(), report.c_str());
}

// Every algorithm of the library by name, on the shapes it runs on here: the
// same property (200 operations each after the first).
ALLOC_TEST(SteadyState, EveryAlgorithmAllocatesNothingAfterTheFirstCall) {
  LogCapture log;
  auto rig = trained_cube();
  auto comms = world_comms(*rig);
  const uint32_t n = rig->node_count();
  std::string report;
  uint32_t ran = 0;
  const char* only = std::getenv("TOROID_ALLOC_SHAPE");
  for (const AlgoInfo& info : algorithms()) {
    if (only && !std::strstr(info.name, only)) continue;
    if (info.kind == CollKind::kGather || info.kind == CollKind::kScatter) continue;  // not on the hot list
    const uint64_t count = info.kind == CollKind::kBarrier ? 0 : 64;
    std::vector<std::vector<int64_t>> send(n), recv(n);
    std::vector<CollArgs> args(n);
    for (uint32_t r = 0; r < n; ++r) {
      const uint64_t elems = (info.kind == CollKind::kAlltoall || info.kind == CollKind::kAllgather ||
                              info.kind == CollKind::kReduceScatter)
                                 ? count * n
                                 : count;
      send[r].assign(elems, r + 1);
      recv[r].assign(elems, 0);
      CollArgs& a = args[r];
      a.kind = info.kind;
      a.dtype = DType::kInt64;
      a.op = ROp::kSum;
      a.count = count;
      a.send = info.kind == CollKind::kBcast || info.name == std::string("xor-inplace") ? nullptr : send[r].data();
      a.recv = info.kind == CollKind::kBarrier ? nullptr : recv[r].data();
    }
    if (!algo_unusable(info, comms[0]->info(), args[0]).empty()) continue;
    if (!run_once(*rig, comms, args, info.name)) {
      report += std::string(report.empty() ? "" : "; ") + coll_kind_name(info.kind) + " " + info.name + " failed";
      continue;
    }
    ++ran;
    g_allocs = 0;
    g_counting = true;
    bool ok = true;
    for (int k = 0; k < 200 && ok; ++k) ok = run_once(*rig, comms, args, info.name);
    g_counting = false;
    if (!ok || g_allocs)
      report += std::string(report.empty() ? "" : "; ") + coll_kind_name(info.kind) + " " + info.name + ": " +
                (ok ? std::to_string(g_allocs.load()) + " heap allocations in 200 operations" : "failed");
  }
  if (!only) CHECK(ran >= 20);
  CHECK_TEXT(report.empty(), report.c_str());
}

// Exact float sums with a barrier between each two (as a benchmark runs
// them): the sum's object, whose operand buffers are several times the
// data, is kept while the barrier runs, so after the first round neither
// operation allocates. ExactSum over `algo`, or exact-share (its alltoall
// and allgather objects and staging kept too).
void exact_sums_between_barriers(const char* algo, const char* shown) {
  LogCapture log;
  auto rig = trained_cube();
  auto comms = world_comms(*rig);
  const uint32_t n = rig->node_count();
  constexpr uint64_t kCount = 4096;
  std::vector<std::vector<double>> send(n), recv(n);
  std::vector<CollArgs> sums(n), barriers(n);
  for (uint32_t r = 0; r < n; ++r) {
    send[r].resize(kCount);
    for (uint64_t k = 0; k < kCount; ++k) send[r][k] = std::ldexp(1.0 + 0.001 * (r + 1), static_cast<int>(k % 49) - 24);
    recv[r].assign(kCount, 0.0);
    sums[r].kind = CollKind::kAllreduce;
    sums[r].dtype = DType::kDouble;
    sums[r].op = ROp::kSum;
    sums[r].repro = Repro::kExact;
    sums[r].count = kCount;
    sums[r].send = send[r].data();
    sums[r].recv = recv[r].data();
    barriers[r].kind = CollKind::kBarrier;
  }
  CHECK_TRUE(run_once(*rig, comms, sums, algo));
  const CollAlgo* first = comms[0]->active_algo();
  CHECK_TRUE(run_once(*rig, comms, barriers));
  g_allocs = 0;
  g_counting = true;
  bool ok = true;
  for (int k = 0; k < 100 && ok; ++k) ok = run_once(*rig, comms, sums, algo) && run_once(*rig, comms, barriers);
  g_counting = false;
  CHECK_TRUE(ok);
  LONGS_EQUAL(0, g_allocs.load());
  CHECK_TRUE(run_once(*rig, comms, sums, algo));
  CHECK_TRUE(comms[0]->active_algo() == first);  // the same object all along
  STRCMP_EQUAL(shown, comms[0]->algo().c_str());
  // The sums are right: 8 contributions of 2^e * (1 + 0.001 r), r = 1..8.
  double want = 0;
  for (uint32_t r = 0; r < n; ++r) want += std::ldexp(1.0 + 0.001 * (r + 1), static_cast<int>(kCount - 1) % 49 - 24);
  DOUBLES_EQUAL(want, recv[5][kCount - 1], std::ldexp(want, -50));
}

ALLOC_TEST(SteadyState, ExactSumsBetweenBarriersAllocateNothingAfterTheFirst) {
  exact_sums_between_barriers("ring", "ring (exact)");
}

ALLOC_TEST(SteadyState, ExactShareSumsBetweenBarriersAllocateNothingAfterTheFirst) {
  exact_sums_between_barriers("exact-share", "exact-share");
}

// Kinds and algorithms mixed, as programs and benchmarks run them (a
// barrier between allreduces, a broadcast now and then, an algorithm
// forced for one call): each keeps its object, so after the first round
// nothing allocates. With one object per communicator, each change of
// algorithm made the next one anew (and its plans and buffers with it).
ALLOC_TEST(SteadyState, MixedKindsAndAlgorithmsAllocateNothingAfterTheFirstRound) {
  LogCapture log;
  auto rig = trained_cube();
  auto comms = world_comms(*rig);
  const uint32_t n = rig->node_count();
  constexpr uint64_t kCount = 64;
  std::vector<std::vector<int64_t>> send(n), recv(n);
  std::vector<CollArgs> sums(n), bcasts(n), barriers(n);
  for (uint32_t r = 0; r < n; ++r) {
    send[r].assign(kCount, static_cast<int64_t>(r) + 1);
    recv[r].assign(kCount, 0);
    sums[r].kind = CollKind::kAllreduce;
    sums[r].dtype = DType::kInt64;
    sums[r].op = ROp::kSum;
    sums[r].count = kCount;
    sums[r].send = send[r].data();
    sums[r].recv = recv[r].data();
    bcasts[r] = sums[r];
    bcasts[r].kind = CollKind::kBcast;
    bcasts[r].send = nullptr;
    barriers[r].kind = CollKind::kBarrier;
  }
  // One round: five operations of four algorithms and three kinds.
  auto round = [&] {
    return run_once(*rig, comms, sums) && run_once(*rig, comms, barriers) && run_once(*rig, comms, sums, "ring") &&
           run_once(*rig, comms, bcasts) && run_once(*rig, comms, barriers);
  };
  CHECK_TRUE(round());
  const CollAlgo* ring = nullptr;
  CHECK_TRUE(run_once(*rig, comms, sums, "ring"));
  ring = comms[0]->active_algo();
  g_allocs = 0;
  g_counting = true;
  bool ok = true;
  for (int k = 0; k < 100 && ok; ++k) ok = round();
  g_counting = false;
  CHECK_TRUE(ok);
  LONGS_EQUAL(0, g_allocs.load());
  CHECK_TRUE(run_once(*rig, comms, sums, "ring"));
  CHECK_TRUE(comms[0]->active_algo() == ring);  // the same object all along
  LONGS_EQUAL(static_cast<long>(n * (n + 1) / 2), static_cast<long>(recv[6][kCount - 1]));
}
