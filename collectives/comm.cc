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

namespace {
constexpr uint16_t kP2pContextBit = 0x8000;  // point-to-point messages of a communicator
constexpr uint16_t kWorldChildBase = 2;      // the world's sub-communicators: 2, 3, ...
constexpr uint16_t kDeepChildBase = 0x1000;  // deeper ones: a hash into [0x1000, 0x7fff]
}  // namespace

Comm::Comm(NetStack& net, Messenger& msgr, EventLoop& loop, const Logger& log, uint16_t context,
           uint64_t timeout_ns)
    : net_(net), msgr_(msgr), loop_(loop), log_(log), context_(context), timeout_ns_(timeout_ns) {
  deadline_.set_callback(&Comm::on_timeout, this);
  inbox_.resize(net.port_count());
  info_.shape = net.dims();
  info_.size = static_cast<uint32_t>(net.dims().nodes());
  info_.rank = static_cast<uint32_t>(toroid::rank_of(net.me(), net.dims()));
  info_.world = true;
  // TOROID_ALGO_<KIND> (e.g. TOROID_ALGO_REDUCE_SCATTER=ring) forces an algorithm.
  for (int k = 0; k < kCollKinds; ++k) {
    std::string env = std::string("TOROID_ALGO_") + coll_kind_name(static_cast<CollKind>(k));
    for (char& ch : env) ch = ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (const char* e = std::getenv(env.c_str()); e && *e) env_algo_[k] = e;
  }
}

Comm::Comm(Comm& parent, const Coord& origin, const Dims& shape, uint16_t context)
    : net_(parent.net_),
      msgr_(parent.msgr_),
      loop_(parent.loop_),
      log_(parent.log_),
      context_(context),
      timeout_ns_(parent.timeout_ns_),
      origin_(origin) {
  deadline_.set_callback(&Comm::on_timeout, this);
  info_.shape = shape;
  info_.size = static_cast<uint32_t>(shape.nodes());
  const Dims& w = net_.dims();
  Coord off;
  for (int i = 0; i < kDims; ++i) off.c[i] = (net_.me().c[i] + w.n[i] - origin.c[i]) % w.n[i];
  info_.rank = static_cast<uint32_t>(toroid::rank_of(off, shape));
  info_.world = shape.nodes() == w.nodes();
  link_down_ = parent.link_down_;
  env_algo_ = parent.env_algo_;
  sub_ = true;
  loop_.add_poller(this);
}

Comm::~Comm() {
  if (algo_) algo_->abort();
  for (auto& box : inbox_) {
    while (box.head) {
      Packet* p = box.head;
      box.head = p->next;
      p->free();
    }
  }
  for (auto& s : pool_busy_) msgr_.cancel(s.handle);
  for (auto& r : p2p_recvs_) msgr_.withdraw(&r->req);
  if (sub_) loop_.remove_poller(this);
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

// ---- naming ----

Coord Comm::coord_of(uint32_t rank) const { return toroid::coord_of(rank, info_.shape); }

Coord Comm::world_coord_of(uint32_t rank) const {
  const Coord off = coord_of(rank);
  const Dims& w = net_.dims();
  Coord c;
  for (int i = 0; i < kDims; ++i) c.c[i] = (origin_.c[i] + off.c[i]) % w.n[i];
  return c;
}

uint32_t Comm::world_rank_of(uint32_t rank) const {
  return static_cast<uint32_t>(toroid::rank_of(world_coord_of(rank), net_.dims()));
}

int64_t Comm::rank_of_world(const Coord& world) const {
  const Dims& w = net_.dims();
  Coord off;
  for (int i = 0; i < kDims; ++i) {
    off.c[i] = (world.c[i] + w.n[i] - origin_.c[i]) % w.n[i];
    if (off.c[i] >= info_.shape.n[i]) return -1;
  }
  return static_cast<int64_t>(toroid::rank_of(off, info_.shape));
}

// ---- sub-communicators ----

Result<std::unique_ptr<Comm>> Comm::make_sub(const Coord& origin, const Dims& shape) {
  const uint16_t serial = children_++;
  uint16_t ctx;
  if (context_ < kWorldChildBase && info_.world) {
    if (serial >= kDeepChildBase - kWorldChildBase)
      return error(Code::kOutOfRange, "too many sub-communicators of the world (%u)", serial);
    ctx = static_cast<uint16_t>(kWorldChildBase + serial);
  } else {
    const uint64_t h = mix64((static_cast<uint64_t>(context_) << 16 | serial) * 0x9e3779b97f4a7c15ull);
    ctx = static_cast<uint16_t>(kDeepChildBase + h % (kP2pContextBit - kDeepChildBase));
  }
  const int64_t me = rank_of_world(net_.me());
  // Box membership is in this communicator's coordinates.
  const Coord mine = coord_of(static_cast<uint32_t>(me));
  for (int i = 0; i < kDims; ++i)
    if (mine.c[i] < origin.c[i] || mine.c[i] >= origin.c[i] + shape.n[i]) return std::unique_ptr<Comm>();
  Coord world_origin;
  const Dims& w = net_.dims();
  for (int i = 0; i < kDims; ++i)
    world_origin.c[i] = (origin_.c[i] + origin.c[i]) % w.n[i];
  std::unique_ptr<Comm> sub(new Comm(*this, world_origin, shape, ctx));
  return sub;
}

Result<std::unique_ptr<Comm>> Comm::split_line(int dim) {
  if (dim < 0 || dim >= kDims) return error(Code::kInvalid, "split_line: dimension %d is not 0, 1 or 2", dim);
  const Coord me = coord();
  Coord origin = me;
  origin.c[dim] = 0;
  Dims shape;
  shape.n[dim] = info_.shape.n[dim];
  return make_sub(origin, shape);
}

Result<std::unique_ptr<Comm>> Comm::split_plane(int a, int b) {
  if (a < 0 || a >= kDims || b < 0 || b >= kDims || a == b)
    return error(Code::kInvalid, "split_plane: dimensions %d and %d are not two of 0, 1, 2", a, b);
  const Coord me = coord();
  Coord origin = me;
  origin.c[a] = 0;
  origin.c[b] = 0;
  Dims shape;
  shape.n[a] = info_.shape.n[a];
  shape.n[b] = info_.shape.n[b];
  return make_sub(origin, shape);
}

Result<std::unique_ptr<Comm>> Comm::split_box(const Coord& origin, const Dims& shape) {
  for (int i = 0; i < kDims; ++i) {
    if (shape.n[i] == 0 || origin.c[i] + shape.n[i] > info_.shape.n[i])
      return error(Code::kInvalid, "split_box: box at %s of shape %s does not fit in %s", origin.to_string().c_str(),
                   shape.to_string().c_str(), info_.shape.to_string().c_str());
  }
  return make_sub(origin, shape);
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
  if (algo_) algo_->abort();
  finish(error(why.code(), "%s (operation %u): %s", algo_name_.c_str(), tag_, why.message().c_str()));
}

void Comm::reset(const Status& why) {
  if (active_) {
    algo_->abort();
    finish(error(why.code(), "%s (operation %u): %s", algo_name_.c_str(), tag_, why.message().c_str()));
  }
  for (auto& box : inbox_) {
    while (Packet* p = box.head) {
      box.head = p->next;
      p->free();
    }
    box.tail = nullptr;
    box.count = 0;
  }
  tag_ = 0;
  children_ = 0;
  link_down_ = Status::ok();
}

// ---- messages (point-to-point algorithms) ----

Result<uint64_t> Comm::send_msg(uint32_t peer, const void* data, size_t len, uint32_t align) {
  if (peer >= info_.size) return error(Code::kInternal, "message to rank %u of a %u-node communicator", peer, info_.size);
  MsgSendOptions opt;
  opt.align = align;
  return msgr_.send(world_coord_of(peer), context_, tag_, data, len, opt);
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
                     a.op == ROp::kSum;
  // The algorithm objects are reused between operations of the same
  // algorithm (their buffers and plans with them); names are assigned into
  // the same string: steady state allocates nothing here.
  if (exact) {
    if (exact_inner_ != info || algo_info_ != nullptr || !algo_) {
      algo_ = make_exact_sum(*info);
      if (!algo_) return error(Code::kUnsupported, "%s: exact mode is not available", kind);
      exact_inner_ = info;
    }
    algo_name_.assign(info->name);
    algo_name_.append(" (exact)");
    algo_info_ = nullptr;
  } else {
    if (algo_info_ != info || !algo_) algo_ = info->make();
    algo_name_.assign(info->name);
    algo_info_ = info;
    exact_inner_ = nullptr;
  }
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
  Status st = algo_->start(*this, a);
  if (!st) {
    finish(st);
    return st;
  }
  if (algo_->done()) finish(algo_->status());
  return Status::ok();
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
  algo_->abort();
  finish(why);
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
  bool moved = false;
  if (!pool_busy_.empty()) reclaim_sends();
  if (!active_) return false;
  if (!msgr_.status() && link_down_.is_ok()) link_down_ = msgr_.status();
  if (!link_down_.is_ok()) {
    algo_->abort();
    finish(error(link_down_.code(), "%s (operation %u): %s", algo_name_.c_str(), tag_,
                 link_down_.message().c_str()));
    return true;
  }
  moved |= algo_->progress();
  if (algo_->done()) {
    finish(algo_->status());
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
  const std::string waiting = c->algo_->waiting_for();
  c->algo_->abort();
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
  auto h = msgr_.send(world_coord_of(dst), context_ | kP2pContextBit, 0, buf.data(), len);
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
  const uint16_t ctx = context_ | kP2pContextBit;
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
