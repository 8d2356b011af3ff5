// toroid-handover: what it costs to pass work from one process to the next
// when processes outnumber the cores, by the two ways an idle node can wait:
// sched_yield in a polling loop (what the node runtime does, EventLoop's
// yield mode) or sleeping on a futex that the sender wakes (a doorbell).
//
// N processes in a ring share tokens in one shared page; a process that
// holds a token works busy-ns, passes it to the next and, with the futex,
// wakes the next if it sleeps. A process without one polls (idle-ns of
// work, then sched_yield) or arms its doorbell, checks again and sleeps.
// Prints the time per hand-over: with one token, every hop is on the
// critical path, as in a tree barrier; with several, work overlaps.
// docs/bench.md ("Sleeping instead of yielding") has the figures.
//
// Every wait is bounded: a futex sleep lasts at most 1 ms, and the run
// stops with an error after --timeout seconds.
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>

#include "base/args.h"
#include "base/clock.h"
#include "base/text.h"

namespace {

using toroid::ArgWalker;
using toroid::parse_u64;
using toroid::RealClock;
using toroid::wall_seconds;

struct alignas(64) Slot {
  std::atomic<uint32_t> tokens;
  std::atomic<uint32_t> bell;      // the futex word: bumped by each wake
  std::atomic<uint32_t> sleeping;  // 1 while the owner may be asleep
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// Busy for ns on the process's own clock (one RealClock per process).
void work(const RealClock& clk, uint64_t ns) {
  if (ns == 0) return;
  const uint64_t end = clk.now_ns() + ns;
  while (clk.now_ns() < end) {
  }
}

long futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* ts) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, ts, nullptr, 0);
}

struct Options {
  int procs = 8;
  bool futex = false;
  int tokens = 1;
  long hops = 100000;
  uint64_t idle_ns = 0;
  uint64_t busy_ns = 0;
  int timeout_s = 60;
};

void usage(FILE* f) {
  fprintf(f,
          "usage: toroid-handover [--procs N] [--mode yield|futex] [--tokens K] [--hops H]\n"
          "                       [--idle-ns NS] [--busy-ns NS] [--timeout S]\n\n"
          "N processes (default 8) pass K tokens (default 1) around a ring H times in\n"
          "all (default 100000). A process holding a token works --busy-ns, then\n"
          "passes it on; one without polls (--idle-ns of work, then sched_yield: mode\n"
          "yield, the default) or sleeps on a futex the sender wakes (mode futex).\n"
          "Prints the wall time per hop. Run it under taskset to choose the cores.\n"
          "Exit status: 0 done, 1 timed out or failed, 2 usage error.\n");
}

// One process of the ring: takes `share` tokens, then returns.
void run_member(Slot* ring, int me, const Options& o, long share) {
  const RealClock clk;
  Slot& mine = ring[me];
  Slot& next = ring[(me + 1) % o.procs];
  long taken = 0;
  while (taken < share) {
    if (mine.tokens.load(std::memory_order_acquire) > 0) {
      mine.tokens.fetch_sub(1, std::memory_order_acq_rel);
      ++taken;
      work(clk, o.busy_ns);
      next.tokens.fetch_add(1, std::memory_order_seq_cst);
      // The fetch_add above is a full barrier: the next one's flag is read
      // after our token is visible, so it either sees the token or we see
      // it asleep.
      if (o.futex && next.sleeping.load(std::memory_order_seq_cst)) {
        next.bell.fetch_add(1, std::memory_order_seq_cst);
        futex(&next.bell, FUTEX_WAKE, 1, nullptr);
      }
      continue;
    }
    if (!o.futex) {
      work(clk, o.idle_ns);
      sched_yield();
      continue;
    }
    const uint32_t seen = mine.bell.load(std::memory_order_acquire);
    mine.sleeping.store(1, std::memory_order_seq_cst);
    if (mine.tokens.load(std::memory_order_seq_cst) == 0) {
      const timespec ms{0, 1000000};
      futex(&mine.bell, FUTEX_WAIT, seen, &ms);
    }
    mine.sleeping.store(0, std::memory_order_relaxed);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (ArgWalker w(argc, argv); w.next();) {
    const std::string a = w.arg();
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    std::string v;
    if (!w.value(&v)) {
      fprintf(stderr, "toroid-handover: %s needs a value (--help)\n", a.c_str());
      return 2;
    }
    if (a == "--mode") {
      if (v != "yield" && v != "futex") {
        fprintf(stderr, "toroid-handover: --mode is yield or futex, not '%s'\n", v.c_str());
        return 2;
      }
      o.futex = v == "futex";
      continue;
    }
    uint64_t n = 0;
    if (!parse_u64(v, &n)) {
      fprintf(stderr, "toroid-handover: %s wants a number, not '%s'\n", a.c_str(), v.c_str());
      return 2;
    }
    if (a == "--procs")
      o.procs = static_cast<int>(std::min<uint64_t>(n, 1u << 20));
    else if (a == "--tokens")
      o.tokens = static_cast<int>(std::min<uint64_t>(n, 1u << 20));
    else if (a == "--hops")
      o.hops = static_cast<long>(std::min<uint64_t>(n, uint64_t{1} << 40));
    else if (a == "--idle-ns")
      o.idle_ns = n;
    else if (a == "--busy-ns")
      o.busy_ns = n;
    else if (a == "--timeout")
      o.timeout_s = static_cast<int>(std::min<uint64_t>(n, 1u << 20));
    else {
      fprintf(stderr, "toroid-handover: unknown option %s (--help)\n", a.c_str());
      return 2;
    }
  }
  if (o.procs < 2 || o.procs > 256 || o.tokens < 1 || o.tokens > o.procs || o.hops < o.procs || o.timeout_s < 1) {
    fprintf(stderr, "toroid-handover: want 2 <= procs <= 256, 1 <= tokens <= procs, hops >= procs, timeout >= 1\n");
    return 2;
  }
  const size_t bytes = sizeof(Slot) * static_cast<size_t>(o.procs);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    perror("toroid-handover: mmap");
    return 1;
  }
  auto* ring = static_cast<Slot*>(mem);
  for (int r = 0; r < o.procs; ++r) new (&ring[r]) Slot{};
  for (int k = 0; k < o.tokens; ++k) ring[k * o.procs / o.tokens].tokens.store(1);
  const long share = o.hops / o.procs;  // every member takes the same number
  const double t0 = wall_seconds();
  pid_t pids[256];
  for (int r = 0; r < o.procs; ++r) {
    pids[r] = fork();
    if (pids[r] < 0) {
      perror("toroid-handover: fork");
      for (int k = 0; k < r; ++k) kill(pids[k], SIGKILL);
      return 1;
    }
    if (pids[r] == 0) {
      alarm(static_cast<unsigned>(o.timeout_s));  // a stuck member ends itself
      run_member(ring, r, o, share);
      _exit(0);
    }
  }
  int failed = 0;
  for (int r = 0; r < o.procs; ++r) {
    int st = 0;
    if (waitpid(pids[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
  }
  const double t1 = wall_seconds();
  if (failed) {
    fprintf(stderr, "toroid-handover: %d of %d processes did not finish within %d s\n", failed, o.procs, o.timeout_s);
    return 1;
  }
  printf("procs=%d mode=%s tokens=%d hops=%ld idle_ns=%llu busy_ns=%llu: %.2f us per hop\n", o.procs,
         o.futex ? "futex" : "yield", o.tokens, share * o.procs, static_cast<unsigned long long>(o.idle_ns),
         static_cast<unsigned long long>(o.busy_ns), (t1 - t0) * 1e6 / static_cast<double>(share * o.procs));
  return 0;
}
