#include "netstack/p2p.h"

#include <algorithm>
#include <cstring>

namespace toroid {

using wire::MsgHeader;
using wire::MsgKind;
using wire::TorusHeader;

const CounterField kP2pCountersFields[] = {
    TOROID_COUNTER(P2pCounters, msgs_sent),   TOROID_COUNTER(P2pCounters, msgs_received),
    TOROID_COUNTER(P2pCounters, segs_sent),   TOROID_COUNTER(P2pCounters, segs_received),
    TOROID_COUNTER(P2pCounters, credit_msgs), TOROID_COUNTER(P2pCounters, credit_stalls),
    TOROID_COUNTER(P2pCounters, bad_segments),
};
const int kP2pCountersFieldCount = sizeof(kP2pCountersFields) / sizeof(kP2pCountersFields[0]);

namespace {
constexpr uint32_t kHeaders = sizeof(TorusHeader) + sizeof(MsgHeader);
}

Messenger::Messenger(NetStack& net, uint32_t window, uint32_t ready_cap)
    : net_(net), window_(window), ready_cap_(ready_cap) {
  seg_payload_ = net.max_body() > kHeaders ? net.max_body() - kHeaders : 0;
}

Messenger::~Messenger() = default;

Result<uint32_t> Messenger::send(const Coord& dst, uint16_t context, const void* data, uint32_t len, bool adaptive,
                                 uint16_t tag) {
  if (!status_) return status_;
  for (int i = 0; i < kDims; ++i) {
    if (dst.c[i] >= net_.dims().n[i])
      return error(Code::kInvalid, "send: destination %s is outside the partition %s", dst.to_string().c_str(),
                   net_.dims().to_string().c_str());
  }
  if (seg_payload_ == 0) return error(Code::kInvalid, "send: ports carry no room for message segments");
  const uint32_t rank = rank_of(dst, net_.dims());
  Peer& pr = peer(rank);
  SendOp op{next_handle_++, rank, context, pr.next_send_seq[context]++, static_cast<const uint8_t*>(data), len, 0,
            adaptive, true, tag};
  sends_.push_back(op);
  ++ctr_.msgs_sent;
  return op.handle;
}

uint32_t Messenger::cancel_sends() {
  const auto n = static_cast<uint32_t>(sends_.size());
  sends_.clear();
  return n;
}

bool Messenger::cancel(uint32_t handle) {
  for (auto it = sends_.begin(); it != sends_.end(); ++it) {
    if (it->handle != handle) continue;
    sends_.erase(it);
    return true;
  }
  return false;
}

bool Messenger::send_done(uint32_t handle) const {
  for (const SendOp& op : sends_)
    if (op.handle == handle) return false;
  return handle < next_handle_;
}

// Inject as many segments of op as end-to-end credit and the injection
// queue allow; true when op is fully sent.
bool Messenger::pump_send(SendOp& op) {
  Peer& pr = peer(op.dst);
  const Coord dst = coord_of(op.dst, net_.dims());
  while (op.first || op.offset < op.len) {
    if (pr.segs_sent - pr.peer_took >= window_) {
      ++ctr_.credit_stalls;
      return false;
    }
    if (!net_.can_inject()) return false;
    Packet* p = net_.alloc();
    if (!p) return false;
    const uint32_t n = std::min(seg_payload_, op.len - op.offset);
    uint8_t* base = p->append(kHeaders + n);
    if (!base) {  // cannot happen: seg_payload_ fits max_body()
      p->free();
      return false;
    }
    auto* th = reinterpret_cast<TorusHeader*>(base);
    std::memset(th, 0, sizeof *th);
    for (int i = 0; i < kDims; ++i) th->dst[i] = static_cast<uint8_t>(dst.c[i]);
    th->type = static_cast<uint8_t>(wire::PacketType::kP2P);
    th->context.set(op.context);
    th->tag.set(op.seq);
    auto* mh = reinterpret_cast<MsgHeader*>(base + sizeof(TorusHeader));
    std::memset(mh, 0, sizeof *mh);
    mh->kind = static_cast<uint8_t>(MsgKind::kData);
    mh->tag.set(op.tag);
    mh->total.set(op.len);
    mh->offset.set(op.offset);
    if (n) std::memcpy(base + kHeaders, op.data + op.offset, n);
    SendOptions so;
    so.adaptive = op.adaptive;
    if (!net_.send(p, so)) {
      p->free();
      return false;
    }
    ++pr.segs_sent;
    ++ctr_.segs_sent;
    op.offset += n;
    op.first = false;
  }
  return true;
}

bool Messenger::send_credit(uint32_t rank, Peer& pr) {
  if (!net_.can_inject()) return false;
  Packet* p = net_.alloc();
  if (!p) return false;
  const Coord dst = coord_of(rank, net_.dims());
  uint8_t* base = p->append(kHeaders);
  if (!base) {
    p->free();
    return false;
  }
  auto* th = reinterpret_cast<TorusHeader*>(base);
  std::memset(th, 0, sizeof *th);
  for (int i = 0; i < kDims; ++i) th->dst[i] = static_cast<uint8_t>(dst.c[i]);
  th->type = static_cast<uint8_t>(wire::PacketType::kP2P);
  auto* mh = reinterpret_cast<MsgHeader*>(base + sizeof(TorusHeader));
  std::memset(mh, 0, sizeof *mh);
  mh->kind = static_cast<uint8_t>(MsgKind::kCredit);
  mh->credit.set(pr.took);
  if (!net_.send(p)) {
    p->free();
    return false;
  }
  pr.took_reported = pr.took;
  ++ctr_.credit_msgs;
  return true;
}

void Messenger::on_packet(uint16_t port, Packet* p) {
  (void)port;
  const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
  Coord src;
  for (int i = 0; i < kDims; ++i) src.c[i] = th->src[i];
  const uint32_t rank = rank_of(src, net_.dims());
  if (p->len < kHeaders) {
    ++ctr_.bad_segments;
    p->free();
    return;
  }
  const auto* mh = reinterpret_cast<const MsgHeader*>(p->data() + sizeof(TorusHeader));
  if (mh->kind == static_cast<uint8_t>(MsgKind::kCredit)) {
    Peer& pr = peer(rank);
    const uint32_t c = mh->credit.get();
    if (static_cast<int32_t>(c - pr.peer_took) > 0) pr.peer_took = c;
    p->free();
    return;
  }
  if (mh->kind != static_cast<uint8_t>(MsgKind::kData)) {
    ++ctr_.bad_segments;
    p->free();
    return;
  }
  take_segment(rank, p);
}

void Messenger::take_segment(uint32_t src, Packet* p) {
  const auto* th = reinterpret_cast<const TorusHeader*>(p->data());
  const auto* mh = reinterpret_cast<const MsgHeader*>(p->data() + sizeof(TorusHeader));
  const uint16_t ctx = th->context.get();
  const uint32_t seq = th->tag.get();
  const uint32_t total = mh->total.get();
  const uint32_t off = mh->offset.get();
  const uint32_t n = p->len - kHeaders;
  Peer& pr = peer(src);
  const uint32_t next = pr.next_recv_seq[ctx];
  const auto key = std::make_pair(ctx, seq);
  if (static_cast<int32_t>(seq - next) < 0 || pr.complete.count(key) || off + n > total ||
      (n == 0 && total != 0)) {
    ++ctr_.bad_segments;
    p->free();
    return;
  }
  Partial& part = pr.partial[key];
  if (part.buf.size() != total) {
    if (part.got != 0) {  // a segment disagreeing on the size
      ++ctr_.bad_segments;
      p->free();
      return;
    }
    if (part.buf.capacity() < total && !spare_.empty()) {
      for (size_t i = spare_.size(); i-- > 0;) {
        if (spare_[i].capacity() < total) continue;
        part.buf.swap(spare_[i]);
        spare_[i].swap(spare_.back());
        spare_.pop_back();
        break;
      }
    }
    part.buf.resize(total);
    ctr_.held_bytes += total;
    ctr_.peak_held_bytes = std::max(ctr_.peak_held_bytes, ctr_.held_bytes);
  }
  if (n) std::memcpy(part.buf.data() + off, p->data() + kHeaders, n);
  part.got += n;
  p->free();
  ++ctr_.segs_received;
  ++pr.took;
  if (part.got == total) {
    Message m;
    m.src = coord_of(src, net_.dims());
    m.context = ctx;
    m.seq = seq;
    m.tag = mh->tag.get();
    m.data = std::move(part.buf);
    pr.partial.erase(key);
    pr.ready_bytes += m.data.size();
    pr.complete.emplace(key, std::move(m));
    if (seq == next) ready_order_.push_back(src);
  }
  // Return credit early enough that a sender with a full window never idles.
  if (pr.ready_bytes <= ready_cap_ && pr.took - pr.took_reported >= std::max<uint32_t>(1, window_ / 4))
    credit_due_.push_back(src);
}

bool Messenger::pop_ready(uint32_t rank, Peer& pr, uint16_t context, Message* out) {
  uint32_t& next = pr.next_recv_seq[context];
  auto it = pr.complete.find(std::make_pair(context, next));
  if (it == pr.complete.end()) return false;
  *out = std::move(it->second);
  pr.complete.erase(it);
  ++next;
  pr.ready_bytes -= out->data.size();
  ctr_.held_bytes -= out->data.size();
  ++ctr_.msgs_received;
  // The following message of this pair may already be complete.
  if (pr.complete.count(std::make_pair(context, next))) ready_order_.push_back(rank);
  if (pr.took != pr.took_reported && pr.ready_bytes <= ready_cap_) credit_due_.push_back(rank);
  return true;
}

void Messenger::recycle(std::vector<uint8_t>&& buf) {
  if (buf.capacity() == 0 || spare_.size() >= tuning::kP2pSpareBuffers) return;
  buf.clear();
  spare_.push_back(std::move(buf));
}

bool Messenger::recv(const Coord& src, uint16_t context, Message* out) {
  const uint32_t rank = rank_of(src, net_.dims());
  return pop_ready(rank, peer(rank), context, out);
}

bool Messenger::recv_any(Message* out) {
  while (!ready_order_.empty()) {
    const uint32_t rank = ready_order_.front();
    ready_order_.pop_front();
    Peer& pr = peer(rank);
    for (auto& [ctx, next] : pr.next_recv_seq) {
      if (pop_ready(rank, pr, ctx, out)) return true;
    }
  }
  return false;
}

void Messenger::on_link_down(uint16_t port, const Status& why) {
  (void)port;
  if (status_.is_ok()) status_ = why;
  sends_.clear();  // their data can no longer be delivered reliably
}

bool Messenger::poll() {
  bool moved = false;
  // Credits first: they unblock other nodes.
  while (!credit_due_.empty()) {
    const uint32_t rank = credit_due_.back();
    Peer& pr = peer(rank);
    if (pr.took == pr.took_reported) {
      credit_due_.pop_back();
      continue;
    }
    if (!send_credit(rank, pr)) break;
    credit_due_.pop_back();
    moved = true;
  }
  for (auto it = sends_.begin(); it != sends_.end();) {
    const uint32_t before = it->offset;
    const bool first = it->first;
    const bool done = pump_send(*it);
    moved |= it->offset != before || it->first != first;
    if (done) it = sends_.erase(it);
    else ++it;
  }
  return moved;
}

}  // namespace toroid
