// Allreduce (SUM, int64) by dimension-ordered ring shift-and-add on the
// torus, the first end-to-end collective of the node runtime. Schedule in
// collectives/schedule/torus_ring.h. Received packets are added into the
// result and forwarded on the plus link in place (no copy) while the ring
// still needs them. Cost per dimension of n nodes: n-1 steps, (n-1)*count*8
// bytes over each plus link. The seed algorithms (issue: collectives
// library) replace it as the default; it stays as the simplest reference.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "collectives/schedule/torus_ring.h"
#include "drivers/packet.h"

namespace toroid {

class Comm;

class TorusRingAllreduce {
 public:
  void start(Comm* comm, int64_t* data, uint32_t count);
  // Make progress; true if anything moved. Sets done()/status() at the end.
  bool progress();
  bool done() const { return done_; }
  const Status& status() const { return status_; }
  // Abandon the operation (timeout); frees what it still holds.
  void abort();
  // "dim y step packets 3/7 from port 3 (y-)" for timeout messages.
  std::string waiting_for() const;

 private:
  bool send_own();
  bool flush_forwards();
  bool consume();
  void begin_phase();
  void fail(Status st);

  Comm* comm_ = nullptr;
  int64_t* data_ = nullptr;
  uint32_t count_ = 0;
  uint32_t per_packet_ = 0;
  uint32_t chunks_ = 0;
  std::vector<schedule::RingPhase> phases_;
  size_t phase_ = 0;
  uint32_t own_sent_ = 0;       // step-0 packets of this phase sent
  uint32_t received_ = 0;       // packets of this phase received
  Packet* fwd_head_ = nullptr;  // forwards waiting for queue space (FIFO)
  Packet* fwd_tail_ = nullptr;
  bool done_ = true;
  Status status_;
};

}  // namespace toroid
