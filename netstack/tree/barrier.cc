// BarrierNet: the global AND/OR network of seed 004 (B.8: "any global AND is
// a barrier"), as one-hop messages on the priority VC along a tree class.
//
// AND (barrier), per channel and epoch e, at node X:
//   X's subtree has arrived when X entered and every child sent up(e); then
//   X sends up(e) to its parent, or, at the root, releases: down(e) to every
//   child. A node receiving down(e) completes and forwards it to its children.
// Epochs ahead: a child completes e when X forwards down(e), i.e. after X
// completed e, and may enter e+1 and send up(e+1) before X's application has
// called test() (X still at e). It cannot send up(e+2): that needs down(e+1),
// which X sends only at epoch e+1. A down(e+1) cannot reach X at epoch e
// either: the root releases e+1 only after X's up(e+1). So X remembers child
// up packets one epoch ahead (a second bit mask) and anything else is a
// protocol error, dropped and counted.
//
// OR (interrupt): a raise travels up (each node forwards the first raise it
// sees for an epoch), the root fires down(e) to everyone; a node completes
// when down(e) arrives, raised or not. Here nothing waits for a slow node, so
// a node that does not call test() may be several epochs behind when the next
// down arrives. down(E) therefore means "epochs up to E fired" (each node
// keeps the highest fired epoch), and up(E) is forwarded only when it is newer
// than anything fired or raised upward so far. At the root a raise is at most
// one epoch ahead (a node at E+1 has seen the root fire E), kept in a flag.
//
// Each (channel, link) owes at most one message of each kind at a time, so
// messages that wait for a credit or a packet buffer are kept as "owed
// epochs", not packets: no queue, no allocation while waiting.
#include "netstack/tree/barrier.h"

#include <algorithm>
#include <cstring>

namespace toroid {

using wire::BarrierHeader;
using wire::TorusHeader;

struct BarrierNet::Channel {
  BarrierNet* net = nullptr;
  int id = 0;
  bool mode_set = false;  // fixed by the first enter() or packet
  BarrierMode mode = BarrierMode::kAnd;
  uint32_t epoch = 0;
  bool entered = false;  // arrived (AND) / raised (OR) in this epoch
  // AND
  bool up_sent = false;  // up(epoch) owed or sent to the parent
  bool done = false;     // released in this epoch
  uint8_t child_up = 0;       // children whose up(epoch) arrived
  uint8_t child_up_next = 0;  // ... up(epoch + 1), a child one epoch ahead
  // OR
  int64_t fired_max = -1;   // highest epoch known to have fired
  int64_t up_fwd_max = -1;  // highest epoch raised towards the root
  bool root_next = false;   // root: a raise for epoch + 1 arrived early
  // Messages owed to neighbours (-1: none).
  int64_t up_owed = -1;
  std::array<int64_t, kNumDirs> down_owed{};
  Status failed;
  uint64_t since_ns = 0;  // when this node entered the epoch
  Timer timer;
};

BarrierNet::BarrierNet(NetStack& net, EventLoop& loop, uint64_t timeout_ns)
    : net_(net), loop_(loop), timeout_ns_(timeout_ns) {
  child_of_dir_.fill(-1);
  for (int i = 0; i < kBarrierChannels; ++i) {
    auto* c = new Channel;
    c->net = this;
    c->id = i;
    c->down_owed.fill(-1);
    c->timer.set_callback(&BarrierNet::on_timeout, c);
    ch_.push_back(c);
  }
}

BarrierNet::~BarrierNet() {
  for (Channel* c : ch_) delete c;
}

Status BarrierNet::set_tree(uint8_t cls, const ClassRoute& tree) {
  if (Status st = check_tree_route(tree, net_.dims()); !st)
    return error(st.code(), "barrier: class %u: %s", cls, st.message().c_str());
  return set_tree(cls, tree.at(net_.me()));
}

Status BarrierNet::set_tree(uint8_t cls, const ClassEntry& mine) {
  if (has_tree_) return error(Code::kInvalid, "barrier: the tree is already set (class %u)", cls_);
  if (cls == 0 || cls >= kMaxClasses)
    return error(Code::kInvalid, "barrier: class %u out of range (1..%d)", cls, kMaxClasses - 1);
  const std::optional<Dir> up = tree_entry_up(mine);
  if (!up && mine.accept != kClassFromLocal)
    return error(Code::kInvalid, "barrier: class %u: node %s has no single up link (accepts %s)", cls,
                 net_.me().to_string().c_str(), class_mask_name(mine.accept).c_str());
  if (mine.out & ~kClassDirMask)
    return error(Code::kInvalid, "barrier: class %u: unknown down-link bits 0x%02x", cls, mine.out);
  const std::vector<Dir> down = dirs_in(mine.out);
  for (Dir d : down) {
    if (net_.port_of(d) < 0) return error(Code::kInvalid, "barrier: class %u: no port for down link %s", cls, dir_name(d));
  }
  if (up && net_.port_of(*up) < 0)
    return error(Code::kInvalid, "barrier: class %u: no port for up link %s", cls, dir_name(*up));
  cls_ = cls;
  has_up_ = up.has_value();
  if (up) up_ = *up;
  for (Dir d : down) {
    child_of_dir_[static_cast<int>(d)] = static_cast<int8_t>(nchild_);
    down_[nchild_] = d;
    all_children_ = static_cast<uint8_t>(all_children_ | (1u << nchild_));
    ++nchild_;
  }
  has_tree_ = true;
  return Status::ok();
}

bool BarrierNet::completed(const Channel& c) const {
  return c.mode == BarrierMode::kAnd ? c.done : c.fired_max >= static_cast<int64_t>(c.epoch);
}

// AND: once this node and its whole subtree arrived, tell the parent, or
// release everyone at the root.
void BarrierNet::try_up(Channel& c) {
  if (!c.entered || c.done || c.up_sent || c.child_up != all_children_) return;
  if (!has_up_) {
    release(c, c.epoch);
    return;
  }
  c.up_sent = true;
  c.up_owed = c.epoch;
  owed_any_ = true;
}

// This node completes epoch e (AND released / OR fired) and passes it down.
void BarrierNet::release(Channel& c, uint32_t e) {
  if (c.mode == BarrierMode::kAnd) c.done = true;
  else c.fired_max = std::max<int64_t>(c.fired_max, e);
  owe_down(c, e);
}

void BarrierNet::owe_down(Channel& c, uint32_t e) {
  for (int i = 0; i < nchild_; ++i) c.down_owed[i] = std::max<int64_t>(c.down_owed[i], e);
  if (nchild_) owed_any_ = true;
}

Status BarrierNet::enter(int channel, BarrierMode mode) {
  if (channel < 0 || channel >= kBarrierChannels)
    return error(Code::kInvalid, "barrier channel %d out of range (0..%d)", channel, kBarrierChannels - 1);
  if (!has_tree_) return error(Code::kInvalid, "barrier channel %d: no tree set", channel);
  Channel& c = *ch_[channel];
  if (!c.failed.is_ok()) return c.failed;
  if (!link_down_.is_ok())
    return error(link_down_.code(), "barrier channel %d (epoch %u): %s", channel, c.epoch,
                 link_down_.message().c_str());
  if (c.mode_set && c.mode != mode)
    return error(Code::kInvalid, "barrier channel %d is in %s mode, entered as %s", channel,
                 c.mode == BarrierMode::kAnd ? "AND" : "OR", mode == BarrierMode::kAnd ? "AND" : "OR");
  if (mode == BarrierMode::kAnd && (c.entered || c.done))
    return error(Code::kBusy, "barrier channel %d: already entered epoch %u (test() it first)", channel, c.epoch);
  c.mode_set = true;
  c.mode = mode;
  if (c.entered) return Status::ok();  // OR: raising twice is one raise
  c.entered = true;
  c.since_ns = loop_.now();
  // The deadline timer is armed lazily and left armed across epochs: it
  // checks since_ns when it fires. Arming and cancelling a far-out timer on
  // every barrier costs the timer wheel a full scan each time.
  if (!c.timer.armed()) loop_.timers().arm(c.timer, c.since_ns + timeout_ns_);
  if (mode == BarrierMode::kAnd) {
    try_up(c);
  } else if (!completed(c)) {
    if (!has_up_) {
      release(c, c.epoch);
    } else if (c.up_fwd_max < static_cast<int64_t>(c.epoch)) {
      c.up_fwd_max = c.epoch;
      c.up_owed = c.epoch;
      owed_any_ = true;
    }
  }
  send_owed(c);
  return Status::ok();
}

bool BarrierNet::test(int channel, Status* st) {
  if (channel < 0 || channel >= kBarrierChannels) {
    *st = error(Code::kInvalid, "barrier channel %d out of range (0..%d)", channel, kBarrierChannels - 1);
    return true;
  }
  Channel& c = *ch_[channel];
  if (!c.failed.is_ok()) {
    *st = c.failed;
    return true;
  }
  if (!c.mode_set || !completed(c)) return false;
  *st = Status::ok();
  ++ctr_.completed;
  // Re-arm for the next epoch, with what arrived early for it.
  ++c.epoch;
  c.entered = false;
  c.up_sent = false;
  c.done = false;
  c.child_up = c.child_up_next;
  c.child_up_next = 0;
  if (!link_down_.is_ok()) {
    c.failed = error(link_down_.code(), "barrier channel %d (epoch %u): %s", channel, c.epoch,
                     link_down_.message().c_str());
    return true;
  }
  if (c.mode == BarrierMode::kOr && c.root_next) {
    c.root_next = false;
    release(c, c.epoch);
    send_owed(c);
  }
  return true;
}

bool BarrierNet::fired(int channel) const {
  if (channel < 0 || channel >= kBarrierChannels) return false;
  const Channel& c = *ch_[channel];
  return c.mode_set && c.mode == BarrierMode::kOr && completed(c) && !c.entered;
}

uint32_t BarrierNet::epoch(int channel) const {
  return channel >= 0 && channel < kBarrierChannels ? ch_[channel]->epoch : 0;
}

void BarrierNet::on_packet(uint16_t port, Packet* p) {
  const int dir = net_.dir_of_port(port);
  BarrierHeader h;
  const bool sized = p->len >= sizeof(TorusHeader) + sizeof h;
  if (sized) std::memcpy(&h, p->data() + sizeof(TorusHeader), sizeof h);
  p->free();
  if (!sized || !has_tree_ || dir >= kNumDirs || h.cls != cls_ || h.channel >= kBarrierChannels || h.mode > 1) {
    ++ctr_.rx_bad;
    return;
  }
  Channel& c = *ch_[h.channel];
  const auto mode = static_cast<BarrierMode>(h.mode);
  const int child = child_of_dir_[dir];
  const bool up = h.flags == wire::kBarrierUp && child >= 0;
  const bool down = h.flags == wire::kBarrierDown && has_up_ && dir == static_cast<int>(up_);
  if ((!up && !down) || !c.failed.is_ok() || (c.mode_set && c.mode != mode)) {
    ++ctr_.rx_bad;
    return;
  }
  c.mode_set = true;
  c.mode = mode;
  const uint32_t e = h.epoch.get();
  const auto e64 = static_cast<int64_t>(e);
  const uint8_t bit = child >= 0 ? static_cast<uint8_t>(1u << child) : 0;
  bool bad = false;
  if (mode == BarrierMode::kAnd) {
    if (up && e == c.epoch && !c.done && !(c.child_up & bit)) {
      c.child_up |= bit;
      try_up(c);
    } else if (up && e == c.epoch + 1 && c.done && !(c.child_up_next & bit)) {
      c.child_up_next |= bit;  // a child one epoch ahead (see the top of the file)
    } else if (down && e == c.epoch && c.up_sent && !c.done) {
      release(c, e);
    } else {
      bad = true;
    }
  } else if (down) {
    if (e64 > c.fired_max) release(c, e);
    else bad = true;
  } else if (!has_up_) {
    // The root: fire this epoch, remember a raise for the next one.
    if (e == c.epoch && !completed(c)) release(c, e);
    else if (e == c.epoch + 1 && completed(c)) c.root_next = true;
    else if (e64 > static_cast<int64_t>(c.epoch)) bad = true;  // stale raises are harmless
  } else if (e64 > c.fired_max && e64 > c.up_fwd_max) {
    c.up_fwd_max = e64;
    c.up_owed = e64;
    owed_any_ = true;
  }
  if (bad) {
    ++ctr_.rx_bad;
    return;
  }
  send_owed(c);
}

bool BarrierNet::send_one(Dir dir, uint8_t channel, BarrierMode mode, uint8_t flags, uint32_t epoch) {
  if (!net_.can_send_dir(dir, /*priority=*/true)) return false;
  Packet* p = net_.alloc();
  if (!p) return false;
  uint8_t* d = p->append(sizeof(TorusHeader) + sizeof(BarrierHeader));
  if (!d) {
    p->free();
    return false;
  }
  std::memset(d, 0, sizeof(TorusHeader) + sizeof(BarrierHeader));
  auto* th = reinterpret_cast<TorusHeader*>(d);
  th->type = static_cast<uint8_t>(wire::PacketType::kBarrier);
  th->tag.set(epoch);
  auto* h = reinterpret_cast<BarrierHeader*>(d + sizeof(TorusHeader));
  h->cls = cls_;
  h->channel = channel;
  h->mode = static_cast<uint8_t>(mode);
  h->flags = flags;
  h->epoch.set(epoch);
  if (!net_.send_dir(dir, p, /*priority=*/true)) {
    p->free();
    return false;
  }
  return true;
}

// Send what this channel owes; true if anything went.
bool BarrierNet::send_owed(Channel& c) {
  bool moved = false;
  const auto ch = static_cast<uint8_t>(c.id);
  if (c.up_owed >= 0 && send_one(up_, ch, c.mode, wire::kBarrierUp, static_cast<uint32_t>(c.up_owed))) {
    c.up_owed = -1;
    ++ctr_.up_sent;
    moved = true;
  }
  for (int i = 0; i < nchild_; ++i) {
    if (c.down_owed[i] < 0 || !send_one(down_[i], ch, c.mode, wire::kBarrierDown, static_cast<uint32_t>(c.down_owed[i])))
      continue;
    c.down_owed[i] = -1;
    ++ctr_.down_sent;
    moved = true;
  }
  return moved;
}

bool BarrierNet::poll() {
  if (!owed_any_) return false;
  bool moved = false, owed = false;
  for (Channel* c : ch_) {
    moved |= send_owed(*c);
    owed |= c->up_owed >= 0;
    for (int i = 0; i < nchild_; ++i) owed |= c->down_owed[i] >= 0;
  }
  owed_any_ = owed;
  return moved;
}

void BarrierNet::fail(Channel& c, Status st) {
  loop_.timers().cancel(c.timer);
  c.failed = std::move(st);
  c.up_owed = -1;
  c.down_owed.fill(-1);
}

void BarrierNet::on_link_down(uint16_t port, const Status& why) {
  (void)port;
  if (link_down_.is_ok()) link_down_ = why;
  for (Channel* c : ch_) {
    if (!c->failed.is_ok() || (c->mode_set && completed(*c))) continue;  // a completed epoch still reports ok
    fail(*c, error(why.code(), "barrier channel %d (epoch %u): %s", c->id, c->epoch, why.message().c_str()));
  }
}

std::string BarrierNet::waiting_for(const Channel& c) const {
  std::string w;
  if (c.mode == BarrierMode::kAnd && !c.up_sent) {
    for (int i = 0; i < nchild_; ++i) {
      if (c.child_up & (1u << i)) continue;
      w += w.empty() ? "children " : ", ";
      w += dir_name(down_[i]);
    }
    if (!w.empty()) return w + " to arrive";
  }
  if (c.up_owed >= 0) return std::string("link credit to the parent (") + dir_name(up_) + ")";
  if (!has_up_) return "the root's own release";
  return std::string(c.mode == BarrierMode::kAnd ? "the release" : "the interrupt") + " from the parent (" +
         dir_name(up_) + ")";
}

void BarrierNet::on_timeout(void* ctx) {
  auto* c = static_cast<Channel*>(ctx);
  BarrierNet& b = *c->net;
  if (!c->failed.is_ok() || !c->entered || b.completed(*c)) return;  // not waiting: disarmed until the next enter
  const uint64_t deadline = c->since_ns + b.timeout_ns_;
  if (b.loop_.now() < deadline) {
    b.loop_.timers().arm(c->timer, deadline);  // a later epoch's wait
    return;
  }
  char dur[32];
  const std::string w = b.waiting_for(*c);
  b.fail(*c, error(Code::kTimeout, "barrier channel %d (epoch %u) timed out after %s: waiting for %s", c->id,
                   c->epoch, format_duration(b.timeout_ns_, dur, sizeof dur), w.c_str()));
}

}  // namespace toroid
