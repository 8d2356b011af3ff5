// Messenger send side: messages cut into segments written straight from the
// caller's buffer into frames (the one copy on the way out), paced by the
// destination's end-to-end credit; credit and abort messages.
#include <algorithm>
#include <cstring>

#include "netstack/p2p.h"
#include "netstack/p2p_internal.h"
#include "netstack/route.h"

namespace toroid {

using wire::MsgHeader;
using wire::MsgKind;
using wire::TorusHeader;

Result<uint64_t> Messenger::send(const Coord& dst, uint16_t context, uint32_t tag, const void* data, uint64_t len,
                                 const MsgSendOptions& opt) {
  for (int i = 0; i < kDims; ++i) {
    if (dst.c[i] >= net_.dims().n[i])
      return error(Code::kInvalid, "send: destination %s is outside the partition %s", dst.to_string().c_str(),
                   net_.dims().to_string().c_str());
  }
  return send_rank(static_cast<uint32_t>(rank_of(dst, net_.dims())), context, tag, data, len, opt);
}

Result<uint64_t> Messenger::send_rank(uint32_t dst, uint16_t context, uint32_t tag, const void* data, uint64_t len,
                                      const MsgSendOptions& opt) {
  if (!status_) return status_;
  if (dst >= net_.dims().nodes())
    return error(Code::kInvalid, "send: destination rank %u is outside the partition (%u nodes)", dst,
                 net_.dims().nodes());
  if (seg_payload_ == 0) return error(Code::kInvalid, "send: ports carry no room for message segments");
  if (len > cfg_.max_message)
    return error(Code::kOutOfRange, "send: a message of %llu bytes is larger than the %llu-byte maximum",
                 static_cast<unsigned long long>(len), static_cast<unsigned long long>(cfg_.max_message));
  if (len > 0 && !data) return error(Code::kInvalid, "send: no data for %llu bytes", static_cast<unsigned long long>(len));
  const uint32_t align = std::max<uint32_t>(opt.align, 1);
  if (align > seg_payload_)
    return error(Code::kInvalid, "send: %u-byte elements do not fit one %u-byte segment", align, seg_payload_);
  SendOp op;
  op.handle = next_handle_++;
  if (next_handle_ == 0) next_handle_ = 1;  // across the wrap: 0 is nobody's handle
  op.dst = dst;
  op.pr = &peer(op.dst);
  op.context = context;
  op.tag = tag;
  op.data = static_cast<const uint8_t*>(data);
  op.len = len;
  op.seg = seg_payload_ / align * align;
  op.adaptive = opt.adaptive;
  op.spread = opt.spread;
  op.sync = opt.sync;
  // Start at once (a small message leaves in this call, not at the next
  // poll) unless an earlier message to the same node still waits: messages
  // to one node leave in send() order.
  bool queued_behind = false;
  for (const SendOp& a : active_) queued_behind |= a.dst == op.dst;
  active_.push_back(op);
  ++ctr_.msgs_sent;
  if (!queued_behind && pump_send(active_.back()) && sent_out(active_.back())) active_.pop_back();
  return op.handle;
}

bool Messenger::send_done(uint64_t handle) const {
  // Issued handles are [first_handle, next_handle_) mod 2^64, 0 excepted.
  if (handle == 0 || handle - cfg_.first_handle >= next_handle_ - cfg_.first_handle) return false;
  if (find_active(handle)) return false;
  for (const SyncWait& w : sync_wait_)
    if (w.handle == handle) return false;
  return true;
}

const Messenger::SendOp* Messenger::find_active(uint64_t handle) const {
  // Ordered by distance from the first handle, which survives the wrap of
  // the 64-bit counter.
  const uint64_t key = handle - cfg_.first_handle;
  auto it = std::lower_bound(active_.begin(), active_.end(), key,
                             [&](const SendOp& op, uint64_t k) { return op.handle - cfg_.first_handle < k; });
  return it != active_.end() && it->handle == handle ? &*it : nullptr;
}

bool Messenger::cancel_unsent(uint64_t handle) {
  for (size_t i = 0; i < active_.size(); ++i) {
    if (active_[i].handle != handle) continue;
    if (active_[i].started) return false;
    active_.erase(active_.begin() + static_cast<ptrdiff_t>(i));
    gates_moved_ = true;
    return true;
  }
  return false;
}

bool Messenger::cancel(uint64_t handle) {
  for (size_t i = 0; i < active_.size(); ++i) {
    SendOp& op = active_[i];
    if (op.handle != handle) continue;
    // Part way out: the receiver must not wait for the rest.
    if (op.started) {
      abort_due_.push_back(op.dst);
      abort_due_.push_back(op.seq);
    }
    active_.erase(active_.begin() + static_cast<ptrdiff_t>(i));
    gates_moved_ = true;
    return true;
  }
  for (size_t i = 0; i < sync_wait_.size(); ++i) {
    if (sync_wait_[i].handle != handle) continue;
    sync_wait_.erase(sync_wait_.begin() + static_cast<ptrdiff_t>(i));
    return true;
  }
  return false;
}

uint32_t Messenger::cancel_sends() {
  uint32_t n = static_cast<uint32_t>(sync_wait_.size());
  sync_wait_.clear();
  while (!active_.empty()) n += cancel(active_.back().handle);
  return n;
}

Packet* Messenger::make_segment(const Peer& to, uint16_t context, uint32_t tag, uint32_t seq, MsgKind kind) {
  Packet* p = net_.alloc();
  if (!p) return nullptr;
  uint8_t* base = p->append(kMsgHeaders);
  if (!base) {  // cannot happen: the pool's buffers hold a frame
    p->free();
    return nullptr;
  }
  auto* th = reinterpret_cast<TorusHeader*>(base);
  std::memset(th, 0, sizeof *th);
  for (int i = 0; i < kDims; ++i) th->dst[i] = static_cast<uint8_t>(to.at.c[i]);
  th->type = static_cast<uint8_t>(wire::PacketType::kP2P);
  th->context.set(context);
  th->tag.set(seq);
  auto* mh = reinterpret_cast<MsgHeader*>(base + sizeof(TorusHeader));
  std::memset(mh, 0, sizeof *mh);
  mh->kind = static_cast<uint8_t>(kind);
  mh->tag.set(tag);
  return p;
}

// Inject as many segments of op as end-to-end credit and the injection
// queue allow; true when op is fully sent. The message number is taken with
// the first segment, so a send cancelled before it left leaves no gap.
bool Messenger::pump_send(SendOp& op) {
  Peer& pr = *op.pr;
  while (!op.started || op.offset < op.len) {
    if (pr.segs_sent - pr.peer_took >= cfg_.window) {
      ++ctr_.credit_stalls;
      if (pr.held) {
        if (!pr.stalled) {
          pr.stalled = true;
          pr.next_stalled = stalled_head_;
          stalled_head_ = &pr;
        }
        spill_check_ = true;
      }
      return false;
    }
    if (!net_.can_inject()) return false;
    const uint32_t seq = op.started ? op.seq : pr.next_seq;
    Packet* p = make_segment(pr, op.context, op.tag, seq, MsgKind::kData);
    if (!p) return false;
    const auto n = static_cast<uint32_t>(std::min<uint64_t>(op.seg, op.len - op.offset));
    auto* mh = reinterpret_cast<MsgHeader*>(p->data() + sizeof(TorusHeader));
    mh->total.set(static_cast<uint32_t>(op.len));
    mh->offset.set(static_cast<uint32_t>(op.offset));
    if (op.sync) mh->flags = wire::kMsgFlagSync;
    if (n) std::memcpy(p->append(n), op.data + op.offset, n);
    SendOptions so;
    so.adaptive = op.adaptive;
    if (op.spread) {
      // Alternate the equally short ways round segment by segment.
      so.hints = minimal_hints(net_.me(), pr.at, net_.dims(), seq + op.segs_out);
    }
    if (!net_.send(p, so)) {
      p->free();
      return false;
    }
    if (!op.started) {
      op.started = true;
      op.seq = pr.next_seq++;
    }
    ++pr.segs_sent;
    ++ctr_.segs_sent;
    ++op.segs_out;
    op.offset += n;
  }
  return true;
}

bool Messenger::send_credit(Peer& pr) {
  if (!net_.can_inject()) return false;
  Packet* p = make_segment(pr, 0, 0, 0, MsgKind::kCredit);
  if (!p) return false;
  reinterpret_cast<MsgHeader*>(p->data() + sizeof(TorusHeader))->offset.set(pr.took);
  if (!net_.send(p)) {
    p->free();
    return false;
  }
  pr.took_reported = pr.took;
  ++ctr_.credit_msgs;
  return true;
}

bool Messenger::send_abort(uint32_t rank, uint32_t seq) {
  if (!net_.can_inject()) return false;
  Packet* p = make_segment(peer(rank), 0, 0, seq, MsgKind::kAbort);
  if (!p) return false;
  if (!net_.send(p)) {
    p->free();
    return false;
  }
  return true;
}

}  // namespace toroid
