// Torus routing decisions, as pure functions (unit-tested and benchmarked
// alone; the router in netstack.cc applies them).
//
// Deterministic routing is dimension order (x, then y, then z) along the
// minimal direction of each dimension; the source records that direction in
// the packet's hint bits (one bit per Dir), which also lets a sender force
// the long way round or a particular cable (e.g. x- to a neighbour of a
// 2-node ring).
//
// Deadlock freedom (dateline virtual channels). Within one dimension a ring
// of channels c_0 -> c_1 -> ... -> c_{n-1} -> c_0 would let packets wait on
// each other in a cycle. Every packet uses VC 0 until it takes the wrap link
// of that dimension (between coordinates n-1 and 0, the "dateline"), which it
// takes and leaves on VC 1; a minimal route never takes the wrap link twice,
// so VC 0 channels depend only on channels "after" them up to the dateline
// and VC 1 channels only on channels after the wrap link up to the
// destination: neither graph has a cycle. Dimension order makes the
// dependencies between dimensions acyclic too (x channels may wait on y and
// z channels, never the reverse), so the whole channel dependency graph is
// acyclic and deterministic routing cannot deadlock. Without the dateline
// (Dateline::kOff, a test flag) a ring pattern deadlocks; the sim test shows it.
//
// Adaptive routing (minimal): a packet may take any direction that brings it
// closer, on the adaptive VC 2, when that channel has a credit; otherwise it
// takes the deterministic route above (the escape channels VC 0/1). The
// escape subnetwork is deadlock-free and always reachable from the adaptive
// channel, which is Duato's condition for the union to be deadlock-free.
#pragma once
#include <cstdint>

#include "base/torus.h"
#include "netstack/wire/link_header.h"
#include "netstack/wire/torus_header.h"

namespace toroid {

enum class Dateline : uint8_t { kOn, kOff };

// Hint bits for a minimal route from src to dst (ties, at exactly half a
// ring, go plus). Zero when src == dst.
uint8_t minimal_hints(const Coord& src, const Coord& dst, const Dims& dims);
// The same, with ties broken by `salt`: bit d of salt sends dimension d's
// tie minus. Both ways round are minimal there (on a 2-node ring, the two
// cables to the same neighbour), so alternating the salt spreads traffic
// over both.
uint8_t minimal_hints(const Coord& src, const Coord& dst, const Dims& dims, uint32_t salt);

// The deterministic next hop from `cur`: the first dimension (x, y, z) where
// cur differs from dst, in its hinted direction. Returns false when cur ==
// dst (deliver here) and sets *bad when the hints give no direction for a
// dimension that still differs (a malformed packet).
struct Hop {
  Dir dir;
  uint8_t vc;
};
bool next_hop(const Coord& cur, const Coord& dst, uint8_t hints, uint8_t flags, const Dims& dims,
              Dateline dateline, Hop* out, bool* bad);

// True if a hop from coordinate `c` along dir crosses that dimension's dateline.
inline bool crosses_dateline(uint32_t c, Dir dir, uint32_t n) {
  return n > 1 && (dir_plus(dir) ? c == n - 1 : c == 0);
}

// VC for a hop along dir given the packet's crossed-flags (escape/deterministic).
inline uint8_t dateline_vc(uint32_t c, Dir dir, uint32_t n, uint8_t flags, Dateline dl) {
  if (dl == Dateline::kOff) return wire::kVcLow;
  const int d = dir_dim(dir);
  const bool crossed = (flags & (wire::kTorusCrossedX << d)) != 0;
  return crossed || crosses_dateline(c, dir, n) ? wire::kVcHigh : wire::kVcLow;
}

// Minimal directions still productive from cur (bitmask of Dir), for adaptive routing.
uint8_t productive_dirs(const Coord& cur, const Coord& dst, uint8_t hints, const Dims& dims);

}  // namespace toroid
