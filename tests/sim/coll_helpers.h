// Helpers for sim-rig tests of collectives: boot a partition (job "train":
// link training only), then start operations on every node's communicator
// and step the fabric in slices of virtual time until all have finished.
#pragma once
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/comm.h"
#include "tests/sim/sim_helpers.h"

namespace toroid::test {

// A booted rig, or nullptr (with *why) if it did not build or a node did not
// train. (This header cannot use the CppUTest macros: they must be included
// after every other header.)
inline std::unique_ptr<SimRig> booted_rig(const std::string& dims, const std::string& faults = "",
                                          uint64_t seed = 1, std::string* why = nullptr) {
  auto rig = std::make_unique<SimRig>(options(dims, "train", seed, faults));
  Status st = rig->build();
  if (!st) {
    if (why) *why = st.to_string();
    return nullptr;
  }
  const SimSummary s = rig->run();
  if (s.passed != rig->node_count()) {
    if (why) *why = s.first_error;
    return nullptr;
  }
  return rig;
}

// Steps the fabric until done() or `limit_ns` of virtual time passed; true if done.
inline bool drive_until(SimRig& rig, const std::function<bool()>& done, uint64_t limit_ns = 2 * kSec) {
  const uint64_t end = rig.fabric().now() + limit_ns;
  while (!done()) {
    if (rig.fabric().now() >= end) return false;
    const uint64_t slice = std::min(end, rig.fabric().now() + 50 * kUs);
    for (uint32_t r = 0; r < rig.node_count(); ++r) rig.fabric().wake(r, rig.fabric().now());
    rig.fabric().run(slice);
    rig.fabric().clock().set(slice);  // time passes even when every node is idle
  }
  return true;
}

// Drives the rig until no node's world communicator has an operation in
// flight; "" if then every node's last operation succeeded, else what failed.
inline std::string finish_world(SimRig& rig) {
  auto none = [&] {
    for (uint32_t r = 0; r < rig.node_count(); ++r)
      if (rig.node(r).comm().in_flight()) return false;
    return true;
  };
  if (!drive_until(rig, none)) return "operations still in flight after 2 s";
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    Status st;
    if (!rig.node(r).comm().test(&st)) return "rank " + std::to_string(r) + ": nothing finished";
    if (!st) return "rank " + std::to_string(r) + ": " + st.to_string();
  }
  return "";
}

// Runs one collective on each communicator in `comms` (index = the node's
// rank in them is whatever the comm says): args_of(i) gives comms[i]'s
// arguments. Returns every communicator's final status ("did not finish"
// errors for those that did not within limit_ns).
inline std::vector<Status> run_coll(SimRig& rig, const std::vector<Comm*>& comms,
                                    const std::function<CollArgs(size_t)>& args_of, const std::string& algo = "",
                                    uint64_t limit_ns = 2 * kSec) {
  std::vector<Status> out(comms.size());
  std::vector<bool> started(comms.size(), false);
  for (size_t i = 0; i < comms.size(); ++i) {
    out[i] = comms[i]->start(args_of(i), algo);
    started[i] = out[i].is_ok();
  }
  auto all_done = [&] {
    for (size_t i = 0; i < comms.size(); ++i) {
      Status st;
      if (started[i] && !comms[i]->test(&st)) return false;
    }
    return true;
  };
  drive_until(rig, all_done, limit_ns);
  for (size_t i = 0; i < comms.size(); ++i) {
    if (!started[i]) continue;
    Status st;
    out[i] = comms[i]->test(&st) ? st : error(Code::kTimeout, "operation did not finish in the test's time");
  }
  return out;
}

// Agrees a context id among comms (one per node, the same communicator):
// the collective agreement driven on the sim rig. Returns each node's id
// (0 where it failed or did not finish within limit_ns).
inline std::vector<uint16_t> agree_contexts(SimRig& rig, const std::vector<Comm*>& comms, uint64_t limit_ns = 2 * kSec) {
  std::vector<uint16_t> ids(comms.size(), 0);
  std::vector<bool> done(comms.size(), false);
  for (size_t i = 0; i < comms.size(); ++i) done[i] = !comms[i]->start_agree().is_ok();
  drive_until(rig, [&] {
    bool all = true;
    for (size_t i = 0; i < comms.size(); ++i) {
      if (done[i]) continue;
      Status st;
      if (comms[i]->test(&st) && !comms[i]->in_flight()) {
        uint16_t id = 0;
        const Status s = comms[i]->agree_step(&id);
        if (s.is_ok()) ids[i] = id;
        done[i] = s.code() != Code::kBusy;
      }
      all &= done[i];
    }
    return all;
  }, limit_ns);
  return ids;
}

// Every node's world communicator.
inline std::vector<Comm*> world_comms(SimRig& rig) {
  std::vector<Comm*> v;
  for (uint32_t r = 0; r < rig.node_count(); ++r) v.push_back(&rig.node(r).comm());
  return v;
}

}  // namespace toroid::test
