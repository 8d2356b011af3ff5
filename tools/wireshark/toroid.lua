-- Wireshark dissector for Toroid frames: Ethernet II, EtherType 0x88B5.
--
-- It follows docs/wire.md, section by section: link header (CRC32C checked),
-- hello body, torus header, then by packet type the collective, message,
-- combine-network (tree) or barrier header. Anything the receiver would drop,
-- and any field no sender writes, gets expert info:
--   toroid.crc.bad        the CRC32C does not match (error)
--   toroid.malformed      short frame, bad version or length, unknown type,
--                         a field out of its range (error)
--   toroid.eth.bad        Ethernet header not as every sender writes it:
--                         destination not broadcast, source not 02:54:x:y:z:port,
--                         EtherType one bit away from 0x88B5 (error)
--   toroid.sender.unknown the source MAC was not announced by a hello earlier
--                         in this capture (warning; preference check_senders)
--   toroid.crc.unchecked  the link flags say the frame carries no CRC (note)
--
-- Use: wireshark -X lua_script:tools/wireshark/toroid.lua cap/node-0-0-0-port0-x+.pcap
--      tshark -X lua_script:tools/wireshark/toroid.lua -r FILE -Y toroid.crc.bad
-- or copy it to ~/.local/lib/wireshark/plugins/. Wireshark 3.x/4.x (Lua 5.2).

local ETHERTYPE = 0x88B5
local LINK_LEN, HELLO_LEN, TORUS_LEN = 32, 72, 16
local COLL_LEN, MSG_LEN, TREE_LEN, BARRIER_LEN = 20, 16, 16, 8

local p = Proto("toroid", "Toroid torus link")
p.prefs.check_senders = Pref.bool("Check senders", true,
  "Flag a frame whose source MAC no hello in this capture announced (turn off for captures started mid-run)")

-- Value tables, as in the headers named in docs/wire.md.
local FRAME_TYPES = { [1] = "data", [2] = "ack", [3] = "hello" }
local DIRS = { [0] = "x+", [1] = "x-", [2] = "y+", [3] = "y-", [4] = "z+", [5] = "z-" }
local VCS = { [0] = "low", [1] = "high (dateline)", [2] = "adaptive", [3] = "priority" }
local PACKET_TYPES = { [1] = "neighbour", [2] = "collective", [3] = "p2p", [4] = "control",
                       [5] = "tree", [6] = "barrier" }
local COLL_ALGOS = { [1] = "torus-ring", [2] = "torus-tree", [3] = "torus-fixed-order", [4] = "line-multicast" }
local MSG_KINDS = { [1] = "data", [2] = "credit", [3] = "abort", [4] = "sync-ack", [5] = "cancel",
                    [6] = "cancel-reply" }
local ALU_OPS = { [1] = "ADD", [2] = "MAX", [3] = "MIN", [4] = "AND", [5] = "OR", [6] = "XOR" }
local ALU_TYPES = { [1] = "unsigned", [2] = "signed" }
local BARRIER_MODES = { [0] = "AND (barrier)", [1] = "OR (interrupt)" }
local RESET_CAUSES = { [0] = "none (first boot)", [1] = "link down", [2] = "neighbour rebooted",
                       [3] = "operation failed", [4] = "cable changed" }

-- Link flags, decoded from this table. A new flag is one more row; a row
-- with no_crc = true marks a flag that means "no CRC: the medium guarantees
-- integrity", and a frame carrying it is shown as not checked, never as bad.
local LINK_FLAGS = {
  { mask = 0x01, abbr = "nak", name = "NAK", descr = "resend what the sack lacks" },
  { mask = 0x02, abbr = "ackreq", name = "ACKREQ", descr = "answer with an ack at once" },
  { mask = 0x04, abbr = "nocrc", name = "NOCRC", descr = "no CRC: the medium guarantees integrity", no_crc = true },
}
local HELLO_FLAGS = {
  { mask = 0x01, abbr = "heard", name = "HEARD", descr = "the sender has heard us" },
  { mask = 0x02, abbr = "done", name = "DONE", descr = "the port is trained on the sender's side" },
}
local TORUS_FLAGS = {
  { mask = 0x01, abbr = "deposit", name = "DEPOSIT", descr = "leave a copy at every node passed" },
  { mask = 0x02, abbr = "adaptive", name = "ADAPTIVE", descr = "may take any productive direction on VC 2" },
  { mask = 0x04, abbr = "crossed_x", name = "CROSSED_X", descr = "has crossed the x dateline" },
  { mask = 0x08, abbr = "crossed_y", name = "CROSSED_Y", descr = "has crossed the y dateline" },
  { mask = 0x10, abbr = "crossed_z", name = "CROSSED_Z", descr = "has crossed the z dateline" },
  { mask = 0x20, abbr = "priority", name = "PRIORITY", descr = "sent on the priority VC 3" },
}
local TREE_FLAGS = {
  { mask = 0x01, abbr = "up", name = "UP", descr = "child to parent: a partial result" },
  { mask = 0x02, abbr = "down", name = "DOWN", descr = "parent to child: the final result" },
}
local BARRIER_FLAGS = {
  { mask = 0x01, abbr = "up", name = "UP", descr = "the subtree has arrived / raised" },
  { mask = 0x02, abbr = "down", name = "DOWN", descr = "the root's verdict for the epoch" },
}

local f = {}
local function field(key, pf) f[key] = pf end
local function flag_fields(prefix, label, tbl)
  local all = 0
  for _, fl in ipairs(tbl) do
    field(prefix .. "." .. fl.abbr, ProtoField.bool("toroid." .. prefix .. "." .. fl.abbr, fl.name, 8, nil, fl.mask, fl.descr))
    all = bit32.bor(all, fl.mask)
  end
  return all
end
local function coord_fields(prefix, label)
  for _, a in ipairs({ "x", "y", "z" }) do
    field(prefix .. "." .. a, ProtoField.uint8("toroid." .. prefix .. "." .. a, label .. " " .. a))
  end
end

-- Link header
field("sender", ProtoField.string("toroid.sender", "Sender (from the source MAC)"))
coord_fields("sender", "Sender")
field("sender.port", ProtoField.uint8("toroid.sender.port", "Sender port index"))
field("version", ProtoField.uint8("toroid.version", "Version"))
field("type", ProtoField.uint8("toroid.type", "Frame type", base.DEC, FRAME_TYPES))
field("flags", ProtoField.uint8("toroid.flags", "Link flags", base.HEX))
local LINK_FLAGS_KNOWN = flag_fields("flags", "Link flags", LINK_FLAGS)
field("vc", ProtoField.uint8("toroid.vc", "Virtual channel", base.DEC, VCS))
field("seq", ProtoField.uint32("toroid.seq", "Sequence number"))
field("ack", ProtoField.uint32("toroid.ack", "Cumulative ack"))
field("sack", ProtoField.uint32("toroid.sack", "Selective ack", base.HEX))
field("credits", ProtoField.uint16("toroid.credits", "Credits freed"))
field("length", ProtoField.uint16("toroid.length", "Length"))
field("partition", ProtoField.uint16("toroid.partition", "Partition tag", base.HEX))
field("crc", ProtoField.uint32("toroid.crc", "CRC32C", base.HEX))
field("crc.computed", ProtoField.uint32("toroid.crc.computed", "CRC32C computed", base.HEX))
field("crc.status", ProtoField.uint8("toroid.crc.status", "CRC32C status", base.DEC,
  { [0] = "Bad", [1] = "Good", [2] = "Not checked" }))
-- Hello body
field("hello", ProtoField.none("toroid.hello", "Hello"))
coord_fields("hello", "Coordinate")
field("hello.dir", ProtoField.uint8("toroid.hello.dir", "Direction", base.DEC, DIRS))
coord_fields("hello.dims", "Dims")
field("hello.flags", ProtoField.uint8("toroid.hello.flags", "Hello flags", base.HEX))
local HELLO_FLAGS_KNOWN = flag_fields("hello.flags", "Hello flags", HELLO_FLAGS)
field("hello.boot_id", ProtoField.uint64("toroid.hello.boot_id", "Boot id", base.HEX))
field("hello.peer_boot", ProtoField.uint64("toroid.hello.peer_boot", "Peer boot id heard", base.HEX))
field("hello.generation", ProtoField.uint32("toroid.hello.generation", "Generation", base.DEC))
field("hello.isn", ProtoField.uint32("toroid.hello.isn", "Initial sequence number", base.DEC))
coord_fields("hello.origin", "Generation started at")
field("hello.origin_dir", ProtoField.uint8("toroid.hello.origin_dir", "Origin port direction", base.DEC, DIRS))
field("hello.cause", ProtoField.uint8("toroid.hello.cause", "Reset cause", base.DEC, RESET_CAUSES))
field("hello.rx_credits", ProtoField.uint8("toroid.hello.rx_credits", "Receive buffers per VC (0: the default, 8)", base.DEC))
field("hello.partition", ProtoField.string("toroid.hello.partition", "Partition id"))
-- Torus header
field("torus", ProtoField.none("toroid.torus", "Torus header"))
coord_fields("torus.dst", "Destination")
coord_fields("torus.src", "Source")
field("torus.cls", ProtoField.uint8("toroid.torus.cls", "Class route"))
field("torus.hints", ProtoField.uint8("toroid.torus.hints", "Direction hints", base.HEX))
field("torus.flags", ProtoField.uint8("toroid.torus.flags", "Torus flags", base.HEX))
local TORUS_FLAGS_KNOWN = flag_fields("torus.flags", "Torus flags", TORUS_FLAGS)
field("torus.type", ProtoField.uint8("toroid.torus.type", "Packet type", base.DEC, PACKET_TYPES))
field("torus.context", ProtoField.uint16("toroid.torus.context", "Context"))
field("torus.tag", ProtoField.uint32("toroid.torus.tag", "Tag"))
field("payload", ProtoField.bytes("toroid.payload", "Payload"))
-- Collective header
field("coll", ProtoField.none("toroid.coll", "Collective header"))
field("coll.algo", ProtoField.uint8("toroid.coll.algo", "Algorithm", base.DEC, COLL_ALGOS))
field("coll.dim", ProtoField.uint8("toroid.coll.dim", "Dimension"))
field("coll.step", ProtoField.uint16("toroid.coll.step", "Step"))
field("coll.chunk", ProtoField.uint32("toroid.coll.chunk", "Chunk"))
field("coll.count", ProtoField.uint32("toroid.coll.count", "Elements"))
field("coll.total", ProtoField.uint64("toroid.coll.total", "Elements in the operation"))
field("coll.elements", ProtoField.bytes("toroid.coll.elements", "Element bytes"))
-- Message header
field("msg", ProtoField.none("toroid.msg", "Message header"))
field("msg.kind", ProtoField.uint8("toroid.msg.kind", "Kind", base.DEC, MSG_KINDS))
field("msg.flags", ProtoField.uint8("toroid.msg.flags", "Flags", base.HEX))
field("msg.tag", ProtoField.uint32("toroid.msg.tag", "Tag"))
field("msg.total", ProtoField.uint32("toroid.msg.total", "Message bytes"))
field("msg.offset", ProtoField.uint32("toroid.msg.offset", "Segment offset"))
field("msg.credit", ProtoField.uint32("toroid.msg.credit", "Credit"))
field("msg.data", ProtoField.bytes("toroid.msg.data", "Segment bytes"))
-- Tree (combine network) header
field("tree", ProtoField.none("toroid.tree", "Combine header"))
field("tree.cls", ProtoField.uint8("toroid.tree.cls", "Tree class"))
field("tree.op", ProtoField.uint8("toroid.tree.op", "ALU op", base.DEC, ALU_OPS))
field("tree.type", ProtoField.uint8("toroid.tree.type", "ALU type", base.DEC, ALU_TYPES))
field("tree.flags", ProtoField.uint8("toroid.tree.flags", "Tree flags", base.HEX))
local TREE_FLAGS_KNOWN = flag_fields("tree.flags", "Tree flags", TREE_FLAGS)
field("tree.width", ProtoField.uint16("toroid.tree.width", "Operand width (bytes)"))
field("tree.count", ProtoField.uint16("toroid.tree.count", "Operands"))
field("tree.seq", ProtoField.uint32("toroid.tree.seq", "Packet index in the operation"))
field("tree.total", ProtoField.uint32("toroid.tree.total", "Operands in the operation"))
field("tree.operands", ProtoField.bytes("toroid.tree.operands", "Operands (data)"))
-- Barrier header
field("barrier", ProtoField.none("toroid.barrier", "Barrier header"))
field("barrier.cls", ProtoField.uint8("toroid.barrier.cls", "Tree class"))
field("barrier.channel", ProtoField.uint8("toroid.barrier.channel", "Channel"))
field("barrier.mode", ProtoField.uint8("toroid.barrier.mode", "Mode", base.DEC, BARRIER_MODES))
field("barrier.flags", ProtoField.uint8("toroid.barrier.flags", "Barrier flags", base.HEX))
local BARRIER_FLAGS_KNOWN = flag_fields("barrier.flags", "Barrier flags", BARRIER_FLAGS)
field("barrier.epoch", ProtoField.uint32("toroid.barrier.epoch", "Epoch"))
-- Ethernet header of a frame whose EtherType was corrupted (the Ethernet
-- dissector did not take it)
field("eth.type", ProtoField.uint16("toroid.eth.type", "EtherType (corrupted)", base.HEX))

local fields = {}
for _, v in pairs(f) do fields[#fields + 1] = v end
p.fields = fields

local ex = {
  crc_bad = ProtoExpert.new("toroid.crc.bad", "Bad CRC32C", expert.group.CHECKSUM, expert.severity.ERROR),
  malformed = ProtoExpert.new("toroid.malformed", "Impossible field", expert.group.MALFORMED, expert.severity.ERROR),
  eth_bad = ProtoExpert.new("toroid.eth.bad", "Ethernet header not as a Toroid sender writes it",
    expert.group.MALFORMED, expert.severity.ERROR),
  sender = ProtoExpert.new("toroid.sender.unknown", "Sender not announced by a hello in this capture",
    expert.group.SEQUENCE, expert.severity.WARN),
  unchecked = ProtoExpert.new("toroid.crc.unchecked", "No CRC: the medium guarantees integrity",
    expert.group.CHECKSUM, expert.severity.NOTE),
}
p.experts = { ex.crc_bad, ex.malformed, ex.eth_bad, ex.sender, ex.unchecked }

-- CRC32C (Castagnoli, reflected 0x82F63B78, init ~0, final inversion).
local CRC_TABLE = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if bit32.band(c, 1) ~= 0 then c = bit32.bxor(bit32.rshift(c, 1), 0x82F63B78) else c = bit32.rshift(c, 1) end
  end
  CRC_TABLE[i] = c
end
local band, bxor, rshift = bit32.band, bit32.bxor, bit32.rshift
local function crc32c_update(crc, s)
  for at = 1, #s, 4096 do  -- unpack the bytes in blocks: one C call per block, not per byte
    local bytes = { s:byte(at, math.min(at + 4095, #s)) }
    for i = 1, #bytes do
      crc = bxor(CRC_TABLE[band(bxor(crc, bytes[i]), 0xFF)], rshift(crc, 8))
    end
  end
  return crc
end
-- Over the 32 link-header bytes with the crc field zero, then `len` body bytes.
local function link_crc(tvb, off, len)
  local c = crc32c_update(0xFFFFFFFF, tvb:raw(off, 28) .. "\0\0\0\0")
  if len > 0 then c = crc32c_update(c, tvb:raw(off + LINK_LEN, len)) end
  return bxor(c, 0xFFFFFFFF)
end
assert(bxor(crc32c_update(0xFFFFFFFF, "123456789"), 0xFFFFFFFF) == 0xE3069283, "CRC32C self-check")

-- Per-capture state, rebuilt whenever the file is (re)read: per capture
-- interface (one per port file; a pcapng merged with `mergecap -I none`
-- keeps one per input file), the senders the hellos announced and the dims
-- they carry. Each frame's verdict is kept so that a second pass (or a click
-- in the GUI) shows what the first pass saw.
local links, seen
local senders, dims  -- the current frame's interface's
local iface_f = Field.new("frame.interface_id")
function p.init()
  links, seen = {}, {}
end
local function select_link()
  local fi = iface_f()
  local id = fi and fi.value or 0
  local l = links[id]
  if not l then
    l = { senders = {} }
    links[id] = l
  end
  senders, dims = l.senders, l.dims
  return l
end

local function flags_tree(tree, key, range, value, tbl, known, pinfo)
  local names = {}
  for _, fl in ipairs(tbl) do
    if band(value, fl.mask) ~= 0 then names[#names + 1] = fl.name end
  end
  local item = tree:add(f[key], range)
  item:append_text(#names > 0 and (" (" .. table.concat(names, ", ") .. ")") or "")
  for _, fl in ipairs(tbl) do item:add(f[key .. "." .. fl.abbr], range) end
  if band(value, bit32.bnot(known)) ~= 0 then
    item:add_proto_expert_info(ex.malformed, string.format("unknown flag bits 0x%02x", band(value, bit32.bnot(known))))
  end
  return item
end

local function bad(item, msg) item:add_proto_expert_info(ex.malformed, msg) end
local function in_range(item, value, lo, hi, what)
  if value < lo or value > hi then bad(item, string.format("%s %d outside %d..%d", what, value, lo, hi)) end
end
-- Three coordinate bytes; outside the dims the hellos announced is impossible.
local function coord_tree(tree, key, label, tvb, off)
  local x, y, z = tvb(off, 1):uint(), tvb(off + 1, 1):uint(), tvb(off + 2, 1):uint()
  local t = tree:add(tvb(off, 3), string.format("%s: %d,%d,%d", label, x, y, z))
  t:add(f[key .. ".x"], tvb(off, 1)); t:add(f[key .. ".y"], tvb(off + 1, 1)); t:add(f[key .. ".z"], tvb(off + 2, 1))
  if dims and (x >= dims[1] or y >= dims[2] or z >= dims[3]) then
    bad(t, string.format("%s %d,%d,%d outside the dims %dx%dx%d the hellos announced", label:lower(), x, y, z,
      dims[1], dims[2], dims[3]))
  end
  return x, y, z
end

local function dissect_hello(tvb, tree, off, len, src_mac, first_pass, crc_ok)
  local t = tree:add(f.hello, tvb(off, math.min(len, HELLO_LEN)))
  if len ~= HELLO_LEN then bad(t, string.format("hello body of %d bytes (%d expected)", len, HELLO_LEN)) end
  if len < HELLO_LEN then return end
  local x, y, z = tvb(off, 1):uint(), tvb(off + 1, 1):uint(), tvb(off + 2, 1):uint()
  local d = { tvb(off + 4, 1):uint(), tvb(off + 5, 1):uint(), tvb(off + 6, 1):uint() }
  for i = 1, 3 do if d[i] == 0 then d[i] = 256 end end
  local c = t:add(tvb(off, 3), string.format("Coordinate: %d,%d,%d", x, y, z))
  c:add(f["hello.x"], tvb(off, 1)); c:add(f["hello.y"], tvb(off + 1, 1)); c:add(f["hello.z"], tvb(off + 2, 1))
  if x >= d[1] or y >= d[2] or z >= d[3] then bad(c, "coordinate outside the hello's own dims") end
  in_range(t:add(f["hello.dir"], tvb(off + 3, 1)), tvb(off + 3, 1):uint(), 0, 5, "direction")
  local dt = t:add(tvb(off + 4, 3), string.format("Dims: %dx%dx%d", d[1], d[2], d[3]))
  dt:add(f["hello.dims.x"], tvb(off + 4, 1)); dt:add(f["hello.dims.y"], tvb(off + 5, 1))
  dt:add(f["hello.dims.z"], tvb(off + 6, 1))
  flags_tree(t, "hello.flags", tvb(off + 7, 1), tvb(off + 7, 1):uint(), HELLO_FLAGS, HELLO_FLAGS_KNOWN)
  t:add(f["hello.boot_id"], tvb(off + 8, 8))
  t:add(f["hello.peer_boot"], tvb(off + 16, 8))
  t:add(f["hello.generation"], tvb(off + 24, 4))
  t:add(f["hello.isn"], tvb(off + 28, 4))
  local ox, oy, oz = tvb(off + 32, 1):uint(), tvb(off + 33, 1):uint(), tvb(off + 34, 1):uint()
  local ot = t:add(tvb(off + 32, 3), string.format("Generation started at: %d,%d,%d", ox, oy, oz))
  ot:add(f["hello.origin.x"], tvb(off + 32, 1)); ot:add(f["hello.origin.y"], tvb(off + 33, 1))
  ot:add(f["hello.origin.z"], tvb(off + 34, 1))
  if ox >= d[1] or oy >= d[2] or oz >= d[3] then bad(ot, "origin outside the hello's own dims") end
  local odir = tvb(off + 35, 1):uint()
  local oi = t:add(f["hello.origin_dir"], tvb(off + 35, 1))
  if odir > 5 and odir ~= 0xff then bad(oi, "origin direction neither 0..5 nor 0xff (none)") end
  in_range(t:add(f["hello.cause"], tvb(off + 36, 1)), tvb(off + 36, 1):uint(), 0, 4, "reset cause")
  t:add(f["hello.rx_credits"], tvb(off + 37, 1))
  if tvb(off + 38, 2):uint() ~= 0 then bad(t, "pad bytes after the receive buffers are not 0") end
  -- The partition id: NUL-padded, letters, digits, '.', '_', '-' (personality.h).
  local raw = tvb(off + 40, 32):raw()
  local id = raw:match("^[^%z]*")
  local pi = t:add(f["hello.partition"], tvb(off + 40, 32), id)
  if id:find("[^%w%._%-]") then bad(pi, "partition id holds a character no personality allows") end
  if raw:sub(#id + 1):find("[^%z]") then bad(pi, "bytes after the partition id's end are not 0") end
  t:append_text(string.format(": %d,%d,%d %s, dims %dx%dx%d, generation %d%s", x, y, z,
    DIRS[tvb(off + 3, 1):uint()] or "?", d[1], d[2], d[3], tvb(off + 24, 4):uint(),
    id ~= "" and (", partition " .. id) or ""))
  -- A good hello from a MAC that carries its own coordinates announces a sender.
  -- A MAC whose port byte lost a bit would announce a second sender for the
  -- same node and direction: the first one announced stays, the other is not.
  local dir = tvb(off + 3, 1):uint()
  if first_pass and crc_ok and src_mac and src_mac.x == x and src_mac.y == y and src_mac.z == z then
    if not senders[src_mac.key] then
      local conflict = false
      for _, s in pairs(senders) do conflict = conflict or (s.x == x and s.y == y and s.z == z and s.dir == dir) end
      if not conflict then senders[src_mac.key] = { x = x, y = y, z = z, dir = dir } end
    end
    dims = dims or d
  end
end

local function dissect_payload_headers(tvb, pinfo, tree, off, len, ptype)
  if ptype == 2 then
    if len < COLL_LEN then return bad(tree, "collective packet shorter than its 20-byte header") end
    local t = tree:add(f.coll, tvb(off, COLL_LEN))
    in_range(t:add(f["coll.algo"], tvb(off, 1)), tvb(off, 1):uint(), 1, 4, "algorithm")
    in_range(t:add(f["coll.dim"], tvb(off + 1, 1)), tvb(off + 1, 1):uint(), 0, 2, "dimension")
    t:add(f["coll.step"], tvb(off + 2, 2)); t:add(f["coll.chunk"], tvb(off + 4, 4))
    local count = tvb(off + 8, 4):uint()
    local ci = t:add(f["coll.count"], tvb(off + 8, 4)); t:add(f["coll.total"], tvb(off + 12, 8))
    local rest = len - COLL_LEN
    if (count == 0 and rest ~= 0) or (count > 0 and rest % count ~= 0) then
      bad(ci, string.format("%d element bytes for %d elements", rest, count))
    end
    if rest > 0 then tree:add(f["coll.elements"], tvb(off + COLL_LEN, rest)) end
    pinfo.cols.info:append(string.format(" %s step %d chunk %d, %d el", COLL_ALGOS[tvb(off, 1):uint()] or "?",
      tvb(off + 2, 2):uint(), tvb(off + 4, 4):uint(), count))
  elseif ptype == 3 then
    if len < MSG_LEN then return bad(tree, "message segment shorter than its 16-byte header") end
    local t = tree:add(f.msg, tvb(off, MSG_LEN))
    local kind = tvb(off, 1):uint()
    in_range(t:add(f["msg.kind"], tvb(off, 1)), kind, 1, 6, "message kind")
    t:add(f["msg.flags"], tvb(off + 1, 1)); t:add(f["msg.tag"], tvb(off + 4, 4))
    local total, offset = tvb(off + 8, 4):uint(), tvb(off + 12, 4):uint()
    local oi
    if kind == 2 then
      oi = t:add(f["msg.credit"], tvb(off + 12, 4))
    else
      t:add(f["msg.total"], tvb(off + 8, 4))
      oi = t:add(f["msg.offset"], tvb(off + 12, 4))
    end
    local rest = len - MSG_LEN
    if kind == 1 and offset + rest > total then
      bad(oi, string.format("segment %d+%d beyond the message's %d bytes", offset, rest, total))
    elseif kind ~= 1 and rest ~= 0 then
      bad(t, string.format("%s message with %d payload bytes", MSG_KINDS[kind] or "control", rest))
    end
    if rest > 0 then tree:add(f["msg.data"], tvb(off + MSG_LEN, rest)) end
    pinfo.cols.info:append(kind == 2 and string.format(" credit %d", offset)
      or kind >= 3 and kind <= 6 and (" " .. MSG_KINDS[kind])
      or string.format(" msg %d+%d/%d", offset, rest, total))
  elseif ptype == 5 then
    if len < TREE_LEN then return bad(tree, "tree packet shorter than its 16-byte header") end
    local t = tree:add(f.tree, tvb(off, TREE_LEN))
    t:add(f["tree.cls"], tvb(off, 1))
    in_range(t:add(f["tree.op"], tvb(off + 1, 1)), tvb(off + 1, 1):uint(), 1, 6, "ALU op")
    in_range(t:add(f["tree.type"], tvb(off + 2, 1)), tvb(off + 2, 1):uint(), 1, 2, "ALU type")
    flags_tree(t, "tree.flags", tvb(off + 3, 1), tvb(off + 3, 1):uint(), TREE_FLAGS, TREE_FLAGS_KNOWN)
    local width, count = tvb(off + 4, 2):uint(), tvb(off + 6, 2):uint()
    t:add(f["tree.width"], tvb(off + 4, 2))
    local ci = t:add(f["tree.count"], tvb(off + 6, 2))
    t:add(f["tree.seq"], tvb(off + 8, 4)); t:add(f["tree.total"], tvb(off + 12, 4))
    local rest = len - TREE_LEN
    if rest ~= width * count then
      bad(ci, string.format("%d operand bytes for %d operands of %d bytes", rest, count, width))
    end
    if rest > 0 then tree:add(f["tree.operands"], tvb(off + TREE_LEN, rest)) end
    pinfo.cols.info:append(string.format(" %s %s seq %d, %d x %d B", ALU_OPS[tvb(off + 1, 1):uint()] or "?",
      band(tvb(off + 3, 1):uint(), 1) ~= 0 and "up" or "down", tvb(off + 8, 4):uint(), count, width))
  elseif ptype == 6 then
    if len < BARRIER_LEN then return bad(tree, "barrier packet shorter than its 8-byte header") end
    local t = tree:add(f.barrier, tvb(off, BARRIER_LEN))
    t:add(f["barrier.cls"], tvb(off, 1))
    in_range(t:add(f["barrier.channel"], tvb(off + 1, 1)), tvb(off + 1, 1):uint(), 0, 3, "channel")
    in_range(t:add(f["barrier.mode"], tvb(off + 2, 1)), tvb(off + 2, 1):uint(), 0, 1, "mode")
    flags_tree(t, "barrier.flags", tvb(off + 3, 1), tvb(off + 3, 1):uint(), BARRIER_FLAGS, BARRIER_FLAGS_KNOWN)
    t:add(f["barrier.epoch"], tvb(off + 4, 4))
    if len ~= BARRIER_LEN then bad(t, string.format("barrier packet of %d bytes (8 expected)", len)) end
    pinfo.cols.info:append(string.format(" barrier ch %d epoch %d", tvb(off + 1, 1):uint(), tvb(off + 4, 4):uint()))
  elseif len > 0 then
    tree:add(f.payload, tvb(off, len))
  end
end

local function dissect_torus(tvb, pinfo, tree, off, len)
  local t = tree:add(f.torus, tvb(off, math.min(len, TORUS_LEN)))
  if len < TORUS_LEN then return bad(t, string.format("data body of %d bytes: no room for the torus header", len)) end
  local dx, dy, dz = coord_tree(t, "torus.dst", "Destination", tvb, off)
  local sx, sy, sz = coord_tree(t, "torus.src", "Source", tvb, off + 3)
  in_range(t:add(f["torus.cls"], tvb(off + 6, 1)), tvb(off + 6, 1):uint(), 0, 15, "class route")
  local hints = tvb(off + 7, 1):uint()
  local hi = t:add(f["torus.hints"], tvb(off + 7, 1))
  local hn = {}
  for i = 0, 5 do if band(hints, bit32.lshift(1, i)) ~= 0 then hn[#hn + 1] = DIRS[i] end end
  if #hn > 0 then hi:append_text(" (" .. table.concat(hn, " ") .. ")") end
  if hints > 0x3F then bad(hi, string.format("hint bits 0x%02x name no direction", hints)) end
  flags_tree(t, "torus.flags", tvb(off + 8, 1), tvb(off + 8, 1):uint(), TORUS_FLAGS, TORUS_FLAGS_KNOWN)
  local ptype = tvb(off + 9, 1):uint()
  in_range(t:add(f["torus.type"], tvb(off + 9, 1)), ptype, 1, 6, "packet type")
  t:add(f["torus.context"], tvb(off + 10, 2)); t:add(f["torus.tag"], tvb(off + 12, 4))
  t:append_text(string.format(": %d,%d,%d -> %d,%d,%d %s", sx, sy, sz, dx, dy, dz, PACKET_TYPES[ptype] or "?"))
  pinfo.cols.info:append(string.format(" %d,%d,%d->%d,%d,%d %s ctx %d tag %d", sx, sy, sz, dx, dy, dz,
    PACKET_TYPES[ptype] or "?", tvb(off + 10, 2):uint(), tvb(off + 12, 4):uint()))
  dissect_payload_headers(tvb, pinfo, tree, off + TORUS_LEN, len - TORUS_LEN, ptype)
end

-- The Ethernet header as every Toroid sender writes it: destination
-- broadcast, source 02:54:x:y:z:port (wire::node_mac).
local function check_eth(dst, src, tree)
  if dst and dst:bytes():tohex() ~= "FFFFFFFFFFFF" then
    tree:add_proto_expert_info(ex.eth_bad, "destination MAC " .. tostring(dst:ether()) .. " is not broadcast")
  end
  if not src then return nil end
  local b = {}
  for i = 0, 5 do b[i + 1] = src:range(i, 1):uint() end
  if b[1] ~= 0x02 or b[2] ~= 0x54 or b[6] > 5 then
    tree:add_proto_expert_info(ex.eth_bad, "source MAC " .. tostring(src:ether()) .. " is not 02:54:x:y:z:port")
    return nil
  end
  local s = { x = b[3], y = b[4], z = b[5], port = b[6], key = src:bytes():tohex() }
  local st = tree:add(f.sender, src, string.format("%d,%d,%d port %d", s.x, s.y, s.z, s.port))
  st:add(f["sender.x"], src:range(2, 1)); st:add(f["sender.y"], src:range(3, 1))
  st:add(f["sender.z"], src:range(4, 1)); st:add(f["sender.port"], src:range(5, 1))
  if dims and (s.x >= dims[1] or s.y >= dims[2] or s.z >= dims[3]) then
    st:add_proto_expert_info(ex.eth_bad, "source MAC's coordinates outside the dims the hellos announced")
  end
  return s, st
end

-- tvb: from the link header on; dst, src: the frame's MAC addresses (ranges).
local function dissect_link(tvb, pinfo, root, dst, src)
  pinfo.cols.protocol = "Toroid"
  local n = tvb:len()
  local tree = root:add(p, tvb(0, math.min(n, LINK_LEN)))
  local first_pass = not pinfo.visited
  local link_state = select_link()
  local src_mac, sender_item = check_eth(dst, src, tree)
  if n < LINK_LEN then
    bad(tree, string.format("frame of %d bytes: shorter than the 46-byte minimum", n + 14))
    pinfo.cols.info = "Toroid short frame"
    return n
  end
  local version, ftype, flags, length = tvb(0, 1):uint(), tvb(1, 1):uint(), tvb(2, 1):uint(), tvb(24, 2):uint()
  local vi = tree:add(f.version, tvb(0, 1))
  if version ~= 1 then bad(vi, string.format("version %d (1 expected)", version)) end
  local ti = tree:add(f.type, tvb(1, 1))
  if not FRAME_TYPES[ftype] then bad(ti, string.format("unknown frame type %d", ftype)) end
  flags_tree(tree, "flags", tvb(2, 1), flags, LINK_FLAGS, LINK_FLAGS_KNOWN)
  local vci = tree:add(f.vc, tvb(3, 1))
  if tvb(3, 1):uint() > 3 then bad(vci, "virtual channel above 3") end
  tree:add(f.seq, tvb(4, 4)); tree:add(f.ack, tvb(8, 4)); tree:add(f.sack, tvb(12, 4))
  local ct = tree:add(tvb(16, 8), "Credits freed per VC")
  for v = 0, 3 do ct:add(f.credits, tvb(16 + 2 * v, 2)):prepend_text("VC " .. v .. ": ") end
  local li = tree:add(f.length, tvb(24, 2))
  tree:add(f.partition, tvb(26, 2))
  local crc_item = tree:add(f.crc, tvb(28, 4))
  -- Padding: a frame of at most 60 bytes may be longer than 46 + length.
  local body = n - LINK_LEN
  local length_ok = length <= body and (length == body or n + 14 <= 60)
  if not length_ok then bad(li, string.format("length %d but %d bytes follow the link header", length, body)) end
  local no_crc = false
  for _, fl in ipairs(LINK_FLAGS) do no_crc = no_crc or (fl.no_crc and band(flags, fl.mask) ~= 0) end
  local crc_ok = false
  if no_crc then
    tree:add(f["crc.status"], tvb(28, 4), 2):set_generated()
    crc_item:add_proto_expert_info(ex.unchecked)
    -- A sender sets NOCRC only on data and acks, with the CRC field zero;
    -- anything else is a flipped flag bit (the receiving port refuses it too).
    if ftype ~= 1 and ftype ~= 2 then
      bad(crc_item, "NOCRC on a frame type that always carries a CRC")
    elseif tvb(28, 4):uint() ~= 0 then
      bad(crc_item, string.format("NOCRC but the CRC field holds 0x%08x (a sender leaves it 0)", tvb(28, 4):uint()))
    end
  elseif length <= body then
    local want = link_crc(tvb, 0, length)
    crc_ok = want == tvb(28, 4):uint()
    tree:add(f["crc.computed"], tvb(28, 4), want):set_generated()
    tree:add(f["crc.status"], tvb(28, 4), crc_ok and 1 or 0):set_generated()
    if not crc_ok then
      crc_item:add_proto_expert_info(ex.crc_bad, string.format("CRC32C 0x%08x, computed 0x%08x",
        tvb(28, 4):uint(), want))
    end
  end
  pinfo.cols.info = string.format("%s%s seq=%d ack=%d vc=%d len=%d", FRAME_TYPES[ftype] or "type?",
    crc_ok and "" or (no_crc and " (no CRC)" or " [BAD CRC]"), tvb(4, 4):uint(), tvb(8, 4):uint(), tvb(3, 1):uint(),
    length)
  local blen = math.min(length, body)
  if ftype == 3 then
    dissect_hello(tvb, tree, LINK_LEN, blen, src_mac, first_pass, crc_ok)
    link_state.dims = dims
  elseif ftype == 1 then
    dissect_torus(tvb, pinfo, tree, LINK_LEN, blen)
  elseif ftype == 2 and length ~= 0 then
    bad(li, "an ack has no body (length 0)")
  end
  -- Senders: the verdict of the first pass, kept per frame.
  if first_pass then seen[pinfo.number] = src_mac ~= nil and senders[src_mac.key] ~= nil end
  if p.prefs.check_senders and src_mac and not seen[pinfo.number] then
    sender_item:add_proto_expert_info(ex.sender,
      string.format("no hello in this capture announced sender %d,%d,%d port %d", src_mac.x, src_mac.y, src_mac.z,
        src_mac.port))
  end
  return LINK_LEN + blen
end

local eth_dst_f, eth_src_f = Field.new("eth.dst"), Field.new("eth.src")

function p.dissector(tvb, pinfo, root)
  local d, s = eth_dst_f(), eth_src_f()
  return dissect_link(tvb, pinfo, root, d and d.range, s and s.range)
end
DissectorTable.get("ethertype"):add(ETHERTYPE, p)

-- A frame whose EtherType lost a bit on the wire never reaches the table
-- above. Ethernet's heuristic dissectors see every frame first: take one
-- whose EtherType is one bit away from 0x88B5 and whose link CRC32C checks
-- (a chance of 2^-32 for anything else), and flag it.
local function heuristic(tvb, pinfo, root)
  if tvb:len() < 14 + LINK_LEN then return false end
  local et = tvb(12, 2):uint()
  local x = bxor(et, ETHERTYPE)
  if x == 0 or band(x, x - 1) ~= 0 then return false end
  local link = tvb(14):tvb()
  local length = link(24, 2):uint()
  if length > link:len() - LINK_LEN or link_crc(link, 0, length) ~= link(28, 4):uint() then return false end
  local t = root:add(p, tvb(0, 14), "Toroid Ethernet header")
  t:add(f["eth.type"], tvb(12, 2)):add_proto_expert_info(ex.eth_bad,
    string.format("EtherType 0x%04x is 0x%04x with one bit flipped", et, ETHERTYPE))
  dissect_link(link, pinfo, root, tvb(0, 6), tvb(6, 6))
  return true
end
p:register_heuristic("eth", heuristic)
