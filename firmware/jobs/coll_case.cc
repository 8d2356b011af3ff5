#include "firmware/jobs/coll_case.h"

#include <cstring>

#include "base/sha256.h"

namespace toroid {

std::string CaseSpec::label() const {
  std::string s = dtype_name(dtype);
  if (coll_reduces(kind)) s += std::string(" ") + rop_name(op);
  s += " n=" + std::to_string(count);
  if (in_place) s += " in-place";
  if (repro != Repro::kNone) s += std::string(" ") + repro_name(repro);
  if (kind == CollKind::kBcast || kind == CollKind::kReduce || kind == CollKind::kGather ||
      kind == CollKind::kScatter)
    s += " root=" + std::to_string(root);
  if (buffer_blocks) s += " m=" + std::to_string(buffer_blocks);
  return s;
}

bool has_in_place(CollKind k) {
  return k == CollKind::kAllreduce || k == CollKind::kReduce || k == CollKind::kGather ||
         k == CollKind::kAllgather || k == CollKind::kReduceScatter || k == CollKind::kAlltoall;
}

uint64_t row_elems(CollKind k, uint64_t size, uint64_t count) {
  switch (k) {
    case CollKind::kScatter:
    case CollKind::kAlltoall:
    case CollKind::kReduceScatter: return size * count;
    case CollKind::kBarrier: return 0;
    default: return count;
  }
}

void CollCase::prepare(const CaseSpec& spec, uint32_t rank, uint32_t size, const colldata::Source& src) {
  spec_ = spec;
  rank_ = rank;
  size_ = size;
  src_ = &src;
  esize_ = coll_reduces(spec.kind) ? elem_size(spec.dtype, spec.op) : dtype_size(spec.dtype);
  const uint64_t n = spec.count, N = size;
  const bool root = rank == spec.root;
  auto row = [&](uint64_t first, uint64_t cnt, uint8_t* out) { src.rows(rank, first, cnt, out); };
  send_.clear();
  recv_.clear();
  out_ptr_ = nullptr;
  out_bytes_ = 0;
  switch (spec.kind) {
    case CollKind::kAllreduce:
      recv_.resize(n * esize_);
      if (spec.in_place) row(0, n, recv_.data());
      else send_.resize(n * esize_), row(0, n, send_.data());
      out_bytes_ = recv_.size();
      break;
    case CollKind::kReduce:
      recv_.resize(root ? n * esize_ : 0);
      if (spec.in_place && root) row(0, n, recv_.data());
      else send_.resize(n * esize_), row(0, n, send_.data());
      out_bytes_ = recv_.size();
      break;
    case CollKind::kBcast:
      recv_.assign(n * esize_, 0);
      if (root) row(0, n, recv_.data());
      out_bytes_ = recv_.size();
      break;
    case CollKind::kGather:
      recv_.assign(root ? N * n * esize_ : 0, 0);
      if (spec.in_place && root) row(0, n, recv_.data() + rank * n * esize_);
      else send_.resize(n * esize_), row(0, n, send_.data());
      out_bytes_ = recv_.size();
      break;
    case CollKind::kScatter:
      recv_.assign(n * esize_, 0);
      if (root) send_.resize(N * n * esize_), row(0, N * n, send_.data());
      out_bytes_ = recv_.size();
      break;
    case CollKind::kAllgather:
      recv_.assign(N * n * esize_, 0);
      if (spec.in_place) row(0, n, recv_.data() + rank * n * esize_);
      else send_.resize(n * esize_), row(0, n, send_.data());
      out_bytes_ = recv_.size();
      break;
    case CollKind::kReduceScatter:
      if (spec.in_place) recv_.resize(N * n * esize_), row(0, N * n, recv_.data());
      else recv_.assign(n * esize_, 0), send_.resize(N * n * esize_), row(0, N * n, send_.data());
      out_bytes_ = n * esize_;
      break;
    case CollKind::kAlltoall:
      recv_.assign(N * n * esize_, 0);
      if (spec.in_place) row(0, N * n, recv_.data());
      else send_.resize(N * n * esize_), row(0, N * n, send_.data());
      out_bytes_ = recv_.size();
      break;
    case CollKind::kBarrier: break;
  }
  out_ptr_ = recv_.data();
}

CollArgs CollCase::args() {
  CollArgs a;
  a.kind = spec_.kind;
  a.dtype = spec_.dtype;
  a.op = spec_.op;
  a.repro = spec_.repro;
  a.count = spec_.count;
  a.root = spec_.root;
  a.buffer_blocks = spec_.buffer_blocks;
  a.seed = spec_.seed;
  a.recv = recv_.empty() ? nullptr : recv_.data();
  a.send = send_.empty() ? nullptr : send_.data();
  return a;
}

Status CollCase::verify() const {
  const CaseSpec& s = spec_;
  const uint64_t n = s.count, N = size_;
  const colldata::Source& src = *src_;
  uint8_t want[16];
  checked_ = 0;
  auto check = [&](uint64_t pos, const uint8_t* w, double bound, const char* what) -> Status {
    const uint8_t* got = out_ptr_ + pos * esize_;
    bool ok = colldata::close_enough(s.dtype, got, w, bound);
    if (ok && rop_is_loc(s.op)) ok = std::memcmp(got + dtype_size(s.dtype), w + dtype_size(s.dtype), 4) == 0;
    if (++checked_ % kVerifyTickElems == 0 && loop_) loop_->run_once();
    if (ok) return Status::ok();
    return error(Code::kInternal, "%s element %llu is %s, expected %s%s", what, static_cast<unsigned long long>(pos),
                 colldata::format_element(s.dtype, s.op, got).c_str(),
                 colldata::format_element(s.dtype, s.op, w).c_str(), bound > 0 ? " (within the error bound)" : "");
  };
  const bool exact = s.repro == Repro::kExact;
  auto reduced = [&](uint64_t index, double* bound) {
    colldata::reduce_reference(src, s.dtype, s.op, N, index, want, bound);
    if (exact) *bound = 0;
  };
  double bound = 0;
  // Gathered and all-to-all checks: one row of the expected block per
  // source rank, generated from keys computed once, compared whole; on a
  // mismatch element by element, which names the first wrong one.
  std::vector<colldata::PatternKeys> keys;
  std::vector<uint8_t> expect;
  auto check_block = [&](uint64_t pos, uint64_t rank, uint64_t first, const char* what) -> Status {
    if (n == 0) return Status::ok();  // (no buffers: nothing to compare, not even a null pointer)
    src.rows_keyed(keys.data(), rank, first, n, expect.data());
    if (std::memcmp(out_ptr_ + pos * esize_, expect.data(), n * esize_) == 0) {
      checked_ += n;
      if (n >= kVerifyTickElems && loop_) loop_->run_once();
      return Status::ok();
    }
    for (uint64_t i = 0; i < n; ++i)
      if (Status st = check(pos + i, expect.data() + i * esize_, 0, what); !st) return st;
    return Status::ok();
  };
  switch (s.kind) {
    case CollKind::kAllreduce:
    case CollKind::kReduce:
      if (s.kind == CollKind::kReduce && rank_ != s.root) return Status::ok();
      for (uint64_t i = 0; i < n; ++i) {
        reduced(i, &bound);
        if (Status st = check(i, want, bound, "reduced"); !st) return st;
      }
      return Status::ok();
    case CollKind::kReduceScatter:
      for (uint64_t i = 0; i < n; ++i) {
        reduced(rank_ * n + i, &bound);
        if (Status st = check(i, want, bound, "reduced"); !st) return st;
      }
      return Status::ok();
    case CollKind::kBcast:
      for (uint64_t i = 0; i < n; ++i) {
        src.get(s.root, i, want);
        if (Status st = check(i, want, 0, "broadcast"); !st) return st;
      }
      return Status::ok();
    case CollKind::kScatter:
      for (uint64_t i = 0; i < n; ++i) {
        src.get(s.root, rank_ * n + i, want);
        if (Status st = check(i, want, 0, "scattered"); !st) return st;
      }
      return Status::ok();
    case CollKind::kGather:
    case CollKind::kAllgather:
      if (s.kind == CollKind::kGather && rank_ != s.root) return Status::ok();
      src.keys(0, n, &keys);
      expect.resize(n * esize_);
      for (uint64_t r = 0; r < N; ++r)
        if (Status st = check_block(r * n, r, 0, "gathered"); !st) return st;
      return Status::ok();
    case CollKind::kAlltoall:
      src.keys(rank_ * n, n, &keys);
      expect.resize(n * esize_);
      for (uint64_t j = 0; j < N; ++j)
        if (Status st = check_block(j * n, j, rank_ * n, "received"); !st) return st;
      return Status::ok();
    case CollKind::kBarrier: return Status::ok();
  }
  return Status::ok();
}

std::string CollCase::sha256() const { return sha256_hex(out_ptr_, out_bytes_); }

}  // namespace toroid
