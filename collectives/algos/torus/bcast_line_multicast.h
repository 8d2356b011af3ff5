// Bcast `line-multicast`: class-routed line multicast per dimension (seed
// 004 A.3; issue 5's broadcast). Schedule: collectives/schedule/line_bcast.h.
//
// The root injects its buffer along its x line as deposit-bit packets (one
// per direction: ceil((n-1)/2) hops plus, floor((n-1)/2) minus; every router
// on the way leaves a copy), then every node of that line injects along its
// y line, then every node of the root's xy plane along its z line (size-1
// dimensions skipped). A node receives each chunk exactly once, on one port,
// in the phase of the highest dimension where it differs from the root, and
// forwards a chunk along its later dimensions as soon as it holds it, so
// long vectors pipeline as many packets through all three phases at once.
//
// Cost: sum over dimensions of ceil((n_d-1)/2) hops of latency plus the
// pipeline of count*esize bytes; one injection per direction per later
// dimension per chunk at each sender; every link direction of a line used
// carries each chunk at most once, and links of lines that receive nothing
// are idle. Limits: the world communicator only; an element must fit one
// packet. Moves bytes only (any datatype).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/schedule/line_bcast.h"

namespace toroid {

class LineMulticastBcast final : public torus_coll::TorusAlgo {
 public:
  LineMulticastBcast() : TorusAlgo("bcast line-multicast", wire::CollAlgo::kLineMulticast) {}
  Status start(Comm& comm, const CollArgs& args) override;
  bool progress() override;
  std::string waiting_for() const override;

  // For tests, of the last operation: packets injected and received here.
  uint64_t injected() const { return injected_; }
  uint64_t received() const { return received_; }
  const schedule::McastRole& role() const { return role_; }
  uint32_t chunks() const { return chunks_; }

 private:
  bool inject();
  bool consume();

  schedule::McastRole role_;
  int port_ = -1;                 // the port this node receives on (non-root)
  std::vector<uint8_t> have_;     // per chunk: received (non-root)
  uint32_t ready_ = 0;            // chunks 0..ready_-1 are here
  std::vector<uint32_t> sent_;    // per send of the role: chunks injected
  uint64_t injected_ = 0;
  uint64_t received_ = 0;
};

}  // namespace toroid
