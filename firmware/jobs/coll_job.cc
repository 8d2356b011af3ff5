#include "firmware/jobs/coll_job.h"

#include <cstdio>
#include <cstdlib>

#include "collectives/comm.h"

namespace toroid {

const char* const kCollJobOptions[] = {"coll",     "algo",  "dtype",  "op",            "count",   "repro", "data-seed",
                                       "root",     "in-place", "input", "output", "buffer-blocks", "blocking",
                                       "start-at"};
const int kCollJobOptionCount = sizeof(kCollJobOptions) / sizeof(kCollJobOptions[0]);

const char* coll_job_usage() {
  return "collective job (--job coll): one collective, checked on every node\n"
         "  --coll NAME           allreduce | reduce | bcast | gather | scatter | allgather |\n"
         "                        reduce-scatter | alltoall | barrier (required)\n"
         "  --algo NAME           force an algorithm (default: the selector's; docs/collectives.md)\n"
         "  --dtype T             int8..int64, uint8..uint64, float, double (default int64)\n"
         "  --op OP               sum prod min max band bor bxor land lor lxor minloc maxloc (default sum)\n"
         "  --count N             elements per node (per block for gather/scatter/allgather/\n"
         "                        reduce-scatter/alltoall; default 1024)\n"
         "  --repro MODE          none | fixed-order | exact (float reductions)\n"
         "  --data-seed S         input data seed (default 1): node r's element i depends on (S, r, i) only\n"
         "  --root R              root rank (reduce, bcast, gather, scatter; default 0)\n"
         "  --in-place yes|no     the in-place form (allreduce, reduce, gather, allgather,\n"
         "                        reduce-scatter, alltoall)\n"
         "  --buffer-blocks M     xor-inplace alltoall: buffer of M blocks (1 .. nodes-1)\n"
         "  --input FILE          raw little-endian input: one row per linear rank (count elements;\n"
         "                        nodes x count for scatter, alltoall, reduce-scatter)\n"
         "  --output FILE         write rank 0's output buffer there (raw, little-endian)\n"
         "  --blocking yes|no     use the blocking calls (Comm::run, then a point-to-point ring with\n"
         "                        blocking send/recv); real-time rigs only (host, qemu)\n"
         "  --start-at D          start when the node's clock reads D (sim: one virtual instant\n"
         "                        for every node, so the case time is the operation's own)\n"
         "  prints on every node: result node=X,Y,Z sha256=HEX (of its output buffer)\n";
}

bool is_coll_option(const std::string& arg) {
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) return false;
  for (int i = 0; i < kCollJobOptionCount; ++i)
    if (arg.compare(2, std::string::npos, kCollJobOptions[i]) == 0) return true;
  return false;
}

namespace {
bool parse_u64(const std::string& v, uint64_t* out) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return false;
  char* end = nullptr;
  *out = std::strtoull(v.c_str(), &end, 10);
  return *end == 0;
}
}  // namespace

Result<CollJobSpec> parse_coll_args(const std::map<std::string, std::string>& args) {
  CollJobSpec j;
  j.spec.count = 1024;
  bool have_coll = false;
  for (const auto& [k, v] : args) {
    uint64_t n = 0;
    if (k == "coll") {
      auto kind = parse_coll_kind(v);
      if (!kind) return error(Code::kInvalid, "--coll: %s", kind.status().message().c_str());
      j.spec.kind = *kind;
      have_coll = true;
    } else if (k == "algo") {
      j.spec.algo = v;
    } else if (k == "dtype") {
      auto t = parse_dtype(v);
      if (!t) return error(Code::kInvalid, "--dtype: %s", t.status().message().c_str());
      j.spec.dtype = *t;
    } else if (k == "op") {
      auto op = parse_rop(v);
      if (!op) return error(Code::kInvalid, "--op: %s", op.status().message().c_str());
      j.spec.op = *op;
    } else if (k == "repro") {
      auto r = parse_repro(v);
      if (!r) return error(Code::kInvalid, "--repro: %s", r.status().message().c_str());
      j.spec.repro = *r;
    } else if (k == "count" || k == "data-seed" || k == "root" || k == "buffer-blocks") {
      if (!parse_u64(v, &n)) return error(Code::kInvalid, "--%s '%s' is not a non-negative integer", k.c_str(), v.c_str());
      if (k == "count") {
        if (n > (1ull << 28)) return error(Code::kInvalid, "--count %llu is too large (at most 2^28)",
                                           static_cast<unsigned long long>(n));
        j.spec.count = n;
      } else if (k == "data-seed") {
        j.spec.seed = n;
      } else if (k == "root") {
        if (n > UINT32_MAX) return error(Code::kInvalid, "--root %s is too large", v.c_str());
        j.spec.root = static_cast<uint32_t>(n);
      } else {
        if (n > UINT32_MAX) return error(Code::kInvalid, "--buffer-blocks %s is too large", v.c_str());
        j.spec.buffer_blocks = static_cast<uint32_t>(n);
      }
    } else if (k == "in-place" || k == "blocking") {
      bool on;
      if (v == "yes" || v == "1" || v == "true" || v.empty()) on = true;
      else if (v == "no" || v == "0" || v == "false") on = false;
      else return error(Code::kInvalid, "--%s '%s': use yes or no", k.c_str(), v.c_str());
      (k == "in-place" ? j.spec.in_place : j.blocking) = on;
    } else if (k == "start-at") {
      if (!parse_duration_ns(v.c_str(), &j.start_at_ns))
        return error(Code::kInvalid, "--start-at '%s' is not a duration (e.g. 100us)", v.c_str());
    } else if (k == "input") {
      j.input = v;
    } else if (k == "output") {
      j.output = v;
    } else {
      return error(Code::kInvalid, "--%s is not an option of --job coll", k.c_str());
    }
  }
  if (!have_coll) return error(Code::kInvalid, "--job coll needs --coll NAME");
  if (coll_reduces(j.spec.kind)) {
    if (Status st = check_rop(j.spec.dtype, j.spec.op); !st) return error(Code::kInvalid, "%s", st.message().c_str());
  } else if (args.count("op")) {
    return error(Code::kInvalid, "--op: %s does not reduce", coll_kind_name(j.spec.kind));
  }
  if (j.spec.in_place && !has_in_place(j.spec.kind))
    return error(Code::kInvalid, "--in-place: %s has no in-place form", coll_kind_name(j.spec.kind));
  return j;
}

CollJob::CollJob(const JobContext& ctx, CollJobSpec spec)
    : ctx_(ctx), job_(std::move(spec)), src_(job_.spec.dtype, job_.spec.op, job_.spec.seed) {
  case_.serve_loop_while_checking(ctx_.loop);
}

void CollJob::start() {
  Comm& comm = ctx_.comm;
  const CaseSpec& s = job_.spec;
  if (s.root >= comm.size() &&
      (s.kind == CollKind::kReduce || s.kind == CollKind::kBcast || s.kind == CollKind::kGather ||
       s.kind == CollKind::kScatter)) {
    end(error(Code::kInvalid, "--root %u: the partition has %u nodes", s.root, comm.size()));
    return;
  }
  if (!job_.input.empty()) {
    if (Status st = src_.load_file(job_.input, comm.size(), row_elems(s.kind, comm.size(), s.count)); !st) {
      end(st);
      return;
    }
  }
  case_.prepare(s, comm.rank(), comm.size(), src_);
  if (job_.start_at_ns > ctx_.loop.now()) {
    waiting_ = true;
    start_timer_.set_callback(&CollJob::on_start_time, this);
    ctx_.loop.timers().arm(start_timer_, job_.start_at_ns);
    return;
  }
  begin();
}

void CollJob::begin() {
  Comm& comm = ctx_.comm;
  const CaseSpec& s = job_.spec;
  waiting_ = false;
  t0_ = ctx_.loop.now();
  if (job_.blocking) {
    // Called from the node's loop: the blocking calls drive that loop
    // themselves (it skips this job's poller while they wait).
    Status st = comm.run(case_.args(), s.algo);
    if (st) st = case_.verify();
    if (st) st = p2p_ring();
    end(st);
    return;
  }
  running_ = true;
  if (Status st = comm.start(case_.args(), s.algo); !st) end(st);
}

// Each rank sends "from R" to the next rank with the blocking-style send
// (copied into a pooled buffer, returns at once) and receives from the
// previous one with the blocking recv, which must carry that rank's number.
Status CollJob::p2p_ring() {
  Comm& comm = ctx_.comm;
  const uint32_t n = comm.size(), r = comm.rank();
  if (n == 1) return Status::ok();
  const std::string msg = "from " + std::to_string(r);
  if (Status st = comm.send((r + 1) % n, msg.data(), msg.size()); !st) return st;
  std::vector<uint8_t> got;
  if (Status st = comm.recv((r + n - 1) % n, &got); !st) return st;
  const std::string want = "from " + std::to_string((r + n - 1) % n);
  if (std::string(got.begin(), got.end()) != want)
    return error(Code::kInternal, "point-to-point ring: got '%s', expected '%s'",
                 std::string(got.begin(), got.end()).c_str(), want.c_str());
  ctx_.log.info("point-to-point ring: blocking send/recv ok");
  return Status::ok();
}

bool CollJob::poll() {
  if (waiting_ && ctx_.loop.now() >= job_.start_at_ns) {
    begin();
    return true;
  }
  if (!running_) return false;
  Status st;
  if (!ctx_.comm.test(&st)) return false;
  if (st) st = case_.verify();
  end(st);
  return true;
}

void CollJob::end(Status st) {
  running_ = false;
  done_ = true;
  CaseResult r;
  r.coll = coll_kind_name(job_.spec.kind);
  r.algo = ctx_.comm.algo().empty() ? (job_.spec.algo.empty() ? "-" : job_.spec.algo) : ctx_.comm.algo();
  r.name = job_.spec.label();
  r.elapsed_ns = ctx_.loop.now() - t0_;
  if (st) {
    const Coord c = ctx_.personality.coord;
    ctx_.log.info("result node=%u,%u,%u sha256=%s", c.c[0], c.c[1], c.c[2], case_.sha256().c_str());
    if (!job_.output.empty() && ctx_.comm.rank() == 0) {
      FILE* f = std::fopen(job_.output.c_str(), "wb");
      const size_t n = case_.output_bytes();
      if (!f || (n && std::fwrite(case_.output(), 1, n, f) != n) || std::fclose(f) != 0)
        st = error(Code::kIo, "--output %s: cannot write it", job_.output.c_str());
    }
  }
  r.verdict = st ? CaseVerdict::kPass : CaseVerdict::kFail;
  if (!st) {
    r.detail = st.to_string();
    ctx_.log.error("coll: %s %s %s failed: %s", r.coll.c_str(), r.algo.c_str(), r.name.c_str(), r.detail.c_str());
  }
  cases_.push_back(std::move(r));
  status_ = st;
}

}  // namespace toroid
