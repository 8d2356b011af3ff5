#include "firmware/topology_gen.h"

#include <cstdio>

namespace toroid {

std::string cable_label(const Coord& c, Dir plus) {
  char b[48];
  snprintf(b, sizeof b, "t%u.%u.%u%c", c.c[0], c.c[1], c.c[2], "xyz"[dir_dim(plus)]);
  return b;
}

std::string cable_iface(const Coord& c, Dir plus, bool plus_end) { return cable_label(c, plus) + (plus_end ? "+" : "-"); }

std::string cable_socket_file(const std::string& socket_dir, const Coord& c, Dir plus) {
  char b[48];
  snprintf(b, sizeof b, "%u-%u-%u%c.sock", c.c[0], c.c[1], c.c[2], "xyz"[dir_dim(plus)]);
  return socket_dir + "/" + b;
}

Result<Topology> generate_topology(const TopoGenOptions& o) {
  const bool ether = o.driver == "af_xdp" || o.driver == "af_packet" || o.driver == "pci";
  const bool sockets = o.driver == "memif" || o.driver == "uring";
  if (!ether && !sockets)
    return error(Code::kInvalid, "topology: unknown driver '%s' (memif, uring, af_xdp, af_packet, pci)",
                 o.driver.c_str());
  const uint32_t n = o.dims.nodes();
  if (o.hosts.size() != 1 && o.hosts.size() != n)
    return error(Code::kInvalid, "topology: %zu hosts for %u ranks (give one host for all, or one per rank)",
                 o.hosts.size(), n);
  if (sockets && o.socket_dir.empty())
    return error(Code::kInvalid, "topology: %s links need a socket directory", o.driver.c_str());
  if (sockets && o.hosts.size() > 1) {
    for (const auto& h : o.hosts)
      if (h != o.hosts[0])
        return error(Code::kInvalid, "topology: %s links join processes of one host, but the hosts differ (%s, %s)",
                     o.driver.c_str(), o.hosts[0].c_str(), h.c_str());
  }
  if (o.driver == "pci" && o.nics.empty())
    return error(Code::kInvalid, "topology: pci needs the PCI address of each direction's NIC (--nic x+=0000:3b:00.0)");
  Topology t;
  t.source = "generated";
  t.partition = o.partition;
  t.dims = o.dims;
  t.has_dims = true;
  t.job = o.job;
  t.seed = o.seed;
  t.job_args = o.job_args;
  for (uint32_t r = 0; r < n; ++r) {
    TopoNode node;
    node.rank = r;
    node.coord = coord_of(r, o.dims);
    node.host = o.hosts.size() == 1 ? o.hosts[0] : o.hosts[r];
    for (int d = 0; d < kNumDirs; ++d) {
      const Dir dir = static_cast<Dir>(d);
      if (!has_link(dir, o.dims)) continue;
      const bool plus = dir_plus(dir);
      // The cable is named by its plus end.
      const Coord pc = plus ? node.coord : neighbour(node.coord, dir, o.dims);
      const Dir pd = plus ? dir : opposite(dir);
      PortSpec ps;
      ps.dir = dir;
      ps.driver = o.driver;
      ps.mtu = o.mtu;
      ps.cable = cable_label(pc, pd);
      if (sockets) {
        const std::string sock = cable_socket_file(o.socket_dir, pc, pd);
        const char* role = plus ? "server" : "client";
        if (o.driver == "memif") {
          ps.address = std::string("role=") + role + ",socket=" + sock + ",id=0";
          if (o.memif_bsize) ps.address += ",bsize=" + std::to_string(o.memif_bsize);
        } else {
          ps.address = "path=" + sock + ",role=" + role;
        }
      } else {
        auto it = o.nics.find(dir);
        if (!o.nics.empty() && it == o.nics.end())
          return error(Code::kInvalid, "topology: no NIC given for direction %s", dir_name(dir));
        const std::string nic = it != o.nics.end() ? it->second : cable_iface(pc, pd, plus);
        if (o.driver == "pci") {
          ps.address = nic;
        } else {
          ps.address = "iface=" + nic;
          if (o.driver == "af_xdp") ps.address += ",queue=" + std::to_string(o.queue);
        }
        // Real NICs are labelled by the site; the veth names are the cables.
        if (!o.nics.empty()) ps.cable.clear();
      }
      node.ports.push_back(ps);
    }
    t.nodes.push_back(std::move(node));
  }
  return t;
}

}  // namespace toroid
