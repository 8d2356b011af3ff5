// Fuzz target: the collective header of the torus algorithms (TorusHeader +
// CollHeader + elements). A real world Comm (with its Messenger) over a real
// NetStack runs allreduce torus-ring, torus-fixed-order and torus-tree and
// bcast line-multicast operations; the other nodes' packets come from the
// fuzzer: mostly the context, operation tag, algorithm and sizes a peer
// would send (so they pass the shape checks and get reduced, forwarded and
// re-ordered behind later operations), sometimes anything.
// Checked: every operation ends by its deadline, buffers are only touched
// inside their bounds (AddressSanitizer), and no packet leaks.
#include <cstdint>
#include <vector>

#include "base/log.h"
#include "collectives/coll_wire.h"
#include "collectives/comm.h"
#include "fuzz_node.h"
#include "fuzz_tree.h"
#include "netstack/p2p.h"

using namespace toroid;
using namespace toroid::fuzz;

namespace {
constexpr uint16_t kContext = 1;
constexpr uint64_t kTimeout = 5 * kMs;
struct Algo {
  CollKind kind;
  const char* name;
  wire::CollAlgo wire;
};
constexpr Algo kAlgos[] = {
    {CollKind::kAllreduce, "torus-ring", wire::CollAlgo::kTorusRing},
    {CollKind::kAllreduce, "torus-fixed-order", wire::CollAlgo::kTorusFixedOrder},
    {CollKind::kAllreduce, "torus-tree", wire::CollAlgo::kTorusTree},
    {CollKind::kBcast, "line-multicast", wire::CollAlgo::kLineMulticast},
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const Dims dims = fuzz_dims(in.ConsumeIntegral<uint8_t>());
  const Coord me = read_coord(in, dims);
  FuzzNode node(dims, me);
  NetStack& net = node.net();
  {
    Logger log("fuzz");
    Messenger msgr(net);
    // The world tree, as a node sets it up (torus-tree reduces over it).
    TreeEngines tree(node, make_tree_route(dims, coord_of(0, dims)), tuning::kTreeClassWorld,
                     tuning::kTreeClassWorld, kTimeout);
    Comm comm(net, msgr, node.loop(), log, kContext, kTimeout);
    net.set_handler(wire::PacketType::kP2P, &msgr);
    net.set_handler(wire::PacketType::kCollective, &comm);
    net.add_link_down_listener(&msgr);
    net.add_link_down_listener(&comm);
    node.loop().add_poller(&comm);
    node.loop().add_poller(&msgr);
    comm.set_tree(&tree.combine, tuning::kTreeClassWorld);
    comm.set_barrier(&tree.barrier, tuning::kBarrierChannelWorld);

    const Algo& algo = kAlgos[in.ConsumeIntegralInRange<size_t>(0, std::size(kAlgos) - 1)];
    // Exactly count elements: AddressSanitizer sees a write past them.
    std::vector<int64_t> buf;
    bool active = false;
    uint64_t count = 0;
    uint32_t chunk_hint = 0;
    std::vector<uint8_t> body;
    for (int ops = 0; in.remaining_bytes() > 0 && ops < 200; ++ops) {
      const uint8_t what = in.ConsumeIntegral<uint8_t>();
      switch (what % 5) {
        case 0: {  // start an operation (if none is running)
          if (active) break;
          count = in.ConsumeIntegralInRange<uint64_t>(0, 400);
          buf.assign(count, 3);
          CollArgs a;
          a.kind = algo.kind;
          a.dtype = DType::kInt64;
          a.op = ROp::kSum;
          a.recv = buf.empty() ? nullptr : buf.data();
          a.count = count;
          a.root = in.ConsumeIntegralInRange<uint32_t>(0, dims.nodes() - 1);
          active = comm.start(a, algo.name).is_ok();
          chunk_hint = 0;
          break;
        }
        case 1:
        case 2:
        case 3: {  // a collective packet from a neighbour
          const Dir from = static_cast<Dir>(in.ConsumeIntegralInRange<int>(0, kNumDirs - 1));
          if (!node.port_of(from)) break;
          const bool wild = what & 0x80;
          Coord src = neighbour(me, from, dims);
          if (what & 0x40) src = coord_of(in.ConsumeIntegralInRange<uint32_t>(0, dims.nodes() - 1), dims);
          wire::TorusHeader* th = start_body(body, sizeof(wire::CollHeader), me, src, wire::PacketType::kCollective);
          th->flags = (what & 0x20) ? wire::kTorusDeposit : 0;
          th->context.set(wild ? in.ConsumeIntegral<uint16_t>() : kContext);
          const auto rel = in.ConsumeIntegralInRange<int8_t>(-1, 2);
          th->tag.set(wild ? in.ConsumeIntegral<uint32_t>() : comm.tag() + static_cast<uint32_t>(rel));
          wire::CollHeader ch;
          ch.algo = wild ? in.ConsumeIntegral<uint8_t>() : static_cast<uint8_t>(algo.wire);
          ch.dim = in.ConsumeIntegralInRange<uint8_t>(0, 3);
          ch.step.set(in.ConsumeIntegralInRange<uint16_t>(0, 8));
          const uint32_t chunk = (what & 0x10) ? in.ConsumeIntegral<uint32_t>() : chunk_hint;
          if (in.ConsumeBool()) ++chunk_hint;
          ch.chunk.set(chunk);
          const uint32_t n = (what & 0x08) ? in.ConsumeIntegral<uint32_t>() : in.ConsumeIntegralInRange<uint32_t>(0, 120);
          ch.count.set(n);
          ch.total.set((what & 0x04) ? in.ConsumeIntegral<uint64_t>() : count);
          std::memcpy(body.data() + sizeof(wire::TorusHeader), &ch, sizeof ch);
          const uint32_t payload = (what & 0x02) ? in.ConsumeIntegralInRange<uint32_t>(0, 1000) : n * 8;
          const std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(payload);
          body.insert(body.end(), bytes.begin(), bytes.end());
          if (body.size() > net.max_body()) body.resize(net.max_body());
          node.deliver(static_cast<size_t>(net.port_of(from)), static_cast<uint8_t>(what & 1), body.data(),
                       static_cast<uint32_t>(body.size()));
          break;
        }
        case 4:
          node.advance(in.ConsumeIntegralInRange<uint64_t>(0, 2 * kTimeout));
          break;
      }
      node.run();
      Status st;
      if (active && comm.test(&st)) active = false;
    }
    node.advance(3 * kTimeout);
    node.run(256);
    Status st;
    if (active && !comm.test(&st)) violated("a collective operation outlived its deadline");
    msgr.cancel_sends();
    node.loop().remove_poller(&comm);
    node.loop().remove_poller(&msgr);
  }
  node.teardown();
  return 0;
}
