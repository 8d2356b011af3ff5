"""./toroid slurm-selftest: the self-test as one Slurm job step (deploy/slurm_selftest.py)."""
import os
import sys

from . import build, packages
from .common import exec_program, usage, wants_help

NAME = "slurm-selftest"
SYNOPSIS = ["[--dims XxYxZ] [--topology FILE] [--local] [--pmix]",
            "[--level quick|full] [--timeout S] [--keep] [-- SRUN_ARGS...]"]
SUMMARY = ("submit the self-test as a Slurm job step (srun), one task per node; --local starts a private "
           "one-node Slurm here for it (docs/deploy.md)")
# deploy/ and the build dir's toroid-topo are not installed.
NEEDS_TREE = True


def add_parser(sub, prog):
    # deploy/slurm_selftest.py parses the arguments; they are listed here for
    # --help and the man page.
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY,
                       usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Submits the self-test as one Slurm job step: srun starts one toroid-node per
rank (toroid-node --topology FILE), each takes its rank from Slurm
(SLURM_PROCID) or, with --pmix, from PMIx (srun --mpi=pmix), and rank r runs
on the host the topology names for it (SLURM_HOSTFILE, --distribution=arbitrary).
The verdicts of all tasks are collected into one table.

Installs slurm-wlm and munge first if they are missing (root or sudo).""",
                       epilog="exit status: 0 every node passed, 1 a node failed or Slurm failed, 2 usage error")
    p.add_argument("--dims", metavar="XxYxZ", help="without --topology: a one-host partition of that shape "
                                                  "(default 2x2x2), unix-socket links, on the host Slurm picks")
    p.add_argument("--topology", metavar="FILE", help="the partition's topology (docs/deploy.md); checked first")
    p.add_argument("--local", action="store_true",
                   help="start a private one-node Slurm on this machine (munged, slurmctld, slurmd with a "
                        "generated config under a temp dir, 8 CPUs declared), run the step, stop the daemons")
    p.add_argument("--pmix", action="store_true", help="ranks from PMIx instead of Slurm's variables")
    p.add_argument("--level", metavar="L", help="the self-test's level (quick, full)")
    p.add_argument("--timeout", metavar="S", help="seconds for the job step (default 300)")
    p.add_argument("--keep", action="store_true", help="--local: keep the generated config and the daemons' logs")
    p.add_argument("srun_args", nargs="*", metavar="-- SRUN_ARGS", help="more srun options (e.g. --partition P)")
    return p


def run(ctx, argv):
    if wants_help(argv, stop_at_dashdash=True):
        ctx.parser(NAME).print_help()
        return 0
    build.setup(ctx.paths, ctx.out)
    packages.install_slurm("slurm-selftest", ctx.out)
    build.build(ctx.paths, "release", ctx.out, quiet=True)
    root = ctx.paths.root
    exec_program([sys.executable, os.path.join(root, "deploy", "slurm_selftest.py"),
                  "--build-dir", os.path.join(root, "build")] + argv)
