// Fuzz target: the torus router. Frames from the six neighbours carry bodies
// from the fuzzer (network header and payload) into a real NetStack, which
// checks the header and routes: delivers, forwards (dimension order with
// dateline VCs, or adaptive), deposits copies, fans class packets out, or
// drops and counts. Hellos go to the real LinkTrainer. Interleaved: local
// sends with fuzzer headers and options, class table entries, ports going
// down, virtual time.
// Checked: every packet handed to a handler has a whole header naming
// coordinates inside the partition and the handler's type, and no packet
// leaks.
#include <cstdint>
#include <vector>

#include "firmware/link_training.h"
#include "firmware/personality.h"
#include "fuzz_node.h"

using namespace toroid;
using namespace toroid::fuzz;

namespace {

class Sink final : public PacketHandler {
 public:
  Sink(const Dims& dims, wire::PacketType type) : dims_(dims), type_(type) {}
  void on_packet(uint16_t, Packet* p) override {
    if (p->len < sizeof(wire::TorusHeader)) violated("a handler got a packet shorter than its header");
    const auto* th = reinterpret_cast<const wire::TorusHeader*>(p->data());
    for (int i = 0; i < kDims; ++i)
      if (th->dst[i] >= dims_.n[i] || th->src[i] >= dims_.n[i]) violated("a handler got a coordinate outside the partition");
    if (th->type != static_cast<uint8_t>(type_)) violated("a packet reached the handler of another type");
    p->free();
  }

 private:
  Dims dims_;
  wire::PacketType type_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const Dims dims = fuzz_dims(in.ConsumeIntegral<uint8_t>());
  const Coord me = read_coord(in, dims);
  FuzzNode node(dims, me, in.ConsumeBool());
  NetStack& net = node.net();
  {
    std::vector<std::unique_ptr<Sink>> sinks;
    for (uint8_t t = 1; t <= wire::kMaxPacketType; ++t) {
      sinks.push_back(std::make_unique<Sink>(dims, static_cast<wire::PacketType>(t)));
      net.set_handler(static_cast<wire::PacketType>(t), sinks.back().get());
    }
    Personality pers;
    pers.dims = dims;
    pers.coord = me;
    pers.has_dims = pers.has_coord = true;
    pers.job = "fuzz";
    pers.ports = default_ports(dims, "sim");
    Logger log("fuzz");
    LinkTrainer trainer(net, node.loop(), log, pers, 7, 50 * kMs);
    net.set_hello_handler(&trainer);
    if (in.ConsumeBool()) trainer.start();

    const uint32_t max_body = net.max_body();
    std::vector<uint8_t> body;
    for (int ops = 0; in.remaining_bytes() > 0 && ops < 200; ++ops) {
      const uint8_t op = in.ConsumeIntegral<uint8_t>();
      switch (op % 8) {
        case 0:
        case 1:
        case 2: {  // a data frame from a neighbour
          const size_t port = in.ConsumeIntegralInRange<size_t>(0, node.port_count() - 1);
          const uint8_t vc = in.ConsumeIntegralInRange<uint8_t>(0, wire::kNumVcs);
          body = in.ConsumeBytes<uint8_t>(in.ConsumeIntegralInRange<uint32_t>(0, max_body + 8));
          node.deliver(port, vc, body.data(), static_cast<uint32_t>(body.size()));
          break;
        }
        case 3: {  // a hello from a neighbour
          const size_t port = in.ConsumeIntegralInRange<size_t>(0, node.port_count() - 1);
          body = in.ConsumeBytes<uint8_t>(in.ConsumeIntegralInRange<uint32_t>(0, 24));
          node.deliver(port, 0, body.data(), static_cast<uint32_t>(body.size()), wire::FrameType::kHello);
          break;
        }
        case 4: {  // a local send
          Packet* p = net.alloc();
          if (!p) break;
          const uint32_t payload = in.ConsumeIntegralInRange<uint32_t>(0, max_body - sizeof(wire::TorusHeader));
          if (!p->append(sizeof(wire::TorusHeader) + payload)) { p->free(); break; }
          auto* th = reinterpret_cast<wire::TorusHeader*>(p->data());
          std::memset(th, 0, sizeof *th);
          for (int i = 0; i < kDims; ++i) th->dst[i] = static_cast<uint8_t>(in.ConsumeIntegralInRange<uint32_t>(0, dims.n[i] - 1));
          th->type = in.ConsumeIntegralInRange<uint8_t>(1, wire::kMaxPacketType);
          th->cls = in.ConsumeIntegralInRange<uint8_t>(0, kMaxClasses);
          const uint8_t how = in.ConsumeIntegral<uint8_t>();
          bool sent = false;
          if (how % 3 == 0) {
            SendOptions opt;
            opt.adaptive = how & 4;
            opt.deposit = how & 8;
            opt.hints = (how & 16) ? in.ConsumeIntegral<uint8_t>() : 0;
            th->cls = 0;
            sent = net.send(p, opt);
          } else if (how % 3 == 1) {
            sent = net.send_dir(static_cast<Dir>(in.ConsumeIntegralInRange<int>(0, kNumDirs - 1)), p, how & 4);
          } else {
            sent = net.send_class(th->cls, p);
          }
          if (!sent) p->free();
          break;
        }
        case 5: {  // a class table entry
          ClassEntry e;
          e.accept = in.ConsumeIntegral<uint8_t>();
          e.out = in.ConsumeIntegral<uint8_t>();
          e.deposit = in.ConsumeBool();
          (void)net.set_class(in.ConsumeIntegralInRange<uint8_t>(0, kMaxClasses), e);
          break;
        }
        case 6:
          node.port(in.ConsumeIntegralInRange<size_t>(0, node.port_count() - 1)).set_down(in.ConsumeBool());
          break;
        case 7:
          node.advance(in.ConsumeIntegralInRange<uint64_t>(0, 3 * tuning::kLinkDownSimNs));
          break;
      }
      node.run();
    }
    node.run(256);
  }
  node.teardown();
  return 0;
}
