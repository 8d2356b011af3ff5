#include "firmware/personality.h"

#include <fstream>
#include <sstream>

namespace toroid {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  *out = v;
  return true;
}

}  // namespace

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
  while (std::getline(in, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      return error(Code::kInvalid, "%s line %d: expected 'key = value', got '%s'", source.c_str(), lineno,
                   line.c_str());
    const std::string key = trim(line.substr(0, eq));
    const std::string value = trim(line.substr(eq + 1));
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
      if (w.size() < 3 || w.size() > 4)
        return error(Code::kInvalid, "%s line %d: port needs 'NAME DIR DRIVER [ADDRESS]', got '%s'", source.c_str(),
                     lineno, value.c_str());
      PortSpec ps;
      ps.name = w[0];
      if (!parse_dir(w[1], &ps.dir))
        return error(Code::kInvalid, "%s line %d: port %s: unknown direction '%s' (x+ x- y+ y- z+ z-)",
                     source.c_str(), lineno, w[0].c_str(), w[1].c_str());
      ps.driver = w[2];
      if (w.size() == 4) ps.address = w[3];
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
  std::ifstream f(path);
  if (!f) return error(Code::kNotFound, "personality: cannot open '%s'", path.c_str());
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_personality_text(ss.str(), path);
}

Result<Personality> parse_personality_args(const std::vector<std::string>& args) {
  // Translate flags into the file form so both share one parser and one set
  // of messages; a --personality file contributes its lines first.
  std::string text;
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
    if (key == "personality") {
      std::ifstream f(value);
      if (!f) return error(Code::kNotFound, "personality: cannot open '%s'", value.c_str());
      std::stringstream ss;
      ss << f.rdbuf();
      text = ss.str() + "\n" + text;
      continue;
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
    s += "\n";
  }
  return s;
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
