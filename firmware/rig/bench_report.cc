#include "firmware/rig/bench_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace toroid::rig {

namespace {

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

}  // namespace

namespace {

std::string num(double v, int prec) {
  char b[64];
  snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

}  // namespace

bool parse_bench_event(const NodeEvent& ev, BenchRecord* rec, BenchInfo* info, bool* is_info, std::string* err) {
  *is_info = false;
  if (ev.kind != "bench") {
    *err = "not a bench line";
    return false;
  }
  const std::string coll = ev.get("coll");
  if (coll == "info") {
    BenchInfo in;
    in.node = ev.get("node");
    uint64_t v = 0;
    if (parse_u64(ev.get("frame"), &v)) in.frame = static_cast<uint32_t>(v);
    if (parse_u64(ev.get("max_body"), &v)) in.max_body = static_cast<uint32_t>(v);
    in.wait = ev.get("wait");
    for (const auto& [k, val] : ev.kv) {
      if (k == "node" || k == "coll" || k == "frame" || k == "max_body" || k == "ms" || k == "ports" || k == "wait")
        continue;
      if (parse_u64(val, &v)) in.counters.emplace_back(k, v);
    }
    *info = std::move(in);
    *is_info = true;
    return true;
  }
  BenchRecord r;
  r.node = ev.get("node");
  r.coll = coll;
  r.algo = ev.get("algo");
  r.dtype = ev.get("dtype");
  r.op = ev.get("op");
  r.repro = ev.get("repro");
  r.selected = ev.get("sel") == "1";
  if (r.coll.empty() || r.algo.empty() || !parse_u64(ev.get("bytes"), &r.bytes)) {
    *err = "bench line without coll, algo or bytes";
    return false;
  }
  r.skip = ev.get("skip");
  if (!r.skip.empty()) {
    *rec = std::move(r);
    return true;
  }
  uint64_t reps = 0;
  if (!parse_u64(ev.get("reps"), &reps) || reps == 0) {
    *err = "bench line without reps";
    return false;
  }
  r.reps = static_cast<uint32_t>(reps);
  const std::string list = ev.get("rep_ns");
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    uint64_t t;
    if (!parse_u64(list.substr(pos, end - pos), &t)) {
      *err = "bench line: rep_ns is not a list of integers";
      return false;
    }
    r.rep_ns.push_back(t);
    pos = end + 1;
  }
  if (r.rep_ns.size() != r.reps) {
    *err = "bench line: " + std::to_string(r.rep_ns.size()) + " times for reps=" + std::to_string(r.reps);
    return false;
  }
  *rec = std::move(r);
  return true;
}

double bench_bus_factor(const std::string& coll, uint32_t n) {
  if (n == 0) return 0;
  const double nn = n;
  if (coll == "allreduce") return 2.0 * (nn - 1) / nn;
  if (coll == "bcast" || coll == "reduce") return 1.0;
  if (coll == "allgather" || coll == "alltoall" || coll == "reduce_scatter") return (nn - 1) / nn;
  return 0;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t k = v.size();
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2.0;
}

std::vector<BenchRow> aggregate_bench(const std::vector<BenchRecord>& recs, uint32_t nodes) {
  std::vector<BenchRow> rows;
  std::map<std::string, size_t> index;
  std::vector<std::vector<const BenchRecord*>> per_row;
  for (const auto& r : recs) {
    const std::string key = r.coll + "\t" + r.algo + "\t" + r.dtype + "\t" + r.op + "\t" + r.repro + "\t" +
                            (r.selected ? "1" : "0") + "\t" + std::to_string(r.bytes);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, rows.size()).first;
      BenchRow row;
      row.coll = r.coll;
      row.algo = r.algo;
      row.dtype = r.dtype;
      row.op = r.op;
      row.repro = r.repro;
      row.selected = r.selected;
      row.coll_fields = true;
      row.bytes = r.bytes;
      row.nodes = nodes;
      rows.push_back(row);
      per_row.emplace_back();
    }
    per_row[it->second].push_back(&r);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    BenchRow& row = rows[i];
    const auto& rs = per_row[i];
    std::string skip;
    for (const auto* r : rs)
      if (!r->skip.empty() && skip.empty()) skip = r->skip;
    if (!skip.empty()) {
      row.note = "not available: " + skip;
      continue;
    }
    std::map<std::string, const BenchRecord*> by_node;
    for (const auto* r : rs) by_node[r->node] = r;
    if (by_node.size() < nodes) {
      row.note = "no figure: " + std::to_string(by_node.size()) + " of " + std::to_string(nodes) +
                 " nodes reported their times";
      continue;
    }
    const uint32_t reps = by_node.begin()->second->reps;
    bool same = true;
    for (const auto& [n, r] : by_node) same = same && r->reps == reps;
    if (!same) {
      row.note = "no figure: the nodes ran different repetition counts";
      continue;
    }
    std::vector<double> per_rep(reps, 0.0);
    for (const auto& [n, r] : by_node)
      for (uint32_t k = 0; k < reps; ++k) per_rep[k] = std::max(per_rep[k], static_cast<double>(r->rep_ns[k]) / 1e3);
    row.reps = reps;
    row.timed = true;
    row.min_us = *std::min_element(per_rep.begin(), per_rep.end());
    row.max_us = *std::max_element(per_rep.begin(), per_rep.end());
    row.median_us = median_of(per_rep);
    double sum = 0;
    for (double t : per_rep) sum += t;
    row.mean_us = reps ? sum / reps : 0;
    const double f = bench_bus_factor(row.coll, nodes);
    if (f > 0 && row.bytes > 0 && row.median_us > 0) {
      row.has_bw = true;
      row.algbw_gbps = static_cast<double>(row.bytes) / (row.median_us * 1e3);  // bytes/ns = GB/s
      row.busbw_gbps = row.algbw_gbps * f;
    }
  }
  return rows;
}

std::string format_bytes(uint64_t b) {
  char s[32];
  if (b >= (1u << 20) && b % (1u << 20) == 0) snprintf(s, sizeof s, "%lu MiB", static_cast<unsigned long>(b >> 20));
  else if (b >= 1024 && b % 1024 == 0) snprintf(s, sizeof s, "%lu KiB", static_cast<unsigned long>(b >> 10));
  else snprintf(s, sizeof s, "%lu B", static_cast<unsigned long>(b));
  return s;
}

std::string bench_variant(const BenchRow& r) {
  if (r.dtype.empty()) return "-";
  std::string s = r.dtype;
  if (!r.op.empty()) s += " " + r.op;
  if (!r.repro.empty() && r.repro != "none") s += " " + r.repro;
  return s;
}

std::vector<std::string> bench_table(const std::vector<BenchRow>& rows) {
  std::vector<std::string> out;
  char b[640];
  snprintf(b, sizeof b, "%-14s %-19s %-22s %9s %5s %11s %11s %11s %10s %10s", "collective", "algorithm", "datatype",
           "bytes", "reps", "min us", "median us", "max us", "algbw GB/s", "busbw GB/s");
  out.push_back(b);
  for (const auto& r : rows) {
    const std::string bytes = r.coll == "barrier" ? "-" : format_bytes(r.bytes);
    const std::string algo = r.algo + (r.selected ? "*" : "");
    const std::string variant = bench_variant(r);
    if (!r.timed) {
      snprintf(b, sizeof b, "%-14s %-19s %-22s %9s %5s %s", r.coll.c_str(), algo.c_str(), variant.c_str(),
               bytes.c_str(), "-", r.note.c_str());
      out.push_back(b);
      continue;
    }
    // Small rates keep their significant digits (never a bare 0.000).
    auto rate = [](double v) {
      char b[32];
      if (v >= 0.01) snprintf(b, sizeof b, "%.3f", v);
      else snprintf(b, sizeof b, "%.2e", v);
      return std::string(b);
    };
    const std::string alg = r.has_bw ? rate(r.algbw_gbps) : "-";
    const std::string bus = r.has_bw ? rate(r.busbw_gbps) : "-";
    snprintf(b, sizeof b, "%-14s %-19s %-22s %9s %5u %11.2f %11.2f %11.2f %10s %10s", r.coll.c_str(), algo.c_str(),
             variant.c_str(), bytes.c_str(), r.reps, r.min_us, r.median_us, r.max_us, alg.c_str(), bus.c_str());
    out.push_back(b);
  }
  return out;
}

std::string bench_json(const std::vector<BenchRow>& rows, const std::vector<std::pair<std::string, std::string>>& extra) {
  auto opt = [](const std::string& v) { return v.empty() ? std::string("null") : json_str(v); };
  std::string s = "[";
  for (size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& r = rows[i];
    s += i ? ",\n " : "\n ";
    s += "{\"coll\": " + json_str(r.coll) + ", \"algo\": " + json_str(r.algo) +
         ", \"nodes\": " + std::to_string(r.nodes) + ", \"bytes\": " + std::to_string(r.bytes);
    if (r.timed) {
      s += ", \"reps\": " + std::to_string(r.reps) + ", \"lat_us\": {\"min\": " + num(r.min_us, 3) +
           ", \"median\": " + num(r.median_us, 3) + ", \"max\": " + num(r.max_us, 3) +
           (r.mean_us > 0 ? ", \"mean\": " + num(r.mean_us, 3) : std::string()) + "}";
    } else {
      s += ", \"reps\": 0, \"lat_us\": null";
    }
    if (r.has_bw)
      s += ", \"algbw_gbps\": " + num(r.algbw_gbps, 6) + ", \"busbw_gbps\": " + num(r.busbw_gbps, 6);
    else
      s += ", \"algbw_gbps\": null, \"busbw_gbps\": null";
    if (r.coll_fields)
      s += ", \"dtype\": " + opt(r.dtype) + ", \"op\": " + opt(r.op) + ", \"repro\": " + opt(r.repro) +
           ", \"selected\": " + (r.selected ? "true" : "false");
    for (const auto& [k, v] : r.extra) s += ", " + json_str(k) + ": " + v;
    for (const auto& [k, v] : extra) s += ", " + json_str(k) + ": " + v;
    if (!r.note.empty()) s += ", \"note\": " + json_str(r.note);
    s += "}";
  }
  s += rows.empty() ? "]\n" : "\n]\n";
  return s;
}

}  // namespace toroid::rig
