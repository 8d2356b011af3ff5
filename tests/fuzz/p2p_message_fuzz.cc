// Fuzz target: point-to-point messages, header and multi-frame reassembly.
// Sequences of frames from the neighbours reach a real Messenger through the
// real NetStack (so the router's checks come first): segments whose torus
// and message headers (kind, sequence number, tag, total, offset, payload
// length) come from the fuzzer, mostly close to what a sender would send
// (the next message number of a source, offsets on segment boundaries) so
// that messages get reassembled, matched, held, spilled, gated, aborted,
// cancelled and credited; interleaved with posted, withdrawn and probed
// receives (copying and reducing), sends of the node's own and requests to
// cancel them, and virtual time.
// Checked: a receive completes at most once, with its length within the
// size the wire allows and its bytes written only inside its buffer
// (AddressSanitizer), counters consistent, and no packet leaks.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "fuzz_node.h"
#include "netstack/p2p.h"

using namespace toroid;
using namespace toroid::fuzz;

namespace {

constexpr uint32_t kMsgHeaders = sizeof(wire::TorusHeader) + sizeof(wire::MsgHeader);
constexpr int kSlots = 8;

void add_u64(const void*, uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  for (uint64_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t a, b;
    std::memcpy(&a, dst + i, 8);
    std::memcpy(&b, src + i, 8);
    a += b;
    std::memcpy(dst + i, &a, 8);
  }
}

struct Slot {
  RecvReq req;
  std::unique_ptr<uint8_t[]> buf;  // exactly cap bytes: ASan catches a write past it
  bool posted = false;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const Dims dims = fuzz_dims(in.ConsumeIntegral<uint8_t>());
  const Coord me = read_coord(in, dims);
  FuzzNode node(dims, me);
  NetStack& net = node.net();
  const uint8_t conf = in.ConsumeIntegral<uint8_t>();
  MessengerConfig mc;  // the defaults, or small limits that the fuzzer can reach
  if (conf & 1) mc.max_message = 1 << 16;
  if (conf & 2) mc.store_cap = 1 << 14;
  if (conf & 4) mc.max_held = 8;
  if (conf & 8) mc.window = 4;
  {
    Messenger msgr(net, mc);
    net.set_handler(wire::PacketType::kP2P, &msgr);
    net.add_link_down_listener(&msgr);
    node.loop().add_poller(&msgr);
    const uint32_t seg = msgr.segment_payload();
    const uint32_t nodes = dims.nodes();
    std::vector<uint32_t> next_seq(nodes, 0);  // each source's next message number
    std::array<Slot, kSlots> slots;
    static uint8_t send_data[1 << 16];
    std::vector<uint64_t> handles;
    std::vector<uint8_t> body;
    uint64_t completed_ok = 0;

    for (int ops = 0; in.remaining_bytes() > 0 && ops < 300; ++ops) {
      const uint8_t op = in.ConsumeIntegral<uint8_t>();
      switch (op % 10) {
        case 0:
        case 1:
        case 2:
        case 3: {  // a segment (or credit, abort) from a source
          const uint32_t src = in.ConsumeIntegralInRange<uint32_t>(0, nodes - 1);
          const Coord sc = coord_of(src, dims);
          const uint16_t context = in.ConsumeIntegralInRange<uint16_t>(0, 3);
          const auto rel = in.ConsumeIntegralInRange<int8_t>(-3, 3);
          uint32_t seq = next_seq[src] + static_cast<uint32_t>(rel);
          if (op & 0x80) seq = in.ConsumeIntegral<uint32_t>();
          if (rel == 1) ++next_seq[src];
          wire::MsgHeader mh;
          std::memset(&mh, 0, sizeof mh);
          mh.kind = (op & 0x40) ? in.ConsumeIntegral<uint8_t>() : in.ConsumeIntegralInRange<uint8_t>(1, 6);
          mh.flags = 0;
          mh.tag.set(in.ConsumeIntegralInRange<uint32_t>(0, 3));
          const uint32_t total = (op & 0x20) ? in.ConsumeIntegral<uint32_t>() : in.ConsumeIntegralInRange<uint32_t>(0, 4 * seg);
          mh.total.set(total);
          uint32_t off, n;
          if (op & 0x10) {
            off = in.ConsumeIntegral<uint32_t>();
            n = in.ConsumeIntegralInRange<uint32_t>(0, seg);
          } else {  // a segment a sender would send
            const uint32_t segs = seg ? (total + seg - 1) / seg : 0;
            const uint32_t k = segs ? in.ConsumeIntegralInRange<uint32_t>(0, segs - 1) : 0;
            off = k * seg;
            n = total - off < seg ? total - off : seg;
          }
          mh.offset.set(off);
          wire::TorusHeader* th = start_body(body, sizeof(wire::MsgHeader) + n, me, sc, wire::PacketType::kP2P);
          th->context.set(context);
          th->tag.set(seq);
          std::memcpy(body.data() + sizeof(wire::TorusHeader), &mh, sizeof mh);
          const std::vector<uint8_t> payload = in.ConsumeBytes<uint8_t>(n);
          if (!payload.empty()) std::memcpy(body.data() + kMsgHeaders, payload.data(), payload.size());
          const size_t port = in.ConsumeIntegralInRange<size_t>(0, node.port_count() - 1);
          node.deliver(port, static_cast<uint8_t>(op & 1), body.data(), static_cast<uint32_t>(body.size()));
          break;
        }
        case 4:
        case 5: {  // post a receive into a free slot
          Slot& s = slots[in.ConsumeIntegralInRange<int>(0, kSlots - 1)];
          if (s.posted) break;
          s.req = RecvReq{};
          s.req.src = in.ConsumeBool() ? kAnySource : static_cast<int32_t>(in.ConsumeIntegralInRange<uint32_t>(0, nodes - 1));
          s.req.context = in.ConsumeIntegralInRange<uint16_t>(0, 3);
          s.req.tag = in.ConsumeIntegralInRange<uint32_t>(0, 3);
          s.req.any_tag = in.ConsumeBool();
          s.req.cap = in.ConsumeIntegralInRange<uint32_t>(0, 4 * seg + 64);
          s.buf.reset(s.req.cap ? new uint8_t[s.req.cap] : nullptr);
          s.req.buf = s.buf.get();
          if (in.ConsumeBool()) {
            s.req.action.fn = add_u64;
            s.req.action.unit = 8;
            if (s.buf) std::memset(s.buf.get(), 0, s.req.cap);
          }
          if (in.ConsumeBool() && !handles.empty()) s.req.gate = handles.back();
          if (msgr.post(&s.req).is_ok()) s.posted = true;
          break;
        }
        case 6: {  // withdraw or unpost
          Slot& s = slots[in.ConsumeIntegralInRange<int>(0, kSlots - 1)];
          if (!s.posted || s.req.done()) break;
          if (in.ConsumeBool()) {
            msgr.withdraw(&s.req);
            s.posted = false;
          } else if (msgr.unpost(&s.req)) {
            s.posted = false;
          }
          break;
        }
        case 7: {  // probe, discard
          MsgEnvelope env;
          const uint16_t context = in.ConsumeIntegralInRange<uint16_t>(0, 3);
          if (in.ConsumeBool()) {
            if (msgr.probe(kAnySource, context, 0, true, &env) && env.length > 0xffffffffull)
              violated("a probed message longer than the wire's 32-bit size");
          } else {
            msgr.discard(context, in.ConsumeIntegralInRange<uint32_t>(0, 3), in.ConsumeIntegralInRange<uint32_t>(0, 5));
          }
          break;
        }
        case 8: {  // a send of our own
          Coord dst = coord_of(in.ConsumeIntegralInRange<uint32_t>(0, nodes - 1), dims);
          const uint32_t len = in.ConsumeIntegralInRange<uint32_t>(0, sizeof send_data);
          auto h = msgr.send(dst, in.ConsumeIntegralInRange<uint16_t>(0, 3), in.ConsumeIntegralInRange<uint32_t>(0, 3),
                             send_data, len);
          if (h.is_ok()) handles.push_back(h.value());
          if (in.ConsumeBool() && !handles.empty()) msgr.cancel(handles.front());
          // Ask a receiver to drop one of ours (MPI_Cancel of a sent send).
          if (in.ConsumeBool() && !handles.empty()) (void)msgr.request_cancel(handles.back());
          break;
        }
        case 9:
          node.advance(in.ConsumeIntegralInRange<uint64_t>(0, 3 * tuning::kLinkDownSimNs));
          break;
      }
      node.run();
      for (Slot& s : slots) {
        if (!s.posted || !s.req.done()) continue;
        if (s.req.length() > 0xffffffffull) violated("a received message longer than the wire's 32-bit size");
        if (s.req.status().is_ok() && s.req.length() > s.req.cap) violated("a truncated receive completed ok");
        s.posted = false;
        if (s.req.status().is_ok()) ++completed_ok;
      }
    }
    if (completed_ok > msgr.counters().msgs_received) violated("more receives completed ok than messages counted");
    for (Slot& s : slots)
      if (s.posted && !s.req.done()) msgr.withdraw(&s.req);
    msgr.cancel_sends();
    node.loop().remove_poller(&msgr);
  }
  node.teardown();
  return 0;
}
