#!/usr/bin/env python3
"""toroid-qemu: boot a torus of QEMU VMs, one per node, and collect its verdict.

Each VM runs Debian's kernel and the project's initramfs (qemu/image.py), whose
/init is toroid-node: as PID 1 it reads its personality from the kernel command
line, loads its modules, binds its NICs and runs the job (firmware/pid1.h).
Every torus link is a pair of virtio-net NICs joined by a QEMU `-netdev dgram`
unix-socket pair; port i of a node is the NIC in PCI slot 4+i and is cabled to
the i-th direction that has a link (x+ x- y+ y- z+ z-), as in the personality.

The launcher builds the image if it is stale, starts the VMs, shows each node's
boot progress, reads the verdicts from the serial consoles, enforces a timeout,
kills only its own VMs, removes its sockets and exits with the cluster's
verdict: 0 every node passed, 1 a node failed (or timed out), 2 usage error,
77 QEMU cannot start here (with --skip-if-no-qemu).

docs/qemu.md is the reference.
"""
from __future__ import annotations

import ctypes
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import image  # noqa: E402
from options import build_parser  # noqa: E402
from report import report  # noqa: E402

DIRS = ["x+", "x-", "y+", "y-", "z+", "z-"]
OPPOSITE = {"x+": "x-", "x-": "x+", "y+": "y-", "y-": "y+", "z+": "z-", "z-": "z+"}
FIRST_SLOT = 4          # port i is the NIC at PCI 00:(4+i).0
PID1_MARK = b"toroid.%s is missing"   # a string only firmware/pid1.cc puts in the binary
PROGRESS_S = 30         # seconds between the launcher's progress lines
# Deadlines under TCG, where a guest runs 10-50x slower than on hardware and
# shares the host's cores with the other VMs. A collective may take 30 s on a
# node (tuning::kCollTimeoutRealNs); the slowest full-matrix case took 12.7 s
# on 8 TCG guests here, so a busier host would fail it for being slow, not
# hung. A dead neighbour is still found by the link timeout.
TCG_COLL_TIMEOUT_S = 120
FULL_JOB_S, FULL_JOB_PER_VM_S = 60, 120   # --job-timeout default for level=full under TCG


class UsageError(Exception):
    pass


# ---------------------------------------------------------------------------
# the cluster: nodes, ports, cables


def parse_dims(s: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"([1-9]\d*)x([1-9]\d*)x([1-9]\d*)", s)
    if not m:
        raise UsageError(f"bad --dims '{s}' (expected XxYxZ, e.g. 2x2x2)")
    dims = tuple(int(g) for g in m.groups())
    if dims[0] * dims[1] * dims[2] < 2:
        raise UsageError("--dims: a cluster needs at least 2 nodes")
    if dims[0] * dims[1] * dims[2] > 64:
        raise UsageError("--dims: at most 64 VMs")
    return dims


def coords(dims):
    return [(x, y, z) for z in range(dims[2]) for y in range(dims[1]) for x in range(dims[0])]


def cname(c) -> str:
    return f"{c[0]},{c[1]},{c[2]}"


def port_dirs(dims) -> list[str]:
    """The directions with a link, in port order (firmware default_ports)."""
    return [d for d in DIRS if dims["xyz".index(d[0])] > 1]


def neighbour(c, d, dims):
    i = "xyz".index(d[0])
    n = list(c)
    n[i] = (n[i] + (1 if d[1] == "+" else -1)) % dims[i]
    return tuple(n)


def parse_swaps(specs: list[str], dims) -> dict[tuple, tuple[str, str]]:
    """--swap-nics X.Y.Z:D1,D2 -> {coord: (D1, D2)}."""
    out = {}
    dirs = port_dirs(dims)
    for s in specs:
        m = re.fullmatch(r"(\d+)[.,](\d+)[.,](\d+):([xyz][+-]),([xyz][+-])", s)
        if not m:
            raise UsageError(f"bad --swap-nics '{s}' (expected X.Y.Z:D1,D2, e.g. 0.0.0:x+,y-)")
        c = tuple(int(m.group(i)) for i in (1, 2, 3))
        d1, d2 = m.group(4), m.group(5)
        if any(c[i] >= dims[i] for i in range(3)):
            raise UsageError(f"--swap-nics: node {cname(c)} is outside dims {'x'.join(map(str, dims))}")
        for d in (d1, d2):
            if d not in dirs:
                raise UsageError(f"--swap-nics: node {cname(c)} has no {d} port in dims {'x'.join(map(str, dims))}")
        if d1 == d2 or c in out:
            raise UsageError(f"--swap-nics '{s}': two different directions, once per node")
        out[c] = (d1, d2)
    return out


class Vm:
    def __init__(self, coord, index):
        self.coord = coord
        self.name = cname(coord)
        self.index = index
        self.proc: subprocess.Popen | None = None
        self.buf = b""
        self.log = None
        self.lines: list[str] = []
        self.t_start = 0.0
        self.t_pid1 = None      # first [pid1] line
        self.t_ready = None     # pid1 done: modules loaded, NICs bound
        self.t_trained = None
        self.t_verdict = None
        self.verdict = None     # "PASS" | "FAIL"
        self.reason = ""
        self.cases: list[dict] = []
        self.exit_code = None
        self.t_exit = None
        self.link_errors: list[str] = []
        self.bypass_ports: list[str] = []
        self.kernel_ports: list[str] = []
        self.pmd_ports: list[tuple[str, str]] = []   # (PCI address, DPDK driver) from EAL's probe lines
        self.iova = None
        self.stopped_by_us = False
        self.done = 0           # cases done so far, from the node's "progress" lines
        self.failed = 0
        self.links: dict = {}   # the node's "links" line at its verdict


def socket_name(c, d) -> str:
    return f"{c[0]}-{c[1]}-{c[2]}{'xyz'.index(d[0])}{'p' if d[1] == '+' else 'm'}.sock"


def qemu_args(a, vm: Vm, dims, swaps, desc, run_dir) -> list[str]:
    dirs = port_dirs(dims)
    c = vm.coord
    # Which cable is plugged into the NIC the personality calls `d`: its own,
    # unless --swap-nics exchanged two of this VM's cables.
    cable = {d: d for d in dirs}
    if c in swaps:
        d1, d2 = swaps[c]
        cable[d1], cable[d2] = d2, d1
    args = [a.qemu, "-name", f"toroid-{vm.name.replace(',', '.')}", "-M", "pc", "-nodefaults", "-no-user-config",
            "-m", str(a.mem), "-smp", "1", "-display", "none", "-serial", "stdio", "-no-reboot",
            "-kernel", desc["kernel"], "-initrd", desc["initramfs"]]
    if a.accel == "kvm":
        args += ["-accel", "kvm", "-cpu", "host"]
    else:
        args += ["-accel", "tcg", "-cpu", "max"]
    ports = []
    for i, d in enumerate(dirs):
        slot = FIRST_SLOT + i
        cd = cable[d]
        local = os.path.join(run_dir, socket_name(c, cd))
        remote = os.path.join(run_dir, socket_name(neighbour(c, cd, dims), OPPOSITE[cd]))
        mac = f"52:54:00:{vm.index >> 8 & 0xff:02x}:{vm.index & 0xff:02x}:{slot:02x}"
        args += ["-netdev", f"dgram,id=p{i},local.type=unix,local.path={local},remote.type=unix,remote.path={remote}",
                 "-device", f"virtio-net-pci,netdev=p{i},addr={slot:02x}.0,mac={mac},host_mtu={a.mtu}"]
        if a.pcap:
            # QEMU's own filter-dump on the host side of the NIC: every frame
            # the guest sends or receives on it, with no change in the guest.
            pcap = os.path.join(a.pcap, f"node-{c[0]}-{c[1]}-{c[2]}-port{i}-{d}.pcap")
            args += ["-object", f"filter-dump,id=cap{i},netdev=p{i},file={pcap},maxlen=65535"]
        ports.append(f"{d}@00:{slot:02x}.0")
    append = ["console=ttyS0", f"loglevel={a.loglevel}", "panic=-1"]
    if a.net == "uio":
        append.append(f"hugepages={a.hugepages}")
    append += [f"toroid.dims={'x'.join(map(str, dims))}", f"toroid.coord={vm.name}", f"toroid.job={a.job}",
               f"toroid.seed={a.seed}", f"toroid.net={a.net}", f"toroid.ports={','.join(ports)}",
               f"toroid.train_timeout={a.train_timeout}s", f"toroid.linger={a.linger}s"]
    if a.net == "kernel":
        append.append(f"toroid.kdrv={a.kdrv}")
    else:
        # EAL's own lines name the PMD that probed each NIC and the IOVA mode.
        append.append("toroid.eal_log=info")
    if a.link_timeout:
        append.append(f"toroid.link_timeout={int(a.link_timeout * 1000)}ms")
    if a.coll_timeout:
        append.append(f"toroid.coll_timeout={a.coll_timeout}s")
    if a.job_timeout:
        append.append(f"toroid.job_timeout={a.job_timeout}s")
    if a.node_log:
        append.append(f"toroid.log={a.node_log}")
    for kv in a.arg:
        append.append(f"toroid.arg={kv}")
    if getattr(a, "app_spec", None):
        append.append(f"toroid.app={a.app_spec}")  # the application (qemu/mpirun_qemu.py), not the job
    args += ["-append", " ".join(append)]
    return args


# ---------------------------------------------------------------------------
# console lines

KV = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


def parse_kv(s: str) -> dict:
    out = {}
    for k, v in KV.findall(s):
        if v.startswith('"'):
            v = re.sub(r"\\(.)", r"\1", v[1:-1])
        out[k] = v
    return out


APP_LINE = re.compile(r"app\.(out|err): (.*)$")
LINK_ERR = re.compile(r"link training: node \S+ port (.+?) is (miswired|a dead link|one-way)[:]?(.*)")


class Cluster:
    def __init__(self, a, dims):
        self.a = a
        self.dims = dims
        self.vms = [Vm(c, i) for i, c in enumerate(coords(dims))]
        self.t0 = time.monotonic()
        self.first_fail = None
        self.t_progress = 0.0
        # With an application in the guests (qemu/mpirun_qemu.py): each line
        # it printed (vm, "out"|"err", text), and its exit status (vm, N).
        self.on_app_line = None
        self.on_app_exit = None

    def elapsed(self, t=None) -> float:
        return (t if t is not None else time.monotonic()) - self.t0

    def progress(self, now: float):
        """Every PROGRESS_S seconds while the job runs: cases done per node so far
        (a full self-test under TCG runs for many minutes)."""
        if now - self.t_progress < PROGRESS_S or not any(v.t_trained for v in self.vms):
            return
        self.t_progress = now
        done = [v.done for v in self.vms if not v.verdict]
        if not done:
            return
        verdicts = sum(1 for v in self.vms if v.verdict)
        failed = sum(v.failed for v in self.vms)
        print(f"qemu: +{self.elapsed(now):.0f} s: cases done so far {min(done)}..{max(done)} per node"
              f"{f', {failed} failed' if failed else ''}; verdicts {verdicts}/{len(self.vms)}", flush=True)

    def show(self, vm: Vm, text: str):
        print(f"[vm {vm.name} {self.elapsed():6.1f}s] {text}", flush=True)

    def on_line(self, vm: Vm, line: str):
        now = time.monotonic()
        vm.lines.append(line)
        if len(vm.lines) > 400:
            del vm.lines[:100]
        if vm.log:
            vm.log.write(f"{now - self.t0:8.3f} {line}\n")
        shown = self.a.verbose
        app = APP_LINE.match(line)
        if app:
            if self.on_app_line:
                self.on_app_line(vm, app.group(1), app.group(2))
            # The application's EAL and node lines say what its ports are
            # (read below; on_app_line has shown them already).
            line = app.group(2)
            if not line.startswith(("EAL:", "[node ")):
                return
        elif line.startswith("app node=") and self.on_app_exit:
            m = re.search(r" status=(-?\d+)", line)
            if m:
                self.on_app_exit(vm, int(m.group(1)))
        if line.startswith("[pid1]"):
            if vm.t_pid1 is None:
                vm.t_pid1 = now
                shown = True
            if " bound to uio_pci_generic" in line:
                vm.bypass_ports.append(line)
            if "through the kernel" in line:
                vm.kernel_ports.append(line)
            if "ready in" in line:
                vm.t_ready = now
                shown = True
            if "boot failed" in line or "exited with status" in line or "application" in line:
                shown = True
            if not shown and self.a.progress == "all" and ("port" in line):
                shown = True
        elif line.startswith("verdict "):
            kv = parse_kv(line)
            vm.verdict = "PASS" if " PASS" in line.split(" reason=")[0] else "FAIL"
            vm.reason = kv.get("reason", "")
            vm.t_verdict = now
            if vm.verdict == "FAIL" and self.first_fail is None:
                self.first_fail = (vm, now)
            shown = True
        elif line.startswith("case "):
            vm.cases.append(parse_kv(line))
        elif line.startswith("progress "):
            kv = parse_kv(line)
            vm.done, vm.failed = int(kv.get("cases", 0)), int(kv.get("failed", 0))
        elif line.startswith("links "):
            vm.links = parse_kv(line)
        elif line.startswith("ports "):
            if vm.pmd_ports:
                self.show(vm, f"ports up: DPDK {'/'.join(sorted(set(d for _, d in vm.pmd_ports)))} PMD on "
                              f"{' '.join(a.removeprefix('0000:') for a, _ in vm.pmd_ports)}, IOVA {vm.iova or '?'}")
            elif vm.kernel_ports:
                self.show(vm, f"ports up: {len(vm.kernel_ports)} kernel interfaces (fallback)")
        elif line.startswith("[node "):
            if " trained " in line:
                vm.t_trained = now
                shown = True
            m = LINK_ERR.search(line)
            if m:
                vm.link_errors.append(line.split("] ", 1)[-1].removeprefix("error: "))
                shown = True
            if "error:" in line or "boot failed" in line:
                shown = True
        elif line.startswith("EAL:"):
            m = re.match(r"EAL: Probe PCI driver: (\S+) \(\S+\) device: (\S+)", line)
            if m:
                vm.pmd_ports.append((m.group(2), m.group(1)))
            m = re.match(r"EAL: Selected IOVA mode '(\w+)'", line)
            if m:
                vm.iova = m.group(1)
            if re.search(r"error|fatal|cannot|fail|panic", line, re.I):
                shown = True
        elif "Kernel panic" in line or "BUG:" in line or "Call Trace" in line or line.startswith("qemu-system"):
            shown = True
        if shown and not app:
            self.show(vm, line)


# ---------------------------------------------------------------------------
# processes


def _pdeathsig():
    # The VM dies with the launcher, even if the launcher is SIGKILLed.
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def stop_vms(vms: list[Vm], grace: float = 3.0):
    live = [v for v in vms if v.proc and v.proc.poll() is None]
    for v in live:
        v.stopped_by_us = True
        try:
            v.proc.terminate()
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    for v in live:
        try:
            v.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                v.proc.kill()
            except ProcessLookupError:
                pass
            try:
                v.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass


def qemu_usable(a) -> str | None:
    """None if QEMU can start here, else why not."""
    exe = shutil.which(a.qemu)
    if not exe:
        return f"{a.qemu} not found (./toroid setup installs qemu-system-x86)"
    try:
        r = subprocess.run([exe, "-accel", "help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{a.qemu} -accel help failed: {e}"
    if r.returncode != 0:
        return f"{a.qemu} -accel help exited {r.returncode}: {r.stdout.strip()[-200:]}"
    if a.accel not in r.stdout.split():
        return f"{a.qemu} has no {a.accel} accelerator (it lists: {' '.join(r.stdout.split()[2:])})"
    if a.accel == "kvm" and not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "/dev/kvm is not usable here (use --accel tcg)"
    return None


def preflight(a, who: str):
    """None when QEMU can start and a.node_bin can be a guest's /init, else
    the exit status (77 with --skip-if-no-qemu when QEMU cannot start), said."""
    why = qemu_usable(a)
    if why:
        print(f"{who}: QEMU cannot start here: {why}", file=sys.stderr)
        return 77 if a.skip_if_no_qemu else 1
    if not os.path.isfile(a.node_bin):
        print(f"{who}: {a.node_bin} does not exist (./toroid build)", file=sys.stderr)
        return 1
    if PID1_MARK not in open(a.node_bin, "rb").read():
        print(f"{who}: {a.node_bin} cannot be a guest's /init: it does not call firmware/pid1 "
              f"(pid1_main when it runs as PID 1)", file=sys.stderr)
        return 1
    return None


def remove_stale_run_dirs():
    """Socket dirs of launchers that died without cleaning up (SIGKILL): their
    VMs died with them (PR_SET_PDEATHSIG), so nothing uses the sockets."""
    tmp = tempfile.gettempdir()
    for d in os.listdir(tmp):
        path = os.path.join(tmp, d)
        if not d.startswith("toroid-qemu.") or not os.path.isdir(path):
            continue
        try:
            pid = int(open(os.path.join(path, "launcher.pid")).read())
        except (OSError, ValueError):
            continue
        try:
            os.kill(pid, 0)
            continue  # still running
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except PermissionError:
            continue


def run_cluster(a, dims, swaps, desc, report_fn=None, setup_fn=None) -> int:
    """Boots the cluster and waits for its verdicts; report_fn(cl, timed_out)
    (default: report) makes the exit status. setup_fn(cl) runs first."""
    cl = Cluster(a, dims)
    if setup_fn:
        setup_fn(cl)
    remove_stale_run_dirs()
    run_dir = tempfile.mkdtemp(prefix="toroid-qemu.")
    with open(os.path.join(run_dir, "launcher.pid"), "w") as f:
        f.write(f"{os.getpid()}\n")
    log_dir = a.log_dir
    os.makedirs(log_dir, exist_ok=True)
    for f in os.listdir(log_dir):
        if f.startswith("node-") and f.endswith(".log"):
            os.unlink(os.path.join(log_dir, f))
    sel = selectors.DefaultSelector()
    interrupted = None

    def on_signal(sig, frame):
        raise KeyboardInterrupt(signal.Signals(sig).name)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    timed_out = False
    try:
        n = len(cl.vms)
        what = f"application {a.app_name}" if getattr(a, "app_name", None) else f"job {a.job}"
        print(f"qemu: {n} VMs, dims {'x'.join(map(str, dims))}, {what}, net {a.net}"
              f"{'/' + a.kdrv if a.net == 'kernel' else ''}, accel {a.accel}, {a.mem} MB each, "
              f"kernel {desc['kver']}, image {desc['size'] / 1e6:.1f} MB"
              + (f", swapped NICs: {' '.join(cname(c) + ':' + d1 + ',' + d2 for c, (d1, d2) in swaps.items())}"
                 if swaps else ""), flush=True)
        print(f"qemu: consoles in {os.path.relpath(log_dir)}/node-X-Y-Z.log, sockets in {run_dir}", flush=True)
        cl.t0 = time.monotonic()
        for vm in cl.vms:
            args = qemu_args(a, vm, dims, swaps, desc, run_dir)
            # Line-buffered: `tail -f` follows a long run as it goes.
            vm.log = open(os.path.join(log_dir, f"node-{vm.name.replace(',', '-')}.log"), "w", buffering=1)
            vm.log.write("# " + " ".join(args) + "\n")
            vm.t_start = time.monotonic()
            vm.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_pdeathsig)
            os.set_blocking(vm.proc.stdout.fileno(), False)
            sel.register(vm.proc.stdout, selectors.EVENT_READ, vm)
        deadline = cl.t0 + a.timeout
        open_fds = len(cl.vms)
        all_verdicts_at = None
        while open_fds:
            now = time.monotonic()
            if now > deadline:
                timed_out = True
                break
            if all(v.verdict for v in cl.vms):
                all_verdicts_at = all_verdicts_at or now
                if now - all_verdicts_at > a.linger + 20:
                    break  # they should have powered off by now
            if cl.first_fail and now - cl.first_fail[1] > a.fail_grace:
                break
            cl.progress(now)
            if a.boot_timeout:
                for v in cl.vms:
                    if v.t_pid1 is None and v.exit_code is None and now - v.t_start > a.boot_timeout:
                        cl.show(v, f"no guest output within {a.boot_timeout} s (--boot-timeout): giving up")
                        v.reason = f"the guest did not reach /init within {a.boot_timeout} s"
                        timed_out = True
                if timed_out:
                    break
            for key, _ in sel.select(timeout=0.5):
                vm: Vm = key.data
                try:
                    data = os.read(key.fileobj.fileno(), 65536)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fileobj)
                    open_fds -= 1
                    vm.exit_code = vm.proc.wait()
                    vm.t_exit = time.monotonic()
                    if vm.buf:
                        cl.on_line(vm, vm.buf.decode(errors="replace").rstrip("\r"))
                        vm.buf = b""
                    if vm.verdict is None:
                        cl.show(vm, f"VM exited with status {vm.exit_code} without a verdict")
                        if cl.first_fail is None:
                            cl.first_fail = (vm, time.monotonic())
                    continue
                vm.buf += data
                while b"\n" in vm.buf:
                    line, vm.buf = vm.buf.split(b"\n", 1)
                    cl.on_line(vm, line.decode(errors="replace").rstrip("\r"))
    except KeyboardInterrupt as e:
        interrupted = str(e) or "SIGINT"
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        stop_vms(cl.vms)
        for v in cl.vms:
            if v.exit_code is None and v.proc:
                v.exit_code = v.proc.poll()
            if v.log:
                v.log.close()
        sel.close()
        shutil.rmtree(run_dir, ignore_errors=True)
    if interrupted:
        print(f"qemu: interrupted ({interrupted}): stopped {len(cl.vms)} VMs, removed {run_dir}", flush=True)
        return 130
    if report_fn:
        return report_fn(cl, timed_out)
    return report(cl, timed_out, nics=len(port_dirs(dims)) * len(cl.vms))


# ---------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    try:
        dims = parse_dims(a.dims)
        swaps = parse_swaps(a.swap_nics, dims)
        if not re.fullmatch(r"[A-Za-z0-9_-]+", a.job):
            raise UsageError(f"bad --job '{a.job}'")
        for kv in a.arg:
            if not re.fullmatch(r"[A-Za-z0-9_-]+=[^\s\"]+", kv):
                raise UsageError(f"bad --arg '{kv}' (KEY=VALUE, no spaces)")
        if a.mem < 128:
            raise UsageError("--mem: at least 128 MB")
        if a.net == "uio" and a.hugepages * 2 > a.mem - 96:
            raise UsageError(f"--hugepages {a.hugepages} (x 2 MB) do not fit in --mem {a.mem}")
    except UsageError as e:
        print(f"toroid qemu: {e}", file=sys.stderr)
        return 2
    n = dims[0] * dims[1] * dims[2]
    tcg = a.accel != "kvm"
    # Under TCG the whole self-test matrix (1724 cases) takes about 5 minutes
    # on eight guests sharing two cores (docs/qemu.md), the quick one under a
    # minute: quick unless a level was asked for.
    if a.job == "selftest" and tcg and not any(kv.startswith("level=") for kv in a.arg):
        a.arg.append("level=quick")
        print("qemu: selftest at level quick under TCG (--arg level=full runs the whole matrix, 1724 cases: "
              "about 5 min on 8 VMs sharing 2 cores, with deadlines to match)", flush=True)
    if tcg and "level=full" in a.arg and not a.job_timeout:
        # Guest CPU time grows with the VMs sharing the host's cores: 262 s for
        # the full matrix on 8 VMs and 2 cores here, about 4x below this.
        a.job_timeout = FULL_JOB_S + FULL_JOB_PER_VM_S * n
    if tcg and not a.coll_timeout:
        a.coll_timeout = TCG_COLL_TIMEOUT_S
    if not a.link_timeout and tcg:
        a.link_timeout = 5.0
    if a.link_timeout and a.link_timeout < 0.1:
        print("toroid qemu: --link-timeout: at least 0.1 s", file=sys.stderr)
        return 2
    a.timeout = a.timeout or 120 + 20 * n + (a.job_timeout if tcg and "level=full" in a.arg else 0)
    a.boot_timeout = a.boot_timeout or 60 + 10 * n
    a.train_timeout = a.train_timeout or 60 + 5 * n
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    a.build_dir = os.path.abspath(a.build_dir or os.path.join(root, "build"))
    a.node_bin = os.path.abspath(a.node_bin or os.path.join(a.build_dir, "firmware", "toroid-node"))
    a.log_dir = os.path.abspath(a.log_dir or os.path.join(image.image_dir(a.build_dir), "run"))

    if a.pcap:
        a.pcap = os.path.abspath(a.pcap)
        try:
            os.makedirs(a.pcap, exist_ok=True)
        except OSError as e:
            print(f"toroid qemu: --pcap {a.pcap}: {e.strerror}", file=sys.stderr)
            return 2
        print(f"qemu: capturing every NIC to {a.pcap}/node-X-Y-Z-portN-DIR.pcap", flush=True)
    rc = preflight(a, "toroid qemu")
    if rc is not None:
        return rc
    try:
        desc = image.ensure_image(a.build_dir, a.node_bin, force=a.rebuild_image, kernel=a.kernel)
    except image.ImageError as e:
        print(f"toroid qemu: guest image: {e}", file=sys.stderr)
        return 1
    if a.net == "uio" and not desc.get("dpdk_plugins"):
        print("toroid qemu: --net uio needs a DPDK toroid-node (the image has no DPDK plugins)", file=sys.stderr)
        return 1
    return run_cluster(a, dims, swaps, desc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
