// A tiny SimEndpoint for driver tests: on every step it drains its ports
// (recording what arrived and when), pumps the frame streams it was asked to
// send (keeping what tx_burst did not take, as a real node must), runs an
// optional hook, and returns its next armed deadline.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "base/rng.h"
#include "drivers/sim/sim_fabric.h"

namespace toroid::test {

// Payload of test frame `seq`: the sequence number (4 bytes, little endian)
// and then bytes derived from (seq, offset), so any single bit flip shows.
inline uint8_t frame_byte(uint32_t seq, uint32_t i) { return static_cast<uint8_t>(mix64(uint64_t{seq} << 20 | i)); }

inline void fill_frame(Packet* p, uint32_t seq, uint32_t len) {
  uint8_t* d = p->append(len);
  for (uint32_t i = 0; i < len; ++i) d[i] = frame_byte(seq, i);
  if (len >= 4) std::memcpy(d, &seq, 4);
}

inline std::vector<uint8_t> expected_frame(uint32_t seq, uint32_t len) {
  std::vector<uint8_t> v(len);
  for (uint32_t i = 0; i < len; ++i) v[i] = frame_byte(seq, i);
  if (len >= 4) std::memcpy(v.data(), &seq, 4);
  return v;
}

inline int bit_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return -1;
  int bits = 0;
  for (size_t i = 0; i < a.size(); ++i) bits += __builtin_popcount(static_cast<unsigned>(a[i] ^ b[i]));
  return bits;
}

struct RxRecord {
  uint64_t time;
  uint16_t port;  // Packet::port, the receiving port's local index
  uint32_t len;
  uint32_t seq;   // first four payload bytes (may be corrupted)
  std::vector<uint8_t> bytes;  // only when TestNode::keep_bytes
};

class TestNode final : public SimEndpoint {
 public:
  TestNode(SimFabric& fabric, uint32_t buf_size = 2048, uint32_t max_packets = 8192, uint32_t region = 0)
      : pool(buf_size, max_packets), fabric_(fabric) {
    id = fabric.add_node(this, region);
  }
  ~TestNode() override {
    for (auto& s : streams_)
      for (Packet* p : s.held) p->free();
  }

  SimPort* add_port(uint32_t max_frame = 1500) {
    SimPort* p = fabric_.add_port(id, "port" + std::to_string(ports.size()), &pool, max_frame);
    ports.push_back(p);
    return p;
  }

  // Queue `count` frames of `len` bytes (seq numbers from first_seq) on `port`;
  // they go out on the next steps, as fast as the port takes them.
  void send(SimPort* port, uint32_t count, uint32_t len, uint32_t first_seq = 0) {
    streams_.push_back(Stream{port, count, len, first_seq, {}});
  }
  // Send one frame right now (outside a step); returns whether it was taken.
  bool send_now(SimPort* port, uint32_t seq, uint32_t len) {
    Packet* p = pool.alloc();
    fill_frame(p, seq, len);
    if (port->tx_burst(&p, 1) == 1) return true;
    p->free();
    return false;
  }
  // What arrived, in order: the payload sequence numbers and the instants.
  void arrivals(std::vector<uint32_t>* seqs, std::vector<uint64_t>* times) const {
    for (const auto& r : rx) {
      seqs->push_back(r.seq);
      times->push_back(r.time);
    }
  }
  bool pending() const {
    for (auto& s : streams_)
      if (s.remaining || !s.held.empty()) return true;
    return false;
  }

  uint64_t sim_step(uint64_t now) override {
    ++steps;
    step_times.push_back(now);
    if (drain) drain_ports(now);
    pump();
    if (on_step) on_step(*this, now);
    for (uint64_t d : deadlines)
      if (d > now) return d;
    return kNever;
  }

  uint32_t id = 0;
  HeapPacketPool pool;
  std::vector<SimPort*> ports;
  bool drain = true;         // rx_burst every port on each step
  bool keep_bytes = false;   // keep a copy of every received frame
  std::vector<uint64_t> deadlines;  // sorted; each step returns the first one after now
  std::function<void(TestNode&, uint64_t now)> on_step;
  uint64_t steps = 0;
  size_t forwarded = 0;  // for on_step callbacks that pass frames on
  std::vector<uint64_t> step_times;
  std::vector<RxRecord> rx;

 private:
  struct Stream {
    SimPort* port;
    uint32_t remaining;
    uint32_t len;
    uint32_t next_seq;
    std::vector<Packet*> held;  // not taken by tx_burst yet, in order
  };

  void drain_ports(uint64_t now) {
    Packet* burst[tuning::kBurst];
    for (SimPort* port : ports) {
      uint16_t n;
      while ((n = port->rx_burst(burst, tuning::kBurst)) > 0) {
        for (uint16_t i = 0; i < n; ++i) {
          Packet* p = burst[i];
          RxRecord r{now, p->port, p->len, 0, {}};
          if (p->len >= 4) std::memcpy(&r.seq, p->data(), 4);
          if (keep_bytes) r.bytes.assign(p->data(), p->data() + p->len);
          rx.push_back(std::move(r));
          p->free();
        }
      }
    }
  }

  void pump() {
    for (auto& s : streams_) {
      for (;;) {
        while (s.held.size() < tuning::kBurst && s.remaining > 0) {
          Packet* p = pool.alloc();
          if (!p) break;
          fill_frame(p, s.next_seq++, s.len);
          --s.remaining;
          s.held.push_back(p);
        }
        if (s.held.empty()) break;
        const uint16_t want = static_cast<uint16_t>(s.held.size());
        const uint16_t took = s.port->tx_burst(s.held.data(), want);
        s.held.erase(s.held.begin(), s.held.begin() + took);
        if (took < want) break;  // backlog full: the fabric wakes us when it drains
      }
    }
  }

  SimFabric& fabric_;
  std::vector<Stream> streams_;
};

// A fault plan for tests (on a 4x4x4 partition); a bad spec is a test bug.
inline FaultPlan plan_of(const char* spec) {
  Dims d;
  d.n = {4, 4, 4};
  auto r = parse_fault_plan(spec, d);
  if (!r.is_ok()) {
    std::fprintf(stderr, "plan_of(\"%s\"): %s\n", spec, r.status().to_string().c_str());
    std::abort();
  }
  return *r;
}

// A fabric and its nodes, torn down in the safe order: the fabric frees the
// frames it still holds back to the nodes' pools, so it must go first.
struct Rig {
  std::vector<std::unique_ptr<TestNode>> nodes;  // destroyed after `fabric`
  SimFabric fabric;

  // threads 0: one per region.
  explicit Rig(uint64_t seed, LinkModel model = LinkModel{}, FaultPlan plan = FaultPlan{}, uint32_t regions = 1,
               uint32_t threads = 0)
      : fabric(seed, model, std::move(plan), regions, threads) {}
  TestNode& add_node(uint32_t region = 0) {
    nodes.push_back(std::make_unique<TestNode>(fabric, 2048, 8192, region));
    return *nodes.back();
  }
  // A new port on each node, cabled together; returns the link id.
  int cable(TestNode& a, TestNode& b, uint32_t max_frame = 1500) {
    return fabric.connect(a.add_port(max_frame), b.add_port(max_frame));
  }
};

}  // namespace toroid::test
