#include "firmware/topology_check.h"

#include <cstdio>
#include <map>
#include <set>

#include "firmware/host_port_factory.h"

namespace toroid {

namespace {

// What a port's frames travel on: the two ends of a cable must agree.
enum class Medium { kEthernet, kMemif, kUnixSocket, kNone };

Medium medium_of(const PortSpec& ps) {
  if (ps.driver == "af_xdp" || ps.driver == "af_packet" || ps.driver == "pci") return Medium::kEthernet;
  if (ps.driver == "memif") return Medium::kMemif;
  if (ps.driver == "uring") {
    if (!address_field(ps.address, "iface").empty()) return Medium::kEthernet;
    if (!address_field(ps.address, "path").empty()) return Medium::kUnixSocket;
  }
  return Medium::kNone;
}

const char* medium_name(Medium m) {
  switch (m) {
    case Medium::kEthernet:
      return "an Ethernet link";
    case Medium::kMemif:
      return "a memif link";
    case Medium::kUnixSocket:
      return "a unix-socket link";
    case Medium::kNone:
      break;
  }
  return "no link";
}

std::string end_name(const TopoNode& n, Dir d) { return n.coord.to_string() + " " + dir_name(d); }

// The resource a port takes on its host, for the "used twice" check.
std::string resource_of(const PortSpec& ps) {
  if (ps.driver == "pci") return "PCI device " + ps.address;
  const std::string iface = address_field(ps.address, "iface");
  if (!iface.empty()) {
    // AF_XDP binds one queue; af_packet and a uring packet socket take the
    // whole interface (they see every queue's frames).
    if (ps.driver == "af_xdp") {
      const std::string q = address_field(ps.address, "queue");
      return "interface " + iface + " queue " + (q.empty() ? "0" : q);
    }
    return "interface " + iface;
  }
  std::string sock = address_field(ps.address, "socket");
  if (sock.empty()) sock = address_field(ps.address, "path");
  if (!sock.empty()) return "socket " + sock + " as " + address_field(ps.address, "role");
  return "";
}

// Both ends of one cable: a is the node on the plus side (its port along
// d), b the neighbour (its port along the opposite direction).
void check_cable(const TopoNode& a, const PortSpec& pa, const TopoNode& b, const PortSpec& pb,
                 std::vector<std::string>* out) {
  const std::string cable = "cable " + end_name(a, pa.dir) + " <-> " + end_name(b, pb.dir);
  auto bad = [&](const std::string& why) { out->push_back(cable + ": " + why); };
  const Medium ma = medium_of(pa), mb = medium_of(pb);
  if (ma != mb) {
    bad("the ends disagree: " + end_name(a, pa.dir) + " is " + pa.driver + " (" + medium_name(ma) + "), " +
        end_name(b, pb.dir) + " is " + pb.driver + " (" + medium_name(mb) + ")");
    return;
  }
  if (ma == Medium::kMemif || ma == Medium::kUnixSocket) {
    const char* key = ma == Medium::kMemif ? "socket" : "path";
    const std::string sa = address_field(pa.address, key), sb = address_field(pb.address, key);
    if (a.host != b.host)
      bad(std::string(ma == Medium::kMemif ? "memif" : "a unix socket") + " joins processes of one host, but " +
          end_name(a, pa.dir) + " is on " + a.host + " and " + end_name(b, pb.dir) + " on " + b.host);
    if (sa != sb) bad("the ends name different sockets: " + sa + " and " + sb);
    const std::string ra = address_field(pa.address, "role"), rb = address_field(pb.address, "role");
    if (ra == rb) bad("both ends are " + (ra.empty() ? std::string("without a role") : ra + "s") +
                      " (one must be role=server, the other role=client)");
    if (ma == Medium::kMemif) {
      if (address_field(pa.address, "id") != address_field(pb.address, "id"))
        bad("the ends name different memif ids: " + address_field(pa.address, "id") + " and " +
            address_field(pb.address, "id"));
      if (address_field(pa.address, "bsize") != address_field(pb.address, "bsize"))
        bad("the ends name different memif bsize: '" + address_field(pa.address, "bsize") + "' and '" +
            address_field(pb.address, "bsize") + "'");
    }
  }
  if (pa.cable != pb.cable)
    bad("the ends carry different cable labels: '" + pa.cable + "' at " + end_name(a, pa.dir) + ", '" + pb.cable +
        "' at " + end_name(b, pb.dir));
  if (pa.mtu != pb.mtu) {
    auto m = [](uint32_t v) { return v ? std::to_string(v) : std::string("(not given)"); };
    bad("the ends name different MTUs: " + m(pa.mtu) + " at " + end_name(a, pa.dir) + ", " + m(pb.mtu) + " at " +
        end_name(b, pb.dir));
  }
}

}  // namespace

std::vector<std::string> check_topology(const Topology& t) {
  std::vector<std::string> out;
  const uint32_t want = t.dims.nodes();
  const std::string where = t.source + ": ";
  // Ranks and coordinates: each exactly once.
  std::map<uint32_t, const TopoNode*> ranks;
  std::map<uint32_t, const TopoNode*> coords;  // by linear rank of the coordinate
  for (const auto& n : t.nodes) {
    if (n.rank >= want)
      out.push_back(where + "line " + std::to_string(n.line) + ": rank " + std::to_string(n.rank) +
                    " is out of range (dims " + t.dims.to_string() + " have ranks 0.." + std::to_string(want - 1) +
                    ")");
    else if (auto [it, fresh] = ranks.emplace(n.rank, &n); !fresh)
      out.push_back(where + "line " + std::to_string(n.line) + ": rank " + std::to_string(n.rank) +
                    " appears twice (also on line " + std::to_string(it->second->line) + ")");
    if (auto [it, fresh] = coords.emplace(rank_of(n.coord, t.dims), &n); !fresh)
      out.push_back(where + "line " + std::to_string(n.line) + ": duplicate coordinate " + n.coord.to_string() +
                    ": node " + std::to_string(n.rank) + " has it, and node " + std::to_string(it->second->rank) +
                    " (line " + std::to_string(it->second->line) + ") has it already");
    for (char ch : n.host) {
      if (ch == ',' || ch == '/' || ch == '=') {
        out.push_back(where + "line " + std::to_string(n.line) + ": host '" + n.host + "' holds '" + ch + "'");
        break;
      }
    }
  }
  // Missing coordinates and ranks: the first few by name, then how many
  // more (a file whose dims promise millions of nodes it does not list
  // gets a few lines, not millions).
  constexpr uint32_t kListed = 16;
  if (t.nodes.size() < want)
    out.push_back(where + "dims " + t.dims.to_string() + " make " + std::to_string(want) + " nodes; the file lists " +
                  std::to_string(t.nodes.size()));
  uint32_t missing = 0;
  for (uint32_t r = 0; r < want && coords.size() < want; ++r) {
    if (coords.count(r)) continue;
    if (missing++ < kListed) out.push_back(where + "no node has coordinate " + coord_of(r, t.dims).to_string());
  }
  if (missing > kListed) out.push_back(where + "... and " + std::to_string(missing - kListed) + " more coordinates");
  missing = 0;
  for (uint32_t r = 0; r < want && ranks.size() < want; ++r) {
    if (ranks.count(r)) continue;
    if (missing++ < kListed) out.push_back(where + "no node has rank " + std::to_string(r));
  }
  if (missing > kListed) out.push_back(where + "... and " + std::to_string(missing - kListed) + " more ranks");
  if (!out.empty()) return out;  // the cable checks need one node per coordinate

  // Each node as a personality: ports per direction, drivers, addresses.
  bool ports_ok = true;
  for (const auto& n : t.nodes) {
    auto p = personality_for_rank(t, n.rank);
    // The job may come from the node's command line instead.
    if (p && p->job.empty()) p->job = "(given at launch)";
    Status st = p ? validate(p.value()) : p.status();
    if (st) st = check_host_ports(p.value());
    for (const auto& ps : n.ports) {
      if (st && medium_of(ps) == Medium::kNone)
        st = error(Code::kInvalid, "port %s: driver %s %s cannot be named in a topology (memif, af_xdp, af_packet, "
                   "pci, uring path= or iface=)", dir_name(ps.dir), ps.driver.c_str(), ps.address.c_str());
    }
    if (!st) {
      out.push_back(where + "node " + std::to_string(n.rank) + " (" + n.coord.to_string() + ", line " +
                    std::to_string(n.line) + "): " + st.message());
      ports_ok = false;
    }
  }
  if (!ports_ok) return out;

  // Every cable once, from its plus end.
  for (const auto& a : t.nodes) {
    for (const auto& pa : a.ports) {
      if (!dir_plus(pa.dir)) continue;
      const TopoNode* b = t.at(neighbour(a.coord, pa.dir, t.dims));
      const PortSpec* pb = t.port_at(b->coord, opposite(pa.dir));
      check_cable(a, pa, *b, *pb, &out);
    }
  }
  // A cable label names one cable: exactly two ends.
  std::map<std::string, std::vector<std::string>> labels;
  std::map<std::string, std::string> used;  // host + resource -> end
  for (const auto& n : t.nodes) {
    for (const auto& ps : n.ports) {
      if (!ps.cable.empty()) labels[ps.cable].push_back(end_name(n, ps.dir));
      const std::string res = resource_of(ps);
      if (res.empty()) continue;
      auto [it, fresh] = used.emplace(n.host + "\n" + res, end_name(n, ps.dir));
      if (!fresh)
        out.push_back("host " + n.host + ": " + res + " is named by both " + it->second + " and " +
                      end_name(n, ps.dir));
    }
  }
  for (const auto& [label, ends] : labels) {
    if (ends.size() <= 2) continue;
    std::string all;
    for (const auto& e : ends) all += (all.empty() ? "" : ", ") + e;
    out.push_back("cable label " + label + " is on " + std::to_string(ends.size()) + " ports (" + all +
                  "); a cable has two ends");
  }
  return out;
}

std::string cabling_plan(const Topology& t) {
  char line[512];
  std::string s;
  uint32_t ncables = 0;
  for (const auto& n : t.nodes)
    for (const auto& p : n.ports) ncables += dir_plus(p.dir);
  const auto hosts = t.hosts();
  snprintf(line, sizeof line, "partition %s: %s torus, %zu nodes on %zu host%s, %u cables\n", t.partition.c_str(),
           t.dims.to_string().c_str(), t.nodes.size(), hosts.size(), hosts.size() == 1 ? "" : "s", ncables);
  s += line;
  s += "\nplacement:\n";
  for (const auto& h : hosts) {
    std::string ranks;
    for (const auto& n : t.nodes)
      if (n.host == h) ranks += (ranks.empty() ? "" : ", ") + std::to_string(n.rank) + " (" + n.coord.to_string() + ")";
    snprintf(line, sizeof line, "  %-16s rank %s\n", h.c_str(), ranks.c_str());
    s += line;
  }
  s += "\ncables:\n";
  snprintf(line, sizeof line, "  %-12s %-8s %-12s %-24s    %-8s %-12s %-24s %s\n", "label", "from", "host", "port",
           "to", "host", "port", "mtu");
  s += line;
  for (const auto& a : t.nodes) {
    for (const auto& pa : a.ports) {
      if (!dir_plus(pa.dir)) continue;
      const TopoNode* b = t.at(neighbour(a.coord, pa.dir, t.dims));
      const PortSpec* pb = b ? t.port_at(b->coord, opposite(pa.dir)) : nullptr;
      if (!b || !pb) continue;
      const std::string from = a.coord.to_string() + " " + dir_name(pa.dir);
      const std::string to = b->coord.to_string() + " " + dir_name(pb->dir);
      snprintf(line, sizeof line, "  %-12s %-8s %-12s %-24s -- %-8s %-12s %-24s %s\n",
               pa.cable.empty() ? "-" : pa.cable.c_str(), from.c_str(), a.host.c_str(),
               (pa.driver + " " + short_address(pa)).c_str(), to.c_str(), b->host.c_str(),
               (pb->driver + " " + short_address(*pb)).c_str(), pa.mtu ? std::to_string(pa.mtu).c_str() : "nic");
      s += line;
    }
  }
  return s;
}

}  // namespace toroid
