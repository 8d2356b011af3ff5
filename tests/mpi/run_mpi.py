#!/usr/bin/env python3
"""The `mpi` suite: runs the MPI conformance programs (tests/mpi/*.c, built
with toroid-mpicc) under toroid-mpirun on one partition shape and link
driver, checks each program's verdict line, exit status and messages, and
prints a CppUTest-style summary line that ./toroid test counts.

    run_mpi.py --mpirun BIN --bindir DIR --dims XxYxZ --driver memif|uring
               [--node BIN] [--mpicc BIN] [--header DIR] [--extra]

--extra adds the checks that need to run once only: every function mpi.h
declares links, and 100,000 communicators made and freed (10,000 in an
AddressSanitizer build).
The launcher's run directories (rank logs) go to a temporary directory,
removed when every case passed and kept, named in the last lines, when one
failed.
Exit status: 0 all passed, 1 a failure, 77 the driver cannot run here.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

VERDICT = re.compile(r"^\[0\] mpitest (\S+): (\d+) checks on (\d+) ranks, (\d+) failed$", re.M)


class Run:
    def __init__(self, args):
        self.a = args
        self.passed = 0
        self.failed = 0
        self.checks = 0
        self.names = []

    def mpirun(self, prog, *extra, env=None, prog_args=(), timeout=300):
        cmd = [self.a.mpirun, "--dims", self.a.dims, "--driver", self.a.driver, "-q",
               "--run-dir", self.a.run_dir, *self.a.rank_env, *extra, os.path.join(self.a.bindir, prog), *prog_args]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
            return p.returncode, p.stdout, p.stderr, time.time() - t0
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            return None, out, "timed out after %d s" % timeout, time.time() - t0

    def result(self, name, ok, detail, secs, checks=0):
        self.names.append(name)
        self.checks += checks
        if ok:
            self.passed += 1
            print("PASS %-44s %6.1f s %s" % (name, secs, detail), flush=True)
        else:
            self.failed += 1
            print("FAIL %-44s %6.1f s %s" % (name, secs, detail), flush=True)

    def conformance(self, prog, *extra, prog_args=(), label=None):
        rc, out, err, secs = self.mpirun(prog, *extra, prog_args=prog_args)
        name = label or prog
        m = VERDICT.search(out)
        if rc == 0 and m and m.group(4) == "0":
            self.result(name, True, "%s checks on %s ranks" % (m.group(2), m.group(3)), secs, int(m.group(2)))
            return
        fails = [l for l in (out + "\n" + err).splitlines() if "FAIL" in l or "toroid-mpi" in l][:12]
        self.result(name, False, "exit %s, verdict %s\n    %s" % (rc, m.group(0) if m else "missing", "\n    ".join(fails)),
                    secs)

    def expect(self, name, prog, status, needles, *extra, env=None, within=None, prog_args=()):
        rc, out, err, secs = self.mpirun(prog, *extra, env=env, timeout=120, prog_args=prog_args)
        text = out + "\n" + err
        missing = [n for n in needles if not re.search(n, text, re.M)]
        want = status if isinstance(status, tuple) else (status,)
        ok = rc in want and not missing and (within is None or secs < within)
        detail = "exit %s (want %s)" % (rc, " or ".join(str(w) for w in want))
        if missing:
            detail += "; missing: " + " | ".join(missing) + "\n    " + "\n    ".join(text.splitlines()[:15])
        if within is not None and secs >= within:
            detail += "; took %.1f s (want < %d)" % (secs, within)
        self.result(name, ok, detail, secs, len(needles) + 1)


def header_links(a):
    """Every MPI_ and PMPI_ function mpi.h declares links against libtoroid-mpi."""
    src = open(os.path.join(a.header, "mpi_functions.h")).read() + open(os.path.join(a.header, "mpi_tool.h")).read()
    # Declarations only (line starts): the header's comment shows the form too.
    names = re.findall(r"^TOROID_MPI_FN\([^,]+, (\w+),", src, re.M)
    tnames = re.findall(r"^TOROID_MPI_T_FN\([^,]+, (\w+),", src, re.M)
    body = ["#include <mpi.h>", "typedef void (*fn)(void);", "fn all[] = {"]
    body += ["(fn)MPI_%s, (fn)PMPI_%s," % (n, n) for n in names]
    body += ["(fn)MPI_T_%s, (fn)PMPI_T_%s," % (n, n) for n in tnames]
    body += ["};", "int main(void) { return all[0] == 0; }"]
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "all.c")
        open(c, "w").write("\n".join(body) + "\n")
        t0 = time.time()
        p = subprocess.run([a.mpicc, "-std=c99", "-Wall", "-Werror", "-pedantic", c, "-o", os.path.join(d, "all")],
                           capture_output=True, text=True)
        cxx = subprocess.run([a.mpicc.replace("mpicc", "mpicxx"), "-x", "c++", "-Wall", "-Werror", c, "-o",
                              os.path.join(d, "allxx")], capture_output=True, text=True)
        return p.returncode == 0 and cxx.returncode == 0, len(names), (p.stderr + cxx.stderr)[:2000], time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--dims", required=True)
    ap.add_argument("--driver", default="memif")
    ap.add_argument("--node", help="toroid-node, to ask whether DPDK can run here")
    ap.add_argument("--mpicc")
    ap.add_argument("--header", help="the directory of mpi.h")
    ap.add_argument("--examples", help="the directory of the built examples (heat3d, cg)")
    ap.add_argument("--extra", action="store_true")
    a = ap.parse_args()
    a.bindir = os.path.abspath(a.bindir)
    if a.examples:
        a.examples = os.path.abspath(a.examples)
    if a.driver == "memif" and a.node:
        chk = subprocess.run([a.node, "--check-eal"], capture_output=True, text=True)
        if chk.returncode == 77:
            print("SKIP: DPDK cannot run here: " + chk.stdout.strip())
            return 77
    # An AddressSanitizer build (./toroid test --asan): the programs are
    # built without the sanitizer, so its runtime must come first in every
    # rank (the library and the launcher carry it). Objects a program never
    # frees (MPI does not ask it to) are not reported as leaks.
    a.rank_env = []
    a.asan = False
    ldd = subprocess.run(["ldd", a.mpirun], capture_output=True, text=True).stdout
    m = re.search(r"^\s*libasan\.so\S* => (\S+)", ldd, re.M)
    if m:
        a.asan = True
        opts = os.environ.get("ASAN_OPTIONS", "")
        a.rank_env = ["--env", "LD_PRELOAD=" + m.group(1),
                      "--env", "ASAN_OPTIONS=" + (opts + ":" if opts else "") + "detect_leaks=0"]
        print("AddressSanitizer build: every rank preloads " + m.group(1), flush=True)
    a.run_dir = tempfile.mkdtemp(prefix="toroid-mpi-suite-")
    r = Run(a)
    t0 = time.time()
    print("mpi suite on %s over %s" % (a.dims, a.driver), flush=True)
    # The conformance programs, one per chapter group.
    for prog in ("p2p", "datatypes", "coll_reduce", "coll_data", "comm", "intercomm", "topo", "env", "unsupported"):
        r.conformance(prog)
    r.conformance("repro", "--env", "TOROID_REPRO=exact")
    r.conformance("mpi4", prog_args=("one", "two"))
    for prog in ("portable", "portable_cxx"):
        r.expect("%s: other implementations' idioms" % prog, prog, 0, [r"^\[0\] portable: \d+ ranks, 0 failed"])
    r.conformance("before_init", "--env", "TOROID_MPI_ERRORS=return", label="before_init (returned)")
    # Errors that end the job: the class as exit status, the call named.
    r.expect("before_init (fatal)", "before_init", 16, [r"^\[0\] toroid-mpi: MPI_Comm_rank called before MPI_Init \(MPI_ERR_OTHER\)"])
    r.expect("fatal error handler", "fatal", 6,
             [r"MPI_Send: rank \d+ is not in MPI_COMM_WORLD \(\d+ ranks\) \(MPI_ERR_RANK\)",
              r"toroid-mpirun: rank 0 \(node 0,0,0\) aborted: MPI_Send",
              # The others end naming why: the launcher's stop, or (first) their
              # own links to rank 0 going down as it exits.
              r"stopped: rank 0 \(node 0,0,0\) aborted|rank \d+: MPI_Barrier: .*link down"])
    n = 1
    for x in a.dims.split("x"):
        n *= int(x)
    r.expect("MPI_Abort: the job's status is its code", "abort", 7,
             [r"toroid-mpirun: rank %d \(node [0-9,]+\) aborted: MPI_Abort\(MPI_COMM_WORLD, 7\)" % (n - 1)])
    r.expect("a rank dies: the launcher stops the others", "dies", 137,
             [r"toroid-mpirun: rank 1 \(node 1,0,0\) killed by SIGKILL before MPI_Finalize; stopping the other ranks"],
             within=15)
    # Which failure the launcher hears of first (rank 1's SIGKILL, or another
    # rank's exit 3 after it saw the failure) is a race: either is the job's.
    r.expect("a rank dies: the others see it themselves", "dies", (137, 3),
             [r"^\[%d\] rank %d: MPI_Barrier failed after [0-9.]+ s: MPI_ERR_OTHER" % (k, k) for k in range(n) if k != 1],
             "--no-stop", "--wait-timeout", "8s", within=30)
    # The examples, each checked by itself against its serial run, bit for
    # bit; with TOROID_REPRO=exact too (their sums are exact either way).
    if a.examples:
        for prog, args in (("heat3d", ("20", "18", "16", "40")), ("cg", ("16", "16", "16", "200"))):
            for env in ((), ("--env", "TOROID_REPRO=exact")):
                r.expect("example %s%s" % (prog, " (TOROID_REPRO=exact)" if env else ""), os.path.join(a.examples, prog),
                         0, [r"^\[0\] %s: against the serial run, bit for bit: .*: MATCH$" % prog], *env,
                         prog_args=args)
    if a.extra:
        ok, count, err, secs = header_links(a)
        r.result("mpi.h: every function links (C and C++)", ok, "%d functions, with PMPI twins%s" % (count, "\n" + err if err else ""),
                 secs, 2 * count)
        # Under AddressSanitizer the churn, not the count: 100,000 took 275 s
        # there (14 s in the release build, whose run makes all of them and
        # wraps the 16-bit context numbers).
        n = 10000 if a.asan else 100000
        r.conformance("comm", prog_args=(str(n),),
                      label="comm: {:,} communicators{}".format(n, " (AddressSanitizer build)" if a.asan else ""))
    ms = int((time.time() - t0) * 1000)
    total = r.passed + r.failed
    if r.failed:
        print("the ranks' logs: %s" % a.run_dir)
        print("Errors (%d failures, %d tests, %d ran, %d checks, 0 ignored, 0 filtered out, %d ms)" %
              (r.failed, total, total, r.checks, ms))
        return 1
    shutil.rmtree(a.run_dir, ignore_errors=True)
    print("OK (%d tests, %d ran, %d checks, 0 ignored, 0 filtered out, %d ms)" % (total, total, r.checks, ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
