// TreeRunner: one collective pass over the emulated combine network, shared
// by the tree group's algorithms (allreduce, reduce, bcast, allgather tree).
// It runs a TreeCodec (collectives/schedule/tree_codec.h): encode this
// node's elements into ALU operands, stream them through CombineEngine (up
// the tree, combined in every router, turned round at the root, broadcast
// down), decode the combined operands into the output. Direct codecs (raw
// bytes that need no padding) run the engine on the caller's buffers with no
// copy; float SUM runs TreeFloatSum's two exact passes. The operand buffer
// is allocated in start() (capacity kept between operations); progress()
// allocates nothing, except TreeFloatSum's pass-2 buffer, once per operation,
// sized from pass 1.
//
// Cost: one pass of codec.pass.bytes() per node, 2 x depth tree hops of
// latency (depth = the torus radius), pipelined in packets of up to the
// frame's payload; every node sends and receives each byte once per link of
// the tree (no node forwards more than its subtree's packets: one per child
// per sequence number up, one per child down).
// Limits: one operation per tree class at a time (CombineEngine); failures
// (mismatch across nodes, timeouts, link down) come from the engine and name
// the class; the runner prefixes them with the collective's name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "collectives/coll.h"
#include "collectives/schedule/tree_codec.h"
#include "collectives/tree_float_sum.h"

namespace toroid {

class CombineEngine;

class TreeRunner {
 public:
  // in: the codec's count elements (may be out); out: where the result goes.
  // `what` prefixes failures ("allreduce tree"); a string literal. tag: the
  // communicator's operation number (CombineEngine::op_id names the passes).
  Status start(CombineEngine* engine, uint8_t cls, uint32_t tag, const schedule::TreeCodec& codec, const void* in,
               void* out, const char* what);
  bool progress();  // true if anything moved
  // Abandon the pass (timeout, link down, the communicator gave up): the
  // engine stops it now and no longer touches the buffers.
  void abort();
  bool done() const { return done_; }
  const Status& status() const { return status_; }
  std::string waiting_for() const;
  const schedule::TreeCodec& codec() const { return codec_; }
  // Bytes of operand buffer the last operation used (0: it ran on the caller's buffers).
  size_t operand_bytes() const { return codec_.operand_bytes(); }

 private:
  void finish(Status st);

  CombineEngine* engine_ = nullptr;
  uint8_t cls_ = 0;
  schedule::TreeCodec codec_;
  void* out_ = nullptr;
  const char* what_ = "";
  std::vector<uint8_t> ops_;
  TreeFloatSum<double> fsum_d_;
  TreeFloatSum<float> fsum_f_;
  bool done_ = true;
  Status status_;
};

// The shared part of the tree group's algorithms (allreduce, reduce, bcast,
// allgather tree): one TreeRunner pass per operation. A subclass's start()
// checks its arguments, prepares its buffers and calls launch().
class TreeAlgo : public CollAlgo {
 public:
  bool progress() final;
  std::string waiting_for() const final { return run_.waiting_for(); }
  // Stops the combine network's operation at once: it no longer touches the buffers.
  void abort() final {
    run_.abort();
    CollAlgo::abort();
  }
  const TreeRunner& runner() const { return run_; }

 protected:
  Status launch(Comm& comm, const schedule::TreeCodec& codec, const void* in, void* out, const char* what);
  TreeRunner run_;
};

// Why the tree algorithms cannot run on `comm`, or nullptr when a
// combine-network class spans it.
const char* tree_missing(const CommInfo& comm);

}  // namespace toroid
