// The burst guard (burst_guard.h): slots, the teardown's wait, and the
// interposed rte_intr_callback_unregister through which a PMD's teardown on
// the interrupt thread reaches it.
#include "drivers/dpdk/burst_guard.h"

#include <dlfcn.h>
#include <linux/membarrier.h>
#include <rte_interrupts.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace toroid::dpdk {

BurstSlot g_burst_slots[kBurstSlots];
bool g_burst_self_fence = true;  // until burst_guard_init registers membarrier

namespace {

std::atomic<bool> g_slot_used[kBurstSlots];
bool g_membarrier = false;
std::atomic<uint64_t> g_teardowns{0}, g_waited{0}, g_timed_out{0};

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

int burst_slot_acquire() {
  for (int i = 0; i < kBurstSlots; ++i) {
    bool expect = false;
    if (g_slot_used[i].compare_exchange_strong(expect, true)) return i;
  }
  return -1;
}

void burst_slot_release(int slot) {
  if (slot >= 0 && slot < kBurstSlots) g_slot_used[slot].store(false);
}

void burst_guard_init() {
  if (g_membarrier) return;
  g_membarrier = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  // Published before any port exists, so before any burst reads it.
  g_burst_self_fence = !g_membarrier;
}

int wait_for_bursts() {
  g_teardowns.fetch_add(1, std::memory_order_relaxed);
  // Every thread of the process passes a full barrier: the caller's earlier
  // stores (the PMD's cleared flag) are visible to any burst after it, and
  // a burst's entry before it is visible here.
  if (!g_membarrier || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
    std::atomic_thread_fence(std::memory_order_seq_cst);
  int waited = 0;
  for (int i = 0; i < kBurstSlots; ++i) {
    const uint64_t s = g_burst_slots[i].seq.load(std::memory_order_acquire);
    if ((s & 1) == 0) continue;
    ++waited;
    g_waited.fetch_add(1, std::memory_order_relaxed);
    const uint64_t deadline = mono_ns() + 1000000000ull;
    while (g_burst_slots[i].seq.load(std::memory_order_acquire) == s) {
      if (mono_ns() > deadline) {
        g_timed_out.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      sched_yield();
    }
  }
  return waited;
}

BurstGuardStats burst_guard_stats() {
  return {g_teardowns.load(), g_waited.load(), g_timed_out.load()};
}

}  // namespace toroid::dpdk

// memif_disconnect (DPDK 22.11) clears the connected flag, then calls this
// for its control channel, then unmaps the regions: the bursts that may
// still hold the old flag are waited for here. Every other caller pays a
// membarrier and a scan of the slots; unregistering is rare.
extern "C" int rte_intr_callback_unregister(const struct rte_intr_handle* intr_handle, rte_intr_callback_fn cb,
                                            void* cb_arg) {
  using Fn = int (*)(const struct rte_intr_handle*, rte_intr_callback_fn, void*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "rte_intr_callback_unregister"));
  toroid::dpdk::wait_for_bursts();
  return real ? real(intr_handle, cb, cb_arg) : -1;
}
