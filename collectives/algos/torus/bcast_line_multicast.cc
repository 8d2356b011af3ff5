#include "collectives/algos/torus/bcast_line_multicast.h"

#include <cstdio>
#include <cstring>

#include "collectives/algos/torus/torus_packets.h"
#include "collectives/comm.h"

namespace toroid {

Status LineMulticastBcast::start(Comm& comm, const CollArgs& args) {
  open(comm, args);
  injected_ = received_ = 0;
  const Dims& dims = comm.net().dims();
  if (!schedule_holds(comm.net().me(), dims, args.root))
    role_ = schedule::line_multicast_role(comm.net().me(), coord_of(args.root, dims), dims);
  if (Status st = cut_chunks(false, dims.nodes() > 1); !st) return st;
  sent_.assign(role_.sends.size(), 0);
  port_ = -1;
  if (role_.root) {
    ready_ = chunks_;
  } else {
    ready_ = 0;
    have_.assign(chunks_, 0);
    port_ = comm.net().port_of(role_.arrival.port);
    if (port_ < 0) return no_port(role_.arrival.port);
  }
  if (role_.root && role_.sends.empty()) finish(Status::ok());  // 1x1x1
  return Status::ok();
}

// Every send advances over the chunks held so far, the one furthest behind
// first, while the injection queue has room.
bool LineMulticastBcast::inject() {
  bool moved = false;
  for (;;) {
    const size_t k = torus_coll::furthest_behind(sent_.data(), sent_.size(), ready_);
    if (k == sent_.size()) return moved;
    const schedule::McastSend& ms = role_.sends[k];
    if (!inject_chunk(ms.dim, 0, sent_[k], buf_, ms.send)) return moved;
    ++sent_[k];
    ++injected_;
    moved = true;
  }
}

bool LineMulticastBcast::consume() {
  bool moved = false;
  const uint16_t port = static_cast<uint16_t>(port_);
  for (;;) {
    Parsed pk;
    Packet* p = take(port, &pk, &moved);
    if (!p) {
      if (done_) return true;  // it failed the operation
      break;
    }
    if (!(pk.src == role_.src) || pk.dim != role_.recv_dim || pk.chunk >= chunks_ || have_[pk.chunk]) {
      drop_malformed(p);
      continue;
    }
    if (!sizes_agree(p, pk)) return true;
    if (pk.count) std::memcpy(buf_ + chunk_offset(pk.chunk), pk.payload, pk.count * esize_);
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
