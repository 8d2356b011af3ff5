#!/usr/bin/env python3
"""Submit the Toroid self-test as a Slurm job step (`./toroid slurm-selftest`).

Every rank is one task of one `srun`: `srun -n N toroid-node --topology FILE`,
each task taking its rank from Slurm (SLURM_PROCID) or, with --pmix, from the
PMIx server of `srun --mpi=pmix`. Tasks are placed by the topology: rank r
runs on the host the topology names for r (SLURM_HOSTFILE with
--distribution=arbitrary). Without --topology the script writes a one-host
topology (unix-socket links under a private directory) for the host Slurm
gives it. The verdict lines of all tasks are collected into one table.

--local starts a private one-node Slurm on this machine first and stops it
afterwards (deploy/local_slurm.py); otherwise the site's Slurm is used.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import local_slurm  # noqa: E402

VERDICT = re.compile(r'^verdict node=(\S+) (PASS|FAIL) reason="((?:[^"\\]|\\.)*)" cases=(\d+) ms=([\d.]+)')
RANK_FROM = re.compile(r"^\[node (\S+)\] topology .*: partition \S+, rank (\d+) \(from ([^)]*)")


def say(msg):
    print(msg, flush=True)


def run_checked(argv, env, what, timeout=60):
    r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s\n%s" % (what, r.returncode, " ".join(argv), r.stdout.strip()))
    return r.stdout


def topology_hosts(path):
    """rank -> host, from the topology's node lines."""
    hosts = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*node\s*=\s*(\d+)\s.*host=(\S+)", line.split("#", 1)[0])
            if m:
                hosts[int(m.group(1))] = m.group(2)
    return [hosts[r] for r in sorted(hosts)]


def run_step(env, node_bin, topology, ranks, pmix, timeout_s, extra_srun, node_args, workdir, mkdirs=()):
    """One srun job step of len(ranks) tasks placed by the hostfile; returns
    (exit status, output lines)."""
    hostfile = os.path.join(workdir, "hostfile")
    with open(hostfile, "w") as f:
        f.write("\n".join(ranks) + "\n")
    step_env = dict(env, SLURM_HOSTFILE=hostfile)
    minutes = max(1, (timeout_s + 59) // 60)
    argv = ["srun", "-n", str(len(ranks)), "--distribution=arbitrary", "--kill-on-bad-exit=1",
            "--time=%d" % minutes, "--job-name=toroid-selftest"]
    if pmix:
        argv.append("--mpi=pmix")
    argv += extra_srun
    cmd = [node_bin, "--topology", topology, "--linger", "3s"] + node_args
    if mkdirs:
        # Each task makes the socket directory on its host first (unix-socket
        # links): the topology file is the only thing the tasks share.
        script = 'mkdir -p -m 700 "$0" && exec "$@"'
        argv += ["/bin/sh", "-c", script, mkdirs[0]] + cmd
    else:
        argv += cmd
    say("slurm-selftest: " + " ".join(argv))
    proc = subprocess.Popen(argv, env=step_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    lines = []
    deadline = time.monotonic() + timeout_s
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    timed_out = False
    done = set()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        if not sel.select(timeout=min(left, 1.0)):
            if proc.poll() is not None:
                break
            continue
        line = proc.stdout.readline()
        if not line:
            break
        line = line.rstrip("\n")
        lines.append(line)
        # Progress: boots, verdicts and anything that failed before its
        # node's verdict (after it, neighbours leaving is expected).
        m = VERDICT.match(line)
        if m:
            done.add(m.group(1))
        node = re.match(r"^\[node (\S+)\]", line)
        late = node is not None and node.group(1) in done
        if (m or " trained " in line or (("error" in line or "FAIL" in line) and not late) or
                line.startswith("srun:") or RANK_FROM.match(line)):
            say("  " + line[:300])
    if timed_out:
        say("slurm-selftest: no result within %d s: cancelling the step (SIGINT twice, like Ctrl-C Ctrl-C)" % timeout_s)
        for _ in range(2):
            try:
                os.killpg(proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            time.sleep(0.3)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    else:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return (124 if timed_out else proc.returncode), lines


def report(lines, ntasks, status):
    verdicts = {}
    sources = {}
    for line in lines:
        m = VERDICT.match(line)
        if m:
            verdicts[m.group(1)] = (m.group(2), m.group(3).replace('\\"', '"'), int(m.group(4)))
        m = RANK_FROM.match(line)
        if m:
            sources[m.group(1)] = (int(m.group(2)), m.group(3))
    say("")
    say("%-10s %-6s %-30s %-6s %s" % ("node", "rank", "rank from", "result", "cases / reason"))
    for node in sorted(verdicts, key=lambda n: sources.get(n, (1 << 30, ""))[0]):
        v = verdicts[node]
        rank, src = sources.get(node, ("?", "?"))
        say("%-10s %-6s %-30s %-6s %s" % (node, rank, src[:30], v[0], v[2] if v[0] == "PASS" else v[1][:200]))
    passed = sum(1 for v in verdicts.values() if v[0] == "PASS")
    cases = sorted({v[2] for v in verdicts.values() if v[0] == "PASS"})
    ok = passed == ntasks and status == 0
    say("verdict: %s (%d/%d nodes passed%s; srun exit %d)" % (
        "PASS" if ok else "FAIL", passed, ntasks,
        ", %s cases each" % "/".join(map(str, cases)) if cases else "", status))
    return ok, verdicts, sources


def main(argv=None):
    ap = argparse.ArgumentParser(prog="./toroid slurm-selftest", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True, help="the build directory (toroid-node, toroid-topo)")
    ap.add_argument("--dims", default="2x2x2", help="partition shape when no --topology is given (default 2x2x2)")
    ap.add_argument("--topology", help="the partition's topology file (docs/deploy.md); default: a one-host one")
    ap.add_argument("--local", action="store_true", help="start a private one-node Slurm here for the run")
    ap.add_argument("--pmix", action="store_true", help="srun --mpi=pmix: ranks from PMIx instead of SLURM_PROCID")
    ap.add_argument("--level", default="", help="self-test level (quick or full; default the job's)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds for the job step (default 300)")
    ap.add_argument("--keep", action="store_true", help="--local: keep the Slurm config and logs")
    ap.add_argument("extra", nargs="*", help="after --: more srun options")
    a = ap.parse_args(argv)

    node_bin = os.path.join(a.build_dir, "firmware", "toroid-node")
    topo_bin = os.path.join(a.build_dir, "firmware", "toroid-topo")
    for b in (node_bin, topo_bin):
        if not os.access(b, os.X_OK):
            say("slurm-selftest: %s is not built" % b)
            return 1
    if not local_slurm.which("srun"):
        say("slurm-selftest: srun is not installed (./toroid setup --slurm installs slurm-wlm and munge)")
        return 1
    cluster = local_slurm.LocalSlurm(say=say, keep=a.keep) if a.local else None
    workdir = tempfile.mkdtemp(prefix="toroid-slurm-step.")
    sockdir = None
    try:
        env = dict(os.environ)
        if cluster:
            cluster.start()
            env = cluster.env
        node_args = ["--arg", "level=" + a.level] if a.level else []
        if a.topology:
            topology = os.path.abspath(a.topology)
        else:
            # Which host Slurm gives one task: the whole partition runs there.
            host = run_checked(["srun", "-N", "1", "-n", "1", "--time=1", "hostname", "-s"], env,
                               "srun hostname", timeout=60).strip().splitlines()[-1]
            sockdir = "/tmp/toroid-slurm-%d-%d" % (os.getpid(), int(time.time()))
            topology = os.path.join(workdir, "topology")
            run_checked([topo_bin, "gen", "--dims", a.dims, "--driver", "uring", "--hosts", host,
                         "--socket-dir", sockdir, "--partition", "slurm-%d" % os.getpid(), "--job", "selftest",
                         "-o", topology], env, "toroid-topo gen")
            say("slurm-selftest: %s partition on host %s, unix-socket links in %s (topology %s)"
                % (a.dims, host, sockdir, topology))
        check = subprocess.run([topo_bin, "check", topology], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        if check.returncode != 0:
            say(check.stdout.strip())
            return 1
        ranks = topology_hosts(topology)
        status, lines = run_step(env, node_bin, topology, ranks, a.pmix, a.timeout, a.extra, node_args, workdir,
                                 (sockdir,) if sockdir else ())
        ok, _, _ = report(lines, len(ranks), status)
        return 0 if ok else 1
    except (RuntimeError, local_slurm.SlurmError, subprocess.TimeoutExpired) as e:
        say("slurm-selftest: %s" % e)
        return 1
    finally:
        if sockdir and cluster:
            shutil.rmtree(sockdir, ignore_errors=True)
        elif sockdir:
            subprocess.run(["srun", "-N", "1", "-n", "1", "--time=1", "rm", "-rf", sockdir], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        if cluster:
            cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
