// Point-to-point messages above the router (seed 002): any size, cut into
// segments that fit a frame and reassembled at the receiver; matched by
// source and a per-(pair, context) sequence number, never by user tags;
// delivered to the application in per-pair order, exactly once.
//
// End-to-end flow control: a sender may have at most `window` segments to a
// given destination that the destination has not yet taken off the network
// (copied into its reassembly buffers). The receiver returns credits as it
// copies, but withholds them while more than `ready_cap` bytes of complete
// messages from that source wait for the application. So a slow receiver
// throttles its senders instead of parking packets in transit nodes' buffers:
// the network holds at most `window` segments per pair, always drainable.
//
// A link going down fails every pending send and receive with its status.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

#include "base/log.h"
#include "netstack/netstack.h"

namespace toroid {

namespace wire {
enum class MsgKind : uint8_t { kData = 1, kCredit = 2 };
struct __attribute__((packed)) MsgHeader {
  uint8_t kind;  // MsgKind
  uint8_t flags;
  Be16 tag;      // the sender's tag for the message (collectives: the operation's sequence number)
  Be32 total;    // message bytes (data)
  Be32 offset;   // this segment's offset in the message (data)
  Be32 credit;   // kCredit: segments taken from this peer so far (cumulative)
};
static_assert(sizeof(MsgHeader) == 16);
}  // namespace wire

struct P2pCounters {
  uint64_t msgs_sent = 0;
  uint64_t msgs_received = 0;   // complete messages handed to the application
  uint64_t segs_sent = 0;
  uint64_t segs_received = 0;
  uint64_t credit_msgs = 0;     // credit returns sent
  uint64_t credit_stalls = 0;   // a send waited for end-to-end credit
  uint64_t bad_segments = 0;    // malformed or inconsistent segment (dropped)
  uint64_t held_bytes = 0;      // bytes of partial + complete messages not yet received by the application
  uint64_t peak_held_bytes = 0; // the most held_bytes ever (reset_peak() restarts it)
};
extern const CounterField kP2pCountersFields[];
extern const int kP2pCountersFieldCount;

class Messenger final : public PacketHandler, public LinkDownListener, public Poller {
 public:
  Messenger(NetStack& net, uint32_t window = tuning::kP2pWindow, uint32_t ready_cap = tuning::kP2pReadyCap);
  ~Messenger() override;

  // Start sending len bytes to dst on context; data must stay valid until
  // send_done(handle). Returns the handle, or an error (link down, dst
  // outside the partition).
  Result<uint32_t> send(const Coord& dst, uint16_t context, const void* data, uint32_t len, bool adaptive = false,
                        uint16_t tag = 0);
  bool send_done(uint32_t handle) const;
  // Forget every send not yet fully injected (its data may be freed after
  // this); returns how many were dropped.
  uint32_t cancel_sends();
  // Forget one send (true if it was still pending).
  bool cancel(uint32_t handle);
  uint32_t sends_pending() const { return static_cast<uint32_t>(sends_.size()); }

  struct Message {
    Coord src;
    uint16_t context = 0;
    uint32_t seq = 0;  // per (src, me, context), from 0
    uint16_t tag = 0;  // the sender's tag
    std::vector<uint8_t> data;
  };
  // Give a received message's buffer back for reuse by later messages, so a
  // steady stream of messages stops allocating.
  void recycle(std::vector<uint8_t>&& buf);
  void reset_peak() { ctr_.peak_held_bytes = ctr_.held_bytes; }
  // The next message from src on context, in order; false if none is ready.
  bool recv(const Coord& src, uint16_t context, Message* out);
  // The next ready message from any source (each source's in order).
  bool recv_any(Message* out);

  const Status& status() const { return status_; }
  const P2pCounters& counters() const { return ctr_; }

  void on_packet(uint16_t port, Packet* p) override;
  void on_link_down(uint16_t port, const Status& why) override;
  bool poll() override;

 private:
  struct SendOp {
    uint32_t handle;
    uint32_t dst;  // rank
    uint16_t context;
    uint32_t seq;
    const uint8_t* data;
    uint32_t len;
    uint32_t offset = 0;
    bool adaptive;
    bool first = true;
    uint16_t tag = 0;
  };
  struct Partial {
    std::vector<uint8_t> buf;
    uint32_t got = 0;
  };
  struct Peer {
    uint32_t segs_sent = 0;      // to this peer
    uint32_t peer_took = 0;      // cumulative credit from this peer
    uint32_t took = 0;           // segments we took from this peer
    uint32_t took_reported = 0;  // last cumulative count we sent back
    uint64_t ready_bytes = 0;    // complete, not yet received by the app
    std::map<uint16_t, uint32_t> next_send_seq;  // per context
    std::map<uint16_t, uint32_t> next_recv_seq;  // per context
    std::map<std::pair<uint16_t, uint32_t>, Partial> partial;     // (ctx, seq)
    std::map<std::pair<uint16_t, uint32_t>, Message> complete;    // (ctx, seq)
  };
  Peer& peer(uint32_t rank) { return peers_[rank]; }
  bool pump_send(SendOp& op);
  bool send_credit(uint32_t rank, Peer& pr);
  void take_segment(uint32_t src, Packet* p);
  bool pop_ready(uint32_t rank, Peer& pr, uint16_t context, Message* out);

  NetStack& net_;
  uint32_t window_;
  uint32_t ready_cap_;
  uint32_t seg_payload_;
  uint32_t next_handle_ = 1;
  std::deque<SendOp> sends_;
  std::unordered_map<uint32_t, Peer> peers_;
  std::deque<uint32_t> ready_order_;  // ranks with a ready message, arrival order
  std::vector<uint32_t> credit_due_;  // ranks owed a credit message
  std::vector<std::vector<uint8_t>> spare_;  // recycled message buffers
  Status status_;
  P2pCounters ctr_;
};

}  // namespace toroid
