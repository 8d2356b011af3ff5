// CombineEngine, control side (seed 004 B): installing trees, starting and
// completing operations, timeouts and failures. The per-packet work (receive,
// fold, fan-out, send) is in combine_datapath.cc; the shared per-class state
// and the window argument are in combine_internal.h.
#include "netstack/tree/combine.h"

#include <algorithm>

#include "netstack/tree/combine_internal.h"

namespace toroid {

const CounterField kCombineCountersFields[] = {
    TOROID_COUNTER(CombineCounters, up_packets),      TOROID_COUNTER(CombineCounters, down_packets),
    TOROID_COUNTER(CombineCounters, combined),        TOROID_COUNTER(CombineCounters, max_children_per_step),
    TOROID_COUNTER(CombineCounters, held_high_water), TOROID_COUNTER(CombineCounters, rx_bad),
    TOROID_COUNTER(CombineCounters, tx_blocked),      TOROID_COUNTER(CombineCounters, rx_stale),
};
const int kCombineCountersFieldCount = sizeof(kCombineCountersFields) / sizeof(kCombineCountersFields[0]);

CombineEngine::CombineEngine(NetStack& net, EventLoop& loop, uint64_t timeout_ns)
    : net_(net), loop_(loop), timeout_ns_(timeout_ns) {
  classes_.resize(kMaxClasses, nullptr);
}

CombineEngine::~CombineEngine() {
  for (ClassState* cs : classes_) {
    if (!cs) continue;
    loop_.timers().cancel(cs->timer);
    drop_queued(*cs, Drop::kAll);
    delete cs;
  }
  // Packets of classes already dropped are gone; anything left is unclaimed.
  for (TxQueue& q : txq_) {
    while (Packet* p = q.head) {
      q.head = p->next;
      p->free();
    }
  }
}

Status CombineEngine::add_tree(uint8_t cls, const ClassRoute& tree) {
  if (Status st = check_tree_route(tree, net_.dims()); !st)
    return error(st.code(), "combine: class %u: %s", cls, st.message().c_str());
  return add_tree(cls, tree.at(net_.me()));
}

Status CombineEngine::add_tree(uint8_t cls, const ClassEntry& mine) {
  if (cls == 0 || cls >= kMaxClasses)
    return error(Code::kInvalid, "combine: class %u out of range (1..%d)", cls, kMaxClasses - 1);
  if (classes_[cls]) return error(Code::kInvalid, "combine: class %u already has a tree", cls);
  const std::optional<Dir> up = tree_entry_up(mine);
  if (!up && mine.accept != kClassFromLocal)
    return error(Code::kInvalid, "combine: class %u: node %s has no single up link (accepts %s)", cls,
                 net_.me().to_string().c_str(), class_mask_name(mine.accept).c_str());
  if (mine.out & ~kClassDirMask)
    return error(Code::kInvalid, "combine: class %u: unknown down-link bits 0x%02x", cls, mine.out);
  const std::vector<Dir> down = dirs_in(mine.out);
  for (Dir d : down) {
    if (net_.port_of(d) < 0)
      return error(Code::kInvalid, "combine: class %u: no port for down link %s", cls, dir_name(d));
  }
  if (up && net_.port_of(*up) < 0)
    return error(Code::kInvalid, "combine: class %u: no port for up link %s", cls, dir_name(*up));
  Status st = net_.classes().set(cls, mine);
  if (!st) return st;

  auto* cs = new ClassState;
  cs->eng = this;
  cs->cls = cls;
  cs->has_up = up.has_value();
  if (up) cs->up = *up;
  cs->child_of_dir.fill(-1);
  for (Dir d : down) {
    cs->child_of_dir[static_cast<int>(d)] = static_cast<int8_t>(cs->nchild);
    cs->down[cs->nchild] = d;
    cs->all_children = static_cast<uint8_t>(cs->all_children | (1u << cs->nchild));
    ++cs->nchild;
  }
  cs->timer.set_callback(&CombineEngine::on_timeout, cs);
  classes_[cls] = cs;
  return Status::ok();
}

bool CombineEngine::has_tree(uint8_t cls) const { return cls < classes_.size() && classes_[cls]; }

bool CombineEngine::is_root(uint8_t cls) const { return has_tree(cls) && !classes_[cls]->has_up; }

bool CombineEngine::busy(uint8_t cls) const { return has_tree(cls) && classes_[cls]->active; }

Status CombineEngine::start(uint8_t cls, AluOp op, AluType type, uint32_t width, const void* in, void* out,
                            uint32_t count, uint32_t op_id) {
  if (!has_tree(cls)) return error(Code::kNotFound, "combine: class %u has no tree", cls);
  ClassState& cs = *classes_[cls];
  if (!link_down_.is_ok())
    return error(link_down_.code(), "combine class %u: %s", cls, link_down_.message().c_str());
  if (cs.active) return error(Code::kBusy, "combine class %u: an operation is still running", cls);
  if (op_id == kNextOp) op_id = cs.op_id + 1;
  if (cs.started_any && seq_diff(op_id, cs.op_id) <= 0)
    return error(Code::kInvalid, "combine class %u: operation %u does not follow operation %u", cls, op_id, cs.op_id);
  Status st = alu_check(op, type, width);
  if (!st) return error(st.code(), "combine class %u: %s", cls, st.message().c_str());
  constexpr uint32_t kHeaders = sizeof(wire::TorusHeader) + sizeof(wire::TreeHeader);
  // A node alone in its partition sends nothing: any packet size will do.
  const bool alone = !cs.has_up && cs.nchild == 0;
  const uint32_t payload = alone ? UINT16_MAX : net_.max_body() > kHeaders ? net_.max_body() - kHeaders : 0;
  if (payload < width)
    return error(Code::kInvalid, "combine class %u: operands of %u bytes do not fit a packet (%u bytes of payload)",
                 cls, width, payload);
  if (count > 0 && (!in || !out)) return error(Code::kInvalid, "combine class %u: null buffer", cls);

  cs.op_id = op_id;
  cs.started_any = true;
  cs.op = op;
  cs.type = type;
  cs.width = width;
  cs.total = count;
  cs.per_pkt = std::min<uint32_t>(payload / width, UINT16_MAX);
  cs.npk = (count + cs.per_pkt - 1) / cs.per_pkt;
  cs.next_combine = 0;
  cs.results = 0;
  cs.in = static_cast<const uint8_t*>(in);
  cs.out = static_cast<uint8_t*>(out);
  cs.active = true;
  active_mask_ |= 1u << cls;
  cs.finished = false;
  cs.result = Status::ok();
  // Child packets of earlier operations are stale now; this one's may be here.
  drop_queued(cs, Drop::kStale);
  loop_.timers().arm(cs.timer, loop_.now() + timeout_ns_);
  // Children that started first may already have sent packets of this
  // operation; they are checked now.
  st = check_held(cs);
  if (!st) {
    ++ctr_.rx_bad;
    fail(cs, std::move(st));
    return Status::ok();
  }
  progress(cs);
  return Status::ok();
}

bool CombineEngine::test(uint8_t cls, Status* st) {
  if (!has_tree(cls) || !classes_[cls]->finished) return false;
  *st = classes_[cls]->result;
  return true;
}

void CombineEngine::finish(ClassState& cs, Status st) {
  loop_.timers().cancel(cs.timer);
  cs.active = false;
  active_mask_ &= ~(1u << cs.cls);
  cs.finished = true;
  cs.result = std::move(st);
  cs.in = nullptr;
  cs.out = nullptr;
}

void CombineEngine::cancel(uint8_t cls, Status why) {
  if (has_tree(cls) && classes_[cls]->active) fail(*classes_[cls], std::move(why));
}

// The operation ends here; what it still held or queued is dropped, and its
// packets that arrive later are stale (combine_internal.h). Packets a child
// already sent of the next operation stay.
void CombineEngine::fail(ClassState& cs, Status st) {
  finish(cs, std::move(st));
  drop_queued(cs, Drop::kOp);
}

void CombineEngine::drop_queued(ClassState& cs, Drop what) {
  uint64_t dropped = 0;
  for (int c = 0; c < cs.nchild; ++c) {
    // A child's packets are in operation order: the stale ones lead.
    while (cs.held_n[c] > 0) {
      Packet* p = cs.held[c][cs.held_head[c]];
      if (what != Drop::kAll && !cs.stale(op_of(p))) break;
      p->free();
      cs.held_head[c] = (cs.held_head[c] + 1) % ClassState::kHeldSlots;
      --cs.held_n[c];
      ++dropped;
    }
  }
  if (what == Drop::kStale) {
    held_ -= std::min(held_, dropped);
    return;
  }
  while (Packet* p = cs.fan_head) {
    cs.fan_head = p->next;
    p->free();
    ++dropped;
  }
  cs.fan_tail = nullptr;
  for (TxQueue& q : txq_) {
    Packet** link = &q.head;
    Packet* prev = nullptr;
    while (Packet* p = *link) {
      const auto* h = reinterpret_cast<const wire::TreeHeader*>(p->data() + sizeof(wire::TorusHeader));
      if (h->cls != cs.cls) {
        prev = p;
        link = &p->next;
        continue;
      }
      *link = p->next;
      if (q.tail == p) q.tail = prev;
      p->free();
      ++dropped;
    }
  }
  cs.pending = 0;
  held_ -= std::min(held_, dropped);
}

void CombineEngine::on_link_down(uint16_t port, const Status& why) {
  (void)port;
  if (link_down_.is_ok()) link_down_ = why;
  for (ClassState* cs : classes_) {
    if (!cs || !cs->active) continue;
    fail(*cs, error(why.code(), "combine class %u (operation %u, packet %u): %s", cs->cls, cs->op_id, cs->next_combine,
                    why.message().c_str()));
  }
}

void CombineEngine::reset(const Status& why) {
  for (ClassState* cs : classes_) {
    if (!cs) continue;
    if (cs->active) fail(*cs, why);
    drop_queued(*cs, Drop::kAll);
    cs->started_any = false;
    cs->op_id = 0;
    cs->next_combine = cs->results = 0;
    cs->child_op.fill(0);
    cs->child_any.fill(false);
    cs->child_next.fill(0);
    cs->held_head.fill(0);
    cs->held_n.fill(0);
  }
  link_down_ = Status::ok();
}

std::string CombineEngine::waiting_for(const ClassState& cs) const {
  std::string w;
  char buf[96];
  if (cs.in_op(cs.op_id, cs.next_combine) &&
      !(cs.has_up && seq_diff(cs.next_combine, cs.results) >= int32_t(tuning::kTreeWindow))) {
    for (int c = 0; c < cs.nchild; ++c) {
      if (child_ready(cs, c)) continue;
      w += w.empty() ? "children " : ", ";
      w += dir_name(cs.down[c]);
    }
    if (w.empty()) w = "a packet buffer";
    snprintf(buf, sizeof buf, " (packet %u)", cs.next_combine);
    return w + buf;
  }
  if (cs.has_up && cs.results < cs.npk) {
    snprintf(buf, sizeof buf, "the result of packet %u from the parent (%s)", cs.results, dir_name(cs.up));
    return buf;
  }
  snprintf(buf, sizeof buf, "link credit for %u packets to children", cs.pending);
  return buf;
}

void CombineEngine::on_timeout(void* ctx) {
  auto* cs = static_cast<ClassState*>(ctx);
  CombineEngine& e = *cs->eng;
  if (!cs->active) return;
  char dur[32];
  const std::string waiting = e.waiting_for(*cs);
  e.fail(*cs, error(Code::kTimeout,
                    "combine class %u (operation %u: %s %s, %u operands of %u bytes in %u packets) timed out after "
                    "%s at packet %u: waiting for %s",
                    cs->cls, cs->op_id, alu_op_name(cs->op), combine_type_name(cs->type), cs->total, cs->width,
                    cs->npk, format_duration(e.timeout_ns_, dur, sizeof dur), cs->next_combine, waiting.c_str()));
}

}  // namespace toroid
