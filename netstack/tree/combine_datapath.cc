// CombineEngine, data path: receive tree packets, fold own data with one
// packet per child (the ALU of netstack/tree/alu.h), send partial results up,
// turn the total around at the root and copy it down to every child. No heap
// allocation: packets are pool buffers held in fixed per-class rings and
// intrusive queues, a child's packet becomes the partial result in place.
#include <algorithm>
#include <cstring>

#include "netstack/tree/combine.h"
#include "netstack/tree/combine_internal.h"

namespace toroid {

using wire::TorusHeader;
using wire::TreeHeader;

namespace {
constexpr uint32_t kHeaders = sizeof(TorusHeader) + sizeof(TreeHeader);

TreeHeader* tree_header(Packet* p) { return reinterpret_cast<TreeHeader*>(p->data() + sizeof(TorusHeader)); }
const TreeHeader* tree_header(const Packet* p) {
  return reinterpret_cast<const TreeHeader*>(p->data() + sizeof(TorusHeader));
}
}  // namespace

bool CombineEngine::child_ready(const ClassState& cs, int c) {
  return cs.held_n[c] > 0 && op_of(cs.held[c][cs.held_head[c]]) == cs.op_id;
}

void CombineEngine::held_add(uint32_t n) {
  held_ += n;
  ctr_.held_high_water = std::max(ctr_.held_high_water, held_);
}

// Whether a packet of the current operation says what this node started.
Status CombineEngine::check_packet(const ClassState& cs, const TreeHeader& h, uint32_t len, int child) const {
  const uint32_t s = h.seq.get();
  const char* what = nullptr;
  char theirs[64], ours[64];
  if (h.op != static_cast<uint8_t>(cs.op)) {
    what = "op";
    AluOp o = static_cast<AluOp>(h.op);
    snprintf(theirs, sizeof theirs, "op %s", h.op >= 1 && h.op <= 6 ? alu_op_name(o) : "?");
    snprintf(ours, sizeof ours, "op %s", alu_op_name(cs.op));
  } else if (h.type != static_cast<uint8_t>(cs.type)) {
    what = "type";
    snprintf(theirs, sizeof theirs, "type %s", combine_type_name(static_cast<AluType>(h.type)));
    snprintf(ours, sizeof ours, "type %s", combine_type_name(cs.type));
  } else if (h.width.get() != cs.width) {
    what = "width";
    snprintf(theirs, sizeof theirs, "width %u", h.width.get());
    snprintf(ours, sizeof ours, "width %u", cs.width);
  } else if (h.total.get() != cs.total) {
    what = "count";
    snprintf(theirs, sizeof theirs, "count %u", h.total.get());
    snprintf(ours, sizeof ours, "count %u", cs.total);
  } else if (h.count.get() != cs.count_of(s)) {
    what = "packet size";
    snprintf(theirs, sizeof theirs, "%u operands", h.count.get());
    snprintf(ours, sizeof ours, "%u operands", cs.count_of(s));
  } else if (len < kHeaders + cs.count_of(s) * cs.width) {
    what = "length";
    snprintf(theirs, sizeof theirs, "%u bytes", len);
    snprintf(ours, sizeof ours, "%u bytes", kHeaders + cs.count_of(s) * cs.width);
  }
  if (!what) return Status::ok();
  char from[32];
  if (child >= 0) snprintf(from, sizeof from, "child %s", dir_name(cs.down[child]));
  else snprintf(from, sizeof from, "the parent (%s)", dir_name(cs.up));
  return error(Code::kInvalid, "combine class %u: %s mismatch in operation %u, packet %u: %s sent %s, this node started %s",
               cs.cls, what, cs.op_id, s, from, theirs, ours);
}

Status CombineEngine::check_held(ClassState& cs) {
  for (int c = 0; c < cs.nchild; ++c) {
    for (uint32_t k = 0; k < cs.held_n[c]; ++k) {
      const Packet* p = cs.held[c][(cs.held_head[c] + k) % ClassState::kHeldSlots];
      const TreeHeader& h = *tree_header(p);
      if (!cs.in_op(op_of(p), h.seq.get())) break;
      Status st = check_packet(cs, h, p->len, c);
      if (!st) return st;
    }
  }
  return Status::ok();
}

void CombineEngine::on_packet(uint16_t port, Packet* p) {
  const int dir = net_.dir_of_port(port);
  if (p->len < kHeaders || dir >= kNumDirs) {
    ++ctr_.rx_bad;
    p->free();
    return;
  }
  const TreeHeader& h = *tree_header(p);
  ClassState* cs = h.cls < classes_.size() ? classes_[h.cls] : nullptr;
  if (!cs) {
    ++ctr_.rx_bad;
    p->free();
    return;
  }
  if (cs->stale(op_of(p))) {
    // An operation over here: its failure (or a mismatch) left it behind.
    ++ctr_.rx_stale;
    p->free();
    return;
  }
  if (h.flags == wire::kTreeUp && cs->child_of_dir[dir] >= 0) {
    on_up(*cs, cs->child_of_dir[dir], p);
  } else if (h.flags == wire::kTreeDown && cs->has_up && dir == static_cast<int>(cs->up)) {
    on_down(*cs, p);
  } else {
    ++ctr_.rx_bad;
    p->free();
    return;
  }
  if (cs->active) progress(*cs);
}

// A child's packets arrive in order: per operation, indices 0, 1, ...; the
// operations in increasing order (it may give one up part-way).
void CombineEngine::on_up(ClassState& cs, int child, Packet* p) {
  const TreeHeader& h = *tree_header(p);
  const uint32_t s = h.seq.get();
  const uint32_t id = op_of(p);
  const char* dn = dir_name(cs.down[child]);
  Status st;
  const bool next_op = !cs.child_any[child] || id != cs.child_op[child];
  if (next_op && cs.child_any[child] && seq_diff(id, cs.child_op[child]) < 0) {
    st = error(Code::kInternal, "combine class %u: child %s sent operation %u after operation %u", cs.cls, dn, id,
               cs.child_op[child]);
  } else if (s != (next_op ? 0 : cs.child_next[child])) {
    st = error(Code::kInternal, "combine class %u: child %s sent packet %u of operation %u, expected %u", cs.cls, dn,
               s, id, next_op ? 0 : cs.child_next[child]);
  } else if (cs.held_n[child] >= ClassState::kHeldSlots) {
    st = error(Code::kInternal, "combine class %u: child %s is more than %u packets ahead (operation %u, packet %u)",
               cs.cls, dn, ClassState::kHeldSlots, id, s);
  } else if (cs.in_op(id, s)) {
    st = check_packet(cs, h, p->len, child);
  }
  if (!st) {
    ++ctr_.rx_bad;
    p->free();
    // A broken stream of a later operation fails that one when it starts
    // (its packet is missing); only the current operation fails now.
    if (cs.active && id == cs.op_id) fail(cs, std::move(st));
    return;
  }
  cs.held[child][(cs.held_head[child] + cs.held_n[child]) % ClassState::kHeldSlots] = p;
  ++cs.held_n[child];
  cs.child_any[child] = true;
  cs.child_op[child] = id;
  cs.child_next[child] = s + 1;
  held_add(1);
}

void CombineEngine::on_down(ClassState& cs, Packet* p) {
  const TreeHeader& h = *tree_header(p);
  const uint32_t s = h.seq.get();
  const uint32_t id = op_of(p);
  Status st;
  if (!cs.in_op(id, s) || s != cs.results || seq_diff(s, cs.next_combine) >= 0) {
    st = error(Code::kInternal, "combine class %u: unexpected result, operation %u packet %u, from the parent (%s)",
               cs.cls, id, s, dir_name(cs.up));
  } else {
    st = check_packet(cs, h, p->len, -1);
  }
  if (!st) {
    ++ctr_.rx_bad;
    p->free();
    if (cs.active) fail(cs, std::move(st));
    return;
  }
  const uint32_t n = cs.count_of(s);
  std::memcpy(cs.out + static_cast<size_t>(s) * cs.per_pkt * cs.width, p->data() + kHeaders,
              static_cast<size_t>(n) * cs.width);
  ++cs.results;
  if (cs.nchild == 0) {
    p->free();
    return;
  }
  p->user = cs.all_children;
  p->next = nullptr;
  if (cs.fan_tail) cs.fan_tail->next = p;
  else cs.fan_head = p;
  cs.fan_tail = p;
  ++cs.pending;
  held_add(1);
}

// Fold every sequence that has its child packets, within the window.
bool CombineEngine::fold(ClassState& cs) {
  bool moved = false;
  while (cs.in_op(cs.op_id, cs.next_combine)) {
    const uint32_t s = cs.next_combine;
    if (cs.has_up && seq_diff(s, cs.results) >= static_cast<int32_t>(tuning::kTreeWindow)) break;
    bool ready = true;
    for (int c = 0; c < cs.nchild && ready; ++c) ready = child_ready(cs, c);
    if (!ready) break;
    const uint32_t n = cs.count_of(s);
    const size_t bytes = static_cast<size_t>(n) * cs.width;
    const size_t off = static_cast<size_t>(s) * cs.per_pkt * cs.width;
    if (!cs.has_up && cs.nchild == 0) {
      // Alone in the partition: the result is this node's own data.
      if (cs.out != cs.in) std::memmove(cs.out + off, cs.in + off, bytes);
      ++cs.next_combine;
      ++cs.results;
      moved = true;
      continue;
    }
    Packet* acc;
    if (cs.nchild > 0) {
      // The first child's packet becomes the partial result, in place.
      acc = cs.held[0][cs.held_head[0]];
      uint8_t* sum = acc->data() + kHeaders;
      alu_combine(cs.op, cs.type, cs.width, sum, cs.in + off, n);
      for (int c = 1; c < cs.nchild; ++c) {
        Packet* q = cs.held[c][cs.held_head[c]];
        alu_combine(cs.op, cs.type, cs.width, sum, q->data() + kHeaders, n);
        q->free();
      }
      for (int c = 0; c < cs.nchild; ++c) {
        cs.held_head[c] = (cs.held_head[c] + 1) % ClassState::kHeldSlots;
        --cs.held_n[c];
      }
      held_ -= cs.nchild;
      ctr_.combined += cs.nchild;
      ctr_.max_children_per_step = std::max<uint64_t>(ctr_.max_children_per_step, cs.nchild);
      acc->len = static_cast<uint32_t>(kHeaders + bytes);
    } else {
      acc = net_.alloc();
      if (!acc) break;  // counted by the netstack; retried from poll()
      if (!acc->append(static_cast<uint32_t>(kHeaders + bytes))) {
        acc->free();
        fail(cs, error(Code::kInternal, "combine class %u: packet buffers too small", cs.cls));
        return true;
      }
      std::memcpy(acc->data() + kHeaders, cs.in + off, bytes);
    }
    auto* th = reinterpret_cast<TorusHeader*>(acc->data());
    std::memset(th, 0, sizeof *th);
    th->type = static_cast<uint8_t>(wire::PacketType::kTree);
    th->tag.set(cs.op_id);
    TreeHeader* h = tree_header(acc);
    h->cls = cs.cls;
    h->op = static_cast<uint8_t>(cs.op);
    h->type = static_cast<uint8_t>(cs.type);
    h->width.set(static_cast<uint16_t>(cs.width));
    h->count.set(static_cast<uint16_t>(n));
    h->seq.set(s);
    h->total.set(cs.total);
    acc->user = 0;
    acc->next = nullptr;
    ++cs.next_combine;
    moved = true;
    if (cs.has_up) {
      h->flags = wire::kTreeUp;
      transmit(cs.up, acc);
      continue;
    }
    // The root: this is the result.
    std::memcpy(cs.out + off, acc->data() + kHeaders, bytes);
    ++cs.results;
    h->flags = wire::kTreeDown;
    acc->user = cs.all_children;
    if (cs.fan_tail) cs.fan_tail->next = acc;
    else cs.fan_head = acc;
    cs.fan_tail = acc;
    ++cs.pending;
    held_add(1);
  }
  return moved;
}

// Copy each result to every child: a clone per child but the last, which
// gets the packet itself.
bool CombineEngine::fan_out(ClassState& cs) {
  bool moved = false;
  while (Packet* p = cs.fan_head) {
    uint32_t mask = p->user;
    while (mask) {
      const int c = __builtin_ctz(mask);
      mask &= mask - 1;
      if (mask == 0) break;  // the last child takes p itself
      Packet* copy = clone_packet(*p, net_.pool());
      if (!copy) return moved;  // retried from poll()
      copy->user = 0;
      copy->next = nullptr;
      p->user = mask;
      transmit(cs.down[c], copy);
      moved = true;
    }
    const int last = __builtin_ctz(p->user);
    cs.fan_head = p->next;
    if (!cs.fan_head) cs.fan_tail = nullptr;
    p->next = nullptr;
    p->user = 0;
    --cs.pending;
    --held_;
    transmit(cs.down[last], p);
    moved = true;
  }
  return moved;
}

bool CombineEngine::progress(ClassState& cs) {
  bool moved = fan_out(cs);
  if (cs.active && fold(cs)) {
    moved = true;
    fan_out(cs);
  }
  if (cs.active && cs.results == cs.npk && cs.pending == 0) finish(cs, Status::ok());
  return moved;
}

// Send now if nothing of ours waits on that link, else queue behind it.
void CombineEngine::transmit(Dir dir, Packet* p) {
  TxQueue& q = txq_[static_cast<int>(dir)];
  const bool up = tree_header(p)->flags == wire::kTreeUp;
  if (!q.head && net_.send_dir(dir, p)) {
    ++(up ? ctr_.up_packets : ctr_.down_packets);
    return;
  }
  ++ctr_.tx_blocked;
  p->next = nullptr;
  if (q.tail) q.tail->next = p;
  else q.head = p;
  q.tail = p;
  ++classes_[tree_header(p)->cls]->pending;
  held_add(1);
}

bool CombineEngine::flush() {
  bool moved = false;
  for (int d = 0; d < kNumDirs; ++d) {
    TxQueue& q = txq_[d];
    while (Packet* p = q.head) {
      Packet* next = p->next;
      const TreeHeader& h = *tree_header(p);
      const uint8_t cls = h.cls;
      const bool up = h.flags == wire::kTreeUp;
      p->next = nullptr;
      if (!net_.send_dir(static_cast<Dir>(d), p)) {
        p->next = next;
        break;
      }
      // p belongs to the link now: only the values read above are used.
      q.head = next;
      if (!next) q.tail = nullptr;
      ++(up ? ctr_.up_packets : ctr_.down_packets);
      --classes_[cls]->pending;
      --held_;
      moved = true;
    }
  }
  return moved;
}

bool CombineEngine::poll() {
  bool moved = flush();
  // Fan-out and folding happen only while an operation runs (a failure
  // drops what its class held).
  for (uint32_t m = active_mask_; m; m &= m - 1) moved |= progress(*classes_[__builtin_ctz(m)]);
  return moved;
}

}  // namespace toroid
