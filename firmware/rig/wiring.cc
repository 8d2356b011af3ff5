#include "firmware/rig/wiring.h"

#include <cstdio>

#include "firmware/topology_gen.h"

namespace toroid::rig {

namespace {

constexpr size_t kSocketPathMax = 107;  // sockaddr_un::sun_path minus the NUL

}  // namespace

bool is_rig_driver(const std::string& driver) {
  return driver == "memif" || driver == "uring" || is_kernel_driver(driver);
}

bool is_kernel_driver(const std::string& driver) { return driver == "af_xdp" || driver == "af_packet"; }

std::string cable_socket(const std::string& socket_dir, const Coord& c, Dir plus) {
  return cable_socket_file(socket_dir, c, plus);
}

Status check_socket_dir(const std::string& dir, const Dims& dims) {
  if (dir.empty() || dir[0] != '/') return error(Code::kInvalid, "socket dir '%s' is not an absolute path", dir.c_str());
  for (char ch : dir) {
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == ',' || ch == '#' || ch == '=')
      return error(Code::kInvalid, "socket dir '%s' holds '%c' (the personality and port specs cannot carry it)",
                   dir.c_str(), ch);
  }
  Coord far;
  for (int i = 0; i < kDims; ++i) far.c[i] = dims.n[i] - 1;
  const std::string longest = cable_socket(dir, far, Dir::kXp);
  if (longest.size() > kSocketPathMax)
    return error(Code::kInvalid, "socket path %s is longer than %zu bytes (sockaddr_un)", longest.c_str(),
                 kSocketPathMax);
  return Status::ok();
}

std::vector<Cable> cables(const Dims& dims, const std::string& socket_dir) {
  std::vector<Cable> out;
  for (uint32_t r = 0; r < dims.nodes(); ++r) {
    const Coord c = coord_of(r, dims);
    for (int d = 0; d < kDims; ++d) {
      const Dir plus = dir_of(d, true);
      if (!has_link(plus, dims)) continue;
      Cable k;
      k.server = c;
      k.server_dir = plus;
      k.client = neighbour(c, plus, dims);
      k.client_dir = opposite(plus);
      k.socket = cable_socket(socket_dir, c, plus);
      out.push_back(k);
    }
  }
  return out;
}

Cable cable_at(const Dims& dims, const std::string& socket_dir, const Coord& c, Dir dir) {
  const bool plus = (static_cast<int>(dir) & 1) == 0;
  const Coord server = plus ? c : neighbour(c, dir, dims);
  const Dir pdir = plus ? dir : opposite(dir);
  Cable k;
  k.server = server;
  k.server_dir = pdir;
  k.client = neighbour(server, pdir, dims);
  k.client_dir = opposite(pdir);
  k.socket = cable_socket(socket_dir, server, pdir);
  return k;
}

Result<std::vector<Personality>> wire_partition(const WiringOptions& opt) {
  if (opt.driver != "memif" && opt.driver != "uring")
    return error(Code::kInvalid, "wire_partition: '%s' is not a socket driver (memif, uring)", opt.driver.c_str());
  if (Status st = check_socket_dir(opt.socket_dir, opt.dims); !st) return st;
  std::vector<Personality> out;
  const std::vector<PortSpec> base = default_ports(opt.dims, opt.driver);
  for (uint32_t r = 0; r < opt.dims.nodes(); ++r) {
    Personality p;
    p.dims = opt.dims;
    p.coord = coord_of(r, opt.dims);
    p.has_dims = p.has_coord = true;
    p.job = opt.job;
    p.seed = opt.seed;
    p.job_args = opt.job_args;
    p.ports = base;
    for (auto& ps : p.ports) {
      const Cable k = cable_at(opt.dims, opt.socket_dir, p.coord, ps.dir);
      const bool server = (static_cast<int>(ps.dir) & 1) == 0;
      if (opt.driver == "memif") {
        ps.address = std::string("role=") + (server ? "server" : "client") + ",socket=" + k.socket + ",id=0";
        if (opt.memif_bsize) ps.address += ",bsize=" + std::to_string(opt.memif_bsize);
        // 128 slots a ring, four times a link's window of unacknowledged
        // frames: the PMD's default 1024 slots of 9 KiB would spread a
        // link's frames over 9 MiB, far out of cache.
        ps.address += ",rsize=" + std::to_string(kMemifRingLog2);
      } else {
        ps.address = "path=" + k.socket + ",role=" + (server ? "server" : "client");
      }
    }
    if (Status st = split_partition_x(&p, opt.partitions); !st) return st;
    if (Status st = validate(p); !st) return st;
    out.push_back(std::move(p));
  }
  return out;
}

std::string personality_text(const Personality& p) {
  return toroid::personality_text(p, "toroid node personality (written by toroid-rig)");
}

Result<Coord> parse_rig_coord(const std::string& s, const Dims& dims) {
  std::string t = s;
  for (char& ch : t)
    if (ch == '.') ch = ',';
  return parse_coord(t, dims);
}

}  // namespace toroid::rig
