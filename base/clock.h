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

// CLOCK_MONOTONIC through the vDSO (no syscall on x86-64 Linux).
class RealClock final : public Clock {
 public:
  uint64_t now_ns() const override;
  bool is_virtual() const override { return false; }
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
