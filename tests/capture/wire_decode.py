"""Reads pcap files and decodes Toroid frames from their bytes, field by field,
as docs/wire.md lays them out: the test's own reading, independent of the
Wireshark dissector it checks (tools/wireshark/toroid.lua).
"""
import struct

ETHERTYPE = 0x88B5
LINK_LEN = 32
HELLO_LEN = 72  # docs/wire.md, "Hello body"


def read_pcap(path):
    """[(ts_ns, bytes)] of a classic pcap file (micro- or nanosecond)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: {len(data)} bytes, no pcap header")
    magic = struct.unpack("<I", data[:4])[0]
    if magic == 0xA1B2C3D4:
        scale = 1000
    elif magic == 0xA1B23C4D:
        scale = 1
    else:
        raise ValueError(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    linktype = struct.unpack("<I", data[20:24])[0]
    if linktype != 1:
        raise ValueError(f"{path}: link type {linktype}, Ethernet (1) expected")
    out, off = [], 24
    while off < len(data):
        if off + 16 > len(data):
            raise ValueError(f"{path}: truncated record header at byte {off}")
        sec, frac, caplen, wirelen = struct.unpack("<IIII", data[off:off + 16])
        off += 16
        if caplen != wirelen or off + caplen > len(data):
            raise ValueError(f"{path}: record at byte {off - 16} truncated ({caplen} of {wirelen} bytes)")
        out.append((sec * 1_000_000_000 + frac * scale, data[off:off + caplen]))
        off += caplen
    return out


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_TABLE = _crc_table()


def crc32c(data, crc=0xFFFFFFFF):
    t = _TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


LINK_NO_CRC = 0x04  # link flag: the medium guarantees integrity, no CRC was computed (docs/wire.md)


def link_crc_ok(frame):
    """None when the frame is too short or its length field overruns it; True
    for a data or ack frame that says it carries no CRC (its port's medium
    guarantees integrity: checked by the receiving port, not here) with the
    CRC field zero as its sender leaves it, False for NOCRC anywhere else."""
    if len(frame) < 14 + LINK_LEN:
        return None
    if frame[16] & LINK_NO_CRC:
        # A sender sets it only on data and acks, leaving the CRC field 0.
        return frame[15] in (1, 2) and frame[42:46] == b"\0\0\0\0"
    length = struct.unpack(">H", frame[38:40])[0]
    if length > len(frame) - 46:
        return None
    c = crc32c(frame[14:42] + b"\0\0\0\0")
    c = crc32c(frame[46:46 + length], c) ^ 0xFFFFFFFF
    return c == struct.unpack(">I", frame[42:46])[0]


def _u(frame, off, n):
    return int.from_bytes(frame[off:off + n], "big")


def _coord(d, key, frame, off):
    for i, a in enumerate("xyz"):
        d[f"{key}.{a}"] = frame[off + i]


def decode(frame):
    """{dissector field name: value} for every field the frame's bytes hold,
    following the same rules as the dissector: the link header when the frame
    has 46 bytes, then the body its type and length give."""
    d = {}
    if len(frame) < 14 + LINK_LEN:
        return d
    b = 14
    for name, off, n in (("version", 0, 1), ("type", 1, 1), ("flags", 2, 1), ("vc", 3, 1), ("seq", 4, 4),
                         ("ack", 8, 4), ("sack", 12, 4), ("length", 24, 2), ("partition", 26, 2), ("crc", 28, 4)):
        d["toroid." + name] = _u(frame, b + off, n)
    d["toroid.credits"] = ",".join(str(_u(frame, b + 16 + 2 * v, 2)) for v in range(4))
    length, ftype = d["toroid.length"], d["toroid.type"]
    off = 46
    blen = min(length, len(frame) - off)
    if ftype == 3 and blen >= HELLO_LEN:
        _coord(d, "toroid.hello", frame, off)
        d["toroid.hello.dir"] = frame[off + 3]
        _coord(d, "toroid.hello.dims", frame, off + 4)
        d["toroid.hello.flags"] = frame[off + 7]
        d["toroid.hello.boot_id"] = _u(frame, off + 8, 8)
        d["toroid.hello.peer_boot"] = _u(frame, off + 16, 8)
        d["toroid.hello.generation"] = _u(frame, off + 24, 4)
        d["toroid.hello.isn"] = _u(frame, off + 28, 4)
        _coord(d, "toroid.hello.origin", frame, off + 32)
        d["toroid.hello.origin_dir"] = frame[off + 35]
        d["toroid.hello.cause"] = frame[off + 36]
        d["toroid.hello.rx_credits"] = frame[off + 37]
        d["toroid.hello.partition"] = frame[off + 40:off + 72].split(b"\0", 1)[0].decode("latin-1")
    elif ftype == 1 and blen >= 16:
        _coord(d, "toroid.torus.dst", frame, off)
        _coord(d, "toroid.torus.src", frame, off + 3)
        for name, o, n in (("cls", 6, 1), ("hints", 7, 1), ("flags", 8, 1), ("type", 9, 1), ("context", 10, 2),
                           ("tag", 12, 4)):
            d["toroid.torus." + name] = _u(frame, off + o, n)
        ptype, off, blen = d["toroid.torus.type"], off + 16, blen - 16
        layouts = {
            2: ("coll", 20, (("algo", 0, 1), ("dim", 1, 1), ("step", 2, 2), ("chunk", 4, 4), ("count", 8, 4),
                             ("total", 12, 8))),
            3: ("msg", 16, (("kind", 0, 1), ("flags", 1, 1), ("tag", 4, 4), ("total", 8, 4), ("offset", 12, 4))),
            5: ("tree", 16, (("cls", 0, 1), ("op", 1, 1), ("type", 2, 1), ("flags", 3, 1), ("width", 4, 2),
                             ("count", 6, 2), ("seq", 8, 4), ("total", 12, 4))),
            6: ("barrier", 8, (("cls", 0, 1), ("channel", 1, 1), ("mode", 2, 1), ("flags", 3, 1), ("epoch", 4, 4))),
        }
        if ptype in layouts:
            name, size, fields = layouts[ptype]
            if blen >= size:
                for fname, o, n in fields:
                    d[f"toroid.{name}.{fname}"] = _u(frame, off + o, n)
                if name == "msg" and d["toroid.msg.kind"] == 2:  # a credit return: offset holds the count
                    d["toroid.msg.credit"] = d.pop("toroid.msg.offset")
                    del d["toroid.msg.total"]
    return d


def decoded_fields():
    """Every field decode() can produce, in a fixed order (tshark's -e list)."""
    names = ["toroid." + n for n in ("version", "type", "flags", "vc", "seq", "ack", "sack", "credits", "length",
                                     "partition", "crc")]
    names += [f"toroid.hello.{a}" for a in "xyz"] + ["toroid.hello.dir"]
    names += [f"toroid.hello.dims.{a}" for a in "xyz"] + ["toroid.hello.flags", "toroid.hello.boot_id"]
    names += ["toroid.hello." + n for n in ("peer_boot", "generation", "isn")]
    names += [f"toroid.hello.origin.{a}" for a in "xyz"]
    names += ["toroid.hello." + n for n in ("origin_dir", "cause", "rx_credits", "partition")]
    names += [f"toroid.torus.{k}.{a}" for k in ("dst", "src") for a in "xyz"]
    names += ["toroid.torus." + n for n in ("cls", "hints", "flags", "type", "context", "tag")]
    names += ["toroid.coll." + n for n in ("algo", "dim", "step", "chunk", "count", "total")]
    names += ["toroid.msg." + n for n in ("kind", "flags", "tag", "total", "offset", "credit")]
    names += ["toroid.tree." + n for n in ("cls", "op", "type", "flags", "width", "count", "seq", "total")]
    names += ["toroid.barrier." + n for n in ("cls", "channel", "mode", "flags", "epoch")]
    return names


def port_mac(file_name):
    """node-1-0-1-port2-y+.pcap -> the port's own MAC bytes 02:54:01:00:01:02."""
    parts = file_name.split("-")
    x, y, z = (int(v) for v in parts[1:4])
    port = int(parts[4][len("port"):])
    return bytes([0x02, 0x54, x, y, z, port])
