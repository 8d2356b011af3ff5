// The host rig's side of the bench job (firmware/jobs/bench_job.h): the
// nodes' "bench" lines, their aggregation and the report. Pure, so tests
// check it without processes.
//
// Aggregation, per (collective, algorithm, size): a repetition takes as
// long as its slowest node (every node started it right after the same
// barrier); over the repetitions the rig reports min, median (the mean of
// the two middle ones for an even count) and max. Bandwidth from the median,
// NCCL's definitions (GB/s = 10^9 bytes/s):
//   algbw = bytes / time
//   busbw = algbw * 2(n-1)/n (allreduce), * 1 (bcast, reduce),
//           * (n-1)/n (allgather, alltoall, reduce_scatter)
// A barrier moves no data: no bandwidth. A row without every node's
// repetitions gets no figure, only a note saying why.
#pragma once
#include "base/json.h"
#include <cstdint>
#include <string>
#include <vector>

#include "firmware/rig/events.h"

namespace toroid::rig {

struct BenchRecord {
  std::string node, coll, algo;
  std::string dtype, op, repro;  // "" where the collective has none (a barrier's dtype, a bcast's op)
  bool selected = false;         // the selector's choice for this operation (sel=1)
  uint64_t bytes = 0;
  uint32_t reps = 0;
  std::vector<uint64_t> rep_ns;
  std::string skip;  // the node could not run it, and why
};

// What a node reported about its links over the sweep (coll=info).
struct BenchInfo {
  std::string node;
  uint32_t frame = 0, max_body = 0;
  std::string wait;  // spin | idle
  std::vector<std::pair<std::string, uint64_t>> counters;  // data_sent=..., in line order
};

// Parses one "bench" event; false (and *err) if it is malformed. An info
// line fills *info and sets *is_info.
bool parse_bench_event(const NodeEvent& ev, BenchRecord* rec, BenchInfo* info, bool* is_info, std::string* err);

struct BenchRow {
  std::string coll, algo;
  std::string dtype, op, repro;  // as in BenchRecord
  bool selected = false;
  uint32_t nodes = 0;
  uint64_t bytes = 0;
  uint32_t reps = 0;
  bool timed = false;  // the figures below are valid
  double min_us = 0, median_us = 0, max_us = 0;
  double mean_us = 0;  // the mean repetition (what MPI benchmarks print as their average)
  bool has_bw = false;
  double algbw_gbps = 0, busbw_gbps = 0;
  std::string note;  // why there is no figure ("not available: ...")
  // Whether the JSON record has dtype, op, repro and selected: the sweep's
  // rows (aggregate_bench sets it), not the link bench's.
  bool coll_fields = false;
  std::vector<std::pair<std::string, std::string>> extra;  // more JSON keys of this row (values are JSON text)
};

// The busbw factor of a collective on n nodes; 0 for one without bandwidth.
double bench_bus_factor(const std::string& coll, uint32_t n);
// Median of v (mean of the two middle values for an even count); v non-empty.
double median_of(std::vector<double> v);
// Rows in the order the records first appear; one per (collective,
// algorithm, dtype, op, repro, selected, bytes).
std::vector<BenchRow> aggregate_bench(const std::vector<BenchRecord>& recs, uint32_t nodes);
// "8 B", "4 KiB", "4 MiB".
std::string format_bytes(uint64_t b);
// "double sum exact", "int64 sum", "int64" (bcast), "-" (barrier).
std::string bench_variant(const BenchRow& r);
// The table, one string per line (header first); the selector's choices
// carry a '*' after the algorithm.
std::vector<std::string> bench_table(const std::vector<BenchRow>& rows);
// JSON string literals: base/json.h.
using toroid::json_str;
// A JSON array, one record per row:
//   {"coll", "algo", "dtype", "op", "repro", "selected", "nodes", "bytes", "reps",
//    "lat_us": {"min","median","max"}, "algbw_gbps", "busbw_gbps", plus every
//    extra key with its value, which is JSON text already (json_str("memif"), "9000")}
// dtype, op and repro are null where the collective has none.
// Figures are null where there are none (a barrier's bandwidth, a row that
// could not run: its "note" says why).
std::string bench_json(const std::vector<BenchRow>& rows,
                       const std::vector<std::pair<std::string, std::string>>& extra = {});

}  // namespace toroid::rig
