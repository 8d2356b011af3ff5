"""./toroid selftest: boot a torus on a rig and run the self-test job."""
import argparse

from . import build
from .common import (RIG_BIN_REL, SIM_BIN_REL, UsageError, check_dims, exec_program, require_binary, say, usage,
                     with_run_dir)

NAME = "selftest"
SYNOPSIS = ["[--dims XxYxZ] [--rig host|sim] [--driver memif|uring] [ARGS...]"]
SUMMARY = ("setup + build, boot a torus on a rig and run the self-test job (default dims 2x2x2, "
           "rig host: one process per node over DPDK memif)")
NEEDS_TREE = False
RIGS = ["host", "sim"]            # host: one process per node (docs/host-rig.md)
DRIVERS = ["memif", "uring"]      # host rig link drivers; memif is the default
DEFAULT_DIMS = "2x2x2"


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Runs setup + build (release, build/), then boots the torus on a rig, runs
the self-test job and exits with the rig's status:
  host (default)  build/%s --dims DIMS --job selftest --driver DRIVER
                  --run-dir <repo>/run [ARGS...]   (one toroid-node process per node)
  sim             build/%s --dims DIMS --job selftest [ARGS...]
Other ARGS are passed through unchanged (host: e.g. --quiet, --hold 5s;
sim: e.g. --seed N, --faults SPEC). --job is not accepted: use `%s rig` or
`%s sim --job JOB` for other jobs.""" % (RIG_BIN_REL, SIM_BIN_REL, prog, prog),
                       epilog="exit status: the self-test's status (0 pass); 1 build failed; 2 usage error")
    p.add_argument("--dims", default=DEFAULT_DIMS, metavar="XxYxZ",
                   help="torus dimensions (default %s)" % DEFAULT_DIMS)
    p.add_argument("--rig", default="host", metavar="RIG", help="%s (default host)" % ", ".join(RIGS))
    p.add_argument("--driver", metavar="DRIVER", help="host rig links: %s (default memif)" % ", ".join(DRIVERS))
    p.add_argument("--job", nargs="?", const="", help=argparse.SUPPRESS)
    return p


def parse(parser, argv):
    """(options, ARGS for the rig), validated."""
    args, rest = parser.parse_known_args(argv)
    if args.job is not None:
        raise UsageError(NAME, "selftest: --job is fixed to 'selftest'; use ./toroid rig or ./toroid sim "
                               "--job JOB for other jobs")
    check_dims(NAME, args.dims, DEFAULT_DIMS)
    if args.rig not in RIGS:
        raise UsageError(NAME, "selftest: unknown rig '%s' (available: %s)" % (args.rig, " ".join(RIGS)))
    if args.driver is not None:
        if args.rig != "host":
            raise UsageError(NAME, "selftest: --driver is an option of the host rig (--rig host)")
        if args.driver not in DRIVERS:
            raise UsageError(NAME, "selftest: unknown driver '%s' (available: %s)"
                             % (args.driver, " ".join(DRIVERS)))
    return args, rest


def run(ctx, argv):
    args, rest = parse(ctx.parser(NAME), argv)
    build.prepare(ctx.paths, ctx.out, quiet=False)
    if args.rig == "host":
        rig = require_binary(NAME, ctx.paths.binary("build", RIG_BIN_REL), ctx.paths)
        driver = args.driver or "memif"
        say(ctx.out, "selftest: rig host (%s), dims %s" % (driver, args.dims))
        exec_program([rig] + with_run_dir(ctx.paths, ["--dims", args.dims, "--job", "selftest",
                                                      "--driver", driver] + rest))
    sim = require_binary(NAME, ctx.paths.binary("build", SIM_BIN_REL), ctx.paths)
    say(ctx.out, "selftest: rig %s, dims %s" % (args.rig, args.dims))
    exec_program([sim, "--dims", args.dims, "--job", "selftest"] + rest)
