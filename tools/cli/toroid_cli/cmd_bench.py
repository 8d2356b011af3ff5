"""./toroid bench: the collective sweep on the host rig, the raw link, the micro-benchmarks."""
import argparse
import os
import re
import sys
import tempfile

from . import benchreport, build, packages, pgo
from .common import (LINKBENCH_BIN_REL, MICROBENCH_BIN_REL, RIG_BIN_REL, UsageError, caller_path, check_dims,
                     exec_program, parse_strict, require_binary, run_child, say, split_passthrough, usage, with_run_dir)

NAME = "bench"
SYNOPSIS = ["[--dims XxYxZ] [--driver LIST] [--rounds N] [--colls LIST] [--algos KIND=A,B]...",
            "[--dtype LIST] [--op LIST] [--repro LIST] [--sizes LIST] [--reps N]",
            "[--frame 1518|9000] [--wait spin|idle] [--with-link] [--json FILE]",
            "[--plot FILE.png] [--no-pgo] [-- RIG_ARGS...]"]
LINK_SYNOPSIS = "--link [--driver memif|uring] [--json FILE] [-- LINK_ARGS...]"
MICRO_SYNOPSIS = "--micro [--json FILE] [--filter REGEX] [-- BENCH_ARGS...]"
SUMMARY = ("build (release and profile-guided), run the library's collectives on the host rig (allreduce, bcast, reduce, "
           "allgather, alltoall, reduce_scatter, barrier: latency and bus bandwidth per size, algorithm and "
           "datatype); --link: the raw link's ping-pong latency and streaming rate; --micro: the "
           "micro-benchmarks (CRC32C, routing, link, transit)")
NEEDS_TREE = True
DEFAULT_DIMS = "2x1x1"            # one node per core on a 2-core machine
DRIVERS = ["memif", "uring", "af_xdp", "af_packet"]
LINK_DRIVERS = ["memif", "uring"]
MICRO_ARGS = ["--benchmark_min_time=0.2", "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"]

# Options handed to the rig as given, in the order given (repeats included).
RIG_OPTIONS = [
    ("--colls", "LIST", "allreduce,bcast,reduce,allgather,alltoall,reduce_scatter,barrier (default: all)"),
    ("--algos", "KIND=A,B",
     "algorithms of one collective; repeatable, or KIND=A,B;KIND=C in one value. A name of the library, auto "
     "(the selector's choice, recorded under the name it picked) or all (every algorithm of the kind). Without "
     "KIND= the names are allreduce's (the older form --algos torus-ring,torus-tree runs exactly those). "
     "Default: allreduce torus-ring,torus-tree,auto; the others auto"),
    ("--dtype", "LIST", "datatypes, e.g. int64,double (default int64; int8..int64, uint8..uint64, float, double)"),
    ("--op", "LIST", "reduction ops of allreduce, reduce, reduce_scatter (default sum)"),
    ("--repro", "LIST",
     "none,fixed-order,exact: float reductions (default none); every combination runs, so --dtype double "
     "--repro none,exact sets the price of exact sums against plain ones in one run; integer reductions are "
     "exact anyway and run once (repro none)"),
    ("--sizes", "LIST",
     "bytes, e.g. 8,4096,64k,4M (default 8 B .. 4 MiB in x4 steps, and 4 MiB): per node for allreduce, bcast, "
     "reduce; the whole buffer of n blocks for allgather, alltoall; the whole input for reduce_scatter"),
    ("--reps", "N",
     "timed repetitions per size (default by size, as OSU does: 1000 up to 1 KiB, 500 to 16 KiB, 100 to "
     "256 KiB, 40 to 1 MiB, 20 above, after a tenth as many untimed warm-up ones; with N: from 1 MiB "
     "max(5, N/4), after 2 warm-up ones, 1 from 1 MiB; until the sweep has moved 16 MiB per node a row "
     "warms up longer, up to 200, unless the job argument warmup=N sets it)"),
    ("--frame", "N", "memif frame size: 9000 (default, bsize=9216) or 1518"),
    ("--wait", "spin|idle",
     "how a node waits for its operation: spin (busy-poll, the default when nodes <= CPUs) or idle (the event "
     "loop's idle policy: spin, pause, then sleep up to 1 ms; the default for more nodes than CPUs)"),
]


class RigOption(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        if namespace.rig_opts is None:
            namespace.rig_opts = []
        namespace.rig_opts += [self.option_strings[0], values]


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY,
                       usage=usage(prog, NAME, SYNOPSIS, [LINK_SYNOPSIS], [MICRO_SYNOPSIS]),
                       description="""\
Builds build/ (release; build output goes to stderr), then:

(default) the collective sweep on the host rig: build-pgo/%s --job bench
  --quiet --run-dir <repo>/run, one toroid-node process per node. Every
  collective runs through the library's communicator (Comm::start, Comm::test)
  and every repetition's result is checked. For each collective, datatype
  variant, algorithm and size, every node aligns with a barrier and times each
  repetition; a repetition takes as long as its slowest node; the table gives
  min/median/max over the repetitions (us) and NCCL's bus bandwidth from the
  median (allreduce: algbw x 2(n-1)/n; bcast, reduce: x 1; allgather, alltoall,
  reduce_scatter: x (n-1)/n; algbw = bytes / time; GB/s = 1e9 B/s). A '*' after
  an algorithm marks the selector's choice for that operation. A row that
  cannot run says why (the library's reason, or a size that is not whole
  elements), never a figure. build-pgo/ is the profile-guided node program
  (`./toroid build --help`), built and trained first when it is missing or
  older than the sources; --no-pgo runs build/'s instead.

--link: the raw Port between two processes, no netstack: build/%s.
  Ping-pong of 64..9000-byte frames (one-way = round trip / 2) and streaming of
  64, 1500 and 9000-byte frames (frames/s, GB/s); memif with bsize=9216. JSON
  records "coll": "link-pingpong" / "link-stream".

--micro: the Google Benchmark micro-benchmarks, build/%s, with
  %s
  so each benchmark prints mean, median, stddev and cv over 5 runs.

Quote medians: the machine switches between fast and slow regimes; compare
runs alternately (A B A B). docs/bench.md holds the recorded figures."""
                       % (RIG_BIN_REL, LINKBENCH_BIN_REL, MICROBENCH_BIN_REL, " ".join(MICRO_ARGS)),
                       epilog="""\
exit status: the benchmark's status (0 measured, 1 a node or link failed);
1 build failed; 2 usage error""")
    modes = p.add_argument_group("runs")
    modes.add_argument("--micro", action="store_true", help="the micro-benchmarks instead of the sweep")
    modes.add_argument("--link", action="store_true", help="the raw link instead of the sweep")
    sweep = p.add_argument_group("the collective sweep")
    sweep.add_argument("--dims", metavar="XxYxZ",
                       help="partition (default %s: one node per core here)" % DEFAULT_DIMS)
    sweep.add_argument("--driver", default="memif", metavar="LIST",
                       help="memif (default) | uring | af_xdp | af_packet (kernel NICs: veths in network "
                            "namespaces, needs root; docs/deploy.md), or several, comma-separated, e.g. "
                            "memif,af_xdp,af_packet: each runs the sweep and one table puts them side by side "
                            "(median latency, bus bandwidth, ratio to the first driver). --link: memif or uring")
    sweep.add_argument("--rounds", default="1", metavar="N",
                       help="run every driver N times, alternating (A B C A B C ...), and quote the median of "
                            "the runs' medians (default 1)")
    for opt, metavar, text in RIG_OPTIONS:
        sweep.add_argument(opt, action=RigOption, metavar=metavar, help=text)
    p.set_defaults(rig_opts=None)
    sweep.add_argument("--with-link", action="store_true",
                       help="first measure the raw link (as --link, same driver) and state the sweep's figures "
                            "as fractions of it; one JSON array for both")
    sweep.add_argument("--plot", metavar="FILE.png",
                       help="draw latency (log-log) and bus bandwidth against size per collective and algorithm, "
                            "with the raw link's limits (implies --with-link); bench/plot.py with Debian's "
                            "python3-matplotlib, installed on first use")
    sweep.add_argument("--no-pgo", action="store_true",
                       help="run the release build's node program (build/) instead of the profile-guided one "
                            "(build-pgo/)")
    out = p.add_argument_group("output")
    out.add_argument("--json", metavar="FILE",
                     help="also write the records as a JSON array (relative to the current directory): "
                          "{\"coll\", \"algo\", \"nodes\", \"bytes\", \"reps\", \"lat_us\": {\"min\", \"median\", "
                          "\"max\"}, \"algbw_gbps\", \"busbw_gbps\", \"dtype\", \"op\", \"repro\", \"selected\", "
                          "...}; --micro: Google Benchmark's JSON (--benchmark_out)")
    out.add_argument("--filter", metavar="REGEX",
                     help="--micro: only the benchmarks matching REGEX (--benchmark_filter), e.g. 'Crc32c|Memcpy', "
                          "'Route', 'LinkTxRx', 'Transit'")
    out.add_argument("passthrough", nargs="*", metavar="-- ARGS",
                     help="more options for the binary, last (they win): the rig (e.g. --timeout 1200s, "
                          "--log-level info), toroid-linkbench or the micro-benchmarks")
    return p


class Plan:
    """A validated bench command line."""

    def __init__(self, args, drivers, passthrough):
        self.mode = "micro" if args.micro else "link" if args.link else "sweep"
        self.dims = args.dims or DEFAULT_DIMS
        self.driver = args.driver
        self.drivers = drivers
        self.rounds = int(args.rounds)
        self.rig_opts = args.rig_opts or []
        self.with_link = args.with_link or bool(args.plot)   # the plot draws the link's limits
        self.json = caller_path(args.json)
        self.plot = caller_path(args.plot)
        self.filter = args.filter
        self.pgo = not args.no_pgo
        self.passthrough = passthrough

    def several(self):
        return len(self.drivers) > 1 or self.rounds > 1

    def rig_args(self, paths, driver, json_path):
        return with_run_dir(paths, ["--dims", self.dims, "--job", "bench", "--driver", driver, "--quiet",
                                    "--timeout", "600s"] + self.rig_opts + ["--json", json_path]
                            + self.passthrough)


def parse(parser, argv):
    head, passthrough = split_passthrough(parser, argv)
    args = parse_strict(parser, head)
    if args.passthrough:   # listed for --help: what follows -- was split off above
        raise UsageError(NAME, "bench: unexpected argument '%s'" % args.passthrough[0])

    def usage(msg):
        raise UsageError(NAME, "bench: " + msg)

    if args.micro and args.link:
        usage("--micro and --link are separate runs")
    if args.micro or args.link:
        if args.with_link:
            usage("--with-link is an option of the collective sweep")
        if args.plot is not None:
            usage("--plot is an option of the collective sweep")
        if args.rig_opts:
            usage("%s is an option of the collective sweep" % args.rig_opts[0])
        if args.dims is not None:
            usage("--dims is an option of the collective sweep")
        if args.no_pgo:
            usage("--no-pgo is an option of the collective sweep")
    if args.filter is not None and not args.micro:
        usage("--filter is an option of --micro")
    if not args.driver:
        usage("--driver needs a value")
    drivers = args.driver.split(",")
    if len(drivers) > 1 and drivers[-1] == "":
        drivers.pop()      # "memif,uring," lists two drivers
    for d in drivers:
        if d not in DRIVERS:
            usage("unknown driver '%s' (%s)" % (d, ", ".join(DRIVERS)))
    if not re.match(r"^[1-9][0-9]*$", args.rounds):
        usage("--rounds '%s' is not a positive count" % args.rounds)
    if args.micro and args.driver != "memif":
        usage("--driver is not an option of --micro")
    if (args.link or args.with_link or args.plot) and args.driver not in LINK_DRIVERS:
        usage("the raw link bench measures one driver, memif or uring")
    if (args.with_link or args.plot) and args.rounds != "1":
        usage("--with-link and --plot go with one run (not --rounds N)")
    check_dims("bench", args.dims or DEFAULT_DIMS, DEFAULT_DIMS)
    if args.plot is not None and not args.plot.endswith(".png"):
        usage("--plot '%s': the file name must end in .png" % args.plot)
    return Plan(args, drivers, passthrough)


def run(ctx, argv):
    plan = parse(ctx.parser(NAME), argv)
    paths, err = ctx.paths, ctx.err
    build.setup(paths, err)
    if plan.plot:   # matplotlib (Debian's) only when a plot is asked for, before the sweep
        packages.install_packages("bench --plot", packages.PLOT_PACKAGES, err)
    build.build(paths, "release", err, quiet=True)

    if plan.mode == "micro":
        micro = require_binary(NAME, paths.binary("build", MICROBENCH_BIN_REL), paths)
        args = list(MICRO_ARGS)
        if plan.filter:
            args.append("--benchmark_filter=" + plan.filter)
        if plan.json:
            args += ["--benchmark_out=" + plan.json, "--benchmark_out_format=json"]
        exec_program([micro] + args + plan.passthrough)
    linkbench = paths.binary("build", LINKBENCH_BIN_REL)
    if plan.mode == "link":
        require_binary(NAME, linkbench, paths)
        exec_program([linkbench, "--driver", plan.driver] + (["--json", plan.json] if plan.json else [])
                     + plan.passthrough)
    if plan.pgo:
        pgo.ensure(paths, err)
        rig = require_binary(NAME, pgo.rig(paths), paths)
    else:
        rig = require_binary(NAME, paths.binary("build", RIG_BIN_REL), paths)
    with tempfile.TemporaryDirectory(prefix="toroid-bench-") as tmp:
        return sweep(ctx, plan, rig, linkbench, tmp)


def sweep(ctx, plan, rig, linkbench, tmp):
    out, status = ctx.out, 0
    link_json, sweep_json, all_json = (os.path.join(tmp, f) for f in ("link.json", "sweep.json", "all.json"))
    if plan.with_link:
        require_binary(NAME, linkbench, ctx.paths)
        say(out, "bench: the raw link first (toroid-linkbench --driver %s)" % plan.driver)
        status = run_child([linkbench, "--driver", plan.driver, "--json", link_json]) or status
        say(out)
    if plan.several():
        # Drivers side by side: each round runs every driver once, in turn.
        for r in range(1, plan.rounds + 1):
            for d in plan.drivers:
                say(out, "bench: round %d/%d, driver %s" % (r, plan.rounds, d))
                json_path = os.path.join(tmp, "sweep-%s-%d.json" % (d, r))
                status = run_child([rig] + plan.rig_args(ctx.paths, d, json_path)) or status
        compare = [sys.executable, os.path.join(ctx.paths.root, "bench", "compare_drivers.py"), tmp,
                   ",".join(plan.drivers), str(plan.rounds)]
        if run_child(compare + (["--json", plan.json] if plan.json else [])) != 0:
            status = 1
        return status

    status = run_child([rig] + plan.rig_args(ctx.paths, plan.driver, sweep_json)) or status
    if plan.with_link:
        try:
            for line in benchreport.fractions(benchreport.load_records(link_json),
                                              benchreport.load_records(sweep_json)):
                say(out, line)
        except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
            # The figures are a reading aid: the records themselves still go out.
            say(ctx.err, "bench: no figures against the link (%s: %s)" % (type(e).__name__, e))
    if plan.json or plan.plot:
        try:
            # One array: the link's records first, then the sweep's.
            n = benchreport.merge([link_json, sweep_json], all_json)
        except (OSError, ValueError) as e:
            say(ctx.err, "bench: could not merge the link's and the sweep's records: %s" % e)
            return 1
    if plan.json:
        try:
            with open(all_json) as src, open(plan.json, "w") as dst:
                dst.write(src.read())
            say(out, "bench: %d records written to %s" % (n, plan.json))
        except OSError as e:
            say(ctx.err, "bench: could not write %s: %s" % (plan.json, e.strerror))
            status = 1
    if plan.plot:
        # Run by its #! line: Debian's python3, where python3-matplotlib lives.
        if run_child([os.path.join(ctx.paths.root, "bench", "plot.py"), "--out", plan.plot, all_json]) != 0:
            say(ctx.err, "bench: could not draw %s" % plan.plot)
            status = 1
    return status
