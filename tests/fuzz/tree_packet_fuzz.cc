// Fuzz target: the combine (tree) and barrier networks' packets. A real
// CombineEngine and BarrierNet run on a tree class over a real NetStack; the
// node starts a combine operation (op, type, width, count from the fuzzer)
// and enters barrier channels; tree and barrier packets from the neighbours
// carry fuzzer headers: mostly the class, operation id, op, type, width,
// counts, sequence numbers and up/down direction a parent or child would
// send (so packets get folded, turned around and fanned out), sometimes
// anything. When an operation ends the node starts the next (up to 4), so
// packets of the one before meet the engine as stale ones.
// Checked: operations end (ok, failed or at their deadline), every buffer
// access stays in bounds (AddressSanitizer), and no packet leaks.
#include <cstdint>
#include <vector>

#include "fuzz_tree.h"
#include "netstack/tree/tree_wire.h"

using namespace toroid;
using namespace toroid::fuzz;

namespace {
constexpr uint8_t kTreeClass = 3;
constexpr uint8_t kBarrierClass = 4;
constexpr uint64_t kTimeout = 5 * kMs;
constexpr uint32_t kWidths[] = {1, 2, 4, 8, 16, 32, 12};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const Dims dims = fuzz_dims(in.ConsumeIntegral<uint8_t>());
  const Coord me = read_coord(in, dims);
  const Coord root = read_coord(in, dims);
  FuzzNode node(dims, me);
  NetStack& net = node.net();
  {
    TreeEngines engines(node, make_tree_route(dims, root), kTreeClass, kBarrierClass, kTimeout);
    CombineEngine& combine = engines.combine;
    BarrierNet& barrier = engines.barrier;

    const auto op = static_cast<AluOp>(in.ConsumeIntegralInRange<uint8_t>(1, 6));
    const auto type = static_cast<AluType>(in.ConsumeIntegralInRange<uint8_t>(1, 2));
    const uint32_t width = kWidths[in.ConsumeIntegralInRange<size_t>(0, std::size(kWidths) - 1)];
    const uint32_t count = in.ConsumeIntegralInRange<uint32_t>(0, 300);
    // Exactly count * width bytes each: AddressSanitizer sees any byte past them.
    std::vector<uint8_t> vin(static_cast<size_t>(count) * width, 0x5a);
    std::vector<uint8_t> vout(static_cast<size_t>(count) * width, 0);
    bool started = combine.start(kTreeClass, op, type, width, vin.data(), vout.data(), count).is_ok();
    uint32_t op_id = 1;  // the engine numbers them 1, 2, ... (kNextOp)
    uint32_t seq_hint = 0;

    std::vector<uint8_t> body;
    for (int ops = 0; in.remaining_bytes() > 0 && ops < 200; ++ops) {
      const uint8_t what = in.ConsumeIntegral<uint8_t>();
      switch (what % 6) {
        case 0:
        case 1:
        case 2: {  // a tree packet from a neighbour
          const Dir from = static_cast<Dir>(in.ConsumeIntegralInRange<int>(0, kNumDirs - 1));
          FuzzPort* fp = node.port_of(from);
          if (!fp) break;
          const Coord nb = neighbour(me, from, dims);
          wire::TreeHeader h;
          std::memset(&h, 0, sizeof h);
          const bool wild = what & 0x80;
          h.cls = wild ? in.ConsumeIntegral<uint8_t>() : kTreeClass;
          h.op = wild ? in.ConsumeIntegral<uint8_t>() : static_cast<uint8_t>(op);
          h.type = wild ? in.ConsumeIntegral<uint8_t>() : static_cast<uint8_t>(type);
          h.flags = in.ConsumeIntegralInRange<uint8_t>(0, 3);
          h.width.set(wild ? in.ConsumeIntegral<uint16_t>() : static_cast<uint16_t>(width));
          const auto rel = in.ConsumeIntegralInRange<int8_t>(-2, 4);
          const uint32_t seq = (what & 0x40) ? in.ConsumeIntegral<uint32_t>() : seq_hint + static_cast<uint32_t>(rel);
          if (rel == 1) ++seq_hint;
          h.seq.set(seq);
          h.total.set(wild ? in.ConsumeIntegral<uint32_t>() : count);
          const uint16_t n = (what & 0x20) ? in.ConsumeIntegral<uint16_t>() : in.ConsumeIntegralInRange<uint16_t>(0, 64);
          h.count.set(n);
          uint32_t payload = (what & 0x10) ? in.ConsumeIntegralInRange<uint32_t>(0, 1024) : n * width;
          wire::TorusHeader* th = start_body(body, sizeof h, me, nb, wire::PacketType::kTree);
          // The operation: mostly the node's current one, sometimes the one
          // before or after it.
          th->tag.set(wild ? op_id + static_cast<uint32_t>(in.ConsumeIntegralInRange<int8_t>(-2, 2)) : op_id);
          std::memcpy(body.data() + sizeof(wire::TorusHeader), &h, sizeof h);
          const std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(payload);
          body.insert(body.end(), bytes.begin(), bytes.end());
          if (body.size() > net.max_body()) body.resize(net.max_body());
          const size_t port = static_cast<size_t>(net.port_of(from));
          node.deliver(port, static_cast<uint8_t>(what & 1), body.data(), static_cast<uint32_t>(body.size()));
          break;
        }
        case 3: {  // a barrier packet from a neighbour
          const Dir from = static_cast<Dir>(in.ConsumeIntegralInRange<int>(0, kNumDirs - 1));
          if (!node.port_of(from)) break;
          const Coord nb = neighbour(me, from, dims);
          wire::BarrierHeader h;
          h.cls = (what & 0x80) ? in.ConsumeIntegral<uint8_t>() : kBarrierClass;
          h.channel = in.ConsumeIntegralInRange<uint8_t>(0, kBarrierChannels);
          h.mode = in.ConsumeIntegralInRange<uint8_t>(0, 2);
          h.flags = in.ConsumeIntegralInRange<uint8_t>(0, 3);
          h.epoch.set((what & 0x40) ? in.ConsumeIntegral<uint32_t>() : in.ConsumeIntegralInRange<uint32_t>(0, 3));
          start_body(body, sizeof h, me, nb, wire::PacketType::kBarrier);
          std::memcpy(body.data() + sizeof(wire::TorusHeader), &h, sizeof h);
          if (what & 0x20) body.resize(in.ConsumeIntegralInRange<size_t>(0, body.size() + 4));
          node.deliver(static_cast<size_t>(net.port_of(from)), wire::kVcPriority, body.data(),
                       static_cast<uint32_t>(body.size()));
          break;
        }
        case 4: {  // this node enters a barrier channel
          Status st;
          const int ch = in.ConsumeIntegralInRange<int>(0, kBarrierChannels - 1);
          barrier.test(ch, &st);
          (void)barrier.enter(ch, in.ConsumeBool() ? BarrierMode::kOr : BarrierMode::kAnd);
          break;
        }
        case 5:
          node.advance(in.ConsumeIntegralInRange<uint64_t>(0, 2 * kTimeout));
          break;
      }
      node.run();
      Status st;
      if (started && combine.test(kTreeClass, &st)) {
        started = op_id < 4 && combine.start(kTreeClass, op, type, width, vin.data(), vout.data(), count).is_ok();
        if (started) {
          ++op_id;
          seq_hint = 0;
        }
      }
    }
    // Past every deadline: whatever is still running must end now.
    node.advance(3 * kTimeout);
    node.run(256);
    Status st;
    if (started && !combine.test(kTreeClass, &st)) violated("a combine operation outlived its deadline");
  }
  node.teardown();
  return 0;
}
