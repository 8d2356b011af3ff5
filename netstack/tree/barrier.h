// BarrierNet: the emulated global barrier / interrupt network. Channels
// (kBarrierChannels) each run in sticky AND mode (a barrier: it completes
// only when every node has arrived) or OR mode (an interrupt: it fires on
// every node as soon as any node raises it). Messages travel one hop at a
// time along a tree class on the high-priority VC: up "my subtree arrived /
// raised", down "released / raised" from the root. A channel re-arms for the
// next epoch when the previous one completed. A node that never arrives
// makes everyone's wait time out with an error naming the channel.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "netstack/classroute.h"
#include "netstack/netstack.h"
#include "netstack/tree/tree_wire.h"

namespace toroid {

constexpr int kBarrierChannels = 4;
enum class BarrierMode : uint8_t { kAnd = 0, kOr = 1 };

struct BarrierCounters {
  uint64_t up_sent = 0;
  uint64_t down_sent = 0;
  uint64_t completed = 0;  // epochs completed here (AND released or OR fired)
  uint64_t rx_bad = 0;     // wrong class/channel/epoch/mode (dropped and counted)
};

class BarrierNet final : public PacketHandler, public LinkDownListener, public Poller {
 public:
  BarrierNet(NetStack& net, EventLoop& loop, uint64_t timeout_ns);
  ~BarrierNet() override;

  // The tree the channels use (a kTree ClassRoute, verified).
  Status set_tree(uint8_t cls, const ClassRoute& tree);
  // The same from this node's own entry alone (O(1); see CombineEngine).
  Status set_tree(uint8_t cls, const ClassEntry& mine);
  // AND: this node arrives at the channel's current epoch. OR: this node
  // raises it. Non-blocking; the mode must be the same on every node.
  Status enter(int channel, BarrierMode mode);
  // True once the current epoch completed here (released / fired); *st is
  // ok or the timeout/link error naming the channel. Re-arms the channel.
  bool test(int channel, Status* st);
  // OR mode only: true if the channel's current epoch fired here without
  // this node raising it (read it before test() re-arms the channel).
  bool fired(int channel) const;
  uint32_t epoch(int channel) const;

  bool poll() override;
  void on_packet(uint16_t port, Packet* p) override;
  void on_link_down(uint16_t port, const Status& why) override;
  const BarrierCounters& counters() const { return ctr_; }

 private:
  struct Channel;
  bool completed(const Channel& c) const;
  void try_up(Channel& c);
  void release(Channel& c, uint32_t epoch);
  void owe_down(Channel& c, uint32_t epoch);
  bool send_owed(Channel& c);
  bool send_one(Dir dir, uint8_t channel, BarrierMode mode, uint8_t flags, uint32_t epoch);
  void fail(Channel& c, Status st);
  std::string waiting_for(const Channel& c) const;
  static void on_timeout(void* ctx);

  NetStack& net_;
  EventLoop& loop_;
  uint64_t timeout_ns_;
  std::vector<Channel*> ch_;
  // The tree (set_tree): my up link (none at the root) and down links.
  bool has_tree_ = false;
  uint8_t cls_ = 0;
  bool has_up_ = false;
  Dir up_ = Dir::kXp;
  uint8_t nchild_ = 0;
  std::array<Dir, kNumDirs> down_{};
  std::array<int8_t, kNumDirs> child_of_dir_{};  // child index by arrival direction, -1: none
  uint8_t all_children_ = 0;
  bool owed_any_ = false;  // some channel has a message waiting for a credit or a buffer
  Status link_down_;
  BarrierCounters ctr_;
};

}  // namespace toroid
