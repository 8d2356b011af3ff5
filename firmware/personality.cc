#include "firmware/personality.h"

#include <sstream>

#include "base/text.h"

namespace toroid {

Status check_partition_id(const std::string& id) {
  if (id.size() > kPartitionIdMax)
    return error(Code::kInvalid, "personality: partition id '%s' is longer than %zu characters", id.c_str(),
                 kPartitionIdMax);
  for (char ch : id) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '_' || ch == '-';
    if (!ok)
      return error(Code::kInvalid, "personality: partition id '%s' holds '%c' (letters, digits, '.', '_', '-' only)",
                   id.c_str(), ch);
  }
  return Status::ok();
}

std::string Personality::describe() const {
  std::string s = partition.empty() ? "" : "partition " + partition + " ";
  s += "dims " + dims.to_string() + " coord " + coord.to_string() + " job " + job +
                  " seed " + std::to_string(seed) + " ports";
  if (ports.empty()) s += " (none)";
  for (const auto& p : ports) {
    s += ' ';
    s += p.name;
    s += '=';
    s += dir_name(p.dir);
  }
  return s;
}

Status validate(const Personality& p) {
  if (!p.has_dims) return error(Code::kInvalid, "personality: missing field 'dims'");
  if (!p.has_coord) return error(Code::kInvalid, "personality: missing field 'coord'");
  if (p.job.empty()) return error(Code::kInvalid, "personality: missing field 'job'");
  if (Status st = check_partition_id(p.partition); !st) return st;
  for (int i = 0; i < kDims; ++i) {
    if (p.dims.n[i] == 0) return error(Code::kInvalid, "personality: dims %s has a dimension of size 0",
                                       p.dims.to_string().c_str());
    if (p.coord.c[i] >= p.dims.n[i])
      return error(Code::kOutOfRange, "personality: coord %s is outside dims %s (%c=%u must be < %u)",
                   p.coord.to_string().c_str(), p.dims.to_string().c_str(), "xyz"[i], p.coord.c[i], p.dims.n[i]);
  }
  int by_dir[kNumDirs];
  for (int& v : by_dir) v = -1;
  for (size_t i = 0; i < p.ports.size(); ++i) {
    const PortSpec& ps = p.ports[i];
    if (ps.name.empty()) return error(Code::kInvalid, "personality: port %zu has no name", i);
    for (size_t j = 0; j < i; ++j) {
      if (p.ports[j].name == ps.name)
        return error(Code::kInvalid, "personality: duplicate port name '%s'", ps.name.c_str());
    }
    const int d = static_cast<int>(ps.dir);
    if (by_dir[d] >= 0)
      return error(Code::kInvalid, "personality: duplicate port: %s and %s both map to %s",
                   p.ports[by_dir[d]].name.c_str(), ps.name.c_str(), dir_name(ps.dir));
    by_dir[d] = static_cast<int>(i);
    if (!has_link(ps.dir, p.dims))
      return error(Code::kInvalid, "personality: port %s maps to %s but dimension %c of dims %s has size 1 (no link)",
                   ps.name.c_str(), dir_name(ps.dir), "xyz"[dir_dim(ps.dir)], p.dims.to_string().c_str());
    if (ps.driver.empty()) return error(Code::kInvalid, "personality: port %s has no driver", ps.name.c_str());
  }
  for (int d = 0; d < kNumDirs; ++d) {
    if (by_dir[d] < 0 && has_link(static_cast<Dir>(d), p.dims))
      return error(Code::kInvalid, "personality: no port for direction %s (dims %s have a link there)",
                   dir_name(static_cast<Dir>(d)), p.dims.to_string().c_str());
  }
  return Status::ok();
}

Result<Personality> parse_personality_text(const std::string& text, const std::string& source) {
  Personality p;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  bool have_job = false;
  // Coordinates are checked against dims, which may come later in the file.
  std::string coord_text;
  int coord_line = 0;
  std::string key, value;
  for (int got; (got = next_key_value(in, &lineno, &key, &value, &line)) != 0;) {
    if (got < 0)
      return error(Code::kInvalid, "%s line %d: expected 'key = value', got '%s'", source.c_str(), lineno,
                   line.c_str());
    if (key == "dims") {
      auto d = parse_dims(value);
      if (!d) return error(d.status().code(), "%s line %d: %s", source.c_str(), lineno, d.status().message().c_str());
      p.dims = *d;
      p.has_dims = true;
    } else if (key == "coord") {
      coord_text = value;
      coord_line = lineno;
    } else if (key == "job") {
      if (value.empty()) return error(Code::kInvalid, "%s line %d: empty job", source.c_str(), lineno);
      p.job = value;
      have_job = true;
    } else if (key == "seed") {
      if (!parse_u64(value, &p.seed))
        return error(Code::kInvalid, "%s line %d: seed '%s' is not a non-negative integer", source.c_str(), lineno,
                     value.c_str());
    } else if (key == "port") {
      auto w = words(value);
      PortSpec ps;
      // NAME DIR DRIVER, then the address (if the driver takes one) and the
      // attributes in any order: attributes are recognised by their key.
      std::vector<std::string> rest;
      for (size_t i = 3; i < w.size(); ++i) {
        std::string aerr;
        if (!parse_port_attr(w[i], &ps, &aerr)) {
          rest.push_back(w[i]);
        } else if (!aerr.empty()) {
          return error(Code::kInvalid, "%s line %d: port %s: %s", source.c_str(), lineno, w[0].c_str(), aerr.c_str());
        }
      }
      if (w.size() < 3 || rest.size() > 1)
        return error(Code::kInvalid,
                     "%s line %d: port needs 'NAME DIR DRIVER [ADDRESS] [mtu=N] [numa=N] [cable=LABEL]', got '%s'",
                     source.c_str(), lineno, value.c_str());
      ps.name = w[0];
      if (!parse_dir(w[1], &ps.dir))
        return error(Code::kInvalid, "%s line %d: port %s: unknown direction '%s' (x+ x- y+ y- z+ z-)",
                     source.c_str(), lineno, w[0].c_str(), w[1].c_str());
      ps.driver = w[2];
      if (!rest.empty()) ps.address = rest[0];
      p.ports.push_back(ps);
    } else if (key == "partition") {
      if (value.empty()) return error(Code::kInvalid, "%s line %d: empty partition id", source.c_str(), lineno);
      p.partition = value;
    } else if (key == "arg") {
      auto w = words(value);
      if (w.size() != 2)
        return error(Code::kInvalid, "%s line %d: arg needs 'KEY VALUE'", source.c_str(), lineno);
      p.job_args[w[0]] = w[1];
    } else {
      return error(Code::kInvalid, "%s line %d: unknown key '%s' (known: dims, coord, job, seed, partition, port, arg)",
                   source.c_str(), lineno, key.c_str());
    }
  }
  (void)have_job;
  if (!coord_text.empty()) {
    if (!p.has_dims) return error(Code::kInvalid, "personality: missing field 'dims'");
    auto c = parse_coord(coord_text, p.dims);
    if (!c)
      return error(c.status().code(), "%s line %d: %s", source.c_str(), coord_line, c.status().message().c_str());
    p.coord = *c;
    p.has_coord = true;
  }
  Status st = validate(p);
  if (!st) return st;
  return p;
}

Result<Personality> parse_personality_file(const std::string& path) {
  std::string text;
  if (!read_text_file(path, &text)) return error(Code::kNotFound, "personality: cannot open '%s'", path.c_str());
  return parse_personality_text(text, path);
}

Result<Personality> parse_personality_args(const std::vector<std::string>& args, const std::string& base_text) {
  // Translate flags into the file form so both share one parser and one set
  // of messages; a --personality file contributes its lines first.
  std::string text = base_text.empty() ? "" : base_text + "\n";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    static const char* const kKeys[] = {"dims", "coord", "job", "seed", "partition", "port", "arg", "personality"};
    std::string key;
    for (const char* k : kKeys) {
      if (flag == std::string("--") + k) key = k;
    }
    if (key.empty()) return error(Code::kInvalid, "personality: unknown option '%s'", flag.c_str());
    if (i + 1 >= args.size()) return error(Code::kInvalid, "personality: option %s needs a value", flag.c_str());
    std::string value = args[++i];
    // Each flag becomes one line of the file form: a line break in a value
    // would add lines of its own (another key), a '#' would cut it short,
    // other control characters would be taken for blanks or kept unseen.
    for (const char ch : value) {
      const auto u = static_cast<unsigned char>(ch);
      if (u < 0x20 || u == 0x7f || ch == '#')
        return error(Code::kInvalid, "personality: %s: a value cannot hold '#' or a control character (0x%02x)",
                     flag.c_str(), u);
    }
    if (key == "personality") {
      std::string file;
      if (!read_text_file(value, &file))
        return error(Code::kNotFound, "personality: cannot open '%s'", value.c_str());
      text = file + "\n" + text;
      continue;
    }
    // KEY=VALUE: the file form splits "arg = KEY VALUE" at blanks, so a
    // blank inside either would move the split ("a b=" would read as key
    // "a", value "b").
    if (key == "arg") {
      const size_t eq = value.find('=');
      if (eq != std::string::npos) {
        const std::string k = trim(value.substr(0, eq)), v = trim(value.substr(eq + 1));
        if (k.find_first_of(" \t") != std::string::npos || v.find_first_of(" \t") != std::string::npos)
          return error(Code::kInvalid, "personality: --arg '%s': KEY=VALUE takes no blank inside the key or the value",
                       value.c_str());
      }
    }
    // NAME:DIR:DRIVER[:ADDRESS] -> words; the address may hold colons (PCI).
    int seps = key == "port" ? 3 : key == "arg" ? 1 : 0;
    for (char& ch : value) {
      if (seps > 0 && ch == (key == "port" ? ':' : '=')) {
        ch = ' ';
        --seps;
      }
    }
    text += key + " = " + value + "\n";
  }
  return parse_personality_text(text, "command line");
}

std::string personality_text(const Personality& p, const std::string& header) {
  std::string s = "# " + header + "\n";
  if (!p.partition.empty()) s += "partition = " + p.partition + "\n";
  s += "dims = " + p.dims.to_string() + "\n";
  s += "coord = " + p.coord.to_string() + "\n";
  s += "job = " + p.job + "\n";
  s += "seed = " + std::to_string(p.seed) + "\n";
  for (const auto& [k, v] : p.job_args) s += "arg = " + k + " " + v + "\n";
  for (const auto& ps : p.ports) {
    s += "port = " + ps.name + " " + dir_name(ps.dir) + " " + ps.driver;
    if (!ps.address.empty()) s += " " + ps.address;
    s += port_attrs_text(ps) + "\n";
  }
  return s;
}

bool parse_port_attr(const std::string& word, PortSpec* ps, std::string* err) {
  const auto eq = word.find('=');
  if (eq == std::string::npos) return false;
  const std::string k = word.substr(0, eq), v = word.substr(eq + 1);
  uint64_t n = 0;
  if (k == "mtu") {
    // 68 is IPv4's minimum MTU; 9000 the largest frame a port is set up for.
    if (!parse_u64(v, &n) || n < 68 || n > 9000) *err = "mtu '" + v + "' must be 68..9000";
    ps->mtu = static_cast<uint32_t>(n);
  } else if (k == "numa") {
    if (!parse_u64(v, &n) || n > 1023) *err = "numa '" + v + "' is not a NUMA node number";
    ps->numa = static_cast<int>(n);
  } else if (k == "cable") {
    if (v.empty()) *err = "empty cable label";
    ps->cable = v;
  } else {
    return false;
  }
  return true;
}

std::string port_attrs_text(const PortSpec& ps) {
  std::string s;
  if (ps.mtu) s += " mtu=" + std::to_string(ps.mtu);
  if (ps.numa >= 0) s += " numa=" + std::to_string(ps.numa);
  if (!ps.cable.empty()) s += " cable=" + ps.cable;
  return s;
}

Status split_partition_x(Personality* p, const std::vector<std::string>& ids) {
  const auto parts = static_cast<uint32_t>(ids.size());
  if (parts < 2) return Status::ok();
  if (p->dims.n[0] % parts != 0 || p->dims.n[0] / parts < 2)
    return error(Code::kInvalid, "partitions: x of dims %s does not split into %u partitions of 2 or more",
                 p->dims.to_string().c_str(), parts);
  const uint32_t w = p->dims.n[0] / parts;
  p->partition = ids[p->coord.c[0] / w];
  p->dims.n[0] = w;
  p->coord.c[0] %= w;
  return check_partition_id(p->partition);
}

std::string default_port_name(Dir dir, const Dims& dims) {
  int index = 0;
  for (int d = 0; d < static_cast<int>(dir); ++d) index += has_link(static_cast<Dir>(d), dims);
  return "port" + std::to_string(index);
}

std::vector<PortSpec> default_ports(const Dims& dims, const std::string& driver) {
  std::vector<PortSpec> ports;
  for (int d = 0; d < kNumDirs; ++d) {
    const Dir dir = static_cast<Dir>(d);
    if (!has_link(dir, dims)) continue;
    PortSpec ps;
    ps.name = "port" + std::to_string(ports.size());
    ps.dir = dir;
    ps.driver = driver;
    ports.push_back(ps);
  }
  return ports;
}

}  // namespace toroid
