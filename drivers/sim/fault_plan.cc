#include "drivers/sim/fault_plan.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/clock.h"

namespace toroid {

namespace {

constexpr const char* kKnownKeys = "drop, corrupt, dup, reorder, delay, jitter, linkdown, reboot, stop";
constexpr uint64_t kMaxLatencyFaultNs = kSec;  // delay and jitter are capped at 1 s

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

// Shortest decimal form that reads back as exactly `v`.
std::string format_double(double v) {
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// Largest unit that divides the value exactly, so parse_duration_ns reads
// it back to the same nanosecond count.
std::string format_ns(uint64_t ns) {
  if (ns != 0 && ns % kSec == 0) return std::to_string(ns / kSec) + "s";
  if (ns != 0 && ns % kMs == 0) return std::to_string(ns / kMs) + "ms";
  if (ns != 0 && ns % kUs == 0) return std::to_string(ns / kUs) + "us";
  return std::to_string(ns) + "ns";
}

Status parse_probability(const std::string& key, const std::string& val, double* out) {
  const char* s = val.c_str();
  char* end = nullptr;
  const double v = val.empty() ? 0 : std::strtod(s, &end);
  if (val.empty() || end != s + val.size() || std::isnan(v))
    return error(Code::kInvalid, "faults: %s=%s is not a probability (expected a number in [0, 1])",
                 key.c_str(), val.c_str());
  if (!(v >= 0 && v <= 1))
    return error(Code::kOutOfRange, "faults: %s=%s is out of range [0, 1]", key.c_str(), val.c_str());
  *out = v;
  return Status::ok();
}

Status parse_latency(const std::string& key, const std::string& val, uint64_t* out) {
  uint64_t ns = 0;
  if (!parse_duration_ns(val.c_str(), &ns))
    return error(Code::kInvalid, "faults: %s=%s is not a duration (e.g. 500ns, 2us, 1ms)", key.c_str(),
                 val.c_str());
  if (ns > kMaxLatencyFaultNs)
    return error(Code::kOutOfRange, "faults: %s=%s is out of range [0, 1s]", key.c_str(), val.c_str());
  *out = ns;
  return Status::ok();
}

// "T" or "T+D" after an '@': a time and an optional duration.
Status parse_when(const char* key, const std::string& val, const std::string& at, uint64_t* at_ns,
                  uint64_t* for_ns) {
  const size_t plus = at.find('+');
  const std::string t = at.substr(0, plus);
  if (!parse_duration_ns(t.c_str(), at_ns))
    return error(Code::kInvalid, "faults: %s=%s: '@%s' is not a time (e.g. @300us)", key, val.c_str(), t.c_str());
  *for_ns = 0;
  if (plus != std::string::npos) {
    const std::string d = at.substr(plus + 1);
    if (!parse_duration_ns(d.c_str(), for_ns) || *for_ns == 0)
      return error(Code::kInvalid, "faults: %s=%s: '+%s' is not a duration above 0 (e.g. +2ms)", key, val.c_str(),
                   d.c_str());
  }
  return Status::ok();
}

// X.Y.Z@T[+D]
Status parse_node_fault(const char* key, const std::string& val, const Dims& dims, bool takes_duration,
                        NodeFaultSpec* out) {
  const size_t atpos = val.find('@');
  if (atpos == std::string::npos)
    return error(Code::kInvalid, "faults: %s=%s: expected X.Y.Z@T%s (e.g. 1.0.0@300us%s)", key, val.c_str(),
                 takes_duration ? "[+D]" : "", takes_duration ? "+2ms" : "");
  auto coord = parse_coord(val.substr(0, atpos), dims);
  if (!coord) return error(coord.status().code(), "faults: %s=%s: %s", key, val.c_str(), coord.status().message().c_str());
  Status st = parse_when(key, val, val.substr(atpos + 1), &out->at_ns, &out->for_ns);
  if (!st) return st;
  if (!takes_duration && out->for_ns)
    return error(Code::kInvalid, "faults: %s=%s: a %s takes no duration", key, val.c_str(), key);
  out->node = *coord;
  return Status::ok();
}

std::string node_fault_text(const NodeFaultSpec& f) {
  std::string v;
  for (int i = 0; i < kDims; ++i) {
    if (i) v += '.';
    v += std::to_string(f.node.c[i]);
  }
  v += '@';
  v += format_ns(f.at_ns);
  if (f.for_ns) {
    v += '+';
    v += format_ns(f.for_ns);
  }
  return v;
}

// X.Y.Z:DIR[@T[+D]]
Status parse_linkdown(const std::string& val, const Dims& dims, LinkDownSpec* out) {
  const size_t colon = val.find(':');
  if (colon == std::string::npos)
    return error(Code::kInvalid, "faults: linkdown=%s: expected X.Y.Z:DIR[@T[+D]] (e.g. 1.0.0:x+@300us)",
                 val.c_str());
  const std::string node = val.substr(0, colon);
  std::string dir = val.substr(colon + 1);
  std::string at;
  const size_t atpos = dir.find('@');
  const bool has_at = atpos != std::string::npos;
  if (has_at) {
    at = dir.substr(atpos + 1);
    dir = dir.substr(0, atpos);
  }
  auto coord = parse_coord(node, dims);
  if (!coord)
    return error(coord.status().code(), "faults: linkdown=%s: %s", val.c_str(),
                 coord.status().message().c_str());
  Dir d;
  if (!parse_dir(dir, &d))
    return error(Code::kInvalid, "faults: linkdown=%s: '%s' is not a direction (x+ x- y+ y- z+ z-)",
                 val.c_str(), dir.c_str());
  if (!has_link(d, dims))
    return error(Code::kInvalid, "faults: linkdown=%s: no link in direction %s (dims %s: %c has size 1)",
                 val.c_str(), dir_name(d), dims.to_string().c_str(), "xyz"[dir_dim(d)]);
  uint64_t at_ns = 0, for_ns = 0;
  if (has_at) {
    Status st = parse_when("linkdown", val, at, &at_ns, &for_ns);
    if (!st) return st;
  }
  out->node = *coord;
  out->dir = d;
  out->at_ns = at_ns;
  out->for_ns = for_ns;
  return Status::ok();
}

}  // namespace

std::string FaultPlan::to_string() const {
  // Built with += only: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string out;
  auto add = [&out](const char* key, const std::string& value) {
    if (!out.empty()) out += ',';
    out += key;
    out += '=';
    out += value;
  };
  if (drop > 0) add("drop", format_double(drop));
  if (corrupt > 0) add("corrupt", format_double(corrupt));
  if (dup > 0) add("dup", format_double(dup));
  if (reorder > 0) add("reorder", format_double(reorder));
  if (delay_ns > 0) add("delay", format_ns(delay_ns));
  if (jitter_ns > 0) add("jitter", format_ns(jitter_ns));
  for (const LinkDownSpec& l : linkdown) {
    std::string v;
    for (int i = 0; i < kDims; ++i) {
      if (i) v += '.';
      v += std::to_string(l.node.c[i]);
    }
    v += ':';
    v += dir_name(l.dir);
    if (l.at_ns > 0 || l.for_ns > 0) {
      v += '@';
      v += format_ns(l.at_ns);
    }
    if (l.for_ns > 0) {
      v += '+';
      v += format_ns(l.for_ns);
    }
    add("linkdown", v);
  }
  for (const NodeFaultSpec& f : reboot) add("reboot", node_fault_text(f));
  for (const NodeFaultSpec& f : stop) add("stop", node_fault_text(f));
  return out.empty() ? "none" : out;
}

Result<FaultPlan> parse_fault_plan(const std::string& spec, const Dims& dims) {
  FaultPlan plan;
  const std::string all = trim(spec);
  if (all.empty() || all == "none") return plan;

  enum : unsigned { kDrop = 1, kCorrupt = 2, kDup = 4, kReorder = 8, kDelay = 16, kJitter = 32 };
  unsigned seen = 0;
  size_t pos = 0;
  while (pos <= all.size()) {
    size_t comma = all.find(',', pos);
    if (comma == std::string::npos) comma = all.size();
    const std::string item = trim(all.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) return error(Code::kInvalid, "faults: empty item in '%s'", spec.c_str());
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      return error(Code::kInvalid, "faults: missing '=' in '%s' (expected KEY=VALUE)", item.c_str());
    const std::string key = trim(item.substr(0, eq));
    const std::string val = trim(item.substr(eq + 1));

    unsigned bit = 0;
    Status st;
    if (key == "drop") { bit = kDrop; st = parse_probability(key, val, &plan.drop); }
    else if (key == "corrupt") { bit = kCorrupt; st = parse_probability(key, val, &plan.corrupt); }
    else if (key == "dup") { bit = kDup; st = parse_probability(key, val, &plan.dup); }
    else if (key == "reorder") { bit = kReorder; st = parse_probability(key, val, &plan.reorder); }
    else if (key == "delay") { bit = kDelay; st = parse_latency(key, val, &plan.delay_ns); }
    else if (key == "jitter") { bit = kJitter; st = parse_latency(key, val, &plan.jitter_ns); }
    else if (key == "linkdown") {
      LinkDownSpec l;
      st = parse_linkdown(val, dims, &l);
      if (st.is_ok()) plan.linkdown.push_back(l);
    } else if (key == "reboot" || key == "stop") {
      NodeFaultSpec f;
      st = parse_node_fault(key.c_str(), val, dims, key == "stop", &f);
      if (st.is_ok()) (key == "reboot" ? plan.reboot : plan.stop).push_back(f);
    } else {
      return error(Code::kInvalid, "faults: unknown key '%s' (known: %s)", key.c_str(), kKnownKeys);
    }
    if (bit != 0) {
      if (seen & bit) return error(Code::kInvalid, "faults: duplicate key '%s'", key.c_str());
      seen |= bit;
    }
    if (!st.is_ok()) return st;
  }
  return plan;
}

}  // namespace toroid
