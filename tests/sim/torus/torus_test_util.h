// Shared by the torus group's sim tests (tests/sim/torus/): input data,
// reference reductions in the orders the algorithms promise, and a driver
// that runs one collective on every node of a rig. Uses CppUTest's macros
// without including CppUTest: include it after <CppUTest/TestHarness.h>.
#pragma once
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/rng.h"
#include "collectives/comm.h"
#include "collectives/schedule/torus_middle.h"
#include "tests/sim/coll_helpers.h"

namespace toroid::test::torus {

inline const char* const kFaults = "drop=0.05,corrupt=0.01";
constexpr uint64_t kMiBDoubles = (1u << 20) / sizeof(double);

using Bytes = std::vector<uint8_t>;

// Data. kAdversarial: doubles/floats spread over 80 binades with both signs
// (sums depend on the order); integers full-range. kExact: values whose
// reduction is exact in any order (small integers, +-1/+-2 for products).
enum class Data { kAdversarial, kExact };

inline void fill_value(DType t, ROp op, Data mode, uint64_t seed, uint32_t r, uint64_t i, uint8_t* p) {
  Rng rng(mix64(seed * 7919 + r * 104729 + i));
  const uint64_t k = rng.next();
  if (dtype_is_float(t)) {
    double d;
    if (mode == Data::kExact) d = op == ROp::kProd ? (k % 2 ? 1.0 : 2.0) * (k % 3 ? 1 : -1) : double(k % 5) - 2;
    else d = std::ldexp(rng.uniform() - 0.5, static_cast<int>(k % 80) - 40);
    if (t == DType::kFloat) {
      const auto f = static_cast<float>(d);
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &d, 8);
    }
    return;
  }
  const uint64_t v = rng.next();
  std::memcpy(p, &v, dtype_size(t));
}

inline Bytes input(DType t, ROp op, Data mode, uint64_t count, uint32_t r, uint64_t seed) {
  const size_t es = elem_size(t, op);
  Bytes in(count * es);
  for (uint64_t i = 0; i < count; ++i) {
    fill_value(t, op, mode, seed, r, i, in.data() + i * es);
    if (rop_is_loc(op)) {
      const int32_t idx = static_cast<int32_t>(r);
      std::memcpy(in.data() + i * es + dtype_size(t), &idx, 4);
    }
  }
  return in;
}

inline std::vector<Bytes> inputs(uint32_t n, DType t, ROp op, Data mode, uint64_t count, uint64_t seed) {
  std::vector<Bytes> in;
  for (uint32_t r = 0; r < n; ++r) in.push_back(input(t, op, mode, count, r, seed));
  return in;
}

// acc = v0; acc = acc OP v1; ... (the kernels' left operand is the accumulator).
inline Bytes fold(const std::vector<Bytes>& vs, const Reducer& red, uint64_t count) {
  Bytes acc = vs[0];
  for (size_t i = 1; i < vs.size(); ++i) red.apply(acc.data(), vs[i].data(), count);
  return acc;
}

// Reduce every line along dim of `vals` (indexed by rank of dims) with
// line(), leaving a box with that dimension collapsed to 1.
inline std::vector<Bytes> reduce_dim(const std::vector<Bytes>& vals, Dims& dims, int dim,
                                     const std::function<Bytes(const std::vector<Bytes>&)>& line) {
  Dims out = dims;
  out.n[dim] = 1;
  std::vector<Bytes> res(out.nodes());
  for (uint32_t r = 0; r < out.nodes(); ++r) {
    const Coord base = coord_of(r, out);
    std::vector<Bytes> items;
    for (uint32_t p = 0; p < dims.n[dim]; ++p) {
      Coord c = base;
      c.c[dim] = p;
      items.push_back(vals[rank_of(c, dims)]);
    }
    res[r] = line(items);
  }
  dims = out;
  return res;
}

// torus-fixed-order's promise: sum_z(sum_y(sum_x v)), each a left-to-right fold.
inline Bytes nested_reference(std::vector<Bytes> vals, Dims dims, const Reducer& red, uint64_t count) {
  for (int d = 0; d < kDims; ++d)
    vals = reduce_dim(vals, dims, d, [&](const std::vector<Bytes>& items) { return fold(items, red, count); });
  return vals[0];
}

// torus-tree's order (schedule/torus_middle.h): towards the middle m of every
// line, P_p = v_p OP P_(p-1) before it, Q_p = v_p OP Q_(p+1) after it, and
// the middle computes (v_m OP P_(m-1)) OP Q_(m+1).
inline Bytes middle_reference(std::vector<Bytes> vals, Dims dims, const Reducer& red, uint64_t count) {
  auto line = [&](const std::vector<Bytes>& v) {
    const size_t n = v.size(), m = schedule::line_middle(static_cast<uint32_t>(n));
    Bytes acc = v[m];
    if (m > 0) {
      Bytes p = v[0];
      for (size_t i = 1; i < m; ++i) {
        Bytes t = v[i];
        red.apply(t.data(), p.data(), count);
        p = t;
      }
      red.apply(acc.data(), p.data(), count);
    }
    if (m + 1 < n) {
      Bytes q = v[n - 1];
      for (size_t i = n - 2; i > m; --i) {
        Bytes t = v[i];
        red.apply(t.data(), q.data(), count);
        q = t;
      }
      red.apply(acc.data(), q.data(), count);
    }
    return acc;
  };
  for (int d = 0; d < kDims; ++d) vals = reduce_dim(vals, dims, d, line);
  return vals[0];
}

// run_coll with the slices' end counted here: the fabric's clock moves only
// with events, so a node waiting for its deadline still gets there.
inline std::vector<Status> run_all(SimRig& rig, const std::function<CollArgs(size_t)>& args_of,
                                   const std::string& algo, uint64_t limit_ns = 2 * kSec) {
  const auto comms = world_comms(rig);
  std::vector<Status> out(comms.size());
  std::vector<bool> started(comms.size(), false);
  for (size_t i = 0; i < comms.size(); ++i) {
    out[i] = comms[i]->start(args_of(i), algo);
    started[i] = out[i].is_ok();
  }
  auto all_done = [&] {
    Status st;
    for (size_t i = 0; i < comms.size(); ++i)
      if (started[i] && !comms[i]->test(&st)) return false;
    return true;
  };
  uint64_t t = rig.fabric().now();
  const uint64_t end = t + limit_ns;
  while (!all_done() && t < end) {
    for (uint32_t r = 0; r < rig.node_count(); ++r) rig.fabric().wake(r, rig.fabric().now());
    t += 50 * kUs;
    rig.fabric().run(t);
  }
  for (size_t i = 0; i < comms.size(); ++i) {
    Status st;
    if (started[i]) out[i] = comms[i]->test(&st) ? st : error(Code::kTimeout, "did not finish in the test's time");
  }
  return out;
}

inline CollArgs args_for(CollKind kind, DType t, ROp op, uint64_t count, const void* send, void* recv,
                         uint32_t root = 0) {
  CollArgs a;
  a.kind = kind;
  a.dtype = t;
  a.op = op;
  a.count = count;
  a.send = send;
  a.recv = recv;
  a.root = root;
  return a;
}

inline void check_all_ok(const std::vector<Status>& sts, const std::string& what) {
  for (size_t r = 0; r < sts.size(); ++r)
    CHECK_TEXT(sts[r].is_ok(), (what + ": node " + std::to_string(r) + ": " + sts[r].to_string()).c_str());
}

// data_sent of every (node, port): data frames sent for the first time.
inline std::vector<std::vector<uint64_t>> link_data_sent(SimRig& rig) {
  std::vector<std::vector<uint64_t>> v(rig.node_count());
  for (uint32_t r = 0; r < rig.node_count(); ++r) {
    NetStack& net = rig.node(r).net();
    for (uint16_t p = 0; p < net.port_count(); ++p) v[r].push_back(net.link(p).counters().data_sent);
  }
  return v;
}

// Runs one allreduce of every node's `in` with `algo`; returns the outputs.
inline std::vector<Bytes> allreduce(SimRig& rig, const std::string& algo, DType t, ROp op, uint64_t count,
                                    const std::vector<Bytes>& in, bool in_place, const std::string& what) {
  const uint32_t n = rig.node_count();
  std::vector<Bytes> out;
  for (uint32_t r = 0; r < n; ++r) out.push_back(in_place ? in[r] : Bytes(in[r].size(), 0xEE));
  const auto sts = run_all(rig, [&](size_t r) {
    return args_for(CollKind::kAllreduce, t, op, count, in_place ? nullptr : in[r].data(), out[r].data());
  }, algo);
  check_all_ok(sts, what);
  return out;
}

}  // namespace toroid::test::torus
