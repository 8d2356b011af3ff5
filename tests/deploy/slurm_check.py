#!/usr/bin/env python3
"""Suite `deploy`: the self-test as a Slurm job step, on a real Slurm.

Starts a private one-node cluster here (munged, slurmctld and slurmd from
Debian's munge and slurm-wlm, generated config under a temp dir, 8 CPUs
declared, oversubscribed; deploy/local_slurm.py), then submits:

  1. the 2x2x2 self-test as `srun -n 8`: every task takes its rank from
     SLURM_PROCID; every node must PASS;
  2. a 2x1x1 self-test as `srun -n 2 --mpi=pmix`: ranks from PMIx;

then stops the daemons and checks that no daemon, job step or node process is
left. Slurm missing is a failure that says how to install it
(`./toroid setup --slurm`; `./toroid test` does it for this suite).
"""
import argparse
import contextlib
import io
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "deploy"))
import local_slurm  # noqa: E402
import slurm_selftest  # noqa: E402


def step(build_dir, args):
    """Runs one slurm_selftest step against the cluster in SLURM_CONF; returns
    (status, output, seconds)."""
    out = io.StringIO()
    t0 = time.monotonic()
    with contextlib.redirect_stdout(out):
        status = slurm_selftest.main(["--build-dir", build_dir] + args)
    text = out.getvalue()
    print(text, end="", flush=True)
    return status, text, time.monotonic() - t0


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    a = ap.parse_args(argv)
    miss = local_slurm.missing_programs()
    if miss:
        print("slurm_check: FAIL: Slurm is not installed here (missing %s): `./toroid setup --slurm` installs "
              "slurm-wlm and munge, and `./toroid test` does it for this suite" % ", ".join(miss))
        return 1
    failures = []
    ran = 0
    t0 = time.monotonic()
    cluster = local_slurm.LocalSlurm()
    try:
        cluster.start()
        os.environ["SLURM_CONF"] = cluster.env["SLURM_CONF"]
        # 1. srun -n 8, ranks from SLURM_PROCID.
        ran += 1
        status, text, secs = step(a.build_dir, ["--dims", "2x2x2", "--timeout", "240"])
        rows = re.findall(r"^(\d,\d,\d)\s+(\d)\s+SLURM_PROCID\s+PASS\s+(\d+)$", text, re.M)
        if status != 0 or "verdict: PASS (8/8 nodes passed" not in text or len(rows) != 8:
            failures.append("srun -n 8 2x2x2 self-test: exit %d, %d PASS rows with ranks from SLURM_PROCID"
                            % (status, len(rows)))
        elif "srun -n 8 " not in text:
            failures.append("the step was not srun -n 8")
        else:
            print("slurm_check: srun -n 8, 2x2x2 self-test: 8/8 PASS (%s cases each) in %.1f s"
                  % (rows[0][2], secs))
        # 2. srun --mpi=pmix, ranks from PMIx.
        ran += 1
        status, text, secs = step(a.build_dir, ["--dims", "2x1x1", "--pmix", "--timeout", "120"])
        rows = re.findall(r"^(\d,\d,\d)\s+(\d)\s+PMIx \(namespace \S*\s+PASS\s+(\d+)$", text, re.M)
        if status != 0 or len(rows) != 2:
            failures.append("srun --mpi=pmix 2x1x1 self-test: exit %d, %d PASS rows with ranks from PMIx"
                            % (status, len(rows)))
        else:
            print("slurm_check: srun -n 2 --mpi=pmix, 2x1x1 self-test: 2/2 PASS, ranks from PMIx, in %.1f s" % secs)
        left = local_slurm.processes_with("toroid-slurm-step.")
        if left:
            failures.append("job step processes outlived srun: %s" % "; ".join(left))
    except local_slurm.SlurmError as e:
        failures.append(str(e))
    finally:
        cdir = cluster.dir
        cluster.stop()
        if cdir:
            ran += 1
            left = local_slurm.processes_with(cdir)
            if left:
                failures.append("still running after the stop: %s" % "; ".join(left))
            elif os.path.exists(cdir):
                failures.append("%s was not removed" % cdir)
            else:
                print("slurm_check: munged, slurmctld and slurmd stopped, nothing left running")
    ms = int((time.monotonic() - t0) * 1000)
    for f in failures:
        print("slurm_check: FAIL: %s" % f)
    # The suite's counter reads CppUTest's summary line: one test per check.
    if failures:
        print("Errors (%d failures, %d tests, %d ran, %d checks, 0 ignored, 0 filtered out, %d ms)"
              % (len(failures), ran, ran, ran, ms))
        return 1
    print("OK (%d tests, %d ran, %d checks, 0 ignored, 0 filtered out, %d ms)" % (ran, ran, ran, ms))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
