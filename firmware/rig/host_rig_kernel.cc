// The host rig on kernel NICs (--driver af_xdp | af_packet): a deployment in
// miniature on one machine. Each node gets its own network namespace, each
// torus cable a veth pair named after it, and every node boots the way a
// deployed node does: `toroid-node --topology FILE --rank R`, from the
// partition's topology file, which the rig writes into the run directory.
// The namespaces and veths are removed by name when the rig ends, also
// after a failure (cleanup_files).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "firmware/rig/host_rig.h"
#include "firmware/topology_gen.h"

namespace toroid::rig {

int HostRig::setup_kernel() {
  const std::string why = KernelLinks::missing(opt_.driver == "af_xdp");
  if (!why.empty()) {
    fprintf(stderr, "toroid-rig: --driver %s cannot run here: %s\n", opt_.driver.c_str(), why.c_str());
    return 2;
  }
  for (const auto& s : opt_.swaps) {
    if (!has_link(s.a, opt_.dims) || !has_link(s.b, opt_.dims) || s.a == s.b) {
      fprintf(stderr, "toroid-rig: --swap-veths %s:%s,%s: two different directions with links\n",
              s.node.to_string().c_str(), dir_name(s.a), dir_name(s.b));
      return 2;
    }
  }
  TopoGenOptions g;
  g.dims = opt_.dims;
  g.partition = "rig-" + std::to_string(getpid());
  g.driver = opt_.driver;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  g.hosts = {host};
  g.job = opt_.job;
  g.seed = opt_.seed;
  g.job_args = opt_.job_args;
  auto topo = generate_topology(g);
  if (!topo) {
    fprintf(stderr, "toroid-rig: %s\n", topo.status().message().c_str());
    return 2;
  }
  topology_file_ = run_dir_ + "/topology";
  FILE* f = fopen(topology_file_.c_str(), "w");
  const std::string text = topology_text(topo.value(), "toroid topology (written by toroid-rig; docs/deploy.md)");
  if (!f || fwrite(text.data(), 1, text.size(), f) != text.size()) {
    fprintf(stderr, "toroid-rig: cannot write %s: %s\n", topology_file_.c_str(), std::strerror(errno));
    if (f) fclose(f);
    return 2;
  }
  fclose(f);
  auto links = KernelLinks::create(opt_.dims, opt_.swaps, [this](const std::string& s) { say("%s", s.c_str()); });
  if (!links) {
    fprintf(stderr, "toroid-rig: setting up the namespaces and veths failed (what was made is removed): %s\n",
            links.status().message().c_str());
    return 2;
  }
  links_ = std::move(links.value());
  say("rig: %zu network namespaces (toroid-%d-X-Y-Z), %zu veth pairs named after their cables (tX.Y.Zd+ / "
      "tX.Y.Zd-); nodes boot from %s",
      links_->namespaces(), static_cast<int>(getpid()), links_->veth_pairs(), topology_file_.c_str());
  for (uint32_t r = 0; r < opt_.dims.nodes(); ++r) add_node(coord_of(r, opt_.dims));
  return 0;
}

}  // namespace toroid::rig
