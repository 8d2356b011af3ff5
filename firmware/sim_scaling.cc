#include "firmware/sim_scaling.h"

#include <cstdio>
#include <map>

#include "base/json.h"
#include "base/log.h"

namespace toroid {

namespace {

// Every node starts the operation at this virtual instant, well after the
// last link trained, so an operation's time is its own, from a common start.
constexpr const char* kStartAt = "200us";

struct Op {
  const char* label;
  std::map<std::string, std::string> args;  // coll job arguments
  uint64_t bgl_ns;                          // BG/L's figure for 65,536 nodes, 0: none published
  const char* bgl_what;
  uint64_t max_nodes;                       // larger partitions are skipped (too big to run here)
};

const std::vector<Op>& ops() {
  static const std::vector<Op> kOps = {
      {"barrier (barrier network)", {{"coll", "barrier"}, {"algo", "barrier-network"}}, tuning::kBglBarrierNs,
       "global barrier", ~uint64_t{0}},
      {"allreduce int64 8 B (tree)",
       {{"coll", "allreduce"}, {"algo", "tree"}, {"dtype", "int64"}, {"count", "1"}}, 0, "", ~uint64_t{0}},
      {"allreduce double exact (tree)",
       {{"coll", "allreduce"}, {"algo", "tree"}, {"dtype", "double"}, {"repro", "exact"}, {"count", "1"}},
       tuning::kBglDoubleSumNs, "two-pass double sum", ~uint64_t{0}},
      {"allreduce int64 1 MiB (torus-tree)",
       {{"coll", "allreduce"}, {"algo", "torus-tree"}, {"dtype", "int64"}, {"count", "131072"}}, 0, "", 2048},
      {"alltoall int64 8 B", {{"coll", "alltoall"}, {"dtype", "int64"}, {"count", "1"}}, 0, "", 1024},
  };
  return kOps;
}

std::string skip_reason(const Op& op, uint32_t nodes) {
  char b[200];
  if (op.max_nodes == 2048)
    snprintf(b, sizeof b, "1 MiB in and out on every node is %.1f GiB of buffers; run up to 2,048 nodes",
             2.0 * nodes / 1024);
  else
    snprintf(b, sizeof b, "%.3g messages (nodes^2): minutes to hours here; run up to 1,024 nodes",
             static_cast<double>(nodes) * nodes);
  return b;
}

struct Row {
  std::string dims, op, status, note;
  uint32_t nodes = 0;
  uint64_t virtual_ns = 0;
  double wall_s = 0;
  uint64_t bgl_ns = 0;
  std::string bgl_what;
};

std::string fmt_ns(uint64_t ns) {
  char b[32];
  return format_duration(ns, b, sizeof b);
}

void print_row(const Row& r) {
  char line[512];
  if (r.status == "skipped") {
    snprintf(line, sizeof line, "%-10s %6u  %-36s %-7s %s", r.dims.c_str(), r.nodes, r.op.c_str(), "SKIP",
             r.note.c_str());
  } else {
    std::string bgl = "-";
    if (r.bgl_ns) {
      char b[96];
      snprintf(b, sizeof b, "%s (x%.2f)", fmt_ns(r.bgl_ns).c_str(),
               static_cast<double>(r.virtual_ns) / static_cast<double>(r.bgl_ns));
      bgl = b;
    }
    snprintf(line, sizeof line, "%-10s %6u  %-36s %-7s %11s %9.2f s  %s%s%s", r.dims.c_str(), r.nodes, r.op.c_str(),
             r.status == "pass" ? "PASS" : "FAIL", fmt_ns(r.virtual_ns).c_str(), r.wall_s, bgl.c_str(),
             r.note.empty() ? "" : "  ", r.note.c_str());
  }
  printf("%s\n", line);
  fflush(stdout);
}

std::string rows_json(const ScalingOptions& opt, const std::vector<Row>& rows) {
  std::string s = "{\"link_model\": " + json_str(opt.base.link.name) +
                  ", \"seed\": " + std::to_string(opt.base.seed) + ", \"threads\": " + std::to_string(opt.base.threads) +
                  ", \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    char wall[32];
    snprintf(wall, sizeof wall, "%.3f", r.wall_s);
    s += i ? ",\n  " : "\n  ";
    s += "{\"dims\": " + json_str(r.dims) + ", \"nodes\": " + std::to_string(r.nodes) + ", \"op\": " + json_str(r.op) +
         ", \"status\": " + json_str(r.status);
    if (r.status == "skipped") {
      s += ", \"virtual_ns\": null, \"wall_s\": null";
    } else {
      s += ", \"virtual_ns\": " + std::to_string(r.virtual_ns) + ", \"wall_s\": " + wall;
    }
    s += ", \"bgl_ns\": " + (r.bgl_ns ? std::to_string(r.bgl_ns) : std::string("null"));
    if (!r.bgl_what.empty()) s += ", \"bgl_figure\": " + json_str(r.bgl_what);
    if (!r.note.empty()) s += ", \"note\": " + json_str(r.note);
    s += "}";
  }
  return s + "\n]}\n";
}

}  // namespace

Result<std::vector<Dims>> parse_dims_list(const std::string& list) {
  std::vector<Dims> out;
  size_t from = 0;
  for (;;) {
    const size_t comma = list.find(',', from);
    const std::string item = list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    auto d = parse_dims(item);
    if (!d) return error(Code::kInvalid, "--dims '%s': %s", item.c_str(), d.status().message().c_str());
    out.push_back(*d);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

int run_scaling(const ScalingOptions& opt) {
  printf("scaling on sim, link model %s, seed %lu, threads %u, faults %s\n", opt.base.link.name,
         static_cast<unsigned long>(opt.base.seed), opt.base.threads, opt.base.faults.to_string().c_str());
  printf("%-10s %6s  %-36s %-7s %11s %11s  %s\n", "shape", "nodes", "operation", "result", "virtual", "wall",
         "BG/L, 65,536 nodes (ratio)");
  // Every node prints a "result ... sha256" line; 65,536 of them per run
  // would drown the table. Everything else (progress, errors) goes through.
  set_log_sink([](LogLevel level, const std::string& line) {
    if (line.find("] result node=") != std::string::npos) return;
    std::string l = line + "\n";
    fwrite(l.data(), 1, l.size(), level <= LogLevel::kWarn ? stderr : stdout);
    fflush(level <= LogLevel::kWarn ? stderr : stdout);
  });
  std::vector<Row> rows;
  bool all_pass = true;
  for (const Dims& dims : opt.shapes) {
    for (const Op& op : ops()) {
      Row r;
      r.dims = dims.to_string();
      r.nodes = dims.nodes();
      r.op = op.label;
      if (r.nodes == 65536 && op.bgl_ns) {
        r.bgl_ns = op.bgl_ns;
        r.bgl_what = op.bgl_what;
      }
      if (r.nodes > op.max_nodes) {
        r.status = "skipped";
        r.note = skip_reason(op, r.nodes);
        print_row(r);
        rows.push_back(r);
        continue;
      }
      SimOptions o = opt.base;
      o.dims = dims;
      o.job = "coll";
      o.job_args = op.args;
      o.job_args["start-at"] = kStartAt;
      o.log_boot = false;
      const double wall0 = wall_seconds();
      SimRig rig(o);
      Status st = rig.build();
      if (!st) {
        set_log_sink(nullptr);
        fprintf(stderr, "toroid-sim: %s\n", st.message().c_str());
        return 2;
      }
      const SimSummary s = rig.run();
      for (uint32_t k = 0; k < rig.node_count(); ++k) {
        const Job* job = rig.node(k).job();
        if (job && !job->cases().empty() && job->cases()[0].elapsed_ns > r.virtual_ns)
          r.virtual_ns = job->cases()[0].elapsed_ns;
      }
      r.wall_s = wall_seconds() - wall0;
      r.status = s.passed == s.nodes ? "pass" : "fail";
      if (r.status != "pass") {
        all_pass = false;
        r.note = s.first_error.empty() ? "not every node finished" : s.first_error;
      }
      print_row(r);
      rows.push_back(r);
    }
  }
  set_log_sink(nullptr);
  if (!opt.json_path.empty()) {
    FILE* f = fopen(opt.json_path.c_str(), "w");
    const std::string text = rows_json(opt, rows);
    if (!f || fwrite(text.data(), 1, text.size(), f) != text.size() || fclose(f) != 0) {
      fprintf(stderr, "toroid-sim: --json %s: cannot write it\n", opt.json_path.c_str());
      return 1;
    }
    printf("json: %s\n", opt.json_path.c_str());
  }
  return all_pass ? 0 : 1;
}

}  // namespace toroid
