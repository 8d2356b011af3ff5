#include "firmware/jobs/bench_job_check.h"

#include <algorithm>
#include <cstring>

#include "firmware/jobs/coll_data.h"

namespace toroid {

namespace {

constexpr uint64_t kCheckAll = 64;  // outputs up to this many elements are checked whole
constexpr uint64_t kSpread = 16;    // elements checked of a larger flat output

// Output elements to check of a flat output of n elements: all of a small
// one, else kSpread spread over it (first and last among them); the offsets
// inside each stretch vary so that the sample does not fall on one stride.
void flat_sample(uint64_t n, std::vector<uint64_t>* out) {
  if (n <= kCheckAll) {
    for (uint64_t i = 0; i < n; ++i) out->push_back(i);
    return;
  }
  const uint64_t stretch = n / (kSpread - 1);
  for (uint64_t j = 0; j + 1 < kSpread; ++j) out->push_back(j * stretch + (j * 7919) % stretch);
  out->push_back(n - 1);
}

}  // namespace

void BenchCheck::prepare(CollKind kind, DType t, ROp op, Repro r, uint64_t count, uint32_t rank, uint32_t size,
                         uint64_t seed) {
  kind_ = kind;
  t_ = t;
  op_ = coll_reduces(kind) ? op : ROp::kSum;  // data-moving kinds: the sum's values (plain elements)
  repro_ = r;
  count_ = count;
  rank_ = rank;
  size_ = size;
  esize_ = elem_size(t_, op_);
  const colldata::Source src(t_, op_, seed);
  const uint64_t n = count, N = size;
  const bool root = rank == 0;
  send_.clear();
  recv_.clear();
  pos_.clear();
  want_.clear();
  bound_.clear();
  poison_ok_ = true;
  switch (kind) {
    case CollKind::kAllreduce:
    case CollKind::kReduce:
      send_.resize(n * esize_);
      src.rows(rank, 0, n, send_.data());
      if (kind == CollKind::kAllreduce || root) {
        recv_.assign(n * esize_, 0);
        flat_sample(n, &pos_);
      }
      break;
    case CollKind::kBcast:
      recv_.assign(n * esize_, 0);
      if (root) src.rows(0, 0, n, recv_.data());
      poison_ok_ = !root;
      flat_sample(n, &pos_);
      break;
    case CollKind::kAllgather:
    case CollKind::kAlltoall:
      send_.resize((kind == CollKind::kAlltoall ? N : 1) * n * esize_);
      src.rows(rank, 0, send_.size() / esize_, send_.data());
      recv_.assign(N * n * esize_, 0);
      if (N * n <= kCheckAll) {
        flat_sample(N * n, &pos_);
      } else if (n > 0) {
        for (uint64_t b = 0; b < N; ++b)
          for (uint64_t i : {uint64_t{0}, n / 2, n - 1})
            if (pos_.empty() || pos_.back() != b * n + i) pos_.push_back(b * n + i);
      }
      break;
    case CollKind::kReduceScatter:
      send_.resize(N * n * esize_);
      src.rows(rank, 0, N * n, send_.data());
      recv_.assign(n * esize_, 0);
      flat_sample(n, &pos_);
      break;
    case CollKind::kGather:
    case CollKind::kScatter:
    case CollKind::kBarrier: break;
  }
  seed_ = seed;
  want_.resize(pos_.size() * esize_);
  bound_.assign(pos_.size(), 0.0);
  for (size_t k = 0; k < pos_.size(); ++k) expected(src, pos_[k], want_.data() + k * esize_, &bound_[k]);
}

void BenchCheck::expected(const colldata::Source& src, uint64_t p, uint8_t* w, double* bound) const {
  const uint64_t n = count_, N = size_;
  *bound = 0;
  switch (kind_) {
    case CollKind::kAllreduce:
    case CollKind::kReduce: colldata::reduce_reference(src, t_, op_, N, p, w, bound); break;
    case CollKind::kReduceScatter: colldata::reduce_reference(src, t_, op_, N, uint64_t{rank_} * n + p, w, bound); break;
    case CollKind::kBcast: src.get(0, p, w); break;
    case CollKind::kAllgather: src.get(p / n, p % n, w); break;
    case CollKind::kAlltoall: src.get(p / n, uint64_t{rank_} * n + p % n, w); break;
    default: break;
  }
  if (repro_ == Repro::kExact) *bound = 0;
}

CollArgs BenchCheck::args() {
  CollArgs a;
  a.kind = kind_;
  a.dtype = t_;
  a.op = op_;
  a.repro = repro_;
  a.count = count_;
  a.root = 0;
  a.send = send_.empty() ? nullptr : send_.data();
  a.recv = recv_.empty() ? nullptr : recv_.data();
  return a;
}

void BenchCheck::poison() {
  if (!poison_ok_) return;
  for (size_t k = 0; k < pos_.size(); ++k) {
    uint8_t* got = recv_.data() + pos_[k] * esize_;
    const uint8_t* w = want_.data() + k * esize_;
    for (size_t b = 0; b < esize_; ++b) got[b] = static_cast<uint8_t>(~w[b]);
  }
}

Status BenchCheck::compare(uint64_t p, const uint8_t* w, double bound) const {
  const uint8_t* got = recv_.data() + p * esize_;
  bool ok = colldata::close_enough(t_, got, w, bound);
  if (ok && rop_is_loc(op_)) ok = std::memcmp(got + dtype_size(t_), w + dtype_size(t_), 4) == 0;
  if (ok) return Status::ok();
  const bool blocks = kind_ == CollKind::kAllgather || kind_ == CollKind::kAlltoall;
  std::string where;
  if (blocks && count_ > 0) where = " (block of rank " + std::to_string(p / count_) + ")";
  return error(Code::kInternal, "element %llu%s is %s, expected %s%s", static_cast<unsigned long long>(p),
               where.c_str(), colldata::format_element(t_, op_, got).c_str(),
               colldata::format_element(t_, op_, w).c_str(), bound > 0 ? " (within the error bound)" : "");
}

Status BenchCheck::check() const {
  for (size_t k = 0; k < pos_.size(); ++k)
    if (Status st = compare(pos_[k], want_.data() + k * esize_, bound_[k]); !st) return st;
  return Status::ok();
}

// (Elements of the data source are at most 16 bytes: a value and a rank.)
uint64_t BenchCheck::whole_elements() const {
  return pos_.empty() || esize_ == 0 || esize_ > 64 ? 0 : recv_.size() / esize_;
}

void BenchCheck::poison_whole() {
  const uint64_t n = whole_elements();
  if (!poison_ok_ || n == 0) return;  // (an empty buffer's data() may be null)
  if (dtype_is_float(t_)) {
    // All ones is a NaN, which no expected value is (the inputs are finite),
    // without computing the expected values twice (a float sum's is dear).
    std::memset(recv_.data(), 0xff, n * esize_);
    return;
  }
  const colldata::Source src(t_, op_, seed_);
  uint8_t w[64];
  double bound = 0;
  for (uint64_t p = 0; p < n; ++p) {
    expected(src, p, w, &bound);
    uint8_t* got = recv_.data() + p * esize_;
    for (size_t b = 0; b < esize_; ++b) got[b] = static_cast<uint8_t>(~w[b]);
  }
}

Status BenchCheck::check_whole(uint64_t from, uint64_t to) const {
  const colldata::Source src(t_, op_, seed_);
  uint8_t w[64];
  double bound = 0;
  for (uint64_t p = from, n = std::min(to, whole_elements()); p < n; ++p) {
    expected(src, p, w, &bound);
    if (Status st = compare(p, w, bound); !st) return st;
  }
  return Status::ok();
}

void BenchCheck::release() {
  std::vector<uint8_t>().swap(send_);
  std::vector<uint8_t>().swap(recv_);
  pos_.clear();
  want_.clear();
  bound_.clear();
}

}  // namespace toroid
