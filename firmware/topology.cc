#include "firmware/topology.h"

#include <algorithm>
#include <sstream>

#include "base/text.h"

namespace toroid {

namespace {

// "host=n01", "coord=0,0,0" on a node line.
bool split_kv(const std::string& w, std::string* k, std::string* v) {
  const auto eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  *k = w.substr(0, eq);
  *v = w.substr(eq + 1);
  return true;
}

}  // namespace

const TopoNode* Topology::by_rank(uint32_t rank) const {
  for (const auto& n : nodes)
    if (n.rank == rank) return &n;
  return nullptr;
}

const TopoNode* Topology::at(const Coord& c) const {
  for (const auto& n : nodes)
    if (n.coord == c) return &n;
  return nullptr;
}

const PortSpec* Topology::port_at(const Coord& c, Dir dir) const {
  const TopoNode* n = at(c);
  if (!n) return nullptr;
  for (const auto& p : n->ports)
    if (p.dir == dir) return &p;
  return nullptr;
}

uint32_t Topology::ranks_on(const std::string& host) const {
  uint32_t k = 0;
  for (const auto& n : nodes) k += n.host == host;
  return k;
}

std::vector<std::string> Topology::hosts() const {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (std::find(out.begin(), out.end(), n.host) == out.end()) out.push_back(n.host);
  return out;
}

Result<Topology> parse_topology_text(const std::string& text, const std::string& source) {
  Topology t;
  t.source = source;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  // Coordinates are read against dims, which may come after the node lines.
  struct PendingCoord {
    size_t node;
    std::string text;
    int line;
  };
  std::vector<PendingCoord> coords;
  auto fail = [&](const char* what, const std::string& detail) {
    return error(Code::kInvalid, "%s line %d: %s%s", source.c_str(), lineno, what, detail.c_str());
  };
  std::string key, value;
  for (int got; (got = next_key_value(in, &lineno, &key, &value, &line)) != 0;) {
    if (got < 0) return fail("expected 'key = value', got ", "'" + line + "'");
    if (key == "partition") {
      if (Status st = check_partition_id(value); !st || value.empty())
        return fail("", value.empty() ? "empty partition id" : st.message());
      t.partition = value;
    } else if (key == "dims") {
      auto d = parse_dims(value);
      if (!d) return fail("", d.status().message());
      t.dims = *d;
      t.has_dims = true;
    } else if (key == "job") {
      if (value.empty()) return fail("empty job", "");
      t.job = value;
    } else if (key == "seed") {
      if (!parse_u64(value, &t.seed)) return fail("seed is not a non-negative integer: ", "'" + value + "'");
    } else if (key == "arg") {
      auto w = words(value);
      if (w.size() != 2) return fail("arg needs 'KEY VALUE'", "");
      t.job_args[w[0]] = w[1];
    } else if (key == "node") {
      auto w = words(value);
      TopoNode n;
      n.line = lineno;
      uint64_t rank = 0;
      if (w.empty() || !parse_u64(w[0], &rank) || rank > 0xffffffu)
        return fail("node needs 'RANK host=NAME coord=X,Y,Z', got ", "'" + value + "'");
      n.rank = static_cast<uint32_t>(rank);
      std::string coord;
      for (size_t i = 1; i < w.size(); ++i) {
        std::string k, v;
        if (!split_kv(w[i], &k, &v)) return fail("node: expected key=value, got ", "'" + w[i] + "'");
        if (k == "host" && !v.empty())
          n.host = v;
        else if (k == "coord" && !v.empty())
          coord = v;
        else
          return fail("node: unknown or empty field ", "'" + w[i] + "' (host=NAME coord=X,Y,Z)");
      }
      if (n.host.empty()) return fail("node ", std::to_string(n.rank) + " has no host=NAME");
      if (coord.empty()) return fail("node ", std::to_string(n.rank) + " has no coord=X,Y,Z");
      coords.push_back({t.nodes.size(), coord, lineno});
      t.nodes.push_back(std::move(n));
    } else if (key == "port") {
      if (t.nodes.empty()) return fail("a port line before any node line", "");
      auto w = words(value);
      PortSpec ps;
      std::vector<std::string> rest;
      for (size_t i = 2; i < w.size(); ++i) {
        std::string aerr, k, v;
        if (parse_port_attr(w[i], &ps, &aerr)) {
          if (!aerr.empty()) return fail("port: ", aerr);
          continue;
        }
        if (split_kv(w[i], &k, &v) && k == "name") {
          ps.name = v;
          continue;
        }
        rest.push_back(w[i]);
      }
      if (w.size() < 2 || rest.size() > 1)
        return fail("port needs 'DIR DRIVER [ADDRESS] [mtu=N] [numa=N] [cable=LABEL] [name=NAME]', got ",
                    "'" + value + "'");
      if (!parse_dir(w[0], &ps.dir)) return fail("port: unknown direction ", "'" + w[0] + "' (x+ x- y+ y- z+ z-)");
      ps.driver = w[1];
      if (!rest.empty()) ps.address = rest[0];
      t.nodes.back().ports.push_back(ps);
    } else {
      return fail("unknown key ", "'" + key + "' (known: partition, dims, job, seed, arg, node, port)");
    }
  }
  if (!t.has_dims) return error(Code::kInvalid, "%s: missing 'dims = XxYxZ'", source.c_str());
  if (t.partition.empty()) return error(Code::kInvalid, "%s: missing 'partition = ID'", source.c_str());
  for (const auto& pc : coords) {
    auto c = parse_coord(pc.text, t.dims);
    if (!c) return error(Code::kInvalid, "%s line %d: node %u: %s", source.c_str(), pc.line, t.nodes[pc.node].rank,
                         c.status().message().c_str());
    t.nodes[pc.node].coord = *c;
  }
  return t;
}

Result<Topology> parse_topology_file(const std::string& path) {
  std::string text;
  if (!read_text_file(path, &text)) return error(Code::kNotFound, "topology: cannot open '%s'", path.c_str());
  return parse_topology_text(text, path);
}

std::string topology_text(const Topology& t, const std::string& header) {
  std::string s = "# " + header + "\n";
  s += "partition = " + t.partition + "\n";
  s += "dims = " + t.dims.to_string() + "\n";
  if (!t.job.empty()) s += "job = " + t.job + "\n";
  s += "seed = " + std::to_string(t.seed) + "\n";
  for (const auto& [k, v] : t.job_args) s += "arg = " + k + " " + v + "\n";
  for (const auto& n : t.nodes) {
    s += "\nnode = " + std::to_string(n.rank) + " host=" + n.host + " coord=" + n.coord.to_string() + "\n";
    for (const auto& p : n.ports) {
      s += "port = " + std::string(dir_name(p.dir)) + " " + p.driver;
      if (!p.address.empty()) s += " " + p.address;
      s += port_attrs_text(p);
      if (!p.name.empty() && p.name != default_port_name(p.dir, t.dims)) s += " name=" + p.name;
      s += "\n";
    }
  }
  return s;
}

Result<Personality> personality_for_rank(const Topology& t, uint32_t rank) {
  const TopoNode* n = t.by_rank(rank);
  if (!n)
    return error(Code::kNotFound, "topology %s: no node has rank %u (ranks 0..%zu)", t.source.c_str(), rank,
                 t.nodes.empty() ? size_t{0} : t.nodes.size() - 1);
  Personality p;
  p.partition = t.partition;
  p.dims = t.dims;
  p.coord = n->coord;
  p.has_dims = p.has_coord = true;
  p.job = t.job;
  p.seed = t.seed;
  p.job_args = t.job_args;
  p.ports = n->ports;
  std::stable_sort(p.ports.begin(), p.ports.end(),
                   [](const PortSpec& a, const PortSpec& b) { return a.dir < b.dir; });
  for (auto& ps : p.ports)
    if (ps.name.empty()) ps.name = default_port_name(ps.dir, t.dims);
  return p;
}

std::string address_field(const std::string& address, const char* key) {
  const std::string k = std::string(key) + "=";
  size_t at = address.rfind(k, 0) == 0 ? 0 : address.find("," + k);
  if (at == std::string::npos) return "";
  at = address.find('=', at) + 1;
  return address.substr(at, address.find(',', at) - at);
}

std::string short_address(const PortSpec& ps) {
  std::string s = address_field(ps.address, "iface");
  if (!s.empty()) {
    const std::string q = address_field(ps.address, "queue");
    return q.empty() ? s : s + " q" + q;
  }
  s = address_field(ps.address, "socket");
  if (s.empty()) s = address_field(ps.address, "path");
  if (!s.empty()) {
    const auto slash = s.rfind('/');
    return slash == std::string::npos ? s : s.substr(slash + 1);
  }
  return ps.address;
}

std::string describe_end(const Topology& t, const Coord& c, Dir dir) {
  const TopoNode* n = t.at(c);
  const PortSpec* p = t.port_at(c, dir);
  if (!n || !p) return "not in the topology";
  std::string s = "host " + n->host + ", " + p->driver + " " + short_address(*p);
  if (!p->cable.empty()) s += ", cable " + p->cable;
  return s;
}

}  // namespace toroid
