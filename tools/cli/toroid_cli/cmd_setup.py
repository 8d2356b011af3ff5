"""./toroid setup [--slurm]: the Debian packages the project needs."""
import textwrap

from . import packages
from .common import parse_strict, usage

NAME = "setup"
SYNOPSIS = ["[--slurm]"]
SUMMARY = ("install the Debian packages the project needs (only the missing ones; silent when "
           "nothing is missing); --slurm: also slurm-wlm and munge")
NEEDS_TREE = True


def add_parser(sub, prog):
    p = sub.add_parser(NAME, command=NAME, help=SUMMARY, usage=usage(prog, NAME, SYNOPSIS),
                       description="""\
Installs the Debian packages the project needs, if any are missing:
%s
With --slurm (and from `%s test` when it runs the deploy suite, and
`%s slurm-selftest`) also: %s. The tests start their own munged, slurmctld
and slurmd with a generated configuration and stop them; they never use the
system's services.
Checks each with dpkg-query; when something is missing it says what, runs
apt-get update once, then apt-get install -y --no-install-recommends. Needs root
or sudo. Prints nothing when everything is already installed."""
                       % (textwrap.fill(" ".join(packages.PACKAGES), 78, initial_indent="  ", subsequent_indent="  "), prog, prog, " ".join(packages.SLURM_PACKAGES)),
                       epilog="exit status: 0 all installed, 1 install failed or no root/sudo, 2 usage error")
    p.add_argument("--slurm", action="store_true", help="also install " + " and ".join(packages.SLURM_PACKAGES))
    return p


def run(ctx, argv):
    args = parse_strict(ctx.parser(NAME), argv)
    packages.install_packages("setup", packages.PACKAGES, ctx.out)
    if args.slurm:
        packages.install_slurm("./toroid setup --slurm", ctx.out)
    return 0
