// Schedule of seed 000's buffer-limited, in-place, blocked all-to-all (the
// "xor" algorithm; pure: unit-tested without a network).
//
// n ranks, each holding n blocks of `count` elements in its receive buffer
// (block j goes to rank j; the result replaces the input in the same memory).
// The memory the operation may hold is m blocks (CollArgs::buffer_blocks,
// 1 <= m <= n-1, 0 meaning n-1). Rounds of at most m exchanges: in each
// exchange a rank sends block[peer] to `peer` and receives peer's block for
// it into that same slot, block[peer], which it has just sent; every exchange
// is a swap between two ranks, so the slot a message lands in is always one
// whose content has already left. A global synchronisation (a dissemination
// barrier of zero-length messages, ceil(log2 n) steps) separates the rounds,
// so no rank sends round r+1 before every rank has taken round r's messages:
// at most m blocks wait for any receiver at any time (in the running system
// they wait in the message layer: Messenger::counters().peak_held_bytes).
//
// Pairings (which peers form a round):
//   kXor         n a power of two: exchange i pairs rank p with p XOR i,
//                i = 1..n-1, rounds of m consecutive i (the seed's schedule).
//   kOffsetPairs any other n with m >= 2: the seed asks for a (p + k, p - k)
//                mod n schedule. Alone, offset k is not in-place safe: p sends
//                block[p+k] to p+k but receives from p-k, whose slot still
//                holds the block p must send to p-k. Offsets k and n-k always
//                share a round here, so p exchanges with both p+k and p-k and
//                both slots are sent and received in that round (a swap with
//                each). Units {k, n-k} (k < n/2, 2 blocks) and {n/2} (n even,
//                1 block) are packed greedily into rounds of at most m blocks.
//   kReflection  any other n with m = 1 (a unit {k, n-k} needs 2 blocks): the
//                1-factorisation p <-> (r - p) mod n, r = 0..n-1; in round r a
//                rank with 2p = r (mod n) idles. n rounds instead of n-1.
//
// Cost: R rounds, R = ceil((n-1)/m) for kXor, about ceil((n-1)/(2*floor(m/2)))
// for kOffsetPairs, n for kReflection; each round is one exchange step, and
// every round but the first is preceded by one barrier (ceil(log2 n) steps of
// zero-length messages; none after the last round: the operation's result is
// complete there, and the next operation has its own tag). (n-1)*count
// elements sent and received per rank, each block once, m blocks at most
// held. Not in place (send != nullptr): one local copy of send into recv first
// (the seed is in place by definition), then as above. Limits: the barrier
// costs latency, so small m trades time for memory (the seed's point:
// all-to-all volume may approach all of memory).
#pragma once
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "collectives/schedule/plan.h"

namespace toroid::schedule {

enum class XorPairing : uint8_t { kXor, kOffsetPairs, kReflection };

const char* xor_pairing_name(XorPairing p);  // "xor", "offset-pairs", "reflection"

// m for n ranks given CollArgs::buffer_blocks (0 = n-1), or kInvalid when it
// is out of range (n = 1 takes only 0).
Result<uint32_t> xor_buffer_blocks(uint32_t n, uint32_t buffer_blocks);

// The pairing used for n ranks and m buffer blocks.
XorPairing xor_pairing(uint32_t n, uint32_t m);

// Every round of rank `rank`: the peers it exchanges with, in send order
// (possibly none: a reflection round in which it idles). The number of rounds
// is the same on every rank. m must be valid (xor_buffer_blocks).
std::vector<std::vector<uint32_t>> xor_inplace_rounds(uint32_t n, uint32_t rank, uint32_t m);

// Steps of one dissemination barrier: ceil(log2 n) (0 for n = 1).
uint32_t dissemination_steps(uint32_t n);

// The whole plan of rank `rank`; kInvalid for a bad buffer_blocks.
Result<Plan> alltoall_xor_inplace_plan(uint32_t n, uint32_t rank, uint64_t count, uint32_t buffer_blocks,
                                       bool in_place);

}  // namespace toroid::schedule
