#include "mpi/coll_engine.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

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

constexpr uint32_t kReportTag = 0xfffffff0u;  // a reserved tag: wildcard receives never take it

// (Re)posts c's receive for reports.
void post_report_rr(MPI_Comm c) {
  c->report_rr = RecvReq{};
  c->report_rr.src = kAnySource;
  c->report_rr.context = c->p2p_ctx;
  c->report_rr.tag = kReportTag;
  c->report_rr.buf = c->report_in;
  c->report_rr.cap = sizeof c->report_in;
  c->report_posted = rt().msgr().post(&c->report_rr).is_ok();
}

// Reports for operations a communicator has not started yet (a member that
// failed at once), applied when the operation starts: at most kEarlyReports
// per communicator. Kept here, not in the communicator object, whose size
// programs linked against the library depend on (MPI_COMM_WORLD).
struct EarlyReport {
  uint32_t group;  // the operation's tag group
  int cls;         // MPI error class
  int source;      // reporting rank
  std::string why;
};
constexpr size_t kEarlyReports = 8;
// Never destroyed: a communicator may be freed during the program's exit.
std::unordered_map<MPI_Comm, std::vector<EarlyReport>>& early() {
  static auto* m = new std::unordered_map<MPI_Comm, std::vector<EarlyReport>>();
  return *m;
}

// Fails c's running operation with a member's report on it.
void fail_reported(MPI_Comm c, uint32_t group, int cls, int source, const std::string& why) {
  c->reported_tag = group;
  // The library status keeps MPI's class recognisable (class_of).
  const Code code = cls == MPI_ERR_TRUNCATE ? Code::kOutOfRange : Code::kAborted;
  c->coll->fail_op(error(code, "rank %d reported: %s", source, why.c_str()));
}

// A report that arrived for the operation c is running fails it; one for an
// operation c has not started yet waits for it (apply_early_report); one for
// an operation over here is dropped.
bool take_report(MPI_Comm c) {
  if (!c->report_posted || !c->report_rr.done()) return false;
  const RecvReq& q = c->report_rr;
  const uint64_t n = std::min<uint64_t>(q.length(), sizeof c->report_in);
  bool failed = false;
  if (q.status() && n >= 5) {
    uint32_t tag;
    std::memcpy(&tag, c->report_in + 1, 4);
    const int cls = c->report_in[0];
    const int source = c->group->rank_of(q.source());
    const std::string why(reinterpret_cast<const char*>(c->report_in) + 5, n - 5);
    // Reports name the MPI operation (its tag group): this rank may be in
    // another of its rounds than the reporter.
    const uint32_t mine = Comm::group_of(c->coll->tag());
    if (c->coll->in_flight() && mine == tag) {
      fail_reported(c, tag, cls, source, why);
      failed = true;
    } else if (static_cast<int32_t>(tag - mine) > 0) {
      auto& v = early()[c];
      if (v.size() < kEarlyReports) v.push_back({tag, cls, source, why});
    }
  }
  post_report_rr(c);  // ready for the next report
  return failed;
}

// The operation just started: a report for it that came first fails it now
// (and drops reports for operations already behind this one).
void apply_early_report(MPI_Comm c) {
  auto& all = early();
  if (all.empty()) return;
  auto it = all.find(c);
  if (it == all.end()) return;
  const uint32_t mine = Comm::group_of(c->coll->tag());
  auto& v = it->second;
  for (size_t i = 0; i < v.size();) {
    const int32_t d = static_cast<int32_t>(v[i].group - mine);
    if (d == 0 && c->coll->in_flight()) fail_reported(c, v[i].group, v[i].cls, v[i].source, v[i].why);
    if (d <= 0) v.erase(v.begin() + static_cast<ptrdiff_t>(i));
    else ++i;
  }
  if (v.empty()) all.erase(it);
}

// Our operation failed: tell every other member (unless a report from one
// of them failed it here).
void send_report(MPI_Comm c, const Status& st) {
  // Intercommunicators send none: their library ranks are not their MPI ranks.
  if (!c->coll || c->inter || c->size <= 1) return;
  const uint32_t tag = Comm::group_of(c->coll->tag());
  if (tag == c->reported_tag) return;
  for (uint64_t h : c->report_sends) rt().msgr().cancel(h);  // an older report still leaving
  c->report_sends.clear();
  const std::string why = std::string(g_call) + ": " + st.message();
  c->report_out.assign(5 + std::min<size_t>(why.size(), sizeof c->report_in - 5), 0);
  c->report_out[0] = static_cast<uint8_t>(class_of(st));
  std::memcpy(c->report_out.data() + 1, &tag, 4);
  std::memcpy(c->report_out.data() + 5, why.data(), c->report_out.size() - 5);
  for (int r = 0; r < c->size; ++r) {
    if (r == c->rank) continue;
    auto h = c->coll->post_send(static_cast<uint32_t>(r), true, kReportTag, c->report_out.data(), c->report_out.size());
    if (h) c->report_sends.push_back(*h);
  }
}

void finish_op(MPI_Comm c, CollOp* op, Status st) {
  if (!st) send_report(c, st);
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

// A blocking collective returns to a program that may compute for a long
// time without calling MPI: frames of the finished operation still in this
// rank's transmit queues (a ring's last sends, out of credits) leave first,
// or a neighbour still in the same operation would wait for them. Bounded;
// an operation whose frames all left returns at once.
void drain_after_collective() {
  NetStack& net = rt().world().net();
  if (net.tx_drained()) return;
  (void)rt().loop().run_until([&] { return net.tx_drained(); }, tuning::kTxDrainNs, "transmit queues");
}

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

void reports_arm(MPI_Comm c) {
  if (!c->coll || c->inter || c->size <= 1 || c->report_posted) return;
  post_report_rr(c);
}

void engine_forget(MPI_Comm c) {
  if (!c->on_active) return;
  for (MPI_Comm* at = &g_active; *at; at = &(*at)->next_active)
    if (*at == c) {
      *at = c->next_active;
      break;
    }
  c->on_active = false;
  c->next_active = nullptr;
}

void reports_disarm(MPI_Comm c) {
  early().erase(c);
  if (c->report_posted) rt().msgr().withdraw(&c->report_rr);
  c->report_posted = false;
  // Reports still leaving would read freed memory: let them go.
  for (uint64_t h : c->report_sends) rt().msgr().cancel(h);
  c->report_sends.clear();
  c->report_out.clear();
}

bool engine_progress(MPI_Comm c) {
  bool moved = take_report(c);
  while (CollOp* op = c->queue_head) {
    if (!op->started) {
      if (c->coll->in_flight()) break;
      op->started = true;
      c->coll->begin_group();
      moved = true;
      if (Status st = op->start(c); !st) {
        finish_op(c, op, st);
        continue;
      }
      apply_early_report(c);
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
    c->coll->begin_group();
    Status st = op.start(c);
    if (st) apply_early_report(c);
    else send_report(c, st);  // as a queued operation's failed start does (finish_op)
    for (;;) {
      if (!st) return st;
      Status w = c->coll->loop().run_until(
          [&] { return (c->report_rr.done() && take_report(c)) || !c->coll->in_flight(); }, coll_wait_ns(), op.name);
      if (!w) return w;
      Status res;
      (void)c->coll->test(&res);
      Status d = op.done(c, res);
      if (!d && d.code() != Code::kBusy) send_report(c, d);
      if (d.code() != Code::kBusy) {
        if (d) drain_after_collective();
        return d;
      }
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
  if (op.result) drain_after_collective();
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
