#!/usr/bin/env python3
"""Writes the binary fuzz targets' seed corpora (tests/fuzz/corpus/) from the
frames of a real run, captured by the sim:

  ./toroid sim --dims 2x2x2 --job selftest --pcap /tmp/cap
  python3 tests/fuzz/make_seeds.py /tmp/cap tests/fuzz/corpus

Each seed is the input format of its target (tests/fuzz/fuzz_input.h:
numbers little-endian in as many bytes as their range needs, read front to
back) holding the frames one node's port received, in order:
  link-frame   the raw frames (Ethernet, link header, body) as received
  torus-route  the bodies of the data frames and the hellos, on that port
  p2p-message  the message segments among them (every header field given
               as it was on the wire), a receive posted for each message
  coll-header  the collective packets among them, after starting the
               algorithm they name
  tree-packet  the combine and barrier packets among them
Seeds come from nodes 0,0,0 and 1,1,1 of a 2x2x2 run, the first
FRAMES_PER_SEED frames of each kind per port. The targets read these fields in the order written here; keep both in step
(a seed that no longer parses as intended still runs, it only covers less).
Standard library only.
"""
import os
import struct
import sys

ETH = 14
LINK = 32
OVERHEAD = ETH + LINK
MAX_FRAME = 1024                      # fuzz_node.h kMaxFrame
MAX_BODY = MAX_FRAME - OVERHEAD       # NetStack::max_body() on the fuzz ports
TORUS = 16
MSG = 16
SEG = (MAX_BODY - TORUS - MSG) // 64 * 64   # Messenger::segment_payload()
DIMS_2X2X2 = 3                        # fuzz_dims(): index of 2x2x2
FRAMES_PER_SEED = 24                  # frames (or packets) per seed: seeds stay small


def nbytes(rng):
    n = 0
    while rng:
        n += 1
        rng >>= 8
    return n


def num(lo, hi, value):
    """The bytes Input::ConsumeIntegralInRange(lo, hi) reads as `value`."""
    rng = hi - lo
    raw = value - lo
    assert 0 <= raw <= rng, (lo, hi, value)
    return raw.to_bytes(nbytes(rng), "little") if rng else b""


def u8(v):
    return num(0, 255, v & 0xff)


def u32(v):
    return num(0, 2**32 - 1, v & 0xffffffff)


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data)[0]
    endian = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off = 24
    frames = []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack_from(endian + "IIII", data, off)
        off += 16
        frames.append(data[off:off + incl])
        off += incl
    return frames


def parse_name(name):
    """node-X-Y-Z-portN-DIR.pcap -> ((x, y, z), port index)."""
    parts = name[:-len(".pcap")].split("-")
    coord = tuple(int(p) for p in parts[1:4])
    return coord, int(parts[4][len("port"):])


def received(frames, coord, port):
    own = bytes([0x02, ord("T"), coord[0], coord[1], coord[2], port])
    return [f for f in frames if len(f) >= OVERHEAD and f[6:12] != own and f[12:14] == b"\x88\xb5"]


def link_fields(f):
    ftype, vc = f[ETH + 1], f[ETH + 3]
    length = struct.unpack_from(">H", f, ETH + 28)[0]
    return ftype, vc, f[OVERHEAD:OVERHEAD + length]


def node_prefix(coord):
    # dims pick, then me.c[0..2] each in [0, 1]
    return u8(DIMS_2X2X2) + b"".join(num(0, 1, c) for c in coord)


def seed_link_frame(frames):
    out = bytearray(u8(0))  # port without medium integrity
    for f in frames[:FRAMES_PER_SEED]:
        if len(f) > MAX_FRAME:
            continue
        out += u8(0) + num(0, MAX_FRAME, len(f)) + f  # op 0: raw frame, as received
    return bytes(out)


def seed_torus_route(frames, coord, port):
    out = bytearray(node_prefix(coord) + u8(0) + u8(0))  # not adaptive; trainer not started
    for f in frames[:FRAMES_PER_SEED]:
        ftype, vc, body = link_fields(f)
        if ftype == 1 and len(body) <= MAX_BODY:
            out += u8(0) + num(0, 5, port) + num(0, 4, vc) + num(0, MAX_BODY + 8, len(body)) + body
        elif ftype == 3 and len(body) <= 24:
            out += u8(3) + num(0, 5, port) + num(0, 24, len(body)) + body
    return bytes(out)


def packets(frames, ptype):
    """(vc, body) of the data frames carrying torus packets of ptype."""
    for f in frames:
        ftype, vc, body = link_fields(f)
        if ftype == 1 and len(body) >= TORUS and body[9] == ptype:
            yield vc, body


def seed_p2p(frames, coord, port):
    out = bytearray(node_prefix(coord) + u8(0))  # the Messenger's default limits
    posted = set()
    for vc, body in list(packets(frames, 3))[:FRAMES_PER_SEED]:
        if len(body) < TORUS + MSG:
            continue
        src = body[3] + 2 * body[4] + 4 * body[5]
        context = struct.unpack_from(">H", body, 10)[0]
        seq = struct.unpack_from(">I", body, 12)[0]
        kind = body[TORUS]
        tag, total, offset = struct.unpack_from(">III", body, TORUS + 4)
        payload = body[TORUS + MSG:]
        if kind not in (1, 2, 3) or len(payload) > SEG:
            continue
        if kind == 1 and (src, seq) not in posted and len(posted) < 8:
            posted.add((src, seq))
            # op 4: post into slot k: any source, the context, any tag, cap = total, copying, no gate
            cap = min(total, 4 * SEG + 64)
            out += u8(4) + num(0, 7, len(posted) - 1) + u8(1) + num(0, 3, context % 4) + num(0, 3, 0) + u8(1) \
                + num(0, 4 * SEG + 64, cap) + u8(0) + u8(0)
        # op 0xB4: a segment with seq, total and offset given verbatim (op % 10 == 0, vc 0)
        out += u8(0xB4) + num(0, 7, src) + num(0, 3, context % 4) + num(-3, 3, 0) + u32(seq) \
            + num(1, 3, kind) + num(0, 3, tag % 4) + u32(total) + u32(offset) + num(0, SEG, len(payload)) \
            + payload + num(0, 5, port)
    return bytes(out)


def dir_of_port(port):
    return port  # 2x2x2: port i is direction i (x+ x- y+ y- z+ z-)


def coll_op(deposit):
    """The op byte of a collective packet with every field given verbatim:
    wild (0x80: context, tag, algo), source (0x40), deposit (0x20), chunk
    (0x10), count (0x08), total (0x04), payload length (0x02); op % 5 must
    be 1..3 (a packet), bit 0 (the VC) is free to make it so."""
    for bits in (0xDE, 0xDC):  # without 0x02 the payload is count * 8 bytes
        bits |= 0x20 if deposit else 0
        for op in (bits, bits | 1):
            if op % 5 in (1, 2, 3):
                return op
    raise AssertionError("no op byte for deposit=%s" % deposit)


def seed_coll(frames, coord, port):
    pk = list(packets(frames, 2))
    if not pk:
        return None
    algos = {1: 0, 3: 1, 2: 2, 4: 3}  # wire CollAlgo -> the target's kAlgos index
    algo = pk[0][1][TORUS]
    if algo not in algos:
        return None
    count = struct.unpack_from(">Q", pk[0][1], TORUS + 12)[0]
    out = bytearray(node_prefix(coord) + num(0, 3, algos[algo]))
    out += u8(0) + num(0, 400, min(count, 400)) + num(0, 7, 0)  # op 0: start count elements, root 0
    for vc, body in pk[:FRAMES_PER_SEED]:
        if len(body) < TORUS + 20:
            continue
        src = body[3] + 2 * body[4] + 4 * body[5]
        context = struct.unpack_from(">H", body, 10)[0]
        tag = struct.unpack_from(">I", body, 12)[0]
        a, dim, step, chunk, n, total = struct.unpack_from(">BBHIIQ", body, TORUS)
        payload = body[TORUS + 20:]
        op = coll_op(body[8] & 1)
        rec = u8(op) + num(0, 5, dir_of_port(port)) + num(0, 7, src) + struct.pack("<H", context) \
            + num(-1, 2, 0) + u32(tag) + u8(a) + num(0, 3, min(dim, 3)) + num(0, 8, min(step, 8)) \
            + u32(chunk) + u8(0) + u32(n) + struct.pack("<Q", total)
        if op & 0x02:
            payload = payload[:1000]
            rec += num(0, 1000, len(payload))
        else:
            payload = payload[:n * 8]
        out += rec + payload
    return bytes(out)


WIDTHS = [1, 2, 4, 8, 16, 32, 12]  # tree_packet_fuzz.cc kWidths


def seed_tree(frames, coord, port):
    trees = list(packets(frames, 5))
    barriers = list(packets(frames, 6))
    if not trees and not barriers:
        return None
    op, atype, width, total = 1, 1, 8, 0
    if trees:
        h = trees[0][1]
        op, atype = h[TORUS + 1], h[TORUS + 2]
        width = struct.unpack_from(">H", h, TORUS + 4)[0]
        total = struct.unpack_from(">I", h, TORUS + 12)[0]
    if not (1 <= op <= 6 and 1 <= atype <= 2 and width in WIDTHS):
        return None
    # dims, me, the root (rank 0 as the node's world tree), the operation
    out = bytearray(node_prefix(coord) + num(0, 1, 0) * 3 + num(1, 6, op) + num(1, 2, atype)
                    + num(0, len(WIDTHS) - 1, WIDTHS.index(width)) + num(0, 300, min(total, 300)))
    for vc, body in trees[:FRAMES_PER_SEED]:
        if len(body) < TORUS + 16:
            continue
        cls, hop, htype, flags, w, n, seq, tot = struct.unpack_from(">BBBBHHII", body, TORUS)
        payload = body[TORUS + 16:][:1024]
        # op 0xF0 (% 6 == 0, VC 0): class, op, type, width, seq, count and
        # payload length given; the class is the target's (3)
        out += u8(0xF0) + num(0, 5, dir_of_port(port)) + u8(3) + u8(hop) + u8(htype) + num(0, 3, flags & 3) \
            + struct.pack("<H", w) + num(-2, 4, 0) + u32(seq) + u32(tot) + struct.pack("<H", n) \
            + num(0, 1024, len(payload)) + payload
    for vc, body in barriers[:FRAMES_PER_SEED]:
        if len(body) < TORUS + 8:
            continue
        cls, channel, mode, flags, epoch = struct.unpack_from(">BBBBI", body, TORUS)
        # op 0x45 (% 6 == 3): the target's barrier class, epoch given
        out += u8(0x45) + num(0, 5, dir_of_port(port)) + num(0, 4, min(channel, 4)) + num(0, 2, min(mode, 2)) \
            + num(0, 3, flags & 3) + u32(epoch)
    return bytes(out)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: make_seeds.py CAPTURE_DIR CORPUS_DIR\n")
        return 2
    cap, corpus = argv[1], argv[2]
    # Two opposite corners of the partition, every port: enough variety,
    # a corpus of a few hundred KiB.
    names = sorted(n for n in os.listdir(cap) if n.endswith(".pcap") and
                   (n.startswith("node-0-0-0-") or n.startswith("node-1-1-1-")))
    if not names:
        sys.stderr.write("make_seeds.py: no node-*.pcap in %s\n" % cap)
        return 1
    written = 0
    for name in names:
        coord, port = parse_name(name)
        rx = received(read_pcap(os.path.join(cap, name)), coord, port)
        stem = name[:-len(".pcap")]
        seeds = {
            "link-frame": seed_link_frame(rx),
            "torus-route": seed_torus_route(rx, coord, port),
            "p2p-message": seed_p2p(rx, coord, port),
            "coll-header": seed_coll(rx, coord, port),
            "tree-packet": seed_tree(rx, coord, port),
        }
        for target, data in seeds.items():
            if not data or len(data) < 8:
                continue
            d = os.path.join(corpus, target)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, stem), "wb") as f:
                f.write(data)
            written += 1
    print("make_seeds.py: %d seeds from %d captures in %s" % (written, len(names), corpus))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
