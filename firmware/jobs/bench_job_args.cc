// The bench job's arguments (firmware/jobs/bench_job.h): collectives,
// algorithms per collective, datatype variants, sizes and repetitions.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/text.h"
#include "firmware/jobs/bench_job.h"

namespace toroid {

namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kMaxBytes = 64 * kMiB;

// "4096", "4k", "4K", "4KiB", "4m", "4MiB" -> bytes.
bool parse_size(std::string s, uint64_t* out) {
  uint64_t mult = 1;
  for (const char* suf : {"KiB", "kiB", "KB", "kB", "K", "k"}) {
    const size_t n = std::strlen(suf);
    if (s.size() > n && s.compare(s.size() - n, n, suf) == 0) {
      s.resize(s.size() - n);
      mult = 1024;
      break;
    }
  }
  if (mult == 1) {
    for (const char* suf : {"MiB", "MB", "M", "m"}) {
      const size_t n = std::strlen(suf);
      if (s.size() > n && s.compare(s.size() - n, n, suf) == 0) {
        s.resize(s.size() - n);
        mult = kMiB;
        break;
      }
    }
  }
  if (mult == 1 && s.size() > 1 && (s.back() == 'B' || s.back() == 'b')) s.pop_back();
  uint64_t v;
  if (!parse_u64(s, &v) || v > UINT64_MAX / mult) return false;
  *out = v * mult;
  return true;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// One list option of parsed values (dtype, op, repro): every item parsed by
// `parse`, duplicates dropped, the error naming the option.
template <typename T, typename F>
Result<std::vector<T>> parse_list(const char* option, const std::string& v, F parse) {
  std::vector<T> out;
  for (const auto& item : split_list(v, ',')) {
    auto x = parse(item);
    if (!x) return error(Code::kInvalid, "bench: --%s: %s", option, x.status().message().c_str());
    if (std::find(out.begin(), out.end(), *x) == out.end()) out.push_back(*x);
  }
  return out;
}

// "allreduce=ring,tree;bcast=binomial" (a group without KIND= is allreduce's)
// into spec->algos; every name checked against the library's registry. The
// first group of a collective replaces its default list, later ones add to it.
Status parse_algos(const std::string& v, BenchSpec* spec) {
  std::vector<std::string> seen;
  for (const auto& group : split_list(v, ';')) {
    std::string coll = "allreduce", names = group;
    if (const size_t eq = group.find('='); eq != std::string::npos) {
      coll = group.substr(0, eq);
      names = group.substr(eq + 1);
    }
    auto kind = bench_coll_kind(coll);
    if (!kind) return error(Code::kInvalid, "bench: --algos '%s': %s", group.c_str(), kind.status().message().c_str());
    coll = bench_coll_name(*kind);
    auto& list = spec->algos[coll];
    if (std::find(seen.begin(), seen.end(), coll) == seen.end()) {
      seen.push_back(coll);
      list.clear();
    }
    for (const auto& a : split_list(names, ',')) {
      std::vector<std::string> add;
      if (a == kBenchAuto) {
        add.push_back(a);
      } else if (a == "all") {
        for (const AlgoInfo& info : algorithms())
          if (info.kind == *kind) add.push_back(info.name);
      } else if (find_algo(*kind, a)) {
        add.push_back(a);
      } else {
        return error(Code::kInvalid, "bench: --algos: unknown %s algorithm '%s' (known: %s; or auto, all)",
                     coll.c_str(), a.c_str(), algo_names(*kind).c_str());
      }
      for (const auto& x : add)
        if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
    }
  }
  return Status::ok();
}

}  // namespace

std::vector<std::string> bench_colls() {
  return {"allreduce", "bcast", "reduce", "allgather", "alltoall", "reduce_scatter", "barrier"};
}

Result<CollKind> bench_coll_kind(const std::string& name) {
  static const std::pair<const char*, CollKind> kNames[] = {
      {"allreduce", CollKind::kAllreduce}, {"bcast", CollKind::kBcast},
      {"reduce", CollKind::kReduce},       {"allgather", CollKind::kAllgather},
      {"alltoall", CollKind::kAlltoall},   {"reduce_scatter", CollKind::kReduceScatter},
      {"reduce-scatter", CollKind::kReduceScatter}, {"barrier", CollKind::kBarrier}};
  for (const auto& [n, k] : kNames)
    if (name == n) return k;
  return error(Code::kInvalid, "unknown collective '%s' (%s)", name.c_str(), joined(bench_colls()).c_str());
}

std::string bench_coll_name(CollKind k) {
  return k == CollKind::kReduceScatter ? "reduce_scatter" : coll_kind_name(k);
}

std::vector<uint64_t> bench_default_sizes() {
  std::vector<uint64_t> s;
  for (uint64_t b = 8; b <= 4 * kMiB; b *= 4) s.push_back(b);
  if (s.back() != 4 * kMiB) s.push_back(4 * kMiB);
  return s;
}

Result<BenchSpec> parse_bench_args(const std::map<std::string, std::string>& args) {
  BenchSpec s;
  s.colls = bench_colls();
  for (const auto& c : s.colls) s.algos[c] = {kBenchAuto};
  s.algos["allreduce"] = {"torus-ring", "torus-tree", kBenchAuto};
  s.sizes = bench_default_sizes();
  for (const auto& [k, v] : args) {
    if (k == "colls") {
      s.colls.clear();
      for (const auto& c : split_list(v, ',')) {
        auto kind = bench_coll_kind(c);
        if (!kind) return error(Code::kInvalid, "bench: --colls: %s", kind.status().message().c_str());
        const std::string name = bench_coll_name(*kind);
        if (std::find(s.colls.begin(), s.colls.end(), name) == s.colls.end()) s.colls.push_back(name);
      }
    } else if (k == "algos") {
      // The older form (no KIND=) names exactly the allreduce algorithms to run.
      if (Status st = parse_algos(v, &s); !st) return st;
    } else if (k == "dtype") {
      auto l = parse_list<DType>("dtype", v, parse_dtype);
      if (!l) return l.status();
      s.dtypes = *l;
    } else if (k == "op") {
      auto l = parse_list<ROp>("op", v, parse_rop);
      if (!l) return l.status();
      s.ops = *l;
    } else if (k == "repro") {
      auto l = parse_list<Repro>("repro", v, parse_repro);
      if (!l) return l.status();
      s.repros = *l;
    } else if (k == "sizes") {
      s.sizes.clear();
      for (const auto& x : split_list(v, ',')) {
        uint64_t b;
        if (!parse_size(x, &b) || b == 0 || b > kMaxBytes)
          return error(Code::kInvalid, "bench: --sizes: '%s' is not a size of 1 B .. 64 MiB (e.g. 8, 4096, 64k, 4M)",
                       x.c_str());
        s.sizes.push_back(b);
      }
    } else if (k == "reps") {
      uint64_t r;
      if (!parse_u64(v, &r) || r == 0 || r > 100000)
        return error(Code::kInvalid, "bench: --reps '%s' must be 1..100000", v.c_str());
      s.reps = static_cast<uint32_t>(r);
      s.reps_given = true;
    } else if (k == "warmup") {
      uint64_t r;
      if (!parse_u64(v, &r) || r > 1000) return error(Code::kInvalid, "bench: warmup '%s' must be 0..1000", v.c_str());
      s.warmup = static_cast<uint32_t>(r);
      s.warmup_given = true;
    } else if (k == "wait") {
      if (v != "spin" && v != "idle") return error(Code::kInvalid, "bench: --wait '%s' must be spin or idle", v.c_str());
      s.spin = v == "spin";
    } else {
      return error(Code::kInvalid,
                   "bench: unknown argument '%s' (colls, algos, dtype, op, repro, sizes, reps, warmup, wait)",
                   k.c_str());
    }
  }
  // Algorithms named for a collective that does not run: a mistake, not a no-op.
  if (auto it = args.find("algos"); it != args.end()) {
    for (const auto& group : split_list(it->second, ';')) {
      const size_t eq = group.find('=');
      auto kind = bench_coll_kind(eq == std::string::npos ? "allreduce" : group.substr(0, eq));
      if (!kind) return kind.status();  // checked above already
      const std::string coll = bench_coll_name(*kind);
      if (std::find(s.colls.begin(), s.colls.end(), coll) == s.colls.end())
        return error(Code::kInvalid, "bench: --algos names %s algorithms, but --colls leaves %s out", coll.c_str(),
                     coll.c_str());
    }
  }
  return s;
}

// Without --reps, OSU's habit: many repetitions of small operations (a
// median of 20 microsecond figures says little on a machine whose vCPUs
// change speed every few seconds), few of large ones.
uint32_t bench_reps_for(const BenchSpec& s, uint64_t bytes) {
  if (!s.reps_given) {
    if (bytes <= 1024) return 1000;
    if (bytes <= 16 * 1024) return 500;
    if (bytes <= 256 * 1024) return 100;
    if (bytes <= kMiB) return 40;
    return 20;
  }
  if (bytes < kMiB) return s.reps;
  return std::min(s.reps, std::max<uint32_t>(5, s.reps / 4));
}

// Without --warmup: a tenth of the repetitions, at least 2.
uint32_t bench_warmup_for(const BenchSpec& s, uint64_t bytes) {
  if (s.warmup_given) return s.warmup;
  if (!s.reps_given) return std::max<uint32_t>(2, bench_reps_for(s, bytes) / 10);
  if (bytes < kMiB) return s.warmup;
  return std::min<uint32_t>(s.warmup, 1);
}

}  // namespace toroid
