// plan_sim.h: a network-free executor of schedule::Plans for unit tests
// (header-only). It runs the plans of all n ranks of a communicator at once,
// with the semantics of collectives/schedule/plan.h, and reports what moved.
//
// API (namespace toroid::plansim):
//   RankIO { in, out, in_place }   one rank's caller buffers as bytes; with
//                                  in_place, kIn is the same memory as kOut
//                                  (`in` is ignored).
//   ReduceFn                       void(*)(void* dst, const void* src, size_t n):
//                                  dst[i] = dst[i] OP src[i]; the same type as
//                                  Reducer::Fn, so make_reducer(t, op).fn works;
//                                  kernels sum_fn<T>, xor_fn<T> are below.
//   Options { first_come_seed }    0: a first_come step completes its receives
//                                  in list order; else in a seeded shuffled
//                                  order (to show results do not depend on it).
//   Report run_plans(plans, io, esize, fn, opts)
//       plans[r] is rank r's plan, io[r] its buffers (results land in io[r].out).
//   Report: ok / error (one message naming ranks and steps), steps[r] (steps
//       rank r ran), msgs[k] (every message sent in some rank's step k, as
//       {src, dst, elems}), max_inflight(src, dst) (the most bytes queued on
//       that pair at once), sent_bytes[r] / recv_bytes[r] (totals per rank),
//       msgs_sent[r], pair_bytes(src, dst) (total bytes on that pair), time
//       (the critical path in steps: a step costs 1 and closes no earlier
//       than one unit after the steps whose messages it receives opened).
//   Helpers: to_bytes(vector<T>), from_bytes<T>(bytes).
//
// Execution model: synchronous rounds. In a round every rank that has no
// step open opens its next one: its `before` copies, then every send in list
// order (the data is copied into the (src, dst) FIFO at that moment). Then
// every rank with an open step matches receives: a receive from `peer` takes
// the head of the (peer, me) FIFO once all earlier receives from that peer in
// the step are done; the message must hold exactly n elements (else an
// error naming both ranks and the step). Copies complete as soon as their
// message is there; reductions apply in list order (a reduction waits for
// every earlier receive of its step), except in first_come steps, where
// receives complete in any order (see Options). (The plan runner takes the
// receives of an ordinary step strictly in list order; with every message
// buffered, as here, that changes no result and no step count.) A step with
// every receive done closes; after the last step the `finish` copies run.
// Bytes in flight
// are measured after the send phase of each round. A round in which nothing
// moves while some rank is unfinished is a deadlock, reported with who waits
// for whom. Messages never received are an error too, and so is any buffer
// range out of bounds (kIn/kOut by their byte size / esize, kTmp by
// plan.tmp_elems).
#pragma once
#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "collectives/schedule/plan.h"

namespace toroid::plansim {

using ReduceFn = void (*)(void* dst, const void* src, size_t n);

template <typename T>
void sum_fn(void* dst, const void* src, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, static_cast<const uint8_t*>(dst) + i * sizeof(T), sizeof(T));
    std::memcpy(&b, static_cast<const uint8_t*>(src) + i * sizeof(T), sizeof(T));
    T c;
    if constexpr (std::is_integral_v<T>) {  // wrap-around, no signed overflow UB
      using U = std::make_unsigned_t<T>;
      c = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      c = a + b;
    }
    std::memcpy(static_cast<uint8_t*>(dst) + i * sizeof(T), &c, sizeof(T));
  }
}
template <typename T>
void xor_fn(void* dst, const void* src, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, static_cast<const uint8_t*>(dst) + i * sizeof(T), sizeof(T));
    std::memcpy(&b, static_cast<const uint8_t*>(src) + i * sizeof(T), sizeof(T));
    a = static_cast<T>(a ^ b);
    std::memcpy(static_cast<uint8_t*>(dst) + i * sizeof(T), &a, sizeof(T));
  }
}

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

struct RankIO {
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  bool in_place = false;
};

struct Options {
  uint64_t first_come_seed = 0;
};

struct Msg {
  uint32_t src;
  uint32_t dst;
  uint64_t elems;
};

struct Report {
  bool ok = true;
  std::string error;
  uint32_t n = 0;
  std::vector<uint32_t> steps;               // per rank
  std::vector<std::vector<Msg>> msgs;        // per step index (the sender's)
  std::vector<uint64_t> inflight;            // n*n: max bytes queued, [src*n+dst]
  std::vector<uint64_t> pair_total;          // n*n: total bytes, [src*n+dst]
  std::vector<uint64_t> sent_bytes, recv_bytes, msgs_sent;  // per rank
  uint32_t time = 0;                         // critical path, in steps
  uint64_t max_inflight(uint32_t s, uint32_t d) const { return inflight[size_t(s) * n + d]; }
  uint64_t pair_bytes(uint32_t s, uint32_t d) const { return pair_total[size_t(s) * n + d]; }
  uint32_t max_steps() const { return steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end()); }
};

namespace detail {

inline std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}
inline const char* buf_name(schedule::Buf b) {
  return b == schedule::Buf::kIn ? "in" : b == schedule::Buf::kOut ? "out" : "tmp";
}

struct Queued {
  std::vector<uint8_t> data;
  uint64_t elems;
  uint32_t step;
  uint32_t stamp;  // when it arrives: the sender's step open time + 1
};

struct RankState {
  uint32_t next = 0;      // next step to open
  bool open = false;      // a step is open (sent, receiving)
  bool finished = false;  // finish copies done
  uint32_t clock = 0;     // critical-path time: when the open step opened, then when it closed
  uint32_t close_at = 0;  // the open step closes no earlier than this
  std::vector<char> done;  // per receive of the open step
  std::vector<uint8_t> tmp;
};

}  // namespace detail

inline Report run_plans(const std::vector<schedule::Plan>& plans, std::vector<RankIO>& io, size_t esize,
                        ReduceFn fn, Options opts = {}) {
  using namespace schedule;
  using detail::fmt;
  Report rep;
  const uint32_t n = static_cast<uint32_t>(plans.size());
  rep.n = n;
  rep.steps.assign(n, 0);
  rep.inflight.assign(size_t(n) * n, 0);
  rep.pair_total.assign(size_t(n) * n, 0);
  rep.sent_bytes.assign(n, 0);
  rep.recv_bytes.assign(n, 0);
  rep.msgs_sent.assign(n, 0);
  auto fail = [&](std::string e) {
    if (rep.ok) {
      rep.ok = false;
      rep.error = std::move(e);
    }
    return rep;
  };
  if (io.size() != n) return fail(fmt("%u plans but %zu buffer sets", n, io.size()));
  if (esize == 0) return fail("esize must be at least 1");
  std::vector<detail::RankState> st(n);
  std::vector<std::deque<detail::Queued>> q(size_t(n) * n);
  std::vector<uint64_t> qbytes(size_t(n) * n, 0);
  for (uint32_t r = 0; r < n; ++r) st[r].tmp.assign(plans[r].tmp_elems * esize, 0);

  // The bytes of buffer b of rank r at element off, or nullptr (with an error) when [off, off+cnt) is out of range.
  auto at = [&](uint32_t r, Buf b, uint64_t off, uint64_t cnt, const char* what, uint32_t step) -> uint8_t* {
    std::vector<uint8_t>* v = b == Buf::kTmp ? &st[r].tmp : (b == Buf::kOut || io[r].in_place) ? &io[r].out : &io[r].in;
    uint64_t elems = v->size() / esize;
    if (off > elems || cnt > elems - off) {
      fail(fmt("rank %u step %u: %s %s[%llu, %llu) is out of bounds (%llu elements)", r, step, what,
               detail::buf_name(b), (unsigned long long)off, (unsigned long long)(off + cnt),
               (unsigned long long)elems));
      return nullptr;
    }
    static uint8_t dummy;
    return v->empty() ? &dummy : v->data() + off * esize;
  };
  auto do_copies = [&](uint32_t r, const std::vector<Copy>& cs, uint32_t step) {
    for (const Copy& c : cs) {
      uint8_t* s = at(r, c.from, c.from_off, c.n, "copy from", step);
      uint8_t* d = at(r, c.to, c.to_off, c.n, "copy to", step);
      if (!s || !d) return false;
      if (c.n) std::memmove(d, s, c.n * esize);
    }
    return true;
  };

  uint64_t rng = opts.first_come_seed * 0x9E3779B97F4A7C15ull + 1;
  auto next_rand = [&]() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };

  for (;;) {
    bool moved = false;
    // Send phase: open the next step of every rank that has none open.
    for (uint32_t r = 0; r < n; ++r) {
      auto& s = st[r];
      if (s.open || s.finished) continue;
      const Plan& p = plans[r];
      if (s.next == p.steps.size()) {
        if (!do_copies(r, p.finish, s.next)) return rep;
        s.finished = true;
        moved = true;
        continue;
      }
      const Step& stp = p.steps[s.next];
      if (!do_copies(r, stp.before, s.next)) return rep;
      for (const Send& sd : stp.sends) {
        if (sd.peer >= n) return fail(fmt("rank %u step %u: send to rank %u of %u", r, s.next, sd.peer, n));
        uint8_t* src = at(r, sd.buf, sd.off, sd.n, "send from", s.next);
        if (!src) return rep;
        detail::Queued m{std::vector<uint8_t>(src, src + sd.n * esize), sd.n, s.next, s.clock + 1};
        size_t k = size_t(r) * n + sd.peer;
        qbytes[k] += sd.n * esize;
        rep.inflight[k] = std::max(rep.inflight[k], qbytes[k]);
        rep.pair_total[k] += sd.n * esize;
        rep.sent_bytes[r] += sd.n * esize;
        rep.msgs_sent[r] += 1;
        if (rep.msgs.size() <= s.next) rep.msgs.resize(s.next + 1);
        rep.msgs[s.next].push_back(Msg{r, sd.peer, sd.n});
        q[k].push_back(std::move(m));
      }
      for (const Recv& rv : stp.recvs)
        if (rv.peer >= n) return fail(fmt("rank %u step %u: receive from rank %u of %u", r, s.next, rv.peer, n));
      s.open = true;
      s.close_at = s.clock + 1;
      s.done.assign(stp.recvs.size(), 0);
      moved = true;
    }
    // Receive phase.
    for (uint32_t r = 0; r < n; ++r) {
      auto& s = st[r];
      if (!s.open) continue;
      const Step& stp = plans[r].steps[s.next];
      const size_t nr = stp.recvs.size();
      std::vector<size_t> order(nr);
      std::iota(order.begin(), order.end(), 0);
      if (stp.first_come && opts.first_come_seed)
        for (size_t i = nr; i > 1; --i) std::swap(order[i - 1], order[next_rand() % i]);
      bool progress = true;
      while (progress) {
        progress = false;
        for (size_t oi = 0; oi < nr; ++oi) {
          size_t i = order[oi];
          if (s.done[i]) continue;
          const Recv& rv = stp.recvs[i];
          bool blocked = false;
          for (size_t j = 0; j < i && !blocked; ++j) {
            if (s.done[j]) continue;
            if (stp.recvs[j].peer == rv.peer) blocked = true;  // FIFO per pair: list order per peer
            if (!stp.first_come && rv.act == Act::kReduce) blocked = true;  // reductions in list order
          }
          if (blocked) continue;
          size_t k = size_t(rv.peer) * n + r;
          if (q[k].empty()) continue;
          detail::Queued& m = q[k].front();
          if (m.elems != rv.n)
            return fail(fmt("rank %u step %u: the message from rank %u (its step %u) holds %llu elements, the "
                            "receive expects %llu",
                            r, s.next, rv.peer, m.step, (unsigned long long)m.elems, (unsigned long long)rv.n));
          uint8_t* d = at(r, rv.buf, rv.off, rv.n, "receive into", s.next);
          if (!d) return rep;
          if (rv.n) {
            if (rv.act == Act::kCopy) {
              std::memcpy(d, m.data.data(), rv.n * esize);
            } else {
              if (!fn) return fail(fmt("rank %u step %u: the plan reduces but no reduction was given", r, s.next));
              fn(d, m.data.data(), rv.n);
            }
          }
          s.close_at = std::max(s.close_at, m.stamp);
          qbytes[k] -= rv.n * esize;
          rep.recv_bytes[r] += rv.n * esize;
          q[k].pop_front();
          s.done[i] = 1;
          progress = moved = true;
        }
      }
      if (std::all_of(s.done.begin(), s.done.end(), [](char c) { return c != 0; })) {
        s.open = false;
        ++s.next;
        rep.steps[r] = s.next;
        s.clock = s.close_at;
        rep.time = std::max(rep.time, s.clock);
      }
    }
    bool all = std::all_of(st.begin(), st.end(), [](const detail::RankState& s) { return s.finished; });
    if (all) break;
    if (!moved) {
      std::string e = "deadlock:";
      int shown = 0;
      for (uint32_t r = 0; r < n && shown < 8; ++r) {
        auto& s = st[r];
        if (!s.open) continue;
        const Step& stp = plans[r].steps[s.next];
        for (size_t i = 0; i < stp.recvs.size(); ++i)
          if (!s.done[i]) {
            e += fmt(" rank %u step %u/%zu waits for a message from rank %u;", r, s.next, plans[r].steps.size(),
                     stp.recvs[i].peer);
            ++shown;
            break;
          }
      }
      return fail(e);
    }
  }
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t d = 0; d < n; ++d)
      if (!q[size_t(s) * n + d].empty())
        return fail(fmt("rank %u sent %zu message(s) to rank %u that were never received (first from its step %u)",
                        s, q[size_t(s) * n + d].size(), d, q[size_t(s) * n + d].front().step));
  return rep;
}

}  // namespace toroid::plansim
