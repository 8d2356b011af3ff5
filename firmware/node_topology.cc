#include "firmware/node_topology.h"

#include <unistd.h>

#include <climits>

#include "firmware/topology_check.h"

namespace toroid {

namespace {

std::string short_name(const std::string& h) { return h.substr(0, h.find('.')); }

}  // namespace

std::string this_host() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

bool is_this_host(const std::string& topo_host, const std::string& me) {
  return topo_host == me || short_name(topo_host) == short_name(me);
}

Result<TopologyLaunch> load_topology_launch(const std::string& file, int64_t rank, bool any_host,
                                            const std::vector<std::string>& overrides) {
  auto tr = parse_topology_file(file);
  if (!tr) return tr.status();
  auto topo = std::make_shared<Topology>(std::move(tr.value()));
  const auto problems = check_topology(*topo);
  if (!problems.empty()) {
    std::string msg = "topology " + file + " is refused (" + std::to_string(problems.size()) + " problem" +
                      (problems.size() == 1 ? "" : "s") + "):";
    for (const auto& p : problems) msg += "\n  " + p;
    return Status(Code::kInvalid, msg);
  }
  auto lr = launch_rank(rank);
  if (!lr) return error(lr.status().code(), "topology %s: %s", file.c_str(), lr.status().message().c_str());
  TopologyLaunch out;
  out.topo = topo;
  out.rank = lr.value();
  const uint32_t nodes = static_cast<uint32_t>(topo->nodes.size());
  if (out.rank.size >= 0 && out.rank.size != static_cast<int64_t>(nodes))
    return error(Code::kInvalid,
                 "topology %s has %u nodes, but the job has %lld tasks (%s): start one task per node (srun -n %u)",
                 file.c_str(), nodes, static_cast<long long>(out.rank.size), out.rank.source.c_str(), nodes);
  if (out.rank.rank >= nodes)
    return error(Code::kOutOfRange, "topology %s: rank %u (from %s) is out of range: the topology has ranks 0..%u",
                 file.c_str(), out.rank.rank, out.rank.source.c_str(), nodes - 1);
  const TopoNode* me = topo->by_rank(out.rank.rank);
  out.host = this_host();
  if (!any_host && !is_this_host(me->host, out.host))
    return error(Code::kInvalid,
                 "topology %s places rank %u (%s) on host %s, but this is %s: start it there (srun --nodelist), "
                 "or give --any-host",
                 file.c_str(), out.rank.rank, me->coord.to_string().c_str(), me->host.c_str(), out.host.c_str());
  out.ranks_on_host = topo->ranks_on(me->host);
  auto p = personality_for_rank(*topo, out.rank.rank);
  if (!p) return p.status();
  auto pp = parse_personality_args(overrides, personality_text(p.value(), "rank " + std::to_string(out.rank.rank) +
                                                                              " of topology " + file));
  if (!pp) return pp.status();
  out.personality = std::move(pp.value());
  return out;
}

}  // namespace toroid
