#!/usr/bin/env python3
"""toroid mpirun --rig qemu: an MPI program as the application of every VM.

    mpirun_qemu.py --build-dir BUILD (-n N | --dims XxYxZ) [options] PROGRAM [ARGS...]

One QEMU VM per torus node (qemu/toroid_qemu.py boots them). The node image
gets an overlay with the program and the libraries it needs that the image
lacks (qemu/app_image.py); PID 1 of every guest runs it as the node's
application with the node's personality (firmware/pid1_app.h), relays its
output to the console and reports its exit status there. This launcher
forwards every line a rank prints with its rank in front ("[3] ...", to
stdout; its own progress goes to stderr), keeps each rank's output in
RUN_DIR/mpirun-qemu-<time>/rank-R.out next to the consoles (node-X-Y-Z.log),
and ends with each rank's exit status.

Exit status: the first failing rank's status (128+N: killed by signal N), 1
when a VM failed before its program ran or the run timed out, 0 when every
rank exited 0; 2 usage error; 77 QEMU cannot start here (--skip-if-no-qemu).
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import app_image  # noqa: E402
import image  # noqa: E402
import toroid_qemu as tq  # noqa: E402

USAGE = """\
usage: toroid mpirun --rig qemu (-n N | --dims XxYxZ) [options] PROGRAM [ARGS...]

options (as on the host rig):
  -n, -np N             N ranks on the most balanced torus (8: 2x2x2), 2 to 64
  --dims XxYxZ          the torus (its node count is the rank count)
  --timeout D           the program in each guest, from its start (default 600s);
                        the whole run also allows the VMs' boot
  --wait-timeout D      each blocking MPI call (TOROID_MPI_TIMEOUT; default 300s)
  --train-timeout D     link training in MPI_Init (default 60s + 5s per VM under TCG)
  --env KEY=VALUE       a variable for every rank (repeatable)
  --run-dir DIR         where mpirun-qemu-<time>/ goes (default <repo>/run)
  --no-tag-output       forward lines without the rank prefix
  -q, --quiet           no progress lines; the summary only when a rank failed
options of the qemu rig (docs/qemu.md):
  --net uio|kernel      DPDK virtio PMD, kernel bypass (default) | virtio_net + io_uring
  --mem MB              RAM per VM (default 512)
  --accel tcg|kvm       (default tcg)
  --boot-timeout S      seconds for a VM to reach /init (default 60 + 10 per VM)
  --link-timeout S      seconds a silent link may take before it goes down (TCG: 5)
  -v, --verbose         every console line
Durations take a unit: 600s, 500ms. --driver, --cpus and --no-stop are the host
rig's: refused here.
"""

VALUE = {"-n", "-np", "--np", "--dims", "--timeout", "--wait-timeout", "--train-timeout", "--env", "--run-dir",
         "--net", "--mem", "--accel", "--boot-timeout", "--link-timeout", "--build-dir", "--node-bin"}
FLAGS = {"--no-tag-output", "-q", "--quiet", "-v", "--verbose", "--skip-if-no-qemu"}
HOST_ONLY = {"--driver": "the host rig's link driver (the guests' links are virtio NICs: --net uio|kernel)",
             "--cpus": "the host rig's CPU placement (each VM has one vCPU)",
             "--no-stop": "the host rig's (on the qemu rig a rank that fails powers its VM off; the others find "
                          "out through their links)"}


class Usage(Exception):
    pass


def dims_for(n: int) -> tuple[int, int, int]:
    """The most balanced torus of n nodes, as toroid-mpirun picks it
    (mpi/launcher/mpirun.cc dims_for)."""
    primes, m, p = [], n, 2
    while p * p <= m:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    if m > 1:
        primes.append(m)
    d = [1, 1, 1]
    for q in sorted(primes, reverse=True):
        d[d.index(min(d))] *= q
    d.sort(reverse=True)
    return d[0], d[1], d[2]


def seconds(name: str, v: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d*)?)(ms|s)", v)
    if not m:
        raise Usage(f"{name} '{v}' is not a duration with a unit (e.g. 600s, 500ms)")
    s = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    if s <= 0:
        raise Usage(f"{name} must be more than 0")
    return s


def parse(argv: list[str]) -> dict:
    o = {"env": [], "flags": set()}
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if a == "--":
            o["command"] = argv[i + 1:]
            break
        if a in ("-h", "--help"):
            o["help"] = True
            return o
        if not a.startswith("-") or a == "-":
            o["command"] = argv[i:]
            break
        if name in HOST_ONLY:
            raise Usage(f"{name} is not an option of --rig qemu: it is {HOST_ONLY[name]}")
        if name in VALUE:
            if eq:
                v = inline
            elif i + 1 < len(argv):
                i += 1
                v = argv[i]
            else:
                raise Usage(f"{name} needs a value")
            if name == "--env":
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", v, re.S):
                    raise Usage(f"--env '{v}' is not KEY=VALUE")
                o["env"].append(v)
            else:
                o[{"-np": "-n", "--np": "-n"}.get(name, name)] = v
        elif a in FLAGS:
            o["flags"].add({"-q": "--quiet", "-v": "--verbose"}.get(a, a))
        else:
            raise Usage(f"unknown option '{a}'")
        i += 1
    return o


def launcher_args(o: dict, root: str):
    """The cluster's arguments (toroid_qemu's parser, so every default is
    its own) and the program's settings."""
    if "-n" in o and "--dims" in o:
        raise Usage("give -n N or --dims XxYxZ, not both")
    if "-n" in o:
        if not o["-n"].isdigit() or not 2 <= int(o["-n"]) <= 64:
            raise Usage(f"-n '{o['-n']}': the qemu rig runs 2 to 64 ranks (one VM each)")
        dims = "x".join(map(str, dims_for(int(o["-n"]))))
    elif "--dims" in o:
        dims = o["--dims"]
    else:
        raise Usage("give -n N or --dims XxYxZ")
    if not o.get("command"):
        raise Usage("no PROGRAM to run")
    qa = ["--dims", dims, "--job", "train", "--build-dir", o.get("--build-dir") or os.path.join(root, "build")]
    for k in ("--net", "--mem", "--accel", "--boot-timeout", "--link-timeout"):
        if k in o:
            qa += [k, o[k]]
    if "--train-timeout" in o:
        qa += ["--train-timeout", str(seconds("--train-timeout", o["--train-timeout"]))]
    if "--verbose" in o["flags"]:
        qa.append("-v")
    if "--skip-if-no-qemu" in o["flags"]:
        qa.append("--skip-if-no-qemu")
    app_timeout = seconds("--timeout", o["--timeout"]) if "--timeout" in o else 600.0
    env = list(o["env"])
    if "--wait-timeout" in o:
        seconds("--wait-timeout", o["--wait-timeout"])
        env.append("TOROID_MPI_TIMEOUT=" + o["--wait-timeout"])
    # EAL at its error level, as on the host rig (PID 1 would pass the info
    # level the console report uses; --env TOROID_MPI_EAL_LOG=info asks for it).
    if not any(e.startswith("TOROID_MPI_EAL_LOG=") for e in env):
        env.append("TOROID_MPI_EAL_LOG=error")
    return qa, env, app_timeout


class Ranks:
    """The ranks' output: forwarded to stdout as it comes, kept per rank."""

    def __init__(self, cl, run_dir: str, tag: bool, out):
        self.out = out
        self.tag = tag
        self.files = {}
        self.status: dict[int, int] = {}
        self.last_err: dict[int, str] = {}   # each rank's last stderr line: why it failed, mostly
        self.first_fail: list[int] = []
        for vm in cl.vms:
            self.files[vm.index] = open(os.path.join(run_dir, f"rank-{vm.index}.out"), "w")

    def line(self, vm, stream: str, text: str):
        # stdout's lines to stdout, stderr's to stderr, as on the host rig.
        self.files[vm.index].write(("(stderr) " if stream == "err" else "") + text + "\n")
        if stream == "err" and text.strip():
            self.last_err[vm.index] = text.strip()
        out = self.out if stream == "out" else sys.stderr
        out.write((f"[{vm.index}] " if self.tag else "") + text + "\n")
        out.flush()

    def exited(self, vm, status: int):
        self.status[vm.index] = status
        if status != 0 and vm.index not in self.first_fail:
            self.first_fail.append(vm.index)

    def close(self):
        for f in self.files.values():
            f.close()


def describe(status: int) -> str:
    if 128 < status < 128 + 65:
        try:
            return f"was killed by {signal.Signals(status - 128).name} (status {status})"
        except ValueError:
            return f"was killed by signal {status - 128} (status {status})"
    return f"exited with status {status}"


def report(ranks: Ranks, quiet: bool, prog: str, run_dir: str, in_image: str):
    app_prefix = f"application {in_image} "

    def summary(cl, timed_out: bool) -> int:
        n = len(cl.vms)
        bad = [v for v in cl.vms if ranks.status.get(v.index) != 0]
        err = sys.stderr
        if bad or timed_out or not quiet:
            print(file=err)
            print(f"{'rank':>4}  {'node':<8} {'/init':>7} {'ready':>7} {'done':>7}  status", file=err)
            for v in cl.vms:
                st = ranks.status.get(v.index)
                if st is not None:
                    # PID 1's reason: how the program ended, or why it never ran.
                    what = "0" if st == 0 else f"{st}: {v.reason.removeprefix(app_prefix) or describe(st)}"
                elif timed_out:
                    what = "no exit status: timed out"
                elif v.reason:
                    what = f"no exit status: {v.reason}"
                elif v.stopped_by_us:
                    what = "no exit status: stopped after another rank failed"
                else:
                    what = f"no exit status (VM exited with {v.exit_code})"
                t = [f"{cl.elapsed(x):6.1f}s" if x is not None else "      -"
                     for x in (v.t_pid1, v.t_ready, v.t_verdict)]
                print(f"{v.index:>4}  {v.name:<8} {t[0]} {t[1]} {t[2]}  {what}", file=err)
            print(f"toroid-mpirun: consoles and rank-R.out in {os.path.relpath(run_dir)}", file=err)
        dims = "x".join(map(str, cl.dims))
        where = f"{n} ranks on the qemu rig (dims {dims}, net {cl.a.net}, accel {cl.a.accel})"
        if not bad and not timed_out:
            if not quiet:
                print(f"toroid-mpirun: {prog}: every one of {where} exited 0 in {cl.elapsed():.1f} s", file=err)
            return 0
        if timed_out:
            print(f"toroid-mpirun: {prog}: FAIL: the run did not finish within {cl.a.timeout:.0f} s "
                  f"({len(ranks.status)} of {n} ranks reported an exit status)", file=err)
        if ranks.first_fail:
            r = ranks.first_fail[0]
            v = cl.vms[r]
            last = ranks.last_err.get(r)
            print(f"toroid-mpirun: {prog}: FAIL: rank {r} (node {v.name}) {describe(ranks.status[r])} first"
                  + (f"; its last error line: {last}" if last else ""), file=err)
            return ranks.status[r]
        if not timed_out:
            v = bad[0]
            print(f"toroid-mpirun: {prog}: FAIL: rank {v.index} (node {v.name}) never reported an exit status: "
                  f"{v.reason or 'its VM stopped'}", file=err)
        return 1
    return summary


def main(argv: list[str]) -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        o = parse(argv)
        if o.get("help"):
            print(USAGE, end="")
            return 0
        qa, env, app_timeout = launcher_args(o, root)
        a = tq.build_parser().parse_args(qa)
        dims = tq.parse_dims(a.dims)
    except (Usage, tq.UsageError) as e:
        print(f"toroid-mpirun: {e}\n(toroid mpirun --help for usage)", file=sys.stderr)
        return 2
    prog_path, prog_args = o["command"][0], o["command"][1:]
    if not os.path.isfile(prog_path):
        print(f"toroid-mpirun: {prog_path}: no such program", file=sys.stderr)
        return 2
    n = dims[0] * dims[1] * dims[2]
    if a.accel != "kvm":
        a.link_timeout = a.link_timeout or 5.0
    a.boot_timeout = a.boot_timeout or 60 + 10 * n
    a.train_timeout = a.train_timeout or 60 + 5 * n
    # The whole run: the VMs' boot, then the program's own deadline.
    a.timeout = a.boot_timeout + app_timeout + 30
    a.build_dir = os.path.abspath(a.build_dir)
    a.node_bin = os.path.abspath(o.get("--node-bin") or os.path.join(a.build_dir, "firmware", "toroid-node"))
    base = os.path.abspath(o.get("--run-dir") or os.path.join(root, "run"))
    run_dir = os.path.join(base, "mpirun-qemu-" + time.strftime("%Y%m%d-%H%M%S"))
    a.log_dir = run_dir
    a.app_spec = app_image.APP_SPEC
    a.app_name = os.path.basename(prog_path)
    quiet = "--quiet" in o["flags"]
    rc = tq.preflight(a, "toroid-mpirun")
    if rc is not None:
        return rc
    try:
        os.makedirs(run_dir, exist_ok=True)
        with contextlib.redirect_stdout(sys.stderr):
            desc = image.ensure_image(a.build_dir, a.node_bin, kernel=a.kernel, quiet=quiet)
        desc = app_image.build_app_initrd(desc, prog_path, prog_args, env, app_timeout, run_dir)
    except (image.ImageError, app_image.AppError, OSError) as e:
        print(f"toroid-mpirun: guest image: {e}", file=sys.stderr)
        return 1
    if a.net == "uio" and not desc.get("dpdk_plugins"):
        print("toroid-mpirun: --net uio needs a DPDK build (the image has no DPDK plugins)", file=sys.stderr)
        return 1
    info = desc["app"]
    if not quiet:
        print(f"toroid-mpirun: {os.path.basename(prog_path)} on {n} VMs: overlay {info['overlay_bytes'] / 1e6:.1f} MB "
              f"({info['in_image']}" + "".join(", " + os.path.basename(l) for l in info["libs"]) + ")",
              file=sys.stderr, flush=True)
    prog = os.path.basename(prog_path)
    holder = {}
    real_stdout = sys.stdout

    def on_app_line(vm, stream, text):
        holder["ranks"].line(vm, stream, text)

    def on_exit(vm, status):
        holder["ranks"].exited(vm, status)

    def make(cl):
        holder["ranks"] = Ranks(cl, run_dir, "--no-tag-output" not in o["flags"], real_stdout)
        cl.on_app_line = on_app_line
        cl.on_app_exit = on_exit
        if quiet:
            cl.show = lambda vm, text: None

    try:
        # The cluster's progress lines go to stderr (nowhere with -q): stdout
        # is the program's.
        with contextlib.ExitStack() as stack:
            sink = stack.enter_context(open(os.devnull, "w")) if quiet else sys.stderr
            stack.enter_context(contextlib.redirect_stdout(sink))
            return tq.run_cluster(a, dims, {}, desc, setup_fn=make,
                                  report_fn=lambda cl, t: report(holder["ranks"], quiet, prog, run_dir, info["in_image"])(cl, t))
    finally:
        if "ranks" in holder:
            holder["ranks"].close()
        # The node image plus the overlay: rebuilt for every run (well under a second).
        with contextlib.suppress(OSError):
            os.unlink(desc["initramfs"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
