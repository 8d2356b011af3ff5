#include "collectives/algos/torus/bcast_line_multicast.h"

#include <cstdio>
#include <cstring>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/comm.h"

namespace toroid {

using torus_coll::Parsed;

namespace {
constexpr const char* kWhat = "bcast line-multicast";
}

Status LineMulticastBcast::start(Comm& comm, const CollArgs& args) {
  reset();
  comm_ = &comm;
  tag_ = comm.tag();
  buf_ = static_cast<uint8_t*>(args.recv);
  count_ = args.count;
  esize_ = args.esize;
  injected_ = received_ = 0;
  const Dims& dims = comm.net().dims();
  if (count_ > 0 && !buf_) return error(Code::kInvalid, "%s: null buffer", kWhat);
  role_ = schedule::line_multicast_role(comm.net().me(), coord_of(args.root, dims), dims);
  per_packet_ = torus_coll::elems_per_packet(comm.net(), esize_);
  if (per_packet_ == 0 && count_ > 0 && dims.nodes() > 1)
    return error(Code::kInvalid, "%s: ports carry %u-byte bodies, too small for one %zu-byte element", kWhat,
                 comm.net().max_body(), esize_);
  chunks_ = torus_coll::chunks_for(count_, per_packet_);
  sent_.assign(role_.sends.size(), 0);
  port_ = -1;
  if (role_.root) {
    ready_ = chunks_;
  } else {
    ready_ = 0;
    have_.assign(chunks_, 0);
    port_ = comm.net().port_of(role_.arrival.port);
    if (port_ < 0) return error(Code::kInternal, "%s: no port for %s", kWhat, dir_name(role_.arrival.port));
  }
  if (role_.root && role_.sends.empty()) finish(Status::ok());  // 1x1x1
  return Status::ok();
}

// Every send advances over the chunks held so far, the one furthest behind
// first, while the injection queue has room.
bool LineMulticastBcast::inject() {
  NetStack& net = comm_->net();
  bool moved = false;
  for (;;) {
    size_t k = sent_.size();
    for (size_t i = 0; i < sent_.size(); ++i)
      if (sent_[i] < ready_ && (k == sent_.size() || sent_[i] < sent_[k])) k = i;
    if (k == sent_.size()) return moved;
    if (net.inject_queued() >= torus_coll::kInjectWindow) {
      ++comm_->counters().tx_blocked;
      return moved;
    }
    const schedule::McastSend& ms = role_.sends[k];
    const uint32_t c = sent_[k];
    const uint32_t n = torus_coll::chunk_elems(count_, per_packet_, c);
    Packet* p = torus_coll::make_packet(*comm_, tag_, wire::CollAlgo::kLineMulticast, static_cast<uint8_t>(ms.dim), 0,
                                        c, buf_ + static_cast<size_t>(c) * per_packet_ * esize_, n, esize_, count_);
    if (!p) return moved;
    Coord dst = net.me();
    dst.c[ms.dim] = ms.send.dst;
    torus_coll::set_dst(p, dst);
    SendOptions opt;
    opt.deposit = true;
    opt.hints = static_cast<uint8_t>(1u << static_cast<int>(ms.send.dir));
    if (!net.send(p, opt)) {
      p->free();
      ++comm_->counters().tx_blocked;
      return moved;
    }
    ++sent_[k];
    ++injected_;
    moved = true;
  }
}

bool LineMulticastBcast::consume() {
  bool moved = false;
  const uint16_t port = static_cast<uint16_t>(port_);
  for (;;) {
    Packet* p = torus_coll::op_head(*comm_, port, tag_, &moved);
    if (!p) break;
    comm_->inbox_pop(port);
    moved = true;
    Parsed pk;
    Status st = torus_coll::parse(p, wire::CollAlgo::kLineMulticast, esize_, &pk);
    if (!st) {
      p->free();
      fail(error(st.code(), "%s: %s", kWhat, st.message().c_str()));
      return true;
    }
    if (!(pk.src == role_.src) || pk.dim != role_.recv_dim || pk.chunk >= chunks_ || have_[pk.chunk]) {
      ++comm_->counters().rx_malformed;
      p->free();
      continue;
    }
    if (pk.total != count_) {
      p->free();
      fail(torus_coll::size_mismatch(kWhat, pk.src, pk.total, comm_->net().me(), count_));
      return true;
    }
    const uint32_t want = torus_coll::chunk_elems(count_, per_packet_, pk.chunk);
    if (pk.count != want) {
      p->free();
      fail(error(Code::kInvalid, "%s: packet %u from node %s carries %u elements, expected %u (count %llu)", kWhat,
                 pk.chunk, pk.src.to_string().c_str(), pk.count, want, static_cast<unsigned long long>(count_)));
      return true;
    }
    if (want) std::memcpy(buf_ + static_cast<size_t>(pk.chunk) * per_packet_ * esize_, pk.payload, want * esize_);
    p->free();
    have_[pk.chunk] = 1;
    ++received_;
    ++comm_->counters().rx_packets;
  }
  while (ready_ < chunks_ && have_[ready_]) ++ready_;
  return moved;
}

bool LineMulticastBcast::progress() {
  if (done_) return false;
  bool moved = false;
  if (!role_.root) {
    moved |= consume();
    if (done_) return true;
  }
  moved |= inject();
  bool all_sent = true;
  for (uint32_t s : sent_) all_sent = all_sent && s == chunks_;
  if (ready_ == chunks_ && all_sent) {
    finish(Status::ok());
    return true;
  }
  return moved;
}

std::string LineMulticastBcast::waiting_for() const {
  if (done_) return "nothing";
  char buf[200];
  int len = 0;
  if (!role_.root)
    len = snprintf(buf, sizeof buf, "chunks %u/%u from node %s via %s", ready_, chunks_,
                   role_.src.to_string().c_str(), dir_name(role_.arrival.port));
  else
    len = snprintf(buf, sizeof buf, "root");
  for (size_t i = 0; i < sent_.size() && len < static_cast<int>(sizeof buf); ++i)
    len += snprintf(buf + len, sizeof buf - len, ", injected %u/%u %s", sent_[i], chunks_,
                    dir_name(role_.sends[i].send.dir));
  return buf;
}

}  // namespace toroid
