// Link: the reliable link layer of one port. Over a medium that may drop,
// corrupt, duplicate, reorder and delay frames it gives exactly-once,
// in-order, intact delivery of data frames, with credit-based flow control
// per virtual channel so that a receiver never drops for lack of buffers.
//
// Protocol (see docs/wire.md):
// - Every data frame carries a sequence number (one space per link, all VCs
//   share it) and is kept, referenced, until acknowledged. At most
//   kLinkWindow frames are unacknowledged at once.
// - Every frame (data or ack) carries the cumulative ack (all seq < ack
//   received), a selective-ack bitmap for the kLinkWindow seqs after it, and
//   per VC the cumulative count of receive buffers freed (credits). Credits
//   are cumulative, so a lost update is repaired by the next one.
// - The receiver accepts a new in-window frame even out of order (it owns a
//   buffer credit), holds it in a reorder slot, and delivers in seq order.
//   A duplicate is counted and dropped. A gap makes it send an ack with NAK.
// - The sender retransmits a frame (a copy: the original may still be on the
//   wire) when the peer's sack shows a hole below a received seq (NAK or
//   sack), or when the retransmission timer fires; the timeout doubles on
//   every expiry without progress up to a maximum and resets on progress.
// - Acks are piggybacked on data; when there is none to carry them a bare ack
//   goes out after a short delay (at once for a NAK or a probe).
// - Link-down: if unacknowledged data makes no progress for down_after_ns,
//   if nothing at all is heard from the peer for down_after_ns (an idle link
//   sends a keepalive probe after keepalive_ns of silence, so a hung peer is
//   noticed too), or the port reports its carrier down, the link goes down:
//   queued and unacknowledged frames are freed, the client's on_link_down()
//   gets an error naming node and port, and send() fails until the link is
//   trained again.
// - Identity: every frame carries the 16-bit tag of the sender's partition;
//   data and acks from another partition, or (once trained) from any node
//   but the trained neighbour (the coordinates in its Ethernet source
//   address, wire::node_mac), are dropped and counted.
//
// Hellos (link training) bypass all of this: send_raw() frames are
// unsequenced and delivered to on_frame(). Link training
// (firmware/link_training.h) brings a link up with bring_up(), naming the
// first sequence number of each direction, and takes it back to a fresh
// state with reset() when the partition resets; see docs/netstack.md.
#pragma once
#include <cstdint>
#include <string>

#include "base/event_loop.h"
#include "base/stats.h"
#include "base/status.h"
#include "drivers/port.h"
#include "netstack/wire/eth.h"
#include "netstack/wire/link_header.h"

namespace toroid {

// Ethernet's minimum frame without FCS: shorter frames arrive padded to it.
constexpr uint32_t kMinEthFrame = 60;
// Unacknowledged data frames per link: the sack bitmap covers them all.
constexpr uint32_t kLinkWindow = 32;

struct LinkConfig {
  // Receive buffers per VC that this side grants the peer (the same on both
  // sides of a link: both ends are built from the same tuning).
  uint16_t rx_credits[wire::kNumVcs] = {tuning::kVcCredits, tuning::kVcCredits, tuning::kVcCredits,
                                        tuning::kVcCredits};
  uint64_t rto_ns = tuning::kLinkRtoRealNs;          // first retransmission timeout
  uint64_t rto_max_ns = tuning::kLinkRtoMaxRealNs;   // backoff cap
  uint64_t ack_delay_ns = tuning::kLinkAckDelayRealNs;
  uint64_t down_after_ns = tuning::kLinkDownRealNs;  // no progress (or nothing heard) this long => down
  // Silent this long => probe (0: no keepalive, the default for links without
  // training; nodes use tuning::kLinkKeepalive*).
  uint64_t keepalive_ns = 0;
  uint32_t tx_cap = tuning::kLinkTxQueue;            // raw frames that may wait (hellos)
  uint16_t partition = 0;   // wire::partition_tag() of this node's partition
  // true: up from construction, both directions starting at seq `isn` and
  // credit counts at `credit_base` (links without training: unit tests,
  // benchmarks; tests start the counters just below their wrap). false:
  // down until bring_up().
  bool start_up = true;
  uint32_t isn = 0;
  uint16_t credit_base = 0;
};

// Byte counters count whole frames (Ethernet header included), like the port's.
struct LinkCounters {
  uint64_t tx_frames = 0;       // every frame handed to the port (data, ack, raw)
  uint64_t tx_bytes = 0;
  uint64_t tx_queue_full = 0;   // send_raw() refused: queue at its cap
  uint64_t rx_frames = 0;       // valid frames received (any type)
  uint64_t rx_bytes = 0;
  uint64_t rx_short = 0;        // shorter than Ethernet + link header
  uint64_t rx_bad_ethertype = 0;
  uint64_t rx_bad_version = 0;
  uint64_t rx_bad_type = 0;
  uint64_t rx_bad_length = 0;   // length field disagrees with the frame (beyond padding)
  uint64_t rx_oversize = 0;     // longer than this port's max_frame: no correct peer sends one,
                                // and forwarded it would overrun this node's other ports
  uint64_t rx_crc_errors = 0;
  uint64_t data_sent = 0;       // data frames sent for the first time
  uint64_t data_delivered = 0;  // data frames delivered to the client, in order
  uint64_t retransmits = 0;     // data frames sent again
  uint64_t timeouts = 0;        // retransmission timer expiries
  uint64_t naks_sent = 0;
  uint64_t duplicates = 0;      // data frames received again (dropped)
  uint64_t out_of_window = 0;   // data seq beyond the window (dropped)
  uint64_t reordered = 0;       // data frames that arrived ahead of a gap
  uint64_t acks_sent = 0;       // bare ack frames
  uint64_t acks_received = 0;
  uint64_t credit_stalls = 0;   // send() refused for lack of a credit
  uint64_t window_stalls = 0;   // send() refused: kLinkWindow frames unacked
  uint64_t no_buffer = 0;       // no packet for a bare ack or a retransmit copy
  uint64_t credit_violations = 0;  // peer sent on a VC with no credit (dropped)
  uint64_t rx_no_crc_refused = 0;  // kLinkNoCrc where a CRC is due: our port lacks
                                   // medium integrity, or a hello (dropped)
  uint64_t rx_foreign_partition = 0;  // another partition's tag (data and acks dropped;
                                      // hellos go to training, which refuses them by name)
  uint64_t rx_foreign_node = 0;   // data or ack from a node other than the trained neighbour
  uint64_t keepalives = 0;        // probes sent on a link silent for keepalive_ns
  uint64_t self_stalls = 0;       // a liveness timer fired stall_grace late (this node was not running):
                                  // the peer was asked again instead of being declared dead
  uint64_t trainings = 0;         // times link training brought the link up
};
extern const CounterField kLinkCountersFields[];
extern const int kLinkCountersFieldCount;

class LinkClient {
 public:
  virtual ~LinkClient() = default;
  // An unsequenced frame (hello) on port `index`; p->data() is the body.
  virtual void on_frame(uint16_t index, wire::FrameType type, Packet* p) = 0;
  // The next data frame in order, exactly once; p->data() is the body,
  // p->vc its channel. The client owns p and holds one receive buffer of
  // that VC until it calls Link::release(vc).
  virtual void on_data(uint16_t index, Packet* p) = 0;
  // The link went down (once). Everything waiting on it must fail.
  virtual void on_link_down(uint16_t index, const Status& why) = 0;
};

class Link {
 public:
  // `name` ("node 1,0,1 port port0 (x+)") is used in the link-down message.
  Link(uint16_t index, Port* port, const uint8_t mac[6], LinkClient* client, EventLoop& loop,
       const LinkConfig& cfg, std::string name);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // ---- unsequenced frames (hellos) ----
  // Frame and queue p (p->data() = body). On false the caller keeps p.
  bool send_raw(wire::FrameType type, Packet* p);

  // ---- reliable data ----
  // True when a data frame on vc would be taken now: link up, a credit for
  // vc, and the window not full.
  bool can_send(uint8_t vc) const;
  // Send p (p->data() = body) on vc; consumes one credit. On false (see
  // can_send) the caller keeps p unchanged. Counts credit/window stalls.
  bool send(uint8_t vc, Packet* p);
  // Credits the peer has granted on vc and we have not used.
  uint32_t credits(uint8_t vc) const;
  // The client freed one receive buffer of vc: the peer gets the credit back.
  void release(uint8_t vc);

  // Receive a burst, act on acks, flush queued frames. True if anything moved.
  bool poll();

  bool up() const { return up_; }
  const Status& down_status() const { return down_; }
  uint16_t index() const { return index_; }
  Port* port() const { return port_; }
  const std::string& name() const { return name_; }
  const LinkCounters& counters() const { return ctr_; }
  // The longest the peer was silent while the link was up and then spoke
  // again (a stalled neighbour or a stalled self shows here, short of the
  // down deadline). A maximum, not a counter: kept out of LinkCounters,
  // whose fields are summed across links.
  uint64_t longest_silence_ns() const { return longest_silence_ns_; }
  uint32_t unacked() const { return next_seq_ - peer_ack_; }
  uint32_t tx_queued() const { return tx_count_; }
  uint32_t tx_space() const { return tx_count_ < cfg_.tx_cap ? cfg_.tx_cap - tx_count_ : 0; }

  // Validate a received frame in place; on success strip Ethernet + link
  // header (and padding) and return true with *type set. Counts the reason
  // on failure. (The link header stays readable just before p->data().)
  bool validate(Packet* p, wire::FrameType* type);

  // ---- link training (firmware/link_training.h) ----
  // Back to a fresh state, down, without telling the client (the partition
  // is resetting everything at once): queued, unacknowledged and held frames
  // are freed, sequence numbers and credits start over. `why` becomes the
  // down status until the link is up again.
  void reset(Status why);
  // Up: our data frames start at seq tx_isn, the peer's at rx_isn; the peer
  // is the node at `peer` (from its hello's body, which the CRC covers), and
  // data or acks whose Ethernet source names another node are dropped from
  // here on. peer_credits: the peer's receive buffers per VC, as its hello
  // advertises them (credits_of_hello); 0: as many as this end's own
  // configuration has (links brought up without a hello). Needs !up().
  void bring_up(uint32_t tx_isn, uint32_t rx_isn, const uint8_t peer[3], uint8_t peer_credits = 0);
  // What this end's hellos advertise (HelloBody::rx_credits): 0 when every
  // VC has tuning::kVcCredits buffers, else the fewest of any VC.
  uint8_t advertised_credits() const;
  // The buffers per VC a peer's hello advertises: its rx_credits, 0 read as
  // tuning::kVcCredits (what a peer with the default configuration sends).
  static uint8_t credits_of_hello(uint8_t rx_credits) {
    return rx_credits ? rx_credits : static_cast<uint8_t>(tuning::kVcCredits);
  }
  // Take the link out of service for good (a miswired cable): the router
  // drops what it would send here instead of waiting for it to come up.
  void disable(Status why);
  bool disabled() const { return disabled_; }
  // A data or ack frame arrived since bring_up(): the peer's end is up too
  // (until then training keeps sending it hellos).
  bool peer_heard() const { return peer_heard_; }
  // Training saw the peer's DONE hello for this generation: its end is up
  // too, though no data or ack has crossed yet (an idle link).
  void set_peer_heard() { if (up_) peer_heard_ = true; }
  const LinkConfig& config() const { return cfg_; }

 private:
  // Implementation: link.cc (setup, validate), link_tx.cc (framing, queue,
  // acks), link_rx.cc (receive, reorder, ack fields), link_retransmit.cc
  // (timer, backoff, retransmission, link-down).
  //
  // Ownership: a data frame handed to send() is referenced twice until it
  // first reaches the port: once by its window slot, once by the tx queue
  // (the queue's reference is the one tx_burst takes). The window's
  // reference is dropped when the peer acks the seq. Nothing else may see
  // the frame before the port does, so the link may still rewrite its ack
  // fields then; after that it is shared and read-only, and retransmissions
  // are copies.
  struct TxSlot {
    Packet* pkt = nullptr;     // our reference to the frame (headers included)
    uint64_t sent_at = 0;      // last (re)transmission time
    uint32_t seq = 0;          // the seq this slot holds (while pkt != nullptr)
    uint8_t vc = 0;
    bool sacked = false;       // the peer holds it out of order
    bool in_queue = false;     // the frame or a copy of it waits in the tx queue
    bool resent = false;       // retransmitted: its ack is no RTT sample (Karn)
  };
  static wire::LinkHeader* header_of(Packet* p) {
    return reinterpret_cast<wire::LinkHeader*>(p->data() + sizeof(wire::EthHeader));
  }
  bool can_frame(const Packet* p) const;
  void fill_header(wire::LinkHeader* lh, wire::FrameType type, uint8_t vc, uint32_t seq, uint16_t body_len);
  void frame(Packet* p, wire::FrameType type, uint8_t vc, uint32_t seq);
  void stamp(Packet* p);
  void push_back(Packet* p);
  void push_front(Packet* p);
  bool flush_tx();  // true when a frame other than a bare ack left
  void rx_one(Packet* p);
  void handle_ack_fields(const wire::LinkHeader& lh);
  void handle_data(const wire::LinkHeader& lh, Packet* p);
  void deliver_in_order();
  void retransmit_holes(uint32_t sack);
  bool retransmit(uint32_t seq, uint8_t flags);
  void send_bare_ack(uint8_t flags);
  void schedule_ack(bool now);
  void go_down(Status why);
  bool peer_holds_credits() const;
  void arm_rto();
  void rto_expired();
  void sample_rtt(uint64_t rtt);
  // The timeout after progress: srtt + 4 rttvar, within [rto_ns, rto_max_ns].
  uint64_t rto_base() const;
  // A bare ack goes out at the next flush when enough is owed to the peer
  // (frames unacknowledged or credits unreturned), else within ack_delay_ns.
  bool ack_owed_now() const;
  void bump_ack_state() { if (++ack_gen_ == 0) ack_gen_ = 1; }
  static void on_rto(void* self);
  static void on_ack_timer(void* self);
  // Keepalive: one timer per link, re-armed from when the peer was last
  // heard; nothing per packet (rx only stores last_heard_).
  void arm_idle();
  uint64_t keepalive_period() const;
  uint64_t stall_grace() const;
  bool stalled_self(uint64_t due, uint64_t now) const;
  static void on_idle(void* self);
  void clear_state();  // sequence numbers, credits, timers' state: fresh
  void drop_frames();  // timers stopped, every frame held here freed (link.cc)

  uint16_t index_;
  Port* port_;
  uint8_t mac_[6];
  LinkClient* client_;
  EventLoop& loop_;
  LinkConfig cfg_;
  std::string name_;
  bool up_ = true;
  bool disabled_ = false;
  // port_->info().medium_integrity: data and acks go without a CRC, and
  // arrive without one only here (docs/wire.md).
  const bool no_crc_;
  const uint32_t max_frame_;  // port_->info().max_frame: longer frames are refused
  Status down_;
  uint64_t next_carrier_check_ = 0;
  uint8_t peer_mac_[5] = {};    // 02:54:x:y:z of the trained neighbour (wire::node_mac)
  bool has_peer_mac_ = false;   // set by bring_up(): frames from other nodes are dropped
  bool peer_heard_ = false;
  Timer idle_timer_;

  // tx queue of framed packets waiting for the port (intrusive FIFO through
  // Packet::next). Retransmissions and bare acks go to the front.
  Packet* tx_head_ = nullptr;
  Packet* tx_tail_ = nullptr;
  uint32_t tx_count_ = 0;
  Packet* ack_pkt_ = nullptr;           // the bare ack waiting in the queue, if any
  // Ack fields are written when a frame goes to the port; Packet::user of a
  // queued frame holds the ack_gen_ it was last stamped with (0: never).
  uint32_t ack_gen_ = 1;

  // sender state
  uint32_t next_seq_ = 0;               // seq of the next new data frame
  uint32_t peer_ack_ = 0;               // peer's cumulative ack
  TxSlot window_[kLinkWindow];          // indexed by seq % kLinkWindow
  uint16_t credits_used_[wire::kNumVcs] = {};   // data frames sent per VC (mod 2^16)
  uint16_t peer_freed_[wire::kNumVcs] = {};     // peer's cumulative freed count
  uint16_t peer_credits_[wire::kNumVcs] = {};   // the peer's receive buffers per VC (bring_up)
  uint64_t rto_cur_ = 0;
  // The retransmission deadline. The wheel timer is re-armed only when this
  // moves earlier; when it fires early (the deadline moved on with
  // progress) it re-arms once for the new one: no timer work per packet.
  uint64_t rto_due_ = kNever;
  uint64_t srtt_ = 0;                   // smoothed RTT (0: no sample yet)
  uint64_t rttvar_ = 0;
  uint64_t last_progress_ = 0;          // last time the peer's ack advanced
  uint64_t last_heard_ = 0;             // last valid data or ack frame from the peer
  uint64_t longest_silence_ns_ = 0;     // largest gap between two frames heard while up
  Timer rto_timer_;

  // receiver state
  uint32_t rx_next_ = 0;                // next seq to deliver
  uint32_t rx_high_ = 0;                // one past the highest seq held or delivered
  uint32_t rx_bits_ = 0;                // bit i: reorder_ holds seq rx_next_ + i
  Packet* reorder_[kLinkWindow] = {};   // received, not yet delivered (by seq % kLinkWindow)
  uint16_t freed_[wire::kNumVcs] = {};  // buffers released per VC (mod 2^16)
  uint16_t held_[wire::kNumVcs] = {};   // buffers in use per VC (received, not released)
  bool ack_pending_ = false;
  uint64_t ack_due_ = 0;                // when the pending ack must leave (while ack_pending_)
  uint32_t rx_unreported_ = 0;          // data frames received since our last ack went out
  uint16_t freed_reported_[wire::kNumVcs] = {};  // freed_ as our last ack carried it
  Timer ack_timer_;                     // for ack_due_; disarmed when a frame carries the ack

  LinkCounters ctr_;
};

}  // namespace toroid
