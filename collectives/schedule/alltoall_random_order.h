// Schedule of seed 003's random-order all-to-all (pure: unit-tested without a
// network).
//
// The baseline it replaces sends, in round r, every block to rank r, which
// drowns one receiver while every other one idles. Here each rank draws its
// own random permutation of its n-1 destinations from (CollArgs::seed, its
// rank), issues one non-blocking send per destination in that order, and
// receives first come, first served from any source (one `first_come` step:
// the runner completes the n-1 receives in arrival order), so at any moment
// the senders aim at different receivers and every link and receiver stays
// busy. The own block is a local copy.
//
// Cost: one step; n-1 messages of `count` elements sent and received per
// rank. Limits: the receives wait for all n-1 sends to have left (plan.h), so
// up to n-1 blocks may wait in the message layer of a receiver; in place
// (send == nullptr) works because of that (sends leave before any receive
// overwrites a slot). Permutations depend only on (seed, rank, n): the same
// on every run.
#pragma once
#include <cstdint>
#include <vector>

#include "collectives/schedule/plan.h"

namespace toroid::schedule {

// Rank `rank`'s send order: every rank of 0..n-1 except itself, once each,
// shuffled (Fisher-Yates) by Rng::derive(seed-derived stream, rank).
std::vector<uint32_t> random_order_permutation(uint32_t n, uint32_t rank, uint64_t seed);

Plan alltoall_random_order_plan(uint32_t n, uint32_t rank, uint64_t count, uint64_t seed, bool in_place);

}  // namespace toroid::schedule
