// The traffic job: every node sends a pattern of point-to-point messages,
// and every node checks each message it receives against the content it can
// compute from (seed, source, destination, sequence). Patterns:
//   uniform    M messages, each to a uniformly random other node
//   transpose  M messages to (y mod X, x mod Y, z)
//   bitcomp    M messages to (X-1-x, Y-1-y, Z-1-z)
//   neighbor   M messages spread round-robin over the node's torus neighbours
//   alltoall   M messages to every other node
//   ring       M messages to (x + (X-1)/2 mod X, y, z): the longest minimal hop
//              count along x, every x+ link loaded (the deadlock test pattern)
// (a node never sends to itself: a pattern that maps a node to itself sends
// nothing from it). Every node derives every other node's destinations from
// the seed, so it knows exactly what it must receive.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "firmware/job.h"
#include "netstack/p2p.h"

namespace toroid {

struct TrafficSpec {
  std::string pattern = "uniform";
  uint32_t messages = 16;
  uint32_t size = 1024;
  bool adaptive = false;
};
// Parses the job arguments (pattern, messages, size, routing); errors name the argument.
Result<TrafficSpec> parse_traffic_args(const std::map<std::string, std::string>& args);
// Destinations of node `rank`'s messages, in send order.
std::vector<uint32_t> traffic_destinations(const TrafficSpec& s, uint32_t rank, const Dims& dims, uint64_t seed);

class TrafficJob final : public Job {
 public:
  TrafficJob(const JobContext& ctx, const TrafficSpec& spec);
  void start() override;
  bool poll() override;
  bool done() const override { return done_; }
  Status status() const override { return status_; }
  std::vector<std::pair<std::string, uint64_t>> totals() const override;
  const char* totals_name() const override { return "traffic"; }

 private:
  void finish(Status st);
  bool send_some();
  static void on_timeout(void* self);

  JobContext ctx_;
  TrafficSpec spec_;
  Messenger& msgr_;
  std::vector<uint32_t> dests_;
  std::vector<std::vector<uint8_t>> payloads_;  // one per message sent (kept until sent)
  std::vector<uint64_t> handles_;
  // Messages are made and handed to the messenger a batch per poll, not all
  // in start(): making 5000 x 4 KiB payloads takes long enough (hundreds of
  // ms under a sanitizer) that a node doing it in one go stops acking its
  // links and its neighbour declares them dead.
  static constexpr uint64_t kSendBytesPerPoll = 256 * 1024;
  static constexpr uint32_t kSendsPerPoll = 64;
  size_t next_send_ = 0;
  std::vector<uint32_t> seq_to_;  // per destination rank: the next sequence number
  // Receives kept posted (any source, any tag): a message's tag is its
  // sequence number from its source.
  static constexpr uint32_t kPosted = 16;
  std::vector<RecvReq> recvs_;
  std::vector<std::vector<uint8_t>> rbufs_;
  bool repost(uint32_t i);
  std::vector<uint32_t> expect_from_;           // per source rank
  std::vector<std::vector<bool>> seen_;          // per source rank, per sequence
  uint64_t expected_ = 0, delivered_ = 0, duplicates_ = 0, corrupt_ = 0;
  uint64_t start_ns_ = 0;
  bool done_ = false;
  Status status_;
  Timer deadline_;
};

}  // namespace toroid
