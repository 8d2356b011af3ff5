// Internals shared by sim_fabric.cc (the link model) and sim_sched.cc (the
// scheduler): frames in flight, per-port arrival queues, regions, nodes.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "drivers/sim/sim_fabric.h"

namespace toroid {

// Bytes of the shortest frame reserve_events plans for (an Ethernet header
// and the link layer's smallest header, an ack, are longer).
constexpr uint32_t kMinWireFrame = 32;

// A frame on the wire: the medium's own copy of the bytes the sender
// offered. Blocks come in size classes of 256 << cls bytes of data.
struct SimFrame {
  static constexpr uint32_t kIntact = ~uint32_t{0};
  SimFrame* next;
  uint32_t len;
  uint32_t flipped;  // the bit the medium flipped, kIntact if none
  uint64_t digest;   // of the bytes as they will arrive, for the trace (taken
                     // while the sender's copy is still in cache)
  uint8_t cls;
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
};

// Free lists of in-flight frames, one arena per region. A frame is taken
// from the sender's region and put back by the receiver's: blocks migrate
// between arenas, each list is touched by its own region's thread only, and
// all memory is released with the fabric (every arena's chunks).
class SimFrameArena {
 public:
  static constexpr int kClasses = 8;  // 256 B .. 32 KiB of data
  static constexpr size_t kSmallChunk = 64;  // frames per chunk of the classes up to 1 KiB
  ~SimFrameArena() {
    for (void* c : chunks_) std::free(c);
  }
  SimFrame* get(uint32_t len) {
    int cls = 0;
    while ((256u << cls) < len && cls < kClasses - 1) ++cls;
    SimFrame* f = free_[cls];
    if (!f) f = grow(cls);
    free_[cls] = f->next;
    f->len = len;
    f->flipped = SimFrame::kIntact;
    f->next = nullptr;
    return f;
  }
  // At least n frames of the smallest class (a collective's frames) free.
  void reserve(size_t n) {
    size_t have = 0;
    for (SimFrame* f = free_[0]; f && have < n; f = f->next) ++have;
    const size_t chunks = (n - have + kSmallChunk - 1) / kSmallChunk;
    chunks_.reserve(chunks_.size() + chunks + 64);  // and room for later growth of other classes
    for (size_t i = 0; i < chunks; ++i) grow(0);
  }
  void put(SimFrame* f) {
    f->next = free_[f->cls];
    free_[f->cls] = f;
  }

 private:
  SimFrame* grow(int cls) {
    const size_t block = sizeof(SimFrame) + (size_t{256} << cls);
    const size_t count = cls < 3 ? kSmallChunk : 8;
    auto* mem = static_cast<uint8_t*>(std::malloc(block * count));
    chunks_.push_back(mem);
    for (size_t i = 0; i < count; ++i) {
      auto* f = reinterpret_cast<SimFrame*>(mem + i * block);
      f->cls = static_cast<uint8_t>(cls);
      f->next = free_[cls];
      free_[cls] = f;
    }
    return free_[cls];
  }
  SimFrame* free_[kClasses] = {};
  std::vector<void*> chunks_;
};

// A frame for a port of another region, posted during a window.
struct SimMail {
  uint32_t port;
  SimWire wire;
};

struct SimHeapEntry {
  uint64_t key;
  uint32_t node;
};

// A reusable barrier for the region threads: spins briefly (windows are
// short), then sleeps on a futex, so a descheduled peer costs no CPU.
class SimBarrier {
 public:
  explicit SimBarrier(uint32_t n) : n_(n) {}
  void arrive_and_wait() {
    const uint32_t gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      count_.store(0, std::memory_order_relaxed);
      // seq_cst store, then load: a sleeper that registered before this
      // store is seen and woken; one that registers after it sees the new
      // generation before it sleeps.
      gen_.store(gen + 1);
      if (sleepers_.load()) gen_.notify_all();
      return;
    }
    for (int i = 0; i < 4000; ++i) {
      if (gen_.load(std::memory_order_acquire) != gen) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    sleepers_.fetch_add(1);
    while (gen_.load() == gen) gen_.wait(gen);
    sleepers_.fetch_sub(1);
  }

 private:
  const uint32_t n_;
  std::atomic<uint32_t> count_{0};
  std::atomic<uint32_t> gen_{0};
  std::atomic<uint32_t> sleepers_{0};
};

// The scheduler threads (thread 0 is the caller's) and what they share
// during a run. Window k reads what window k - 1 wrote and writes what
// window k + 1 reads, so one barrier per window orders everything:
// - heap[k & 1][r]: region r's earliest pending instant at the start of
//   window k, not counting mail (written by whichever thread ran r in
//   window k - 1; carried over by thread 0 for a region nobody ran);
// - mail[k % 3][d]: the earliest arrival of the frames posted for region d
//   in window k (an atomic minimum over the senders; read in window k + 1,
//   cleared by thread 0 in window k + 2);
// - taken[r]: the window that region r was last run in (a stamp unique
//   over runs); the thread that sets it runs the region.
struct SimFabric::Workers {
  Workers(uint32_t threads, uint32_t regions)
      : barrier(threads),
        heap{std::vector<Next>(regions), std::vector<Next>(regions)},
        mail{std::vector<Mail>(regions), std::vector<Mail>(regions), std::vector<Mail>(regions)},
        taken(regions),
        ready(threads) {
    for (auto& t : ready) t.reserve(regions);
  }
  struct alignas(64) Next {
    uint64_t at = kNever;
  };
  struct alignas(64) Mail {
    std::atomic<uint64_t> at{kNever};
  };
  SimBarrier barrier;
  std::vector<Next> heap[2];
  std::vector<Mail> mail[3];
  struct alignas(64) Taken {
    std::atomic<uint64_t> v{0};
  };
  std::vector<Taken> taken;
  alignas(64) bool out_of_time[2] = {false, false};  // thread 0's wall budget is spent
  std::vector<std::vector<uint32_t>> ready;         // per thread: this window's regions with work
  std::vector<std::thread> threads;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t run_gen = 0;  // bumped by run(); workers start thread_loop on a new value
  bool quit = false;
  uint32_t done = 0;     // workers finished with the current run
  uint64_t window_base = 0;  // the stamp of a run's window 0, less one
};

// A share of the partition: its nodes are run by one thread at a time (any
// of them, window by window), in instant order.
struct alignas(64) SimRegion {
  uint32_t id = 0;
  VirtualClock clock;
  FabricStats stats;
  SimFrameArena arena;
  std::vector<SimHeapEntry> heap;  // min-heap of node keys (earliest instant the node has work)
  uint32_t processing = ~0u;       // the node being processed (its key is fixed up after)
  // out[parity][dst]: frames for region dst posted in windows of that parity.
  std::vector<std::vector<SimMail>> out[2];
  std::vector<uint32_t> mailed;    // regions posted to in this window, in first-post order
  std::vector<uint64_t> mail_min;  // per region: earliest arrival posted to it this window
  uint32_t parity = 0;             // of the window being run
  uint64_t events = 0;
};

struct SimFabric::NodeRec {
  SimEndpoint* ep = nullptr;
  uint64_t wake_at = kNever;  // pending step
  uint64_t key = kNever;      // min(wake_at, earliest arrival at its ports)
  uint32_t heap_pos = ~0u;    // index in its region's heap, ~0 if not there
  uint32_t region = 0;
  SimPort* first_port = nullptr;  // its ports, linked by SimPort::next_on_node_
  SimPort* last_port = nullptr;
  uint16_t nports = 0;
};

// One cable. Direction d carries frames from end[d] to end[1 - d]; each
// direction serializes per channel and draws its random numbers on its own.
struct SimFabric::Link {
  struct Half {
    uint64_t busy_until[kSimChannels] = {};  // each transmitter is busy sending until then
    uint64_t cut_at = kNever;
    uint64_t cut_until = kNever;             // mended then (kNever: cut for good)
    uint64_t frames = 0;                     // transmit order of this direction
    bool cut(uint64_t now) const { return cut_at <= now && now < cut_until; }
    Rng rng;
  };
  SimPort* end[2] = {nullptr, nullptr};
  Half dir[2];
};

}  // namespace toroid
