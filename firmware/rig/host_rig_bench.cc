// HostRig's report of the bench job: the sweep's table and its JSON file
// (firmware/rig/bench_report.h says how the nodes' times are aggregated).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "firmware/rig/host_rig.h"

namespace toroid::rig {

bool HostRig::report_bench() {
  std::vector<BenchRecord> all;
  for (auto& n : nodes_) all.insert(all.end(), n->bench.begin(), n->bench.end());
  if (all.empty() && opt_.job != "bench") return true;
  const uint32_t total = static_cast<uint32_t>(nodes_.size());
  const std::vector<BenchRow> rows = aggregate_bench(all, total);

  // What the links carried: the frame size, and the counters summed over nodes.
  uint32_t frame = 0, body = 0, infos = 0;
  std::string wait;
  std::vector<std::pair<std::string, uint64_t>> sum;
  for (auto& n : nodes_) {
    if (!n->has_bench_info) continue;
    ++infos;
    frame = std::max(frame, n->bench_info.frame);
    body = std::max(body, n->bench_info.max_body);
    if (wait.empty()) wait = n->bench_info.wait;
    for (const auto& [k, v] : n->bench_info.counters) {
      bool found = false;
      for (auto& s : sum) {
        if (s.first == k) {
          s.second += v;
          found = true;
        }
      }
      if (!found) sum.emplace_back(k, v);
    }
  }
  say("%s", "");
  std::string frames;
  if (frame)
    frames = ", " + std::to_string(frame) + "-byte frames, " + std::to_string(body) + " B per packet after the link header";
  say("bench on host %s (%u nodes, %s%s), seed %lu", opt_.dims.to_string().c_str(), total, opt_.driver.c_str(),
      frames.c_str(), static_cast<unsigned long>(opt_.seed));
  if (wait == "spin")
    say("%s", "wait=spin: a node busy-polls while its operation is in flight (the loop neither sleeps nor yields)");
  else if (wait == "idle")
    say("%s", "wait=idle: a node waits under the event loop's idle policy (spin, pause, then sleeps up to 1 ms)");
  say("%s", "time of a repetition = its slowest node's; min/median/max over the repetitions; GB/s = 1e9 B/s;");
  say("%s", "busbw (NCCL) = algbw x 2(n-1)/n allreduce, x 1 bcast and reduce, x (n-1)/n allgather, alltoall and");
  say("%s", "reduce_scatter; from the median; * after an algorithm: the selector's choice for that operation");
  if (rows.empty()) say("%s", "no node reported a bench figure");
  for (const auto& l : bench_table(rows)) say("%s", l.c_str());
  if (infos) {
    std::string s = "links over the sweep (" + std::to_string(infos) + " nodes, summed):";
    for (const auto& [k, v] : sum) s += " " + k + "=" + std::to_string(v);
    say("%s", s.c_str());
  }

  if (opt_.json_path.empty()) return true;
  std::vector<std::pair<std::string, std::string>> extra = {{"rig", json_str("host")},
                                                            {"dims", json_str(opt_.dims.to_string())},
                                                            {"driver", json_str(opt_.driver)}};
  if (frame) extra.emplace_back("max_frame", std::to_string(frame));
  if (!wait.empty()) extra.emplace_back("wait", json_str(wait));
  const std::string text = bench_json(rows, extra);
  FILE* f = fopen(opt_.json_path.c_str(), "w");
  bool ok = f != nullptr;
  if (f) {
    ok = fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = fclose(f) == 0 && ok;
  }
  if (!ok) {
    say("rig: cannot write %s: %s", opt_.json_path.c_str(), std::strerror(errno));
    return false;
  }
  say("bench: %zu records written to %s", rows.size(), opt_.json_path.c_str());
  return true;
}

}  // namespace toroid::rig
