// Allreduce (SUM, int64) by seed 004 C: reduce on the torus towards the
// middle of each line (schedule/torus_middle.h: x lines, then the y line of
// the x middles, then the z line of the xy middles; no node combines more
// than two incoming packets for one chunk), then broadcast the total from
// node (m_x, m_y, m_z) on the combine tree (the holder contributes the total,
// every other node zeros, the tree ORs them: a broadcast through the tree's
// up and down passes). Torus cost: about sum_d n_d/2 hops of pipelined
// chunks; tree cost: twice the tree depth, pipelined.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "collectives/schedule/torus_middle.h"
#include "drivers/packet.h"

namespace toroid {

class Comm;
class CombineEngine;

class TorusTreeAllreduce {
 public:
  void start(Comm* comm, CombineEngine* tree, uint8_t tree_class, int64_t* data, uint32_t count);
  bool progress();
  bool done() const { return done_; }
  const Status& status() const { return status_; }
  void abort();
  std::string waiting_for() const;
  // Most incoming packets this node combined for one chunk (the property
  // seed 004 C asks for: never more than two).
  uint32_t max_incoming() const { return max_incoming_; }

 private:
  bool torus_phase();
  bool tree_phase();
  void fail(Status st);

  Comm* comm_ = nullptr;
  CombineEngine* tree_ = nullptr;
  uint8_t cls_ = 0;
  int64_t* data_ = nullptr;
  uint32_t count_ = 0;
  uint32_t per_packet_ = 0;
  uint32_t chunks_ = 0;
  std::vector<schedule::MiddleRole> roles_;
  size_t phase_ = 0;
  uint32_t chunk_ = 0;          // next chunk to complete in this phase
  bool chunk_ready_ = false;    // inputs of chunk_ combined, not yet sent
  bool tree_started_ = false;
  std::vector<int64_t> zeros_;  // what non-holders contribute to the broadcast
  uint32_t max_incoming_ = 0;
  bool done_ = true;
  Status status_;
};

}  // namespace toroid
