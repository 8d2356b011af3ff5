// The deploy-like rig's network: one network namespace per node, so each
// node process sees only its own interfaces, and one veth pair per torus
// cable, named after it (cable t1.0.1x: end "t1.0.1x+" in node 1,0,1's
// namespace on its x+ port, end "t1.0.1x-" in the neighbour's on its x-
// port; topology_gen.h). To a node these are kernel NICs: it reaches them
// through DPDK's AF_XDP PMD (or af_packet), exactly as on a real machine.
//
// Everything is created with `ip` and removed by name: the veth pairs, then
// the namespaces, also when a step fails half way. A namespace is called
// toroid-<rig pid>-X-Y-Z, so a rig that was killed before it could clean up
// leaves names the next rig recognises (their pid is gone) and removes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/torus.h"

namespace toroid::rig {

struct VethSwap {  // exchange the two veth ends at one node: a miscabled machine
  Coord node;
  Dir a = Dir::kXp, b = Dir::kXm;
};

class KernelLinks {
 public:
  // say: progress and cleanup lines for the rig's output.
  static Result<std::unique_ptr<KernelLinks>> create(const Dims& dims, const std::vector<VethSwap>& swaps,
                                                     std::function<void(const std::string&)> say);
  ~KernelLinks();
  KernelLinks(const KernelLinks&) = delete;
  KernelLinks& operator=(const KernelLinks&) = delete;

  // The namespace node c runs in.
  const std::string& netns(const Coord& c) const;
  // Removes every veth pair and namespace this rig created, by name.
  // Idempotent; failures are reported through say and counted.
  void remove();
  size_t veth_pairs() const { return cables_.size(); }
  size_t namespaces() const { return ns_.size(); }

  // "" when this machine can run the rig, else why not (not root, no `ip`,
  // no network namespaces or veth). `xdp`: also AF_XDP sockets and DPDK's
  // AF_XDP PMD.
  static std::string missing(bool xdp);
  // Namespaces of rigs whose process is gone: removed, by name.
  static void remove_stale(const std::function<void(const std::string&)>& say);
  static const char* ip_path();

 private:
  KernelLinks() = default;
  Status ip(const std::vector<std::string>& args);

  Dims dims_;
  std::vector<std::string> ns_;  // by rank
  struct CableNames {
    std::string ns_plus, if_plus;  // where each end lives
    std::string ns_minus, if_minus;
  };
  std::vector<CableNames> cables_;
  std::function<void(const std::string&)> say_;
  bool removed_ = false;
};

}  // namespace toroid::rig
