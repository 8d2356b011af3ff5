// Bursts against a PMD's teardown on EAL's interrupt thread.
//
// DPDK 22.11's memif PMD handles its control channel on EAL's interrupt
// thread. When the peer goes away it disconnects there: it clears the
// device's "connected" flag, unregisters the channel's interrupt callback,
// then unmaps the shared regions and frees their records. A burst of ours
// that read the flag before the clear (its thread preempted between the
// check and the ring) then touches unmapped memory: the node dies of
// SIGSEGV when its neighbour reboots.
//
// The guard closes that window without locks on the data path. Every DPDK
// port owns a slot with a sequence number; a burst makes it odd on entry
// and even on exit, with compiler barriers only. The teardown side
// (`wait_for_bursts`) runs a process-wide memory barrier on every thread
// (membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED) and waits, up to 1 s,
// for each slot it finds odd to move on: a burst that began before the flag
// cleared has ended; one that begins later sees the flag and returns empty.
// The PMD reaches that point through rte_intr_callback_unregister, which
// memif_disconnect calls after clearing the flag and before unmapping;
// burst_guard.cc interposes it (the executables export it: drivers/meson.build).
// Where membarrier is not available the data path uses a full fence.
#pragma once

#include <atomic>
#include <cstdint>

namespace toroid::dpdk {

constexpr int kBurstSlots = 256;

struct alignas(64) BurstSlot {
  std::atomic<uint64_t> seq{0};  // odd while a burst is in the PMD
};
extern BurstSlot g_burst_slots[kBurstSlots];
// True when membarrier could not be registered: bursts fence themselves.
extern bool g_burst_self_fence;

// Control path: a free slot for a port (-1 when all are taken), and back.
int burst_slot_acquire();
void burst_slot_release(int slot);

// Called once, before the PMDs start (eal_init).
void burst_guard_init();

// Teardown side: waits until no burst that might have missed a flag the
// caller cleared is still inside a PMD. Returns the slots it waited for.
int wait_for_bursts();

struct BurstGuardStats {
  uint64_t teardowns = 0;  // wait_for_bursts calls
  uint64_t waited = 0;     // slots found inside a burst, waited for
  uint64_t timed_out = 0;  // gave up after 1 s (a stopped thread)
};
BurstGuardStats burst_guard_stats();

// Data path: no syscall, no lock, no allocation.
inline void burst_enter(int slot) {
  std::atomic<uint64_t>& s = g_burst_slots[slot].seq;
  s.store(s.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (g_burst_self_fence) std::atomic_thread_fence(std::memory_order_seq_cst);
  else std::atomic_signal_fence(std::memory_order_seq_cst);
}
inline void burst_exit(int slot) {
  std::atomic<uint64_t>& s = g_burst_slots[slot].seq;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  s.store(s.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

}  // namespace toroid::dpdk
