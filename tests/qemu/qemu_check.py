#!/usr/bin/env python3
"""Runs the qemu rig's launcher (qemu/toroid_qemu.py) and checks what it printed.

    qemu_check.py pass     [LAUNCHER ARGS...]   every node booted, trained and passed
    qemu_check.py miswired --port 'N port portK (D)' [LAUNCHER ARGS...]
                                                the cluster failed link training and
                                                the launcher named that port

`pass` also checks the network path the launcher reports: with --net uio every
NIC was probed by DPDK's net_virtio PMD (EAL's own probe lines) with IOVA as
PA; with --net kernel the fallback is reported as such. And every link trained
exactly once: none went down during the job.

Exit status: 0 as expected, 1 not, 77 when the launcher says QEMU cannot start
here at all (it is run with --skip-if-no-qemu).
"""
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, "..", "..", "qemu", "toroid_qemu.py")


def opt(args, name, default=None):
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default


def main(argv):
    if not argv or argv[0] not in ("pass", "miswired"):
        print(__doc__)
        return 2
    mode, args = argv[0], argv[1:]
    want_port = None
    if mode == "miswired":
        want_port = opt(args, "--port")
        if not want_port:
            print("qemu_check: miswired needs --port 'N port portK (D)'")
            return 2
        i = args.index("--port") if "--port" in args else None
        args = args[:i] + args[i + 2:] if i is not None else [a for a in args if not a.startswith("--port=")]

    cmd = [sys.executable, LAUNCHER, "--skip-if-no-qemu"] + args
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    out = r.stdout
    print(out, end="", flush=True)
    print(f"(launcher exited {r.returncode} after {time.monotonic() - t0:.1f} s)")
    if r.returncode == 77:
        print("SKIP: " + (out.strip().splitlines() or ["QEMU cannot start here"])[-1])
        return 77

    dims = [int(x) for x in opt(args, "--dims", "2x2x2").split("x")]
    nodes = [f"{x},{y},{z}" for z in range(dims[2]) for y in range(dims[1]) for x in range(dims[0])]
    nics = len(nodes) * sum(2 for d in dims if d > 1)
    net = opt(args, "--net", "uio")
    problems = []

    def need(cond, what):
        if not cond:
            problems.append(what)

    for n in nodes:
        need(re.search(rf"^\[vm {re.escape(n)} .*\] \[pid1\] toroid-node is PID 1", out, re.M),
             f"node {n}: no boot line ([pid1] toroid-node is PID 1)")
    if mode == "pass":
        need(r.returncode == 0, f"the launcher exited {r.returncode}, not 0")
        for n in nodes:
            need(re.search(rf"^\[vm {re.escape(n)} .*\] \[node {re.escape(n)}\] trained \d+ links", out, re.M),
                 f"node {n}: no link-training line")
            need(re.search(rf"^\[vm {re.escape(n)} .*\] verdict node={re.escape(n)} PASS", out, re.M),
                 f"node {n}: no PASS verdict")
        job = opt(args, "--job", "selftest")
        need(re.search(rf"^{re.escape(job)} case\s+passed", out, re.M), f"no {job} table")
        need(not re.search(r"\bFAIL\b", out.split(f"{job} case", 1)[-1].split("network:", 1)[0]),
             f"a failed case in the {job} table")
        need(re.search(rf"qemu: PASS: {len(nodes)} of {len(nodes)} nodes passed", out), "no PASS summary")
        need(re.search(r"^boot-to-verdict: [\d.]+ s", out, re.M), "no boot-to-verdict time")
        # Every link trained once and stayed up: a guest the host stalls must
        # slow its links (keepalives, retransmissions), not take them down.
        m = re.search(r"^links: .* (\d+) trainings over (\d+) nodes; longest silence a neighbour broke: (\d+) ms",
                      out, re.M)
        need(m, "no 'links:' line")
        if m:
            need(int(m.group(1)) == nics and int(m.group(2)) == len(nodes),
                 f"{m.group(1)} link trainings over {m.group(2)} nodes; want {nics} over {len(nodes)} "
                 f"(a link went down and trained again)")
        if net == "uio":
            m = re.search(r"network: uio, kernel bypassed: (\d+) of (\d+) NICs bound to uio_pci_generic, (\d+) "
                          r"probed by DPDK (\S+) \(EAL\), IOVA (\S+)", out)
            need(m, "no 'network: uio, kernel bypassed' line")
            if m:
                need(int(m.group(1)) == nics and int(m.group(3)) == nics,
                     f"{m.group(1)} NICs on uio_pci_generic, {m.group(3)} probed by DPDK; want {nics} each")
                need(m.group(4) == "net_virtio", f"DPDK driver {m.group(4)}, want net_virtio")
                need(m.group(5) == "PA", f"IOVA {m.group(5)}, want PA")
        else:
            need(re.search(rf"network: kernel fallback \(no bypass\): {nics} of {nics} NICs", out),
                 "the kernel fallback is not reported")
    else:
        need(r.returncode == 1, f"the launcher exited {r.returncode}, not 1")
        need("link training failed:" in out, "no 'link training failed:' section")
        section = out.split("link training failed:", 1)[-1]
        need(re.search(rf"{re.escape(want_port)} is miswired", section),
             f"the launcher did not name '{want_port}' as miswired")
        need(re.search(r"qemu: FAIL:", out), "no FAIL summary")
        if net == "kernel":
            need("network: kernel fallback (no bypass)" in out, "the kernel fallback is not reported")

    if problems:
        print("qemu_check: FAILED:")
        for p in problems:
            print("  - " + p)
        return 1
    print(f"qemu_check: OK ({mode}, {len(nodes)} nodes, net {net})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
