#include "drivers/dpdk/dpdk_spec.h"

#include <cctype>
#include <cstdlib>

namespace toroid {

namespace {

bool parse_u32(const std::string& s, uint32_t max, uint32_t* out) {
  if (s.empty() || s.size() > 10) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  const unsigned long v = std::strtoul(s.c_str(), nullptr, 10);
  if (v > max) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// "DDDD:BB:DD.F" or "BB:DD.F", hex digits.
bool valid_pci_addr(const std::string& a) {
  auto hex_run = [&](size_t& i, size_t n) {
    for (size_t k = 0; k < n; ++k, ++i)
      if (i >= a.size() || !std::isxdigit(static_cast<unsigned char>(a[i]))) return false;
    return true;
  };
  size_t i = 0;
  if (a.size() == 12) {
    if (!hex_run(i, 4) || a[i++] != ':') return false;
  } else if (a.size() != 7) {
    return false;
  }
  if (!hex_run(i, 2) || a[i++] != ':') return false;
  if (!hex_run(i, 2) || a[i++] != '.') return false;
  return hex_run(i, 1) && i == a.size();
}

}  // namespace

const char* DpdkPortSpec::driver_name() const {
  switch (kind) {
    case DpdkPortKind::kMemif:
      return "memif";
    case DpdkPortKind::kAfPacket:
      return "af_packet";
    case DpdkPortKind::kPci:
      return "pci";
    case DpdkPortKind::kAfXdp:
      return "af_xdp";
  }
  return "?";
}

const char* DpdkPortSpec::vdev_driver() const {
  switch (kind) {
    case DpdkPortKind::kMemif:
      return "net_memif";
    case DpdkPortKind::kAfPacket:
      return "net_af_packet";
    case DpdkPortKind::kPci:
      return nullptr;
    case DpdkPortKind::kAfXdp:
      return "net_af_xdp";
  }
  return nullptr;
}

std::string DpdkPortSpec::devargs() const {
  std::string a;
  switch (kind) {
    case DpdkPortKind::kMemif:
      // socket-abstract=no: a real file, so the rig can see it and the
      // server's close removes it (the 22.11 default is an abstract name).
      a = "id=" + std::to_string(id) + ",role=" + (role == MemifRole::kServer ? "server" : "client") +
          ",socket=" + socket + ",socket-abstract=no";
      if (bsize) a += ",bsize=" + std::to_string(bsize);
      if (rsize_log2) a += ",rsize=" + std::to_string(rsize_log2);
      break;
    case DpdkPortKind::kAfPacket:
      a = "iface=" + iface + ",qpairs=1";
      break;
    case DpdkPortKind::kAfXdp:
      a = "iface=" + iface + ",start_queue=" + std::to_string(queue) + ",queue_count=1";
      break;
    case DpdkPortKind::kPci:
      break;
  }
  return a;
}

Result<DpdkPortSpec> parse_dpdk_port_spec(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos)
    return error(Code::kInvalid, "port spec '%s': expected memif:..., af_packet:... or pci:...", spec.c_str());
  const std::string kind = spec.substr(0, colon);
  const std::string rest = spec.substr(colon + 1);
  DpdkPortSpec s;
  s.text = spec;

  if (kind == "pci") {
    s.kind = DpdkPortKind::kPci;
    if (!valid_pci_addr(rest))
      return error(Code::kInvalid, "port spec '%s': '%s' is not a PCI address (DDDD:BB:DD.F)", spec.c_str(),
                   rest.c_str());
    s.pci_addr = rest.size() == 7 ? "0000:" + rest : rest;
    return s;
  }
  if (kind == "memif")
    s.kind = DpdkPortKind::kMemif;
  else if (kind == "af_packet")
    s.kind = DpdkPortKind::kAfPacket;
  else if (kind == "af_xdp")
    s.kind = DpdkPortKind::kAfXdp;
  else
    return error(Code::kInvalid, "port spec '%s': unknown port kind '%s' (memif, af_xdp, af_packet, pci)", spec.c_str(),
                 kind.c_str());
  const bool kernel_nic = s.kind == DpdkPortKind::kAfPacket || s.kind == DpdkPortKind::kAfXdp;

  bool have_role = false;
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t end = rest.find(',', pos);
    if (end == std::string::npos) end = rest.size();
    const std::string kv = rest.substr(pos, end - pos);
    pos = end + 1;
    if (kv.empty()) continue;
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      return error(Code::kInvalid, "port spec '%s': '%s' is not key=value", spec.c_str(), kv.c_str());
    const std::string k = kv.substr(0, eq);
    const std::string v = kv.substr(eq + 1);
    bool ok = true;
    if (s.kind == DpdkPortKind::kMemif && k == "role") {
      if (v == "server")
        s.role = MemifRole::kServer;
      else if (v == "client")
        s.role = MemifRole::kClient;
      else
        ok = false;
      have_role = true;
    } else if (s.kind == DpdkPortKind::kMemif && k == "socket") {
      ok = !v.empty() && v.size() <= kMemifSocketMax && v.find(',') == std::string::npos;
      s.socket = v;
    } else if (s.kind == DpdkPortKind::kMemif && k == "id") {
      ok = parse_u32(v, 0xffffffffu, &s.id);
    } else if (s.kind == DpdkPortKind::kMemif && k == "bsize") {
      ok = parse_u32(v, 65535, &s.bsize) && s.bsize >= 128;  // the PMD keeps it in a uint16_t
    } else if (s.kind == DpdkPortKind::kMemif && k == "rsize") {
      ok = parse_u32(v, 14, &s.rsize_log2) && s.rsize_log2 >= 1;  // log2 of the ring size
    } else if (kernel_nic && k == "iface") {
      // IFNAMSIZ, and nothing the kernel refuses in a name.
      ok = !v.empty() && v.size() < 16 && v.find_first_of("/: \t") == std::string::npos;
      s.iface = v;
    } else if (s.kind == DpdkPortKind::kAfXdp && k == "queue") {
      ok = parse_u32(v, 1023, &s.queue);
    } else if (s.kind == DpdkPortKind::kAfXdp && k == "fallback") {
      ok = v == "af_packet" || v == "none";
      s.fallback = v == "af_packet";
    } else {
      return error(Code::kInvalid, "port spec '%s': unknown key '%s'", spec.c_str(), k.c_str());
    }
    if (!ok) return error(Code::kInvalid, "port spec '%s': bad value for %s: '%s'", spec.c_str(), k.c_str(), v.c_str());
  }
  if (s.kind == DpdkPortKind::kMemif) {
    if (!have_role) return error(Code::kInvalid, "port spec '%s': memif needs role=server|client", spec.c_str());
    if (s.socket.empty()) return error(Code::kInvalid, "port spec '%s': memif needs socket=/path", spec.c_str());
    if (s.socket[0] != '/')
      return error(Code::kInvalid, "port spec '%s': memif socket must be an absolute path", spec.c_str());
  }
  if (kernel_nic && s.iface.empty())
    return error(Code::kInvalid, "port spec '%s': %s needs iface=NAME", spec.c_str(), s.driver_name());
  return s;
}

}  // namespace toroid
