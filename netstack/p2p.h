// Point-to-point messages above the router (seed 002): any size, cut into
// segments that fit a frame, matched at the receiver against receives the
// application posted, and written straight from the received frame into the
// receiver's buffer (copied, or reduced into it): one copy each way, no
// reassembly buffer on the expected path.
//
// Matching (MPI's rules, which collectives use with exact sources and tags):
// a message carries its communicator context and a 32-bit tag; a posted
// receive names a source (or any source), a context and a tag (or any tag).
// Messages of one source are numbered per (source, destination) pair and are
// matched in that order: a receive takes the earliest matching message of a
// source, never a later one that overtook it on another path. Posted
// receives are served in the order they were posted.
//
// A receive may be gated by one of our own sends whose data it overwrites
// (an in-place exchange: send my vector to a partner while its vector is
// reduced into mine): a segment lands only once that send has read past
// the bytes it covers, and waits as a frame until then. Both sides of such
// an exchange advance together, one window at a time, with no copy. A
// message that arrived early and was spilled (below) lands in a gated
// receive whole, once the gate is clear over all of it.
//
// Unexpected messages (no matching receive yet) are held as the received
// frames themselves and written out when a receive is posted, still in one
// copy. Held frames keep their end-to-end credit (below), so a sender that
// runs ahead is throttled, not buffered. They are spilled into a bounded
// store of message buffers (one extra copy, then their credit returns) only
// where holding could deadlock: a receive waits on a source whose oldest
// held message does not match it (another tag or context), or more than
// max_held frames are held in all. Spilled bytes are bounded by store_cap;
// when the store is full the frames stay held (backpressure) and the waiting
// operation ends at its deadline with a message saying so.
//
// End-to-end flow control: a sender may have at most `window` segments to a
// destination that the destination has not consumed (written out, spilled
// or dropped). The receiver returns credit (cumulative counts in small
// credit messages) as it consumes, so the network holds at most `window`
// segments per pair, always drainable.
//
// Tags with the top bit set (kReservedTagBit) are the runtime's own: a
// wildcard receive or probe (any_tag) never takes them, so a library's
// internal exchanges can share a context with an application's messages.
//
// Synchronous sends (MPI_Ssend): a message sent with `sync` carries a flag;
// the receiver acknowledges it (a small kSyncAck message) when a receive
// takes it, and the send is done only once its data has left and that
// acknowledgement arrived.
//
// Cancelling a message whose data has (partly) left (MPI_Cancel of a send):
// the sender asks the receiver (kCancel, naming the message by its seq); the
// receiver drops the message if no receive has taken it (held, spilled, or
// not arrived yet: its segments will be stale) and answers (kCancelReply).
//
// Every field read from the wire is bounded before use (message size against
// max_message, offset + length against the size in 64 bits, the sequence
// against the window); bad segments are counted and dropped. A link going
// down fails every pending send and posted receive with its status.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/log.h"
#include "netstack/netstack.h"

namespace toroid {

namespace wire {
enum class MsgKind : uint8_t {
  kData = 1,    // a segment of a message
  kCredit = 2,  // `offset` carries the segments consumed from the peer so far (cumulative)
  kAbort = 3,   // the sender dropped message `seq` part way: the receiver discards it
  kSyncAck = 4, // a receive took our synchronous message `seq` (in the torus header's tag)
  kCancel = 5,  // drop our message `seq` (in the torus header's tag) unless a receive took it
  kCancelReply = 6,  // the answer to kCancel for `seq`: offset 1 dropped, 0 a receive took it
};
constexpr uint8_t kMsgFlagSync = 1;  // flags: the sender waits for a kSyncAck
struct __attribute__((packed)) MsgHeader {
  uint8_t kind;  // MsgKind
  uint8_t flags;
  Be16 reserved;
  Be32 tag;      // the sender's tag (collectives: the operation's sequence number)
  Be32 total;    // message bytes (data)
  Be32 offset;   // this segment's offset in the message (data); credit count (kCredit)
};
static_assert(sizeof(MsgHeader) == 16);
}  // namespace wire

struct P2pCounters {
  uint64_t msgs_sent = 0;
  uint64_t msgs_received = 0;   // messages completed into a posted receive
  uint64_t segs_sent = 0;
  uint64_t segs_received = 0;
  uint64_t credit_msgs = 0;     // credit returns sent
  uint64_t credit_stalls = 0;   // a send waited for end-to-end credit
  uint64_t bad_segments = 0;    // malformed or inconsistent segment (dropped)
  uint64_t unexpected = 0;      // messages that arrived before their receive
  uint64_t spilled = 0;         // unexpected messages copied into the store
  uint64_t store_full = 0;      // spills refused: the store was at its cap
  uint64_t truncated = 0;       // messages longer than their receive buffer
  uint64_t aborted = 0;         // messages the sender dropped part way
  uint64_t stale = 0;           // segments of messages already finished or discarded (dropped)
  uint64_t cancelled = 0;       // messages dropped here at their sender's request (kCancel)
  uint64_t held_bytes = 0;      // bytes of unexpected messages held or spilled right now
  uint64_t peak_held_bytes = 0; // the most held_bytes ever (reset_peak() restarts it)
};
extern const CounterField kP2pCountersFields[];
extern const int kP2pCountersFieldCount;

constexpr int32_t kAnySource = -1;
constexpr uint32_t kReservedTagBit = 0x80000000u;  // tags a wildcard receive never takes

struct MsgSendOptions {
  bool adaptive = false;  // minimal-adaptive routing
  bool spread = true;     // alternate the two equally short ways round (2-node rings: both cables)
  uint32_t align = 1;     // every segment but the last is a multiple of this many bytes
  bool sync = false;      // done only once a receive took it (acknowledged)
};

// What a receive does with each segment's payload: copy it (fn == nullptr)
// or combine it into the buffer (dst = dst OP src over `bytes`, a multiple
// of `unit`). Segments of a reducing receive must start and end on units.
struct RecvAction {
  using Fn = void (*)(const void* ctx, uint8_t* dst, const uint8_t* src, uint64_t bytes);
  Fn fn = nullptr;
  const void* ctx = nullptr;
  uint32_t unit = 1;
};

class Messenger;
struct InMsg;  // a message being received (p2p_internal.h)

// A posted receive. Owned by the caller, who keeps it alive (and its buffer)
// until done() or until Messenger::unpost() returns true. Fill the request
// fields, then Messenger::post().
// Where a caller holding many receives learns which completed without
// scanning them all: each completion of a receive that points here appends
// its cookie (room for cap entries; past that, overflow is set and the
// caller scans). The caller empties it (n = 0) as it reads it.
struct CompletionLog {
  uint32_t* slots = nullptr;
  uint32_t cap = 0;
  uint32_t n = 0;
  bool overflow = false;
};

class RecvReq;
// Posted receives of one source (or of any source), in posting order.
struct RecvBucket {
  RecvReq* head = nullptr;
  RecvReq* tail = nullptr;
};

class RecvReq {
 public:
  // ---- request ----
  int32_t src = kAnySource;  // partition rank of the sender, or kAnySource
  uint16_t context = 0;
  uint32_t tag = 0;
  bool any_tag = false;
  uint8_t* buf = nullptr;
  uint64_t cap = 0;          // bytes buf can take; longer messages are truncated (an error)
  RecvAction action;
  // A send of ours (its handle) whose unsent bytes this receive must not
  // overwrite; 0 for none.
  uint64_t gate = 0;
  // Optional: its completion appends `cookie` to *log.
  CompletionLog* log = nullptr;
  uint32_t cookie = 0;

  // ---- result (valid once done()) ----
  bool done() const { return done_; }
  const Status& status() const { return status_; }
  uint32_t source() const { return source_; }  // partition rank
  uint32_t msg_tag() const { return msg_tag_; }
  uint64_t length() const { return length_; }   // the message's size (may exceed cap: truncated)
  bool matched() const { return msg_ != nullptr || done_; }

 private:
  friend class Messenger;
  InMsg* msg_ = nullptr;         // the message bound to it
  RecvReq* next_ = nullptr;      // posted list
  RecvReq* prev_ = nullptr;
  RecvBucket* bucket_ = nullptr; // its source's posted receives (or any source's)
  RecvReq* bnext_ = nullptr;
  RecvReq* bprev_ = nullptr;
  uint64_t order_ = 0;           // posting order, across buckets
  bool posted_ = false;
  bool done_ = false;
  Status status_;
  uint32_t source_ = 0;
  uint32_t msg_tag_ = 0;
  uint64_t length_ = 0;
};

// An unexpected message's envelope (probe).
struct MsgEnvelope {
  uint32_t source = 0;  // partition rank
  uint16_t context = 0;
  uint32_t tag = 0;
  uint64_t length = 0;
};

struct MessengerConfig {
  uint32_t window = tuning::kP2pWindow;          // segments in flight per destination
  uint32_t max_held = tuning::kP2pMaxHeld;       // frames held for unexpected messages, all sources
  uint64_t store_cap = tuning::kP2pStoreCap;     // bytes of spilled unexpected messages
  uint64_t max_message = tuning::kP2pMaxMessage; // larger messages are refused (sender) / dropped (receiver)
  // The first message number towards and from every peer (also after a
  // reset). Numbers count mod 2^32; every node uses the same value (tests
  // start just below the wrap to show that it is handled).
  uint32_t first_seq = 0;
  // The first send handle. Handles count mod 2^64 and skip 0 (no send's
  // handle; callers use it as "none"); tests start just below the wrap.
  uint64_t first_handle = 1;
};

class Messenger final : public PacketHandler, public LinkDownListener, public Poller {
 public:
  explicit Messenger(NetStack& net, const MessengerConfig& cfg = {});
  ~Messenger() override;
  Messenger(const Messenger&) = delete;
  Messenger& operator=(const Messenger&) = delete;

  // ---- sending (p2p_send.cc) ----
  // Start sending len bytes to dst; data must stay valid until
  // send_done(handle). Returns the handle (never 0), or an error (link
  // down, dst outside the partition, too large).
  Result<uint64_t> send(const Coord& dst, uint16_t context, uint32_t tag, const void* data, uint64_t len,
                        const MsgSendOptions& opt = {});
  // The same, to the node of partition rank dst (no coordinates to convert).
  Result<uint64_t> send_rank(uint32_t dst, uint16_t context, uint32_t tag, const void* data, uint64_t len,
                             const MsgSendOptions& opt = {});
  bool send_done(uint64_t handle) const;
  // Forget one send (its data may be freed after this); a message already
  // part way out is aborted at the receiver. True if it was still pending.
  bool cancel(uint64_t handle);
  uint32_t cancel_sends();  // every pending send; returns how many
  // Forget a send none of whose data has left yet (nothing reached the
  // receiver); false, and nothing changes, once a segment went out.
  bool cancel_unsent(uint64_t handle);
  uint32_t sends_pending() const { return static_cast<uint32_t>(active_.size()); }

  // ---- cancelling a message that has (partly) left (p2p_cancel.cc) ----
  // Ask the receiver to drop send `handle`'s message unless a receive has
  // taken it. False (nothing asked) when none of its data has left
  // (cancel_unsent is the way then) or it finished too long ago to be known
  // here (more than kRecentSends sends ago). cancel_result says the answer;
  // forget_cancel drops the record once the caller has read it.
  enum class CancelState : uint8_t { kNone, kPending, kCancelled, kNotCancelled };
  static constexpr uint32_t kRecentSends = 256;
  bool request_cancel(uint64_t handle);
  CancelState cancel_result(uint64_t handle) const;
  void forget_cancel(uint64_t handle);

  // ---- receiving (p2p_recv.cc) ----
  // Post r: it matches the earliest arrived message that fits, now or later.
  // An error for a bad request (no buffer for cap > 0, reducing unit 0).
  Status post(RecvReq* r);
  // Withdraw r if no message is bound to it yet (true: it is free again).
  bool unpost(RecvReq* r);
  // Withdraw r whatever its state: a message bound to it is dropped (the
  // rest of its segments are discarded as they arrive). Afterwards the
  // messenger touches neither r nor its buffer.
  void withdraw(RecvReq* r);
  // The earliest unexpected message that a receive (src, context, tag)
  // would match, without receiving it.
  bool probe(int32_t src, uint16_t context, uint32_t tag, bool any_tag, MsgEnvelope* out) const;
  // Drop unexpected messages of `context` whose tag is in [lo, hi) (an
  // aborted operation's leftovers); returns how many.
  uint32_t discard(uint16_t context, uint32_t lo, uint32_t hi);

  void reset_peak() { ctr_.peak_held_bytes = ctr_.held_bytes; }
  const Status& status() const { return status_; }
  const P2pCounters& counters() const { return ctr_; }
  const MessengerConfig& config() const { return cfg_; }
  // Largest payload of one segment on this node's ports.
  uint32_t segment_payload() const { return seg_payload_; }

  void on_packet(uint16_t port, Packet* p) override;
  void on_link_down(uint16_t port, const Status& why) override;
  bool poll() override;
  // The partition resets its communication (firmware/link_training.h): every
  // pending send and every receive fails with `why`, every message being
  // received or held is dropped, and the numbering towards every peer starts
  // over (the peers reset too), so later sends and receives work again.
  void reset(const Status& why);

 private:
  friend struct InMsg;  // keeps its source's Peer record
  struct Peer;
  struct SendOp {
    uint64_t handle = 0;
    uint32_t dst = 0;  // rank
    Peer* pr = nullptr;  // dst's record (records live as long as the messenger)
    uint16_t context = 0;
    uint32_t tag = 0;
    uint32_t seq = 0;
    const uint8_t* data = nullptr;
    uint64_t len = 0;
    uint64_t offset = 0;
    uint32_t seg = 0;      // payload bytes per segment (align applied)
    uint32_t segs_out = 0; // segments injected
    bool adaptive = false;
    bool spread = true;
    bool started = false;  // first segment injected (seq assigned)
    bool sync = false;     // waits for the receiver's kSyncAck when sent
    bool acked = false;    // sync: the kSyncAck came while segments were still leaving
    bool dropped = false;  // the receiver dropped it at our request: poll() forgets it
  };
  // A send whose data has all left, kept for a later cancel request.
  struct RecentSend {
    uint64_t handle = 0;  // 0: an empty slot
    uint32_t dst = 0;
    uint32_t seq = 0;
  };
  // A cancel request and its answer.
  struct CancelAsk {
    uint64_t handle;
    uint32_t dst;
    uint32_t seq;
    CancelState state;
  };
  // A synchronous send whose data has left, waiting for its acknowledgement.
  struct SyncWait {
    uint64_t handle;
    uint32_t dst;
    uint32_t seq;
  };
  Peer& peer(uint32_t rank);
  void start_peer(Peer* pr, uint32_t rank) const;
  // The pending send with this handle, or null: a binary search, as active_
  // stays in handle order (issued in order; removals keep the order).
  const SendOp* find_active(uint64_t handle) const;
  // p2p_send.cc
  bool pump_send(SendOp& op);
  bool send_credit(Peer& pr);
  bool send_abort(uint32_t rank, uint32_t seq);
  // p2p_sync.cc
  bool sent_out(SendOp& op);  // op's data has left: false while it waits for an ack
  void ack_match(const InMsg* m);
  void take_sync_ack(uint32_t rank, uint32_t seq);
  bool send_acks();
  // p2p_cancel.cc
  void take_cancel(uint32_t src, uint32_t seq);
  void take_cancel_reply(uint32_t rank, uint32_t seq, bool dropped);
  bool send_cancels();
  Packet* make_segment(const Peer& to, uint16_t context, uint32_t tag, uint32_t seq, wire::MsgKind kind);
  // p2p_recv.cc
  void take_data(uint32_t src, Packet* p);
  void hold(InMsg* m, Peer& pr, Packet* p, uint64_t n);
  bool gate_clear(const RecvReq* r, uint64_t off, uint64_t n) const;
  bool release_gated(InMsg* m);
  bool flush_gated();
  InMsg* find_msg(Peer& pr, uint32_t seq);
  InMsg* new_msg(Peer& pr, uint32_t seq, uint16_t ctx, uint32_t tag, uint64_t total);
  void mark_seen(Peer& pr, uint32_t seq);
  bool matchable(const Peer& pr, const InMsg& m) const;
  static bool fits(const RecvReq& r, uint32_t src, uint16_t ctx, uint32_t tag);
  void match_new(uint32_t src, Peer& pr);
  void bind(RecvReq* r, InMsg* m);
  bool write_segment(InMsg* m, uint64_t off, const uint8_t* data, uint64_t n);
  void consume(Peer& pr, uint32_t segs);
  void complete(InMsg* m, Status st);
  // A receive completed (any status): logged where it asks.
  void completed(RecvReq* r) {
    if (CompletionLog* l = r->log) {
      if (l->n < l->cap) l->slots[l->n++] = r->cookie;
      else l->overflow = true;
    }
  }
  // Frames held from one source that tie up half its window of credit.
  uint32_t tied_frames() const { return cfg_.window / 2 > 1 ? cfg_.window / 2 : 1; }
  // p2p_spill.cc
  bool spill(InMsg* m);
  void spill_blockers();
  void spill_source(Peer& pr);
  bool apply_spill(InMsg* m);
  // p2p_recv.cc
  void free_msg(InMsg* m);
  void drop_held(InMsg* m);
  void discard_msg(InMsg* m);
  void unlink_unexpected(InMsg* m);
  void unlink_posted(RecvReq* r);
  void link_posted(RecvReq* r, RecvBucket* b);
  void abort_msg(uint32_t src, uint32_t seq);
  bool drop_msg(uint32_t src, uint32_t seq, bool keep_bound);

  NetStack& net_;
  MessengerConfig cfg_;
  uint32_t seg_payload_ = 0;
  uint64_t next_handle_ = 1;  // cfg_.first_handle at construction (0 is skipped)
  std::vector<SendOp> active_;                 // pending sends, in send() order
  // Peers by partition rank (allocated on first contact): open addressing,
  // a power-of-two table at most half full, probed linearly from a
  // multiplicative hash (one lookup per arriving segment: no division, no
  // node to chase).
  struct PeerSlot {
    uint32_t rank = 0;
    Peer* pr = nullptr;  // nullptr: empty
  };
  Peer* find_peer(uint32_t rank) const;
  void index_peer(Peer* pr);
  std::vector<PeerSlot> peer_slots_;
  uint32_t peer_shift_ = 32;  // 32 - log2(peer_slots_.size())
  std::vector<Peer*> peer_store_;              // owns the Peers
  std::vector<uint32_t> credit_due_;           // ranks owed a credit message (may repeat)
  std::vector<uint32_t> abort_due_;            // (rank, seq) pairs of aborts not yet sent
  std::vector<uint32_t> ack_due_;              // (rank, seq) pairs of sync acks not yet sent
  std::vector<SyncWait> sync_wait_;            // synchronous sends waiting for their ack
  std::array<RecentSend, kRecentSends> recent_{};  // the last sends whose data left (a ring)
  uint32_t recent_next_ = 0;
  std::vector<CancelAsk> cancels_;             // cancel requests of ours and their answers
  std::vector<uint32_t> cancel_due_;           // (rank, seq) pairs of cancel requests not yet sent
  std::vector<uint32_t> cancel_reply_due_;     // (rank, seq, dropped) triples of answers not yet sent
  RecvReq* posted_head_ = nullptr;             // posted, unmatched receives, in post order
  RecvReq* posted_tail_ = nullptr;
  RecvBucket any_source_;                      // posted receives from any source
  uint64_t posts_ = 0;                         // receives posted (their order_)
  InMsg* unexpected_head_ = nullptr;           // unmatched messages, in arrival order
  InMsg* unexpected_tail_ = nullptr;
  InMsg* free_msgs_ = nullptr;                 // recycled message records
  std::vector<InMsg*> msg_store_;              // owns the message records
  struct SpillBuf {
    std::unique_ptr<uint8_t[]> data;
    uint64_t cap = 0;
  };
  std::vector<SpillBuf> spare_;                // recycled spill buffers
  uint32_t held_frames_ = 0;                   // frames held by unexpected messages
  uint64_t store_bytes_ = 0;                   // bytes of spill buffers in use
  Peer* stalled_head_ = nullptr;               // peers with stalled set, so a look need not scan them all
  Peer* heavy_head_ = nullptr;                 // peers that held half a window of frames (spill_blockers)
  bool spill_check_ = false;                   // frames were held or a receive posted since the last look
  std::vector<InMsg*> gated_;                  // bound messages with frames waiting for their gate
  bool gates_moved_ = false;                   // a send left active_ outside poll (cancel): flush gated_
  Status status_;
  P2pCounters ctr_;
};

}  // namespace toroid
