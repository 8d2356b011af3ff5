#include "collectives/comm.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "base/rng.h"
#include "collectives/select.h"
#include "netstack/wire/torus_header.h"

namespace toroid {

const CounterField kCollCountersFields[] = {
    TOROID_COUNTER(CollCounters, rx_packets),   TOROID_COUNTER(CollCounters, rx_stale),
    TOROID_COUNTER(CollCounters, rx_malformed), TOROID_COUNTER(CollCounters, tx_blocked),
    TOROID_COUNTER(CollCounters, ops_started),  TOROID_COUNTER(CollCounters, ops_ok),
    TOROID_COUNTER(CollCounters, ops_failed),   TOROID_COUNTER(CollCounters, max_incoming_per_step),
    TOROID_COUNTER(CollCounters, p2p_pool_bytes),
};
const int kCollCountersFieldCount = sizeof(kCollCountersFields) / sizeof(kCollCountersFields[0]);

Comm::Comm(NetStack& net, Messenger& msgr, EventLoop& loop, const Logger& log, uint16_t context,
           uint64_t timeout_ns)
    : net_(net), msgr_(msgr), loop_(loop), log_(log), context_(context), timeout_ns_(timeout_ns) {
  deadline_.set_callback(&Comm::on_timeout, this);
  inbox_.resize(net.port_count());
  info_.shape = net.dims();
  info_.size = static_cast<uint32_t>(net.dims().nodes());
  info_.rank = static_cast<uint32_t>(toroid::rank_of(net.me(), net.dims()));
  info_.world = true;
  own_contexts_ = std::make_unique<ContextTable>();
  contexts_ = own_contexts_.get();
  if (context != ContextTable::kWorld) (void)contexts_->reserve(context);
  // TOROID_ALGO_<KIND> (e.g. TOROID_ALGO_REDUCE_SCATTER=ring) forces an algorithm.
  for (int k = 0; k < kCollKinds; ++k) {
    std::string env = std::string("TOROID_ALGO_") + coll_kind_name(static_cast<CollKind>(k));
    for (char& ch : env) ch = ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (const char* e = std::getenv(env.c_str()); e && *e) env_algo_[k] = e;
  }
}

Comm::~Comm() {
  if (active_ && cur_) cur_->abort();
  if (agreeing_ && contexts_) contexts_->drop(&agree_walk_);  // its round's offer goes back
  for (auto& box : inbox_) {
    while (box.head) {
      Packet* p = box.head;
      box.head = p->next;
      p->free();
    }
  }
  for (auto& s : pool_busy_) msgr_.cancel(s.handle);
  for (auto& r : p2p_recvs_) msgr_.withdraw(&r->req);
  if (sub_) {
    loop_.remove_poller(this);
    // Leftovers of this communicator's messages must not meet the next one
    // that agrees the same id.
    msgr_.discard(context_, 0, ~uint32_t{0});
    msgr_.discard(p2p_context(), 0, ~uint32_t{0});
    contexts_->release(context_);
  }
  loop_.timers().cancel(deadline_);
}

void Comm::set_tree(CombineEngine* engine, uint8_t tree_class) {
  tree_ = engine;
  tree_class_ = tree_class;
  info_.has_tree = engine != nullptr;
}

void Comm::set_barrier(BarrierNet* net, uint8_t channel) {
  barrier_ = net;
  barrier_channel_ = channel;
  info_.has_barrier = net != nullptr;
}

// ---- packets (world algorithms) ----

void Comm::on_packet(uint16_t port, Packet* p) {
  if (port >= inbox_.size()) inbox_.resize(port + 1);
  Inbox& box = inbox_[port];
  p->next = nullptr;
  if (box.tail) box.tail->next = p;
  else box.head = p;
  box.tail = p;
  ++box.count;
  // Run to completion: the operation waiting for this packet takes it now,
  // not after the rest of the event loop's round (for a small operation,
  // that round is a good part of its latency).
  advance();
}

Packet* Comm::inbox_pop(uint16_t port) {
  Inbox& box = inbox_[port];
  Packet* p = box.head;
  if (!p) return nullptr;
  box.head = p->next;
  if (!box.head) box.tail = nullptr;
  --box.count;
  p->next = nullptr;
  return p;
}

void Comm::on_link_down(uint16_t port, const Status& why) {
  (void)port;
  if (link_down_.is_ok()) link_down_ = why;
  if (!active_) return;
  if (cur_) cur_->abort();
  finish(error(why.code(), "%s (operation %u): %s", algo_name_.c_str(), tag_, why.message().c_str()));
}

void Comm::reset(const Status& why) {
  if (active_) fail_op(error(why.code(), "%s (operation %u): %s", algo_name_.c_str(), tag_, why.message().c_str()));
  for (auto& box : inbox_) {
    while (Packet* p = box.head) {
      box.head = p->next;
      p->free();
    }
    box.tail = nullptr;
    box.count = 0;
  }
  tag_ = 0;
  link_down_ = Status::ok();
}

// ---- messages (point-to-point algorithms) ----

Result<uint64_t> Comm::post_send(uint32_t rank, bool p2p, uint32_t tag, const void* data, uint64_t len,
                                 const MsgSendOptions& opt) {
  if (rank >= info_.size)
    return error(Code::kInvalid, "send: rank %u is not in this %u-node communicator", rank, info_.size);
  return msgr_.send_rank(world_rank_of(rank), p2p ? p2p_context() : context_, tag, data, len, opt);
}

Result<uint64_t> Comm::send_msg(uint32_t peer, const void* data, size_t len, uint32_t align) {
  MsgSendOptions opt;
  opt.align = align;
  return post_send(peer, false, tag_, data, len, opt);
}

// ---- collectives ----

Status Comm::prepare(CollArgs& a, std::string_view want, const AlgoInfo** info) {
  const char* kind = coll_kind_name(a.kind);
  if (static_cast<int>(a.kind) >= kCollKinds) return error(Code::kInvalid, "unknown collective %d", int(a.kind));
  if (coll_reduces(a.kind) && a.dtype != DType::kAluWord) {
    if (Status st = check_rop(a.dtype, a.op); !st) return error(Code::kInvalid, "%s: %s", kind, st.message().c_str());
    a.red = make_reducer(a.dtype, a.op);
  }
  if (a.dtype == DType::kAluWord) {
    if (a.kind != CollKind::kAllreduce || a.red.fn || a.red.esize == 0)
      return error(Code::kInvalid, "%s: raw ALU operands are for allreduce with an ALU reducer", kind);
    a.esize = a.red.esize;
  } else {
    if (static_cast<int>(a.dtype) >= kUserDTypes) return error(Code::kInvalid, "%s: unknown datatype", kind);
    a.esize = coll_reduces(a.kind) ? elem_size(a.dtype, a.op) : dtype_size(a.dtype);
  }
  if (a.root >= info_.size && (a.kind == CollKind::kReduce || a.kind == CollKind::kBcast ||
                               a.kind == CollKind::kGather || a.kind == CollKind::kScatter))
    return error(Code::kInvalid, "%s: root %u is not a rank of this %u-node communicator", kind, a.root, info_.size);
  const bool root = info_.rank == a.root;
  const bool needs_recv = a.count > 0 && a.kind != CollKind::kBarrier &&
                          !((a.kind == CollKind::kReduce || a.kind == CollKind::kGather) && !root);
  if (needs_recv && !a.recv) return error(Code::kInvalid, "%s: no receive buffer for %llu elements", kind,
                                          static_cast<unsigned long long>(a.count));
  if (a.repro == Repro::kExact && coll_reduces(a.kind) && dtype_is_float(a.dtype)) {
    if (a.op == ROp::kProd) return error(Code::kUnsupported, "%s: exact mode covers sum, min and max, not prod", kind);
    if (a.op == ROp::kSum && a.kind != CollKind::kAllreduce)
      return error(Code::kUnsupported, "%s: exact float sum is implemented for allreduce only", kind);
  }
  const std::string_view name = want.empty() ? std::string_view(env_algo_[static_cast<int>(a.kind)]) : want;
  Choice& memo = choice_[static_cast<int>(a.kind)];
  if (memo.same(a, name)) {
    *info = memo.info;
    return Status::ok();
  }
  if (!name.empty()) {
    const AlgoInfo* found = find_algo(a.kind, name);
    const std::string n(name);
    if (!found)
      return error(Code::kInvalid, "%s: unknown algorithm '%s' (known: %s)", kind, n.c_str(), algo_names(a.kind).c_str());
    const std::string why = algo_unusable(*found, info_, a);
    if (!why.empty()) return error(Code::kUnsupported, "%s %s: not applicable: %s", kind, n.c_str(), why.c_str());
    *info = found;
  } else {
    auto chosen = select_algo(info_, a);
    if (!chosen) return chosen.status();
    *info = *chosen;
  }
  memo.valid = true;
  memo.dtype = a.dtype;
  memo.op = a.op;
  memo.repro = a.repro;
  memo.count = a.count;
  memo.root = a.root;
  memo.buffer_blocks = a.buffer_blocks;
  memo.in_place = a.in_place();
  memo.want.assign(name);
  memo.info = *info;
  return Status::ok();
}

Status Comm::start(const CollArgs& args_in, std::string_view algo) {
  reclaim_sends();
  CollArgs a = args_in;
  const char* kind = coll_kind_name(a.kind);
  if (!link_down_.is_ok()) return error(link_down_.code(), "%s: %s", kind, link_down_.message().c_str());
  if (!msgr_.status()) return error(msgr_.status().code(), "%s: %s", kind, msgr_.status().message().c_str());
  if (active_) return error(Code::kBusy, "%s: operation %u (%s) is still in flight", kind, tag_, algo_name_.c_str());
  const AlgoInfo* info = nullptr;
  if (Status st = prepare(a, algo, &info); !st) return st;
  const bool exact = a.repro == Repro::kExact && a.kind == CollKind::kAllreduce && dtype_is_float(a.dtype) &&
                     a.op == ROp::kSum && info->make != make_exact_share;
  // The algorithm objects are reused between operations (slots_, comm.h);
  // names are assigned into the same string: steady state allocates nothing
  // here, whatever mix of kinds and algorithms the program runs (up to
  // kAlgoSlots of them).
  AlgoSlot* slot = nullptr;
  for (AlgoSlot& s : slots_)
    if (s.algo && s.info == info && s.exact == exact) {
      slot = &s;
      break;
    }
  if (!slot) {
    slot = &slots_[0];
    for (AlgoSlot& s : slots_) {
      if (!s.algo) {
        slot = &s;
        break;
      }
      if (s.used < slot->used) slot = &s;
    }
    slot->algo = exact ? make_exact_sum(*info) : info->make();
    if (!slot->algo) {
      slot->info = nullptr;
      return error(Code::kUnsupported, "%s: exact mode is not available", kind);
    }
    slot->info = info;
    slot->exact = exact;
  }
  slot->used = ++slot_clock_;
  algo_name_.assign(info->name);
  if (exact) algo_name_.append(" (exact)");
  return launch(a, slot->algo.get());
}

Status Comm::start_custom(const CollArgs& args, CollAlgo* algo, const char* name) {
  reclaim_sends();
  const char* kind = coll_kind_name(args.kind);
  if (!link_down_.is_ok()) return error(link_down_.code(), "%s: %s", kind, link_down_.message().c_str());
  if (!msgr_.status()) return error(msgr_.status().code(), "%s: %s", kind, msgr_.status().message().c_str());
  if (active_) return error(Code::kBusy, "%s: operation %u (%s) is still in flight", kind, tag_, algo_name_.c_str());
  algo_name_.assign(name);
  return launch(args, algo);
}

Status Comm::launch(const CollArgs& a, CollAlgo* algo) {
  cur_ = algo;
  ++tag_;
  active_ = true;
  finished_ = false;
  result_ = Status::ok();
  ++ctr_.ops_started;
  // The deadline timer is lazy (as the barrier network's): armed once and
  // left armed across operations; when it fires it compares with this
  // operation's deadline. Arming and cancelling a far-out timer per
  // operation would cost the timer wheel a scan for its next deadline.
  op_deadline_ = loop_.now() + timeout_ns_;
  if (!deadline_.armed() || deadline_.deadline() > op_deadline_) loop_.timers().arm(deadline_, op_deadline_);
  Status st = cur_->start(*this, a);
  if (!st) {
    finish(st);
    return st;
  }
  // The first packets leave now, not a round of the event loop later: a
  // small operation's latency is mostly that first hop.
  if (cur_->done()) finish(cur_->status());
  else advance();
  return Status::ok();
}

void Comm::fail_op(Status st) {
  if (!active_) return;
  if (cur_) cur_->abort();
  finish(std::move(st));
}

void Comm::finish(Status st) {
  active_ = false;
  finished_ = true;
  if (st) ++ctr_.ops_ok;
  else ++ctr_.ops_failed;
  result_ = std::move(st);
}

bool Comm::cancel(const Status& why) {
  if (!active_) return false;
  fail_op(why);
  return true;
}

bool Comm::test(Status* result) {
  if (!finished_) return false;
  *result = result_;
  return true;
}

Status Comm::wait() {
  if (!active_ && !finished_) return error(Code::kInvalid, "wait: no operation was started");
  // In the sim rig the scheduler owns virtual time and every node's loop:
  // one node cannot drive the others, so a blocking wait could never end.
  if (loop_.clock().is_virtual())
    return error(Code::kUnsupported, "%s: blocking waits need a real-time rig (use start/test in the sim)",
                 algo_name_.c_str());
  Status st = loop_.run_until([this] { return !active_; }, timeout_ns_ + timeout_ns_ / 4, algo_name_.c_str());
  if (!st) return st;
  return result_;
}

Status Comm::run(const CollArgs& args, std::string_view algo) {
  if (Status st = start(args, algo); !st) return st;
  return wait();
}

Status Comm::allreduce(const void* send, void* recv, uint64_t count, DType t, ROp op, Repro r) {
  CollArgs a;
  a.kind = CollKind::kAllreduce;
  a.send = send;
  a.recv = recv;
  a.count = count;
  a.dtype = t;
  a.op = op;
  a.repro = r;
  return run(a);
}

Status Comm::bcast(void* buf, uint64_t count, DType t, uint32_t root) {
  CollArgs a;
  a.kind = CollKind::kBcast;
  a.recv = buf;
  a.count = count;
  a.dtype = t;
  a.root = root;
  return run(a);
}

Status Comm::barrier() {
  CollArgs a;
  a.kind = CollKind::kBarrier;
  return run(a);
}

Status Comm::start_allreduce_sum_i64(int64_t* data, uint64_t count, std::string_view algo) {
  CollArgs a;
  a.kind = CollKind::kAllreduce;
  a.recv = data;
  a.count = count;
  a.dtype = DType::kInt64;
  a.op = ROp::kSum;
  return start(a, algo);
}

Status Comm::start_barrier(std::string_view algo) {
  CollArgs a;
  a.kind = CollKind::kBarrier;
  return start(a, algo);
}

bool Comm::poll() {
  if (!pool_busy_.empty()) reclaim_sends();
  return advance();
}

bool Comm::advance() {
  if (!active_ || advancing_) return false;
  bool moved = false;
  if (!msgr_.status() && link_down_.is_ok()) link_down_ = msgr_.status();
  if (!link_down_.is_ok()) {
    cur_->abort();
    finish(error(link_down_.code(), "%s (operation %u): %s", algo_name_.c_str(), tag_,
                 link_down_.message().c_str()));
    return true;
  }
  advancing_ = true;
  moved |= cur_->progress();
  advancing_ = false;
  if (cur_->done()) {
    finish(cur_->status());
    moved = true;
  }
  return moved;
}

void Comm::on_timeout(void* self) {
  auto* c = static_cast<Comm*>(self);
  if (!c->active_) return;  // left armed after the operation finished: nothing to do
  if (c->loop_.now() < c->op_deadline_) {  // armed for an earlier operation: this one's is later
    c->loop_.timers().arm(c->deadline_, c->op_deadline_);
    return;
  }
  char dur[32];
  const std::string waiting = c->cur_->waiting_for();
  c->cur_->abort();
  c->finish(error(Code::kTimeout, "%s %s (operation %u) did not finish within %s; waiting for %s",
                  c->algo_name_.c_str(), "collective", c->tag_, format_duration(c->timeout_ns_, dur, sizeof dur),
                  waiting.c_str()));
}

// ---- point-to-point ----

void Comm::reclaim_sends() {
  for (size_t i = 0; i < pool_busy_.size();) {
    if (!msgr_.send_done(pool_busy_[i].handle)) {
      ++i;
      continue;
    }
    ctr_.p2p_pool_bytes -= pool_busy_[i].buf.capacity();
    pool_free_.push_back(std::move(pool_busy_[i].buf));
    pool_busy_[i] = std::move(pool_busy_.back());
    pool_busy_.pop_back();
  }
}

Status Comm::send(uint32_t dst, const void* data, size_t len) {
  reclaim_sends();
  if (dst >= info_.size) return error(Code::kInvalid, "send: rank %u is not in this %u-node communicator", dst, info_.size);
  if (len > UINT32_MAX) return error(Code::kOutOfRange, "send: %zu bytes is too large for one message", len);
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < pool_free_.size(); ++i) {
    if (pool_free_[i].capacity() < len) continue;
    buf = std::move(pool_free_[i]);
    pool_free_[i] = std::move(pool_free_.back());
    pool_free_.pop_back();
    break;
  }
  buf.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + len);
  auto h = post_send(dst, true, 0, buf.data(), len);
  if (!h) return h.status();
  ctr_.p2p_pool_bytes += buf.capacity();
  pool_busy_.push_back(PooledSend{*h, std::move(buf)});
  return Status::ok();
}

// The next message from src: once one has begun to arrive, a receive sized
// to it is posted (its frames land in the buffer as they come); it is
// handed over when complete.
bool Comm::try_recv(uint32_t src, std::vector<uint8_t>* out) {
  reclaim_sends();
  if (src >= info_.size) return false;
  const uint16_t ctx = p2p_context();
  const auto wsrc = static_cast<int32_t>(world_rank_of(src));
  P2pRecv* pr = nullptr;
  for (auto& r : p2p_recvs_)
    if (r->src == src && r->req.matched()) pr = r.get();
  if (!pr) {
    MsgEnvelope env;
    if (!msgr_.probe(wsrc, ctx, 0, true, &env)) return false;
    for (auto& r : p2p_recvs_)
      if (!r->req.matched()) pr = r.get();
    if (!pr) pr = p2p_recvs_.emplace_back(std::make_unique<P2pRecv>()).get();
    pr->src = src;
    pr->buf.resize(env.length);
    pr->req = RecvReq{};
    pr->req.src = wsrc;
    pr->req.context = ctx;
    pr->req.any_tag = true;
    pr->req.buf = pr->buf.data();
    pr->req.cap = env.length;
    if (!msgr_.post(&pr->req)) return false;
  }
  if (!pr->req.done()) return false;
  const bool ok = pr->req.status().is_ok();
  if (ok) *out = std::move(pr->buf);
  pr->buf = std::vector<uint8_t>();
  pr->req = RecvReq{};  // free for the next message
  return ok;
}

Status Comm::recv(uint32_t src, std::vector<uint8_t>* out) {
  if (src >= info_.size) return error(Code::kInvalid, "recv: rank %u is not in this %u-node communicator", src, info_.size);
  if (try_recv(src, out)) return Status::ok();
  if (loop_.clock().is_virtual())
    return error(Code::kUnsupported, "recv: blocking waits need a real-time rig (use try_recv in the sim)");
  bool got = false;
  Status st = loop_.run_until([&] { return (got = try_recv(src, out)) || !msgr_.status(); }, timeout_ns_, "recv");
  if (!st) return st;
  if (!got) return msgr_.status();
  return Status::ok();
}

}  // namespace toroid
