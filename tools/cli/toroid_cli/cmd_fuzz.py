"""./toroid fuzz: the libFuzzer targets of tests/fuzz (docs/fuzzing.md)."""
import argparse
import os
import re
import subprocess
import time

from . import build
from .common import Failure, parse_strict, run_child, say, usage

NAME = "fuzz"
SYNOPSIS = ["[TARGET...] [--seconds S] [--runs N]", "--list", "TARGET --reproduce FILE"]
SUMMARY = "build the fuzz targets (clang) in build-fuzz/, run each for a bounded time or number of inputs"
NEEDS_TREE = True

# Target name -> what it parses. The same names as tests/fuzz/meson.build
# (binary build-fuzz/tests/fuzz/fuzz-NAME) and tests/fuzz/corpus/NAME/.
TARGETS = {
    "link-frame": "link frames, CRC, and the reliable link protocol (ack, sack, credits, reorder)",
    "torus-route": "torus header and routing decision in the NetStack, hellos in link training",
    "tree-packet": "combine-network (tree) and barrier packets in the CombineEngine and BarrierNet",
    "coll-header": "the collective header of the torus algorithms, through a world Comm",
    "p2p-message": "point-to-point message headers and multi-frame reassembly in the Messenger",
    "personality": "the personality file and its command-line flags",
    "topology": "a deployment's topology file, its checks and each rank's personality",
    "guest-cmdline": "the kernel command line of a QEMU node (toroid.* keys)",
}
DEFAULT_SECONDS = 30
BIN_DIR_REL = os.path.join("tests", "fuzz")
CORPUS_REL = os.path.join("tests", "fuzz", "corpus")
# Per-input limits: a slow input (seconds) or a large allocation is a finding.
LIBFUZZER_LIMITS = ["-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1"]


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY,
                       usage="\n".join(["%(prog)s " + SYNOPSIS[0],
                                        "       %(prog)s " + SYNOPSIS[1],
                                        "       %(prog)s " + SYNOPSIS[2]]),
                       description="""\
Installs clang if missing (setup), configures build-fuzz/ with clang and
-Dfuzz=true (every object instrumented for libFuzzer, ASan and UBSan), builds
only the fuzz targets, then runs each named TARGET (default: all) in turn,
one process each, starting from its seed corpus tests/fuzz/corpus/TARGET/:

  build-fuzz/tests/fuzz/fuzz-TARGET run/fuzz/TARGET/corpus tests/fuzz/corpus/TARGET
      [-max_total_time=S] [-runs=N]  %s

With both --seconds and --runs a target stops at whichever comes first.

New inputs go to run/fuzz/TARGET/corpus/ (the seeds in the tree are only
read); a crash, leak, timeout or broken invariant leaves its input in
run/fuzz/TARGET/ and is printed with the one command that reproduces it:
  %s fuzz TARGET --reproduce run/fuzz/TARGET/crash-...

Afterwards one line per target (executions, executions per second, coverage
edges and features, crashes) and, as the last line: N targets, N crashed.

Targets:
%s""" % (" ".join(LIBFUZZER_LIMITS), prog,
                                "\n".join("  %-14s %s" % (n, d) for n, d in TARGETS.items())),
                       epilog="exit status: 0 no target crashed, 1 a crash or a build failure, 2 usage error")
    p.add_argument("targets", nargs="*", metavar="TARGET", help="a fuzz target (default: all; --list shows them)")
    p.add_argument("--seconds", type=_positive_int, metavar="S",
                   help="run each target S seconds (default %d, unless --runs is given)" % DEFAULT_SECONDS)
    p.add_argument("--runs", type=_positive_int, metavar="N", help="run each target for N inputs")
    p.add_argument("--list", action="store_true", help="print the targets and what each parses")
    p.add_argument("--reproduce", metavar="FILE", help="run TARGET once on FILE (a crash input) and exit with its status")
    return p


def _positive_int(text):
    if not re.fullmatch(r"[0-9]+", text) or int(text) == 0:
        raise argparse.ArgumentTypeError("expected a positive whole number, got '%s'" % text)
    return int(text)


def check_args(parser, args):
    """Usage errors the parser cannot express; returns the targets to run."""
    for t in args.targets:
        if t not in TARGETS:
            parser.error("unknown target '%s' (targets: %s)" % (t, " ".join(TARGETS)))
    if args.list and (args.targets or args.seconds or args.runs or args.reproduce is not None):
        parser.error("--list takes no TARGET and no other option")
    if args.reproduce is not None and (args.seconds or args.runs):
        parser.error("--reproduce runs the input once: no --seconds or --runs")
    if args.reproduce is not None and len(args.targets) != 1:
        parser.error("--reproduce needs exactly one TARGET")
    return list(dict.fromkeys(args.targets)) or list(TARGETS)


def libfuzzer_args(args):
    """The bounds of a run: -max_total_time=S and/or -runs=N (S defaults
    without --runs)."""
    out = []
    if args.seconds or not args.runs:
        out.append("-max_total_time=%d" % (args.seconds or DEFAULT_SECONDS))
    if args.runs:
        out.append("-runs=%d" % args.runs)
    return out


STAT_RE = re.compile(r"^stat::(\w+):\s+(\d+)")
DONE_RE = re.compile(r"^#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+)")
PROGRESS_RE = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)")
ARTIFACT_RE = re.compile(r"Test unit written to (\S+)")


def summarize(log_text):
    """Executions, exec/s, coverage (edges, features) and crash artifacts
    from a libFuzzer log."""
    s = {"runs": 0, "exec_per_sec": 0, "cov": 0, "ft": 0, "artifacts": []}
    for line in log_text.splitlines():
        m = STAT_RE.match(line)
        if m and m.group(1) == "number_of_executed_units":
            s["runs"] = int(m.group(2))
        elif m and m.group(1) == "average_exec_per_sec":
            s["exec_per_sec"] = int(m.group(2))
        m = DONE_RE.match(line) or PROGRESS_RE.match(line)
        if m:
            s["cov"], s["ft"] = int(m.group(2)), int(m.group(3))
            if not s["runs"]:
                s["runs"] = int(m.group(1))
        m = ARTIFACT_RE.search(line)
        if m:
            s["artifacts"].append(m.group(1))
    return s


def result_line(target, s, status):
    crashed = len(s["artifacts"]) if s["artifacts"] else (1 if status != 0 else 0)
    return "%-14s %10d runs  %7d exec/s  cov %5d  ft %6d  crashes %d" % (
        target, s["runs"], s["exec_per_sec"], s["cov"], s["ft"], crashed), crashed


def run(ctx, argv):
    parser = ctx.parser(NAME)
    args = parse_strict(parser, argv, intermixed=True)
    targets = check_args(parser, args)
    out = ctx.out
    if args.list:
        for n, d in TARGETS.items():
            out.write("%-14s %s\n" % (n, d))
        return 0
    if ctx.paths.installed:
        raise Failure("fuzz: needs the source tree (the fuzz targets are not installed)")
    build.setup(ctx.paths, out)
    build.build(ctx.paths, "fuzz", out, targets=["fuzz"])
    bin_dir = os.path.join(ctx.paths.root, build.build_dir("fuzz"), BIN_DIR_REL)

    def binary(t):
        path = os.path.join(bin_dir, "fuzz-" + t)
        if not os.access(path, os.X_OK):
            raise Failure("fuzz: %s was not built" % os.path.relpath(path, ctx.paths.root))
        return path

    if args.reproduce is not None:
        path = args.reproduce if os.path.isabs(args.reproduce) else os.path.join(os.getcwd(), args.reproduce)
        if not os.path.isfile(path):
            raise Failure("fuzz: no such file: %s" % args.reproduce)
        return 0 if run_child([binary(targets[0]), path]) == 0 else 1

    results = []
    total_crashed = 0
    for t in targets:
        work = os.path.join(ctx.paths.run_root, "fuzz", t)
        corpus = os.path.join(work, "corpus")
        os.makedirs(corpus, exist_ok=True)
        seeds = os.path.join(ctx.paths.root, CORPUS_REL, t)
        cmd = [binary(t), corpus] + ([seeds] if os.path.isdir(seeds) else []) + libfuzzer_args(args) + \
            LIBFUZZER_LIMITS + ["-artifact_prefix=" + work + os.sep]
        log_path = os.path.join(work, "fuzz.log")
        bound = " or ".join(a.split("=")[1] + (" s" if "time" in a else " inputs") for a in libfuzzer_args(args))
        say(out, "fuzz: %s (%s) ... log: %s" % (t, bound, os.path.relpath(log_path, ctx.paths.root)))
        started = time.monotonic()
        with open(log_path, "w") as log:
            status = run_child(cmd, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        with open(log_path, errors="replace") as log:
            s = summarize(log.read())
        line, crashed = result_line(t, s, status)
        say(out, "  %s  (%.0f s)" % (line, time.monotonic() - started))
        if crashed:
            total_crashed += 1
            with open(log_path, errors="replace") as log:
                tail = log.read().splitlines()[-40:]
            out.write("\n".join("    " + x for x in tail) + "\n")
            for a in s["artifacts"] or [log_path]:
                say(out, "  reproduce: %s fuzz %s --reproduce %s" % (ctx.paths.invocation, t,
                                                                   os.path.relpath(a, ctx.paths.root)))
        results.append(line)
    if len(results) > 1:
        say(out, "summary:")
        for line in results:
            say(out, "  " + line)
    say(out, "%d targets, %d crashed" % (len(targets), total_crashed))
    return 1 if total_crashed else 0
