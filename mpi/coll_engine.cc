#include "mpi/coll_engine.h"

#include "mpi/request.h"

namespace toroid::mpi {

void requests_progress();  // request.cc: requests freed while active

namespace {

MPI_Comm g_active = nullptr;  // communicators with queued operations

void activate(MPI_Comm c) {
  if (c->on_active) return;
  c->on_active = true;
  c->next_active = g_active;
  g_active = c;
}

void finish_op(MPI_Comm c, CollOp* op, Status st) {
  c->queue_head = op->next;
  if (!c->queue_head) c->queue_tail = nullptr;
  op->next = nullptr;
  op->result = std::move(st);
  op->finished = true;
  if (MPI_Request r = op->req) {
    r->done = true;
    r->error = op->result ? MPI_SUCCESS : class_of(op->result);
  }
}

class Engine final : public Poller {
 public:
  bool poll() override {
    bool moved = false;
    requests_progress();
    MPI_Comm* at = &g_active;
    while (MPI_Comm c = *at) {
      moved |= engine_progress(c);
      if (c->queue_head) {
        at = &c->next_active;
      } else {
        *at = c->next_active;
        c->on_active = false;
        c->next_active = nullptr;
      }
    }
    return moved;
  }
};
Engine g_engine;
bool g_engine_on = false;

// A collective waits a quarter longer than the library's own deadline, so
// the operation's timeout (which names what it waited for) fires first.
uint64_t coll_wait_ns() { return rt().timeout_ns() + rt().timeout_ns() / 4; }

}  // namespace

void engine_start() {
  if (g_engine_on) return;
  rt().loop().add_poller(&g_engine);
  g_engine_on = true;
}

void engine_stop() {
  if (!g_engine_on) return;
  rt().loop().remove_poller(&g_engine);
  g_engine_on = false;
  g_active = nullptr;
}

bool engine_progress(MPI_Comm c) {
  bool moved = false;
  while (CollOp* op = c->queue_head) {
    if (!op->started) {
      if (c->coll->in_flight()) break;
      op->started = true;
      moved = true;
      if (Status st = op->start(c); !st) {
        finish_op(c, op, st);
        continue;
      }
    }
    Status st;
    if (c->coll->in_flight() || !c->coll->test(&st)) break;
    moved = true;
    Status r = op->done(c, st);
    if (r.code() == Code::kBusy) continue;  // another round started
    finish_op(c, op, std::move(r));
  }
  return moved;
}

Status run_blocking(MPI_Comm c, CollOp& op) {
  if (!c->queue_head && !c->coll->in_flight()) {
    // Nothing queued: run it here, round by round.
    op.started = true;
    Status st = op.start(c);
    for (;;) {
      if (!st) return st;
      Status w = c->coll->loop().run_until([&] { return !c->coll->in_flight(); }, coll_wait_ns(), op.name);
      if (!w) return w;
      Status res;
      (void)c->coll->test(&res);
      Status d = op.done(c, res);
      if (d.code() != Code::kBusy) return d;
      st = Status::ok();
    }
  }
  op.next = nullptr;
  if (c->queue_tail) c->queue_tail->next = &op;
  else c->queue_head = &op;
  c->queue_tail = &op;
  activate(c);
  Status w = rt().loop().run_until([&] { return op.finished; }, coll_wait_ns(), op.name);
  if (!w) return w;
  return op.result;
}

MPI_Request run_nonblocking(MPI_Comm c, CollOp* op) {
  MPI_Request r = request_new(ReqKind::kColl, c);
  r->coll = op;
  op->req = r;
  op->next = nullptr;
  if (c->queue_tail) c->queue_tail->next = op;
  else c->queue_head = op;
  c->queue_tail = op;
  activate(c);
  engine_progress(c);  // start it now if the communicator is idle
  return r;
}

void coll_request_free(MPI_Request r) {
  delete r->coll;
  r->coll = nullptr;
}

}  // namespace toroid::mpi
