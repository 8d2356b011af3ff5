#include "collectives/algos/tree/barrier_network.h"

#include <cstdio>

#include "collectives/comm.h"
#include "netstack/tree/barrier.h"

namespace toroid {

std::string barrier_network_applicable(const CommInfo& comm, const CollArgs& args) {
  (void)args;
  if (!comm.has_barrier) return "needs the barrier network (no barrier channel spans this communicator)";
  return "";
}

Status BarrierNetworkBarrier::start(Comm& comm, const CollArgs& args) {
  (void)args;
  reset();
  net_ = comm.barrier_net();
  channel_ = comm.barrier_channel();
  if (!net_) return error(Code::kUnsupported, "barrier barrier-network: no barrier network spans this communicator");
  if (entered_) {  // an earlier barrier was abandoned: consume its completion if it came
    Status old;
    if (!net_->test(channel_, &old)) {
      return error(Code::kBusy, "barrier barrier-network: channel %d is still in epoch %u of an abandoned barrier",
                   channel_, net_->epoch(channel_));
    }
    entered_ = false;
  }
  epoch_ = net_->epoch(channel_);
  Status st = net_->enter(channel_, BarrierMode::kAnd);
  if (!st) {
    done_ = true;
    return error(st.code(), "barrier barrier-network: %s", st.message().c_str());
  }
  entered_ = true;
  progress();
  return Status::ok();
}

bool BarrierNetworkBarrier::progress() {
  if (done_) return false;
  Status st;
  if (!net_->test(channel_, &st)) return false;
  entered_ = false;
  if (!st) st = error(st.code(), "barrier barrier-network: %s", st.message().c_str());
  finish(std::move(st));
  return true;
}

void BarrierNetworkBarrier::abort() { done_ = true; }

std::string BarrierNetworkBarrier::waiting_for() const {
  char buf[96];
  snprintf(buf, sizeof buf, "the barrier network (channel %d, epoch %u) to release every node", channel_, epoch_);
  return buf;
}

}  // namespace toroid
