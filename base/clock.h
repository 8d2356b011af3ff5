// Time source for everything above drivers/. Nothing reads the OS clock
// directly: the sim rig substitutes a virtual clock that its scheduler sets,
// which is what makes a sim run replayable bit for bit.
#pragma once
#include <cstdint>

namespace toroid {

constexpr uint64_t kNever = ~uint64_t{0};
constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint64_t kSec = 1000 * kMs;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t now_ns() const = 0;
  virtual bool is_virtual() const = 0;
};

// CLOCK_MONOTONIC. Where the kernel keeps that clock on the TSC itself
// (clocksource "tsc": constant rate, the same on every CPU), a read is the
// TSC scaled to nanoseconds, about half the cost of clock_gettime through
// the vDSO; the scale is measured against CLOCK_MONOTONIC over the clock's
// lifetime and the reading re-anchored to it every millisecond, never
// moving backwards. Elsewhere (or with TOROID_CLOCK=kernel) every read is
// clock_gettime. Not thread-safe: one RealClock per thread (a node, an MPI
// rank, each own one).
class RealClock final : public Clock {
 public:
  uint64_t now_ns() const override;
  bool is_virtual() const override { return false; }
  // Whether this process's RealClocks read the TSC.
  static bool reads_tsc();

 private:
  uint64_t reanchor() const;

  mutable uint64_t base_tsc_ = 0, base_ns_ = 0;      // the first reading: the scale's baseline
  mutable uint64_t anchor_tsc_ = 0, anchor_ns_ = 0;  // the latest re-anchoring
  mutable uint64_t mult_ = 0;                        // ns per TSC cycle, 32.32 fixed point (0: not yet measured)
  mutable uint64_t reanchor_cycles_ = 0;             // about 1 ms of TSC cycles
  mutable uint64_t last_ = 0;                        // the latest reading returned
};

// Set by the sim scheduler; never moves backwards.
class VirtualClock final : public Clock {
 public:
  uint64_t now_ns() const override { return now_; }
  bool is_virtual() const override { return true; }
  void set(uint64_t t) { now_ = t > now_ ? t : now_; }

 private:
  uint64_t now_ = 0;
};

// Seconds on the monotonic clock, for rigs and reports that measure their
// own wall time (never for what a node runs: nodes read their Clock).
double wall_seconds();

// "1.5us", "300us", "2ms", "1s", "250ns", "40" (ns). Returns false if malformed.
bool parse_duration_ns(const char* s, uint64_t* out);
// Human form for logs: "1.50 us".
const char* format_duration(uint64_t ns, char* buf, int len);

}  // namespace toroid
