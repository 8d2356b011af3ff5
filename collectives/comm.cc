#include "collectives/comm.h"

#include <algorithm>

namespace toroid {

const CounterField kCollCountersFields[] = {
    TOROID_COUNTER(CollCounters, rx_packets),   TOROID_COUNTER(CollCounters, rx_stale),
    TOROID_COUNTER(CollCounters, rx_malformed), TOROID_COUNTER(CollCounters, tx_blocked),
    TOROID_COUNTER(CollCounters, ops_started),  TOROID_COUNTER(CollCounters, ops_ok),
    TOROID_COUNTER(CollCounters, ops_failed),   TOROID_COUNTER(CollCounters, max_incoming_per_step),
};
const int kCollCountersFieldCount = sizeof(kCollCountersFields) / sizeof(kCollCountersFields[0]);

const char* allreduce_algo_name(AllreduceAlgo a) {
  return a == AllreduceAlgo::kTorusTree ? "torus-tree" : "torus-ring";
}

Comm::Comm(NetStack& net, EventLoop& loop, const Logger& log, uint16_t context, uint64_t timeout_ns)
    : net_(net), loop_(loop), log_(log), context_(context), timeout_ns_(timeout_ns) {
  deadline_.set_callback(&Comm::on_timeout, this);
  inbox_.resize(net.port_count());
}

Comm::~Comm() {
  ring_.abort();
  for (auto& box : inbox_) {
    while (box.head) {
      Packet* p = box.head;
      box.head = p->next;
      p->free();
    }
  }
}

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
  ring_.abort();
  ttree_.abort();
  finish(error(why.code(), "%s (operation %u): %s", what_, tag_, why.message().c_str()));
}

Status Comm::begin(const char* what) {
  if (!link_down_.is_ok()) return error(link_down_.code(), "%s: %s", what, link_down_.message().c_str());
  if (active_) return error(Code::kBusy, "%s: operation %u (%s) is still in flight", what, tag_, what_);
  ++tag_;
  active_ = true;
  finished_ = false;
  what_ = what;
  result_ = Status::ok();
  ++ctr_.ops_started;
  loop_.timers().arm(deadline_, loop_.now() + timeout_ns_);
  return Status::ok();
}

Status Comm::start_allreduce_sum_i64(int64_t* data, uint32_t count, AllreduceAlgo algo) {
  Status st = begin("allreduce");
  if (!st) return st;
  algo_ = algo;
  if (algo == AllreduceAlgo::kTorusTree) ttree_.start(this, tree_, tree_class_, data, count);
  else ring_.start(this, data, count);
  return Status::ok();
}

Status Comm::start_barrier() {
  Status st = begin("barrier");
  if (!st) return st;
  algo_ = AllreduceAlgo::kTorusRing;
  ring_.start(this, nullptr, 0);
  return Status::ok();
}

void Comm::finish(Status st) {
  loop_.timers().cancel(deadline_);
  active_ = false;
  finished_ = true;
  if (st) ++ctr_.ops_ok;
  else ++ctr_.ops_failed;
  result_ = std::move(st);
}

bool Comm::test(Status* result) {
  if (!finished_) return false;
  *result = result_;
  return true;
}

bool Comm::poll() {
  if (!active_) return false;
  if (algo_ == AllreduceAlgo::kTorusTree) {
    const bool moved = ttree_.progress();
    ctr_.max_incoming_per_step = std::max<uint64_t>(ctr_.max_incoming_per_step, ttree_.max_incoming());
    if (ttree_.done()) finish(ttree_.status());
    return moved;
  }
  const bool moved = ring_.progress();
  if (ring_.done()) finish(ring_.status());
  return moved;
}

void Comm::on_timeout(void* self) {
  auto* c = static_cast<Comm*>(self);
  if (!c->active_) return;
  char dur[32];
  std::string waiting =
      c->algo_ == AllreduceAlgo::kTorusTree ? c->ttree_.waiting_for() : c->ring_.waiting_for();
  c->ring_.abort();
  c->ttree_.abort();
  c->finish(error(Code::kTimeout, "%s (operation %u) did not finish within %s; waiting for %s", c->what_, c->tag_,
                  format_duration(c->timeout_ns_, dur, sizeof dur), waiting.c_str()));
}

}  // namespace toroid
