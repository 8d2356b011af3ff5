#!/usr/bin/env python3
"""Checks packet captures (--pcap) against the Wireshark dissector.

    pcap_check.py sim  SIM_BIN [SIM ARGS...]    run toroid-sim with --pcap, check every file
    pcap_check.py host RIG_BIN [RIG ARGS...]    run toroid-rig with --pcap, check every file
    pcap_check.py qemu LAUNCHER [ARGS...]       run the QEMU launcher with --pcap, check every file
    pcap_check.py dir  DIR                      check the files already in DIR

For every frame of every port file, tshark with tools/wireshark/toroid.lua
must decode it as Toroid, and every field the dissector shows must equal the
value this script reads from the frame's bytes itself (wire_decode.py,
following docs/wire.md). A frame must carry one of the dissector's error or
warning flags exactly when it is corrupted: in the sim, the frames the medium
corrupted (DIR/corrupted.txt, docs/capture.md); on the host rig and in QEMU,
none. The script also checks the corrupted list on its own: every other frame
has a good CRC32C by its own computation, and a listed frame whose flipped
bit is covered by the CRC fails it and passes once the bit is flipped back.

Exit status: 0 pass, 1 fail, 2 usage, 77 skip (tshark missing, or QEMU cannot
start here).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire_decode as wd  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LUA = os.path.join(ROOT, "tools", "wireshark", "toroid.lua")
FLAGS = ("toroid.crc.bad", "toroid.eth.bad", "toroid.malformed", "toroid.sender.unknown")


class Fail(Exception):
    pass


def run(cmd, timeout):
    shown = cmd if len(cmd) < 20 else cmd[:8] + [f"... ({len(cmd) - 8} more)"]
    print("$ " + " ".join(shown), flush=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    print(f"(exit {r.returncode} after {time.monotonic() - t0:.1f} s)", flush=True)
    return r


def read_corrupted(path):
    """{file: [(rx index, bit)]} from the sim's corrupted.txt."""
    out = {}
    if not os.path.exists(path):
        return out
    for n, line in enumerate(open(path), 1):
        m = re.fullmatch(r"(\S+\.pcap) rx=(\d+) bit=(\d+) t_ns=(\d+)", line.strip())
        if not m:
            raise Fail(f"{path}:{n}: malformed line {line.strip()!r}")
        out.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3))))
    return out


def tshark_rows(files, tmp):
    """One tshark run over all files, concatenated in order into a pcapng
    that keeps one interface per file (the dissector's sender checks are per
    interface, as they are per file): [{field: text}] in file order."""
    merged = os.path.join(tmp, "all.pcapng")
    r = run(["mergecap", "-a", "-I", "none", "-F", "pcapng", "-w", merged] + files, 300)
    if r.returncode != 0:
        raise Fail("mergecap failed:\n" + r.stdout)
    names = ["frame.protocols", "_ws.expert.message"] + list(FLAGS) + wd.decoded_fields()
    cmd = ["tshark", "-n", "-X", "lua_script:" + LUA, "-r", merged, "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=a", "-E", "aggregator=,"]
    for n in names:
        cmd += ["-e", n]
    print("$ " + " ".join(cmd[:8]) + " ... (%d fields)" % len(names), flush=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=1200)
    print(f"(tshark exit {r.returncode} after {time.monotonic() - t0:.1f} s)", flush=True)
    errs = [ln for ln in r.stderr.splitlines() if "Running as user" not in ln and ln.strip()]
    if r.returncode != 0 or errs:
        raise Fail("tshark failed or complained:\n" + "\n".join(errs[:20]))
    rows = [dict(zip(names, line.split("\t"))) for line in r.stdout.splitlines()]
    return rows


def check_dir(d, expect_corruption):
    files = sorted(f for f in os.listdir(d) if f.endswith(".pcap"))
    if not files:
        raise Fail(f"no .pcap files in {d}")
    frames = {f: wd.read_pcap(os.path.join(d, f)) for f in files}
    total = sum(len(v) for v in frames.values())
    corrupted = read_corrupted(os.path.join(d, "corrupted.txt"))
    unknown = set(corrupted) - set(files)
    if unknown:
        raise Fail(f"corrupted.txt names files that are not there: {sorted(unknown)[:5]}")
    with tempfile.TemporaryDirectory(prefix="toroid-pcap-check-") as tmp:
        rows = tshark_rows([os.path.join(d, f) for f in files], tmp)
    if len(rows) != total:
        raise Fail(f"tshark printed {len(rows)} frames, the files hold {total}")

    problems = []
    stats = dict(frames=total, decoded=0, corrupted_listed=0, corrupted_read=0, corrupted_pending=0, flagged=0,
                 false_flags=0, missed=0, values=0, mismatches=0, tx=0, rx=0, crc_checked=0)
    by_flag = {k: 0 for k in FLAGS}
    kinds = {}
    i = 0
    for f in files:
        own = wd.port_mac(f)
        rx_frames = [k for k, (_, fr) in enumerate(frames[f]) if fr[6:12] != own]
        stats["rx"] += len(rx_frames)
        stats["tx"] += len(frames[f]) - len(rx_frames)
        bad = {}
        for rx_index, bit in corrupted.get(f, []):
            stats["corrupted_listed"] += 1
            if rx_index > len(rx_frames):
                stats["corrupted_pending"] += 1  # still queued when the run ended: never read
                continue
            bad[rx_frames[rx_index - 1]] = bit
        stats["corrupted_read"] += len(bad)
        for k, (_, fr) in enumerate(frames[f]):
            row = rows[i]
            i += 1
            where = f"{f} frame {k + 1}"
            if "toroid" in row["frame.protocols"].split(":"):
                stats["decoded"] += 1
            else:
                problems.append(f"{where}: not decoded as toroid (protocols {row['frame.protocols']})")
            flags = [x for x in FLAGS if row[x]]
            for x in flags:
                by_flag[x] += 1
            stats["flagged"] += bool(flags)
            if k in bad:
                bit = bad[k]
                kinds[kind_of(bit)] = kinds.get(kind_of(bit), 0) + 1
                if not flags:
                    stats["missed"] += 1
                    problems.append(f"{where}: corrupted (bit {bit}, {kind_of(bit)}) but not flagged")
                ok = wd.link_crc_ok(fr)
                if 14 * 8 <= bit < 46 * 8 + 8 * wd._u(fr, 38, 2) and ok is True:
                    problems.append(f"{where}: bit {bit} flipped inside the CRC's cover, yet the CRC checks")
                fixed = bytearray(fr)
                fixed[bit // 8] ^= 1 << (bit % 8)
                if wd.link_crc_ok(bytes(fixed)) is not True:
                    problems.append(f"{where}: flipping bit {bit} back does not give a frame with a good CRC")
            else:
                if flags:
                    stats["false_flags"] += 1
                    problems.append(f"{where}: not corrupted, flagged: {row['_ws.expert.message']}")
                if wd.link_crc_ok(fr) is not True:
                    problems.append(f"{where}: not listed as corrupted but its CRC32C fails")
                stats["crc_checked"] += 1
            for name, want in wd.decode(fr).items():
                stats["values"] += 1
                got = row[name]
                if name == "toroid.credits" or isinstance(want, str):
                    same = got == want
                else:
                    same = got != "" and int(got, 0) == want
                if not same:
                    stats["mismatches"] += 1
                    problems.append(f"{where}: {name} = {got!r}, the bytes say {want}")
    if not expect_corruption and stats["corrupted_listed"]:
        problems.append(f"{stats['corrupted_listed']} frames listed as corrupted on a rig without faults")
    return stats, by_flag, kinds, problems


def kind_of(bit):
    byte = bit // 8
    if byte < 6:
        return "dst MAC"
    if byte < 12:
        return "src MAC"
    if byte < 14:
        return "EtherType"
    if byte < 46:
        return "link header"
    return "body"


def report(stats, by_flag, kinds, problems, files):
    s = stats
    print(f"frames: {s['frames']} in {files} files ({s['tx']} sent, {s['rx']} received), "
          f"{s['decoded']} decoded as toroid")
    print(f"corrupted: {s['corrupted_listed']} listed by the medium, {s['corrupted_read']} read by the nodes "
          f"({s['corrupted_pending']} still queued at the end); flagged: {s['flagged']} "
          f"(missed {s['missed']}, false flags {s['false_flags']})")
    if kinds:
        print("corrupted frames by where the bit flipped: " +
              ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print("flags: " + ", ".join(f"{k} {v}" for k, v in by_flag.items()))
    print(f"fields: {s['values']} values compared with the bytes, {s['mismatches']} differ; "
          f"{s['crc_checked']} uncorrupted frames' CRC32C recomputed by this script")
    for p in problems[:30]:
        print("  " + p)
    if len(problems) > 30:
        print(f"  ... and {len(problems) - 30} more")


def main(argv):
    if len(argv) < 2 or argv[0] not in ("sim", "host", "qemu", "dir"):
        print(__doc__)
        return 2
    mode = argv[0]
    for tool in ("tshark", "mergecap"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (./toroid setup installs the tshark package)")
            return 77
    tmp = None
    try:
        if mode == "dir":
            d = argv[1]
        else:
            tmp = tempfile.mkdtemp(prefix="toroid-pcap-")
            d = os.path.join(tmp, "cap")
            if mode == "qemu":
                cmd = [sys.executable, argv[1], "--skip-if-no-qemu", "--pcap", d] + argv[2:]
            else:
                cmd = [argv[1], "--pcap", d] + argv[2:]
                if mode == "host":
                    cmd += ["--run-dir", os.path.join(tmp, "run")]
            r = run(cmd, 1500)
            print("\n".join(r.stdout.splitlines()[-12:]))
            if mode == "qemu" and r.returncode == 77:
                print("SKIP: QEMU cannot start here")
                return 77
            if r.returncode != 0:
                raise Fail(f"the {mode} run failed (exit {r.returncode})")
            if mode == "sim":
                m = re.search(r"^pcap: (\d+) files, (\d+) frames in .*; (\d+) corrupted frames delivered", r.stdout,
                              re.M)
                med = re.search(r"^medium: .*\bcorrupted=(\d+)", r.stdout, re.M)
                if not m:
                    raise Fail("the sim did not print its pcap line")
                listed = sum(1 for _ in open(os.path.join(d, "corrupted.txt")))
                if int(m.group(3)) != listed:
                    raise Fail(f"the sim says {m.group(3)} corrupted frames delivered, corrupted.txt lists {listed}")
                if med and listed > int(med.group(1)):
                    raise Fail(f"{listed} corrupted frames listed, the medium corrupted {med.group(1)}")
                if "corrupt=" in " ".join(argv) and listed == 0:
                    raise Fail("a run with corrupt= faults listed no corrupted frame")
        stats, by_flag, kinds, problems = check_dir(d, mode in ("sim", "dir"))
        files = len([f for f in os.listdir(d) if f.endswith(".pcap")])
        report(stats, by_flag, kinds, problems, files)
        if stats["frames"] == 0:
            problems.append("no frames captured")
        print("PASS" if not problems else f"FAIL: {len(problems)} problems")
        return 0 if not problems else 1
    except (Fail, ValueError, subprocess.TimeoutExpired) as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
