#!/usr/bin/env python3
"""Runs an MPI example on the QEMU cluster (qemu/mpirun_qemu.py, what
`./toroid mpirun --rig qemu` runs) and checks it against its serial run.

    qemu_mpi_check.py --build-dir BUILD --dims XxYxZ PROGRAM [ARGS...]

Checks, from the launcher's output and the run directory:
  - every rank exited 0 and the launcher says so; exit status 0;
  - PID 1 of every VM ran the program as its application and reported its
    status ("app node=X,Y,Z status=0" on each console), with every NIC bound
    to uio_pci_generic (the program's links bypass the guest kernel);
  - rank 0's own check against the serial run on the whole grid, bit for bit
    ("...: MATCH"), and its result line (residuals, |r|^2) equal to the
    program's serial run on this machine (one rank, no launcher);
  - rank-R.out of every rank holds what that rank printed.

Exit status: 0 as expected, 1 not, 77 when QEMU cannot start here.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.join(HERE, "..", "..", "qemu", "mpirun_qemu.py")
# The result line each example prints on rank 0: what must equal the serial run.
RESULT = re.compile(r"^(?:\[0\] )?(heat3d|cg): .*?(residual max \S+ sum \S+|final \|r\|\^2 \S+)$", re.M)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--dims", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    if not a.command:
        ap.error("no PROGRAM")
    prog, args = os.path.abspath(a.command[0]), a.command[1:]
    dims = [int(x) for x in a.dims.split("x")]
    nodes = [f"{x},{y},{z}" for z in range(dims[2]) for y in range(dims[1]) for x in range(dims[0])]
    run_root = tempfile.mkdtemp(prefix="toroid-qemu-mpi-")
    cmd = [sys.executable, LAUNCHER, "--skip-if-no-qemu", "--build-dir", a.build_dir, "--dims", a.dims,
           "--run-dir", run_root, "--timeout", "300s", prog] + args
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    print(r.stderr, end="")
    print(r.stdout, end="", flush=True)
    print(f"(launcher exited {r.returncode} after {time.monotonic() - t0:.1f} s)")
    if r.returncode == 77:
        print("SKIP: " + (r.stderr.strip().splitlines() or ["QEMU cannot start here"])[-1])
        return 77

    # The serial run: the same program as one rank on this machine.
    s = subprocess.run([prog] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                       env={k: v for k, v in os.environ.items() if not k.startswith("TOROID_")})
    print("serial run (1 rank, this machine):\n" + s.stdout, end="")

    problems = []

    def need(cond, what):
        if not cond:
            problems.append(what)

    name = os.path.basename(prog)
    need(r.returncode == 0, f"the launcher exited {r.returncode}, not 0")
    need(re.search(rf"toroid-mpirun: {re.escape(name)}: every one of {len(nodes)} ranks on the qemu rig", r.stderr),
         "no 'every rank exited 0' line")
    need(re.search(rf"^\[0\] {re.escape(name)}: against the serial run, bit for bit: .*: MATCH$", r.stdout, re.M),
         "rank 0 did not report a bit-for-bit MATCH with its serial run")
    need(s.returncode == 0, f"the serial run exited {s.returncode}")
    got, want = RESULT.search(r.stdout), RESULT.search(s.stdout)
    need(got and want and got.group(2) == want.group(2),
         f"rank 0's result ({got.group(2) if got else 'none'}) is not the serial run's "
         f"({want.group(2) if want else 'none'})")
    runs = sorted(glob.glob(os.path.join(run_root, "mpirun-qemu-*")))
    need(len(runs) == 1, f"want one run directory in {run_root}, found {len(runs)}")
    if runs:
        for i, n in enumerate(nodes):
            log = os.path.join(runs[0], f"node-{n.replace(',', '-')}.log")
            text = open(log, errors="replace").read() if os.path.exists(log) else ""
            need("[pid1] running the application: /app/bin/" + name in text, f"node {n}: PID 1 did not run {name}")
            need(re.search(rf"^\s*[\d.]+ app node={re.escape(n)} status=0$", text, re.M),
                 f"node {n}: no 'app node={n} status=0' on its console")
            need(text.count("bound to uio_pci_generic") == 2 * sum(1 for d in dims if d > 1),
                 f"node {n}: not every NIC bound to uio_pci_generic")
            out = os.path.join(runs[0], f"rank-{i}.out")
            need(os.path.exists(out), f"no rank-{i}.out")
        r0 = os.path.join(runs[0], "rank-0.out")
        need(os.path.exists(r0) and "MATCH" in open(r0).read(), "rank-0.out does not hold rank 0's output")
    if problems:
        print("qemu_mpi_check: FAILED:")
        for p in problems:
            print("  - " + p)
        print(f"(run directory kept: {run_root})")
        return 1
    print(f"qemu_mpi_check: OK ({name} on {len(nodes)} VMs matches its serial run: {got.group(2)})")
    subprocess.run(["rm", "-rf", run_root])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
