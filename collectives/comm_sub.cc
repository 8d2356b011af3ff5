// Communicator membership: box-shaped or listed ranks, naming (rank <->
// coordinate <-> partition rank), context agreement and sub-communicators.
#include <algorithm>

#include "collectives/comm.h"

namespace toroid {

Comm::Comm(Comm& parent, const Coord& origin, const Dims& shape, std::vector<uint32_t> members, uint16_t context)
    : net_(parent.net_),
      msgr_(parent.msgr_),
      loop_(parent.loop_),
      log_(parent.log_),
      context_(context),
      timeout_ns_(parent.timeout_ns_),
      origin_(origin),
      members_(std::move(members)) {
  deadline_.set_callback(&Comm::on_timeout, this);
  contexts_ = parent.contexts_;
  const Dims& w = net_.dims();
  if (members_.empty()) {
    info_.shape = shape;
    info_.size = static_cast<uint32_t>(shape.nodes());
    Coord off;
    for (int i = 0; i < kDims; ++i) off.c[i] = (net_.me().c[i] + w.n[i] - origin.c[i]) % w.n[i];
    info_.rank = static_cast<uint32_t>(toroid::rank_of(off, shape));
  } else {
    info_.box = false;
    info_.size = static_cast<uint32_t>(members_.size());
    info_.shape = Dims{{info_.size, 1, 1}};
    member_index_.reserve(members_.size());
    for (uint32_t r = 0; r < members_.size(); ++r) member_index_.emplace_back(members_[r], r);
    std::sort(member_index_.begin(), member_index_.end());
    info_.rank = static_cast<uint32_t>(rank_of_world(net_.me()));
  }
  // Never the world, even when as large: its packets would go to the world
  // communicator's inboxes (only the world has the torus links and trees).
  info_.world = false;
  link_down_ = parent.link_down_;
  env_algo_ = parent.env_algo_;
  sub_ = true;
  loop_.add_poller(this);
}

// ---- naming ----

Coord Comm::coord_of(uint32_t rank) const { return toroid::coord_of(rank, info_.shape); }

Coord Comm::world_coord_of(uint32_t rank) const {
  if (!members_.empty()) return toroid::coord_of(rank < members_.size() ? members_[rank] : 0, net_.dims());
  const Coord off = coord_of(rank);
  const Dims& w = net_.dims();
  Coord c;
  for (int i = 0; i < kDims; ++i) c.c[i] = (origin_.c[i] + off.c[i]) % w.n[i];
  return c;
}

uint32_t Comm::world_rank_of(uint32_t rank) const {
  if (!members_.empty()) return rank < members_.size() ? members_[rank] : 0;
  if (info_.world) return rank;
  return static_cast<uint32_t>(toroid::rank_of(world_coord_of(rank), net_.dims()));
}

int64_t Comm::rank_of_world(const Coord& world) const {
  const Dims& w = net_.dims();
  if (!members_.empty()) {
    const uint32_t wr = toroid::rank_of(world, w);
    auto it = std::lower_bound(member_index_.begin(), member_index_.end(), std::make_pair(wr, uint32_t{0}));
    return it != member_index_.end() && it->first == wr ? static_cast<int64_t>(it->second) : -1;
  }
  Coord off;
  for (int i = 0; i < kDims; ++i) {
    off.c[i] = (world.c[i] + w.n[i] - origin_.c[i]) % w.n[i];
    if (off.c[i] >= info_.shape.n[i]) return -1;
  }
  return static_cast<int64_t>(toroid::rank_of(off, info_.shape));
}

// ---- context agreement ----

Status Comm::start_agree_round() {
  contexts_->offer(&agree_walk_, agree_buf_);
  CollArgs a;
  a.kind = CollKind::kAllreduce;
  a.dtype = DType::kUint64;
  a.op = ROp::kBand;
  a.recv = agree_buf_;
  a.count = ContextTable::kRoundWords;
  ++agree_rounds_;
  Status st = start(a);
  if (!st) {
    contexts_->drop(&agree_walk_);  // gives the offer back
    agreeing_ = false;
  }
  return st;
}

Status Comm::start_agree() {
  if (agreeing_) return error(Code::kBusy, "context agreement: one is already in progress on this communicator");
  ContextTable::begin(&agree_walk_, context_);
  agree_rounds_ = 0;
  agreeing_ = true;
  return start_agree_round();
}

Status Comm::agree_step(uint16_t* context) {
  if (!agreeing_) return error(Code::kInvalid, "context agreement: none in progress");
  Status st;
  if (!test(&st)) return error(Code::kBusy, "context agreement: round %u still in flight", agree_rounds_);
  if (!st) {
    contexts_->drop(&agree_walk_);
    agreeing_ = false;
    return error(st.code(), "context agreement: %s", st.message().c_str());
  }
  uint16_t id = 0;
  switch (contexts_->settle(&agree_walk_, agree_buf_, &id)) {
    case ContextTable::Round::kPicked:
      agreeing_ = false;
      *context = id;
      return Status::ok();
    case ContextTable::Round::kNextWindow:
      break;
    case ContextTable::Round::kRetry:
      // Every window came up empty while a member's ids were offered to
      // another agreement: walk again, for as long as the deadline of one
      // operation (each round is an operation).
      if (agree_rounds_ > tuning::kContextAgreeRounds) {
        agreeing_ = false;
        return error(Code::kTimeout, "context agreement: %u rounds and a member still takes part in another",
                     agree_rounds_);
      }
      break;
    case ContextTable::Round::kExhausted:
      agreeing_ = false;
      return error(Code::kOutOfRange, "context agreement: no context id is free on every member (%u of %u in use here)",
                   contexts_->used(), ContextTable::kIds);
  }
  if (Status s = start_agree_round(); !s) return s;
  return error(Code::kBusy, "context agreement: round %u started", agree_rounds_);
}

Result<uint16_t> Comm::agree_context() {
  if (Status st = start_agree(); !st) return st;
  for (;;) {
    Status w = wait();  // the round's own status reaches agree_step() through test()
    if (in_flight()) return w;  // the wait itself failed (a virtual clock)
    uint16_t ctx = 0;
    Status st = agree_step(&ctx);
    if (st) return ctx;
    if (st.code() != Code::kBusy) return st;
  }
}

// ---- sub-communicators ----

Result<std::unique_ptr<Comm>> Comm::create(const std::vector<uint32_t>& world_ranks, uint16_t context) {
  const Dims& w = net_.dims();
  if (world_ranks.empty()) return error(Code::kInvalid, "create: no members");
  const uint32_t me = toroid::rank_of(net_.me(), w);
  bool member = false;
  Coord lo{{kMaxDimSize, kMaxDimSize, kMaxDimSize}}, hi{{0, 0, 0}};
  std::vector<uint32_t> sorted(world_ranks);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] >= w.nodes()) return error(Code::kInvalid, "create: rank %u is outside the %u-node partition", sorted[i], w.nodes());
    if (i && sorted[i] == sorted[i - 1]) return error(Code::kInvalid, "create: rank %u is listed twice", sorted[i]);
    member |= sorted[i] == me;
    const Coord c = toroid::coord_of(sorted[i], w);
    for (int d = 0; d < kDims; ++d) {
      lo.c[d] = std::min(lo.c[d], c.c[d]);
      hi.c[d] = std::max(hi.c[d], c.c[d]);
    }
  }
  if (!member) return error(Code::kInvalid, "create: this node (rank %u) is not one of the members", me);
  // A box in rank order (no wrap): the box form, whose coordinates are torus positions.
  Dims shape;
  for (int d = 0; d < kDims; ++d) shape.n[d] = hi.c[d] - lo.c[d] + 1;
  bool box = shape.nodes() == world_ranks.size();
  for (uint32_t r = 0; box && r < world_ranks.size(); ++r) {
    const Coord off = toroid::coord_of(r, shape);
    Coord c;
    for (int d = 0; d < kDims; ++d) c.c[d] = lo.c[d] + off.c[d];
    box = toroid::rank_of(c, w) == world_ranks[r];
  }
  if (box) return std::unique_ptr<Comm>(new Comm(*this, lo, shape, {}, context));
  return std::unique_ptr<Comm>(new Comm(*this, Coord{}, Dims{}, world_ranks, context));
}

Result<std::unique_ptr<Comm>> Comm::make_sub(const Coord& origin, const Dims& shape, uint16_t context) {
  // Box membership is in this communicator's coordinates.
  const Coord mine = coord();
  for (int i = 0; i < kDims; ++i)
    if (mine.c[i] < origin.c[i] || mine.c[i] >= origin.c[i] + shape.n[i]) {
      contexts_->release(context);
      return std::unique_ptr<Comm>();
    }
  if (!info_.box) {
    std::vector<uint32_t> ranks;
    for (uint32_t r = 0; r < shape.nodes(); ++r) {
      const Coord off = toroid::coord_of(r, shape);
      Coord c;
      for (int d = 0; d < kDims; ++d) c.c[d] = origin.c[d] + off.c[d];
      ranks.push_back(world_rank_of(toroid::rank_of(c, info_.shape)));
    }
    return create(ranks, context);
  }
  Coord world_origin;
  const Dims& w = net_.dims();
  for (int i = 0; i < kDims; ++i) world_origin.c[i] = (origin_.c[i] + origin.c[i]) % w.n[i];
  return std::unique_ptr<Comm>(new Comm(*this, world_origin, shape, {}, context));
}

Result<std::unique_ptr<Comm>> Comm::split_line(int dim, uint16_t context) {
  if (dim < 0 || dim >= kDims) {
    contexts_->release(context);
    return error(Code::kInvalid, "split_line: dimension %d is not 0, 1 or 2", dim);
  }
  Coord origin = coord();
  origin.c[dim] = 0;
  Dims shape;
  shape.n[dim] = info_.shape.n[dim];
  return make_sub(origin, shape, context);
}

Result<std::unique_ptr<Comm>> Comm::split_plane(int a, int b, uint16_t context) {
  if (a < 0 || a >= kDims || b < 0 || b >= kDims || a == b) {
    contexts_->release(context);
    return error(Code::kInvalid, "split_plane: dimensions %d and %d are not two of 0, 1, 2", a, b);
  }
  Coord origin = coord();
  origin.c[a] = 0;
  origin.c[b] = 0;
  Dims shape;
  shape.n[a] = info_.shape.n[a];
  shape.n[b] = info_.shape.n[b];
  return make_sub(origin, shape, context);
}

Result<std::unique_ptr<Comm>> Comm::split_box(const Coord& origin, const Dims& shape, uint16_t context) {
  for (int i = 0; i < kDims; ++i) {
    if (shape.n[i] == 0 || origin.c[i] + shape.n[i] > info_.shape.n[i]) {
      contexts_->release(context);
      return error(Code::kInvalid, "split_box: box at %s of shape %s does not fit in %s", origin.to_string().c_str(),
                   shape.to_string().c_str(), info_.shape.to_string().c_str());
    }
  }
  return make_sub(origin, shape, context);
}

Result<std::unique_ptr<Comm>> Comm::split_line(int dim) {
  auto ctx = agree_context();
  if (!ctx) return ctx.status();
  return split_line(dim, *ctx);
}

Result<std::unique_ptr<Comm>> Comm::split_plane(int dim_a, int dim_b) {
  auto ctx = agree_context();
  if (!ctx) return ctx.status();
  return split_plane(dim_a, dim_b, *ctx);
}

Result<std::unique_ptr<Comm>> Comm::split_box(const Coord& origin, const Dims& shape) {
  auto ctx = agree_context();
  if (!ctx) return ctx.status();
  return split_box(origin, shape, *ctx);
}

}  // namespace toroid
