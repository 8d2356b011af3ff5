#include "collectives/schedule/alltoall_xor_inplace.h"

namespace toroid::schedule {

namespace {

bool is_pow2(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

// One dissemination barrier: in step s, send a zero-length message to
// rank + 2^s and take one from rank - 2^s.
void add_barrier(Plan& plan, uint32_t n, uint32_t rank) {
  for (uint32_t s = 0, d = 1; s < dissemination_steps(n); ++s, d <<= 1) {
    Step st;
    st.sends.push_back(Send{(rank + d) % n, Buf::kOut, 0, 0});
    st.recvs.push_back(Recv{(rank + n - d % n) % n, Buf::kOut, 0, 0, Act::kCopy});
    plan.steps.push_back(std::move(st));
  }
}

}  // namespace

const char* xor_pairing_name(XorPairing p) {
  switch (p) {
    case XorPairing::kXor: return "xor";
    case XorPairing::kOffsetPairs: return "offset-pairs";
    case XorPairing::kReflection: return "reflection";
  }
  return "?";
}

Result<uint32_t> xor_buffer_blocks(uint32_t n, uint32_t buffer_blocks) {
  if (n <= 1) {
    if (buffer_blocks == 0) return uint32_t{0};
    return error(Code::kInvalid, "xor-inplace: buffer_blocks %u is out of range: a 1-node communicator takes only 0",
                 buffer_blocks);
  }
  if (buffer_blocks == 0) return n - 1;
  if (buffer_blocks > n - 1)
    return error(Code::kInvalid,
                 "xor-inplace: buffer_blocks %u is out of range for %u nodes (1..%u blocks, or 0 for %u)",
                 buffer_blocks, n, n - 1, n - 1);
  return buffer_blocks;
}

XorPairing xor_pairing(uint32_t n, uint32_t m) {
  if (is_pow2(n)) return XorPairing::kXor;
  return m >= 2 ? XorPairing::kOffsetPairs : XorPairing::kReflection;
}

uint32_t dissemination_steps(uint32_t n) {
  uint32_t s = 0;
  while (s < 32 && (uint64_t{1} << s) < n) ++s;
  return s;
}

std::vector<std::vector<uint32_t>> xor_inplace_rounds(uint32_t n, uint32_t rank, uint32_t m) {
  std::vector<std::vector<uint32_t>> rounds;
  if (n <= 1 || m == 0) return rounds;
  switch (xor_pairing(n, m)) {
    case XorPairing::kXor:
      for (uint32_t i = 1; i < n; i += m) {
        std::vector<uint32_t> r;
        for (uint32_t j = 0; j < m && i + j < n; ++j) r.push_back(rank ^ (i + j));
        rounds.push_back(std::move(r));
      }
      break;
    case XorPairing::kOffsetPairs: {
      // Units {k, n-k} for k < n/2 (two blocks), then {n/2} for even n (one).
      std::vector<uint32_t> r;
      uint32_t used = 0;
      for (uint32_t k = 1; 2 * k <= n; ++k) {
        const uint32_t w = 2 * k == n ? 1 : 2;
        if (used + w > m) {
          rounds.push_back(std::move(r));
          r.clear();
          used = 0;
        }
        r.push_back((rank + k) % n);
        if (w == 2) r.push_back((rank + n - k) % n);
        used += w;
      }
      if (!r.empty()) rounds.push_back(std::move(r));
      break;
    }
    case XorPairing::kReflection:
      for (uint32_t r = 0; r < n; ++r) {
        const uint32_t peer = (r + n - rank) % n;
        rounds.push_back(peer == rank ? std::vector<uint32_t>{} : std::vector<uint32_t>{peer});
      }
      break;
  }
  return rounds;
}

Result<Plan> alltoall_xor_inplace_plan(uint32_t n, uint32_t rank, uint64_t count, uint32_t buffer_blocks,
                                       bool in_place) {
  if (n == 0 || rank >= n) return error(Code::kInvalid, "xor-inplace: rank %u of %u", rank, n);
  auto m = xor_buffer_blocks(n, buffer_blocks);
  if (!m) return m.status();
  Plan plan;
  const auto rounds = xor_inplace_rounds(n, rank, *m);
  for (size_t r = 0; r < rounds.size(); ++r) {
    if (r > 0) add_barrier(plan, n, rank);  // everyone took round r-1's blocks: buffers free again
    if (rounds[r].empty()) continue;        // a reflection round in which this rank idles
    Step st;
    for (uint32_t peer : rounds[r]) st.sends.push_back(Send{peer, Buf::kOut, peer * count, count});
    // The slot of each peer's block was sent in this very step (a swap), so
    // the arriving block overwrites only data that has left.
    for (uint32_t peer : rounds[r]) st.recvs.push_back(Recv{peer, Buf::kOut, peer * count, count, Act::kCopy});
    plan.steps.push_back(std::move(st));
  }
  if (!in_place) {
    const Copy all{Buf::kIn, 0, Buf::kOut, 0, uint64_t{n} * count};
    if (plan.steps.empty()) plan.finish.push_back(all);
    else plan.steps.front().before.insert(plan.steps.front().before.begin(), all);
  }
  return plan;
}

}  // namespace toroid::schedule
